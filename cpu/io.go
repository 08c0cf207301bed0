package cpu

import (
	"slices"

	"simkron/memory"
)

// Reference charges one data reference of up to a word at a.
func (c *CPU) Reference(a memory.Addr, kind memory.AccessKind) {
	c.Charge(c.sys.Reference(a, kind))
}

// ReferenceRange charges a reference to every word of [a, a+n).
func (c *CPU) ReferenceRange(a memory.Addr, n uint64, kind memory.AccessKind) {
	if n > 0 {
		c.Charge(c.sys.ReferenceRange(a, n, kind))
	}
}

// Read copies simulated memory at a into p, charging a reference per word.
// An address outside memory is a guest error; p is then zero-filled.
func (c *CPU) Read(a memory.Addr, p []byte) {
	c.ReferenceRange(a, uint64(len(p)), memory.Read)
	if err := c.sys.Phys.Read(a, p); err != nil {
		clear(p)
		c.sys.Guest.Report(c.LocalTime(), c.name, "read: %v", err)
	}
}

// Write copies p into simulated memory at a, charging a reference per word.
func (c *CPU) Write(a memory.Addr, p []byte) {
	c.ReferenceRange(a, uint64(len(p)), memory.Write)
	if err := c.sys.Phys.Write(a, p); err != nil {
		c.sys.Guest.Report(c.LocalTime(), c.name, "write: %v", err)
	}
}

// device finds the device at a; an access to nothing is a guest error.
func (c *CPU) device(space memory.Space, a memory.Addr, what string) (*memory.Mapping, bool) {
	m, ok := c.sys.Devices.Lookup(space, a)
	if !ok {
		c.sys.Guest.Report(c.k.Now(), c.name, "%s of unmapped %s address 0x%x", what, space, uint64(a))
	}
	return m, ok
}

// mapped returns the mapping of the core's bus table if it holds a, else
// nil: register accesses come in runs to one device, and a mapping, once
// made, stays, with no other overlapping it.
func (c *CPU) mapped(space memory.Space, a memory.Addr) *memory.Mapping {
	if m := c.bus.m; m != nil && m.Space == space && m.Contains(a) {
		return m
	}
	return nil
}

// busCost is what bus cycles of 0 to 8 bytes to one mapping cost this
// core, written and read, in its cycles. The core keeps one per mapping
// it accessed, and the one it last accessed at hand (accesses come in
// runs to one device).
type busCost struct {
	m           *memory.Mapping
	write, read [9]int64
}

// busCycles returns the core's cycles of a bus cycle of bytes written
// to m. A mapping with no bus costs a cycle.
func (c *CPU) busCycles(m *memory.Mapping, bytes int) int64 {
	if m == c.bus.m && uint(bytes) < uint(len(c.bus.write)) {
		return c.bus.write[bytes]
	}
	return c.busCyclesOf(m, bytes, false)
}

// busReadCycles is busCycles for a read, which the CPU waits for.
func (c *CPU) busReadCycles(m *memory.Mapping, bytes int) int64 {
	if m == c.bus.m && uint(bytes) < uint(len(c.bus.read)) {
		return c.bus.read[bytes]
	}
	return c.busCyclesOf(m, bytes, true)
}

// busCyclesOf is busCycles or busReadCycles when m's table is not at
// hand: it finds m's, or makes it, and puts it at hand.
//
//go:noinline
func (c *CPU) busCyclesOf(m *memory.Mapping, bytes int, read bool) int64 {
	cycles := func(n int, read bool) int64 {
		switch {
		case m.Bus == nil:
			return 1
		case read:
			return c.clock.Cycles(m.Bus.ReadCost(n))
		}
		return c.clock.Cycles(m.Bus.Cost(n))
	}
	if uint(bytes) >= uint(len(c.bus.write)) {
		return cycles(bytes, read)
	}
	i := slices.IndexFunc(c.buses, func(b busCost) bool { return b.m == m })
	if i < 0 {
		b := busCost{m: m}
		for n := range b.write {
			b.write[n], b.read[n] = cycles(n, false), cycles(n, true)
		}
		i = len(c.buses)
		c.buses = append(c.buses, b)
	}
	c.bus = &c.buses[i]
	if read {
		return c.bus.read[bytes]
	}
	return c.bus.write[bytes]
}

// In reads a device register of size bytes (inb/inw/inl, or an uncached
// load from a memory-mapped register). The device sees the access at the
// core's local time (with a sync quantum, possibly earlier:
// SetSyncQuantum); the core then waits for the bus cycle. Nothing mapped
// reads as all ones, like an open ISA bus.
func (c *CPU) In(space memory.Space, a memory.Addr, size int) uint64 {
	if c.quantum == 0 || !c.early() {
		c.Sync()
	}
	c.stats.IOAccesses++
	m := c.mapped(space, a)
	if m == nil {
		m, _ = c.device(space, a, "read")
	}
	if m == nil {
		c.Charge(1)
		return 1<<(8*size) - 1
	}
	v := m.Dev.Read(uint64(a-m.Base), size)
	n := c.busReadCycles(m, size)
	c.stats.IOCycles += n
	c.Charge(n)
	if c.Trace.IO.Listened() {
		c.Trace.IO.Fire(IOEvent{Device: m.Name, Offset: uint64(a - m.Base), Size: size, Value: v})
	}
	return v
}

// Out writes a device register.
func (c *CPU) Out(space memory.Space, a memory.Addr, size int, v uint64) {
	if c.quantum == 0 || !c.early() {
		c.Sync()
	}
	c.stats.IOAccesses++
	m := c.mapped(space, a)
	if m == nil {
		m, _ = c.device(space, a, "write")
	}
	if m == nil {
		c.Charge(1)
		return
	}
	m.Dev.Write(uint64(a-m.Base), size, v)
	n := c.busCycles(m, size)
	c.stats.IOCycles += n
	c.Charge(n)
	if c.Trace.IO.Listened() {
		c.Trace.IO.Fire(IOEvent{Device: m.Name, Offset: uint64(a - m.Base), Size: size, Write: true, Value: v})
	}
}

// InString reads n bytes from a data port in width-byte bus cycles into
// simulated memory at dst (rep insw). The bytes move in bulk when the
// string starts; every bus cycle and every word stored is charged.
func (c *CPU) InString(space memory.Space, port memory.Addr, width int, dst memory.Addr, n int) {
	if c.quantum == 0 || !c.early() {
		c.Sync()
	}
	m, ok := c.device(space, port, "string read")
	c.stringHook(m, port, width, false, n, false)
	if bd, isBlock := blockDevice(m, ok); isBlock && wholeWords(n, width) {
		// A destination within one page takes the words straight from
		// the device, as the copy through the scratch buffer would
		// leave them.
		if view, inPage := c.sys.Phys.View(dst, uint64(n), true); inPage {
			bd.ReadBlock(uint64(port-m.Base), width, view)
			c.stringCost(m, width, n, true)
			c.ReferenceRange(dst, uint64(n), memory.Write)
			c.stringHook(m, port, width, false, n, true)
			return
		}
	}
	buf := c.scratch(n)
	if ok {
		off := uint64(port - m.Base)
		if bd, isBlock := m.Dev.(memory.BlockDevice); isBlock {
			bd.ReadBlock(off, width, buf)
		} else {
			for i := 0; i+width <= n; i += width {
				putLE(buf[i:i+width], m.Dev.Read(off, width))
			}
		}
	} else {
		for i := range buf {
			buf[i] = 0xff
		}
	}
	c.stringCost(m, width, n, true)
	c.Write(dst, buf)
	c.stringHook(m, port, width, false, n, true)
}

// OutString writes n bytes from simulated memory at src to a data port in
// width-byte bus cycles (rep outsw).
func (c *CPU) OutString(space memory.Space, port memory.Addr, width int, src memory.Addr, n int) {
	if c.quantum == 0 || !c.early() {
		c.Sync()
	}
	m, ok := c.device(space, port, "string write")
	c.stringHook(m, port, width, true, n, false)
	if bd, isBlock := blockDevice(m, ok); isBlock && wholeWords(n, width) {
		// A source within one page goes to the device straight from
		// memory, as the copy through the scratch buffer would.
		if view, inPage := c.sys.Phys.View(src, uint64(n), false); inPage {
			c.ReferenceRange(src, uint64(n), memory.Read)
			bd.WriteBlock(uint64(port-m.Base), width, view)
			c.stringCost(m, width, n, false)
			c.stringHook(m, port, width, true, n, true)
			return
		}
	}
	buf := c.scratch(n)
	c.Read(src, buf)
	if ok {
		off := uint64(port - m.Base)
		if bd, isBlock := m.Dev.(memory.BlockDevice); isBlock {
			bd.WriteBlock(off, width, buf)
		} else {
			for i := 0; i+width <= n; i += width {
				m.Dev.Write(off, width, getLE(buf[i:i+width]))
			}
		}
	}
	c.stringCost(m, width, n, false)
	c.stringHook(m, port, width, true, n, true)
}

// blockDevice returns the device of mapping m as a BlockDevice, if it is
// one (ok: m was found).
func blockDevice(m *memory.Mapping, ok bool) (memory.BlockDevice, bool) {
	if !ok {
		return nil, false
	}
	bd, isBlock := m.Dev.(memory.BlockDevice)
	return bd, isBlock
}

// wholeWords reports whether n bytes are a whole, positive number of
// width-byte words: a string transfer whose every byte the device reads
// or writes (a trailing part of a word it leaves alone).
func wholeWords(n, width int) bool { return n > 0 && width > 0 && n%width == 0 }

// scratch returns a reused buffer of n bytes for string transfers (the
// bytes pass through it between the device and simulated memory).
func (c *CPU) scratch(n int) []byte {
	if cap(c.ioBuf) < n {
		c.ioBuf = make([]byte, n)
	}
	return c.ioBuf[:n]
}

// stringHook fires Trace.IO for a string transfer's start or end.
func (c *CPU) stringHook(m *memory.Mapping, port memory.Addr, width int, write bool, n int, end bool) {
	if !c.Trace.IO.Listened() || m == nil {
		return
	}
	c.Trace.IO.Fire(IOEvent{Device: m.Name, Offset: uint64(port - m.Base), Size: width, Write: write, Block: n, End: end})
}

func (c *CPU) stringCost(m *memory.Mapping, width, n int, read bool) {
	words := (n + width - 1) / width
	c.stats.IOAccesses += uint64(words)
	var per int64 = 1
	switch {
	case m != nil && read:
		per = c.busReadCycles(m, width)
	case m != nil:
		per = c.busCycles(m, width)
	}
	c.stats.IOCycles += per * int64(words)
	c.Charge(per * int64(words))
}

func putLE(b []byte, v uint64) {
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
}

func getLE(b []byte) uint64 {
	var v uint64
	for i := range b {
		v |= uint64(b[i]) << (8 * i)
	}
	return v
}

// ReferenceCopy charges the data references of a copy loop from src to
// dst (memory.Hierarchy.CopyRange: loads and stores interleaved as the
// loop issues them, so lines that conflict in a cache evict each other).
func (c *CPU) ReferenceCopy(dst, src memory.Addr, n uint64) {
	c.Charge(c.sys.ReferenceCopy(dst, src, n))
}
