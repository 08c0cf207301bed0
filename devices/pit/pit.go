// Package pit models the PC's programmable interval timer, an Intel 8254
// (8253 on older boards), as far as a DOS program uses it: counter 0,
// whose output drives IRQ 0, counting down an input clock of
// 1.193182 MHz (the 14.31818 MHz system crystal divided by 12) and
// interrupting once per period. With the BIOS's divisor of 65536 that is
// the PC's 18.2 Hz tick (54.9254 ms). It is hardware: it knows nothing of
// the software that programs it.
//
// Registers (Intel 8254 data sheet, "Programming the 8254"; offsets from
// the base, 0x40 on a PC):
//
//	off  access  meaning
//	0    R/W     counter 0: the count, LSB and/or MSB as the control word
//	             said; a read returns the latched count
//	1, 2 R/W     counters 1 (DRAM refresh) and 2 (speaker): accepted, no output
//	3    W       control word: SC1 SC0 RW1 RW0 M2 M1 M0 BCD
//	             SC = counter (3: read-back, not modelled)
//	             RW = 0 latch the count, 1 LSB only, 2 MSB only, 3 LSB then MSB
//	             M  = mode (0 interrupt on terminal count, 2 rate generator,
//	                  3 square wave; 6 and 7 alias 2 and 3)
//
// Simplifications: counter 0 only has an output; the gate is always high;
// modes 1, 4 and 5 (gate- and strobe-triggered), BCD counting and the
// read-back command are reported as guest errors; in mode 3 the output's
// rising edge (the interrupt) comes once per period as on the chip, and a
// latched count reads as in mode 2 (the chip counts by twos in mode 3);
// a new count takes effect at once, not at the end of the current period.
package pit

import (
	"math/bits"

	"simkron/memory"
	"simkron/sim"
)

// Params configures the timer.
type Params struct {
	Clock sim.Frequency `toml:"clock" min:"1kHz" max:"100MHz" help:"input clock of the counters (PC: 1193182Hz, the 14.31818 MHz crystal divided by 12)"`
}

// PCClock is the PC's counter input clock, 14.31818 MHz / 12 (IBM PC
// Technical Reference, "8253-5 programmable interval timer").
const PCClock = 1193182 * sim.Hz

// DefaultParams returns the PC's clock.
func DefaultParams() Params { return Params{Clock: PCClock} }

// Size is the register window.
const Size = 4

// Register offsets.
const (
	RegCounter0 = 0
	RegCounter1 = 1
	RegCounter2 = 2
	RegControl  = 3
)

// Control word fields.
const (
	ctlSCShift = 6
	ctlRWShift = 4
	ctlModeSh  = 1
	ctlBCD     = 0x01
	rwLatch    = 0
	rwLSB      = 1
	rwMSB      = 2
	rwBoth     = 3
)

// EdgeIRQ is the timer's view of its interrupt line: the 8254's OUT0
// feeds IRQ 0 of the 8259, edge-triggered. cpu.IRQLine satisfies it.
type EdgeIRQ interface{ Pulse() }

// Stats counts the timer's events.
type Stats struct {
	Interrupts uint64 `stat:"interrupts" help:"rising edges of OUT0"`
}

type counter struct {
	rw, mode    byte
	count       uint32 // the divisor; 0 written means 65536
	loaded      bool
	latch       uint16 // latched count
	latched     bool
	readHigh    bool
	start       sim.Time // when counting began
	partial     byte     // LSB of a two-byte write
	havePartial bool
}

// PIT is the timer.
type PIT struct {
	name   string
	k      *sim.Scheduler
	p      Params
	irq    EdgeIRQ
	guest  *memory.GuestLog
	c      [3]counter
	n      uint64 // periods elapsed since counter 0 was loaded
	tickEv *sim.Event
	stats  Stats
}

var _ memory.Device = (*PIT)(nil)

// New returns a timer named name ("pc.pit") driving irq (nil: no line).
// Counter 0 is idle until programmed, as at power-up before the BIOS
// runs.
func New(k *sim.Scheduler, name string, p Params, irq EdgeIRQ, guest *memory.GuestLog) *PIT {
	t := &PIT{name: name, k: k, p: p, irq: irq, guest: guest}
	t.tickEv = sim.NewEventPriority(name+".out0", sim.PriorityDevice, t.tick)
	return t
}

// Name returns the device's name.
func (t *PIT) Name() string { return t.name }

// Stats returns the counters.
func (t *PIT) Stats() Stats { return t.stats }

// Period returns the time of one period of counter 0 with divisor d
// (0 = 65536), rounded down to a picosecond.
func (p Params) Period(d uint32) sim.Time { return p.periodsAt(divisor(d), 1) }

func divisor(d uint32) uint64 {
	if d == 0 {
		return 65536
	}
	return uint64(d)
}

// periodsAt returns the time n periods of div input cycles take:
// floor(n·div·1e12 / clock) ps, exact.
func (p Params) periodsAt(div, n uint64) sim.Time {
	hi, lo := bits.Mul64(n*div, uint64(sim.Second))
	q, _ := bits.Div64(hi, lo, uint64(p.Clock))
	return sim.Time(q)
}

func (t *PIT) report(format string, args ...any) {
	if t.guest != nil {
		t.guest.Report(t.k.Now(), t.name, format, args...)
	}
}

// Read implements memory.Device: the latched count of a counter, a byte at
// a time.
func (t *PIT) Read(off uint64, size int) uint64 {
	if off > RegCounter2 {
		t.report("read of the write-only control word")
		return 0xFF
	}
	c := &t.c[off]
	v := c.latch
	if !c.latched {
		v = t.current(int(off))
	}
	var b byte
	switch {
	case c.rw == rwMSB:
		b = byte(v >> 8)
	case c.rw == rwBoth && c.readHigh:
		b = byte(v >> 8)
		c.latched = false
	default:
		b = byte(v)
		if c.rw != rwBoth {
			c.latched = false
		}
	}
	if c.rw == rwBoth {
		c.readHigh = !c.readHigh
	}
	return uint64(b)
}

// current returns counter i's count now (mode 2 arithmetic).
func (t *PIT) current(i int) uint16 {
	c := &t.c[i]
	if !c.loaded || t.p.Clock <= 0 {
		return uint16(c.count)
	}
	div := divisor(c.count)
	hi, lo := bits.Mul64(uint64(t.k.Now()-c.start), uint64(t.p.Clock))
	cycles, _ := bits.Div64(hi, lo, uint64(sim.Second))
	return uint16(div - cycles%div)
}

// Write implements memory.Device.
func (t *PIT) Write(off uint64, size int, v uint64) {
	b := byte(v)
	if off == RegControl {
		t.control(b)
		return
	}
	if off > RegControl {
		t.report("write to undefined register offset %#x", off)
		return
	}
	c := &t.c[off]
	switch c.rw {
	case rwLSB:
		t.load(int(off), uint32(b))
	case rwMSB:
		t.load(int(off), uint32(b)<<8)
	case rwBoth:
		if !c.havePartial {
			c.partial, c.havePartial = b, true
			return
		}
		c.havePartial = false
		t.load(int(off), uint32(b)<<8|uint32(c.partial))
	default:
		t.report("count written to counter %d before a control word chose how", off)
	}
}

func (t *PIT) control(b byte) {
	sc := b >> ctlSCShift
	if sc == 3 {
		t.report("read-back command %#02x is not modelled", b)
		return
	}
	c := &t.c[sc]
	rw := (b >> ctlRWShift) & 3
	if rw == rwLatch {
		c.latch, c.latched, c.readHigh = t.current(int(sc)), true, false
		return
	}
	mode := (b >> ctlModeSh) & 7
	if mode >= 6 {
		mode -= 4
	}
	if b&ctlBCD != 0 {
		t.report("BCD counting (control word %#02x) is not modelled", b)
	}
	if mode == 1 || mode == 4 || mode == 5 {
		t.report("counter %d: mode %d needs the gate, which is not modelled", sc, mode)
	}
	c.rw, c.mode, c.havePartial, c.latched, c.readHigh = rw, mode, false, false, false
	if sc == 0 {
		// A control word stops the counter until a count is written.
		c.loaded = false
		t.k.Cancel(t.tickEv)
	}
}

// load starts counter i with a new count.
func (t *PIT) load(i int, count uint32) {
	c := &t.c[i]
	c.count, c.loaded, c.start = count, true, t.k.Now()
	if i != 0 {
		return
	}
	t.n = 0
	if c.mode == 0 || c.mode == 2 || c.mode == 3 {
		t.k.Schedule(t.tickEv, c.start+t.p.periodsAt(divisor(count), 1))
	}
}

// tick is a rising edge of OUT0: the end of a period.
func (t *PIT) tick() {
	c := &t.c[0]
	t.stats.Interrupts++
	if t.irq != nil {
		t.irq.Pulse()
	}
	if c.mode == 0 {
		return // one shot
	}
	t.n++
	// Period n+1 ends at an exact multiple from the start: no drift.
	t.k.Schedule(t.tickEv, c.start+t.p.periodsAt(divisor(c.count), t.n+1))
}
