package cpu_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
)

// port is a data port: reads take the next bytes of src, little-endian,
// writes append theirs to got.
type port struct {
	src, got []byte
}

func (p *port) Name() string { return "port" }

func (p *port) Read(off uint64, size int) uint64 {
	var v uint64
	for i := range size {
		if len(p.src) > 0 {
			v |= uint64(p.src[0]) << (8 * i)
			p.src = p.src[1:]
		}
	}
	return v
}

func (p *port) Write(off uint64, size int, v uint64) {
	for i := range size {
		p.got = append(p.got, byte(v>>(8*i)))
	}
}

// blockPort is port with string transfers of its own (memory.BlockDevice),
// word by word as the core would make them.
type blockPort struct{ port }

func (p *blockPort) ReadBlock(off uint64, width int, b []byte) {
	for i := 0; i+width <= len(b); i += width {
		v := p.Read(off, width)
		for j := range width {
			b[i+j] = byte(v >> (8 * j))
		}
	}
}

func (p *blockPort) WriteBlock(off uint64, width int, b []byte) {
	for i := 0; i+width <= len(b); i += width {
		var v uint64
		for j := range width {
			v |= uint64(b[i+j]) << (8 * j)
		}
		p.Write(off, width, v)
	}
}

// String transfers with a device that moves them itself (BlockDevice),
// within a page of memory (which it reads or writes in place) and across
// pages, of whole words and with a trailing byte, leave memory, the
// device, the cycles and the counters exactly as the word-by-word
// transfers of a device without them do.
func TestStringTransfersInPlace(t *testing.T) {
	type out struct {
		Mem, Got     []byte
		Cycles       int64
		Stats        cpu.Stats
		CacheHits    uint64
		PagesTouched int
	}
	run := func(dev memory.Device, p *port) out {
		r := newRig(t)
		bus := memory.NewBus(memory.BusParams{Name: "isa", AccessTime: 125 * sim.Nanosecond, Width: 2})
		if err := r.sys.Devices.Map(memory.Mapping{Name: "nic", Space: memory.SpaceIO, Base: 0x300, Size: 0x20, Dev: dev, Bus: bus}); err != nil {
			t.Fatal(err)
		}
		for i := range 0x3000 {
			p.src = append(p.src, byte(i*7+3))
		}
		x := r.c.NewContext("io", cpu.KindThread, func(*cpu.Context) {
			seed := make([]byte, 0x400)
			for i := range seed {
				seed[i] = byte(i ^ 0x5a)
			}
			r.c.Write(0x8000, seed) // a page of its own, touched
			for _, tr := range []struct {
				a     memory.Addr
				n     int
				write bool
			}{
				{0x1010, 1024, false}, // within an untouched page
				{0x8010, 1024, true},  // within a touched page
				{0x1ff0, 64, false},   // across two pages
				{0x2ff8, 32, true},
				{0x3000, 61, false}, // a trailing byte
				{0x8400, 61, true},
				{0x4000, 4096, false}, // a whole page
				{0x5000, 4096, true},
			} {
				if tr.write {
					r.c.OutString(memory.SpaceIO, 0x310, 2, tr.a, tr.n)
				} else {
					r.c.InString(memory.SpaceIO, 0x310, 2, tr.a, tr.n)
				}
			}
		})
		r.c.Start(x)
		r.k.Run()
		o := out{Mem: make([]byte, 0x6000), Got: p.got, Cycles: r.c.Cycles(), Stats: r.c.Stats(), PagesTouched: r.sys.Phys.PagesTouched()}
		if err := r.sys.Phys.Read(0, o.Mem); err != nil {
			t.Fatal(err)
		}
		for _, c := range r.sys.Cache.Caches() {
			s := c.Stats()
			o.CacheHits += s.ReadHits + s.WriteHits
		}
		return o
	}
	plain := &port{}
	want := run(plain, plain)
	block := &blockPort{}
	got := run(block, &block.port)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("with the device's own string transfers (-word by word +in place):\n%s", d)
	}
	if len(got.Got) == 0 || got.CacheHits == 0 {
		t.Errorf("nothing moved: %d bytes written to the device, %d cache hits", len(got.Got), got.CacheHits)
	}
}
