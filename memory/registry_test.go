package memory_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/memory"
	"simkron/sim"
)

// fakeDev is a device with one register file of 8-byte cells.
type fakeDev struct {
	name string
	regs map[uint64]uint64
}

func (d *fakeDev) Name() string                         { return d.name }
func (d *fakeDev) Read(off uint64, size int) uint64     { return d.regs[off] }
func (d *fakeDev) Write(off uint64, size int, v uint64) { d.regs[off] = v }

func newDev(name string) *fakeDev { return &fakeDev{name: name, regs: map[uint64]uint64{}} }

func testRegistry(t *testing.T) (*memory.Registry, *memory.Bus) {
	t.Helper()
	isa := memory.NewBus(memory.BusParams{Name: "isa", AccessTime: 1 * sim.Microsecond, Width: 2})
	r := memory.NewRegistry()
	for _, m := range []memory.Mapping{
		{Name: "ne2000", Space: memory.SpaceIO, Base: 0x300, Size: 0x20, Dev: newDev("ne2000"), Bus: isa},
		{Name: "timer", Space: memory.SpaceIO, Base: 0x40, Size: 4, Dev: newDev("pit"), Bus: isa},
		{Name: "fb", Space: memory.SpaceMem, Base: 0xa0000, Size: 0x20000},
		{Name: "taxi", Space: memory.SpaceMem, Base: 0xfebf0000, Size: 0x1000, Dev: newDev("atmtaxi")},
		{Name: "hi", Space: memory.SpaceMem, Base: 0x1_0000_0000, Size: 0x10000, Dev: newDev("hi")},
	} {
		if err := r.Map(m); err != nil {
			t.Fatalf("Map(%s): %v", m.Name, err)
		}
	}
	return r, isa
}

func TestRegistryMapErrors(t *testing.T) {
	r, _ := testRegistry(t)
	tests := []struct {
		name string
		m    memory.Mapping
		want string
	}{
		{"zero size", memory.Mapping{Name: "z", Space: memory.SpaceIO, Base: 0x100},
			`memory: mapping "z" at io 0x100 has zero size`},
		{"overlap start", memory.Mapping{Name: "wd", Space: memory.SpaceIO, Base: 0x310, Size: 0x20},
			`memory: mapping "wd" io [0x310, 0x32f] overlaps "ne2000" [0x300, 0x31f]`},
		{"overlap end", memory.Mapping{Name: "wd", Space: memory.SpaceIO, Base: 0x2f0, Size: 0x11},
			`memory: mapping "wd" io [0x2f0, 0x300] overlaps "ne2000" [0x300, 0x31f]`},
		{"covers", memory.Mapping{Name: "big", Space: memory.SpaceMem, Base: 0, Size: 0x100000},
			`memory: mapping "big" mem [0x0, 0xfffff] overlaps "fb" [0xa0000, 0xbffff]`},
		{"wraps", memory.Mapping{Name: "w", Space: memory.SpaceMem, Base: memory.Addr(^uint64(0)), Size: 2},
			`memory: mapping "w" at mem 0xffffffffffffffff of size 0x2 wraps around the address space`},
		{"other space is fine", memory.Mapping{Name: "io-fb", Space: memory.SpaceIO, Base: 0xa0000, Size: 0x10}, ""},
		{"adjacent is fine", memory.Mapping{Name: "after", Space: memory.SpaceIO, Base: 0x320, Size: 0x10}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if err := r.Map(tt.m); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Map error = %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestRegistryLookup(t *testing.T) {
	r, _ := testRegistry(t)
	tests := []struct {
		space memory.Space
		a     memory.Addr
		want  string // "" = unmapped
	}{
		{memory.SpaceIO, 0x300, "ne2000"},
		{memory.SpaceIO, 0x31f, "ne2000"},
		{memory.SpaceIO, 0x320, ""},
		{memory.SpaceIO, 0x2ff, ""},
		{memory.SpaceIO, 0x43, "timer"},
		{memory.SpaceIO, 0x31f, "ne2000"}, // after a miss and another device
		{memory.SpaceMem, 0x300, ""},
		{memory.SpaceMem, 0xbffff, "fb"},
		{memory.SpaceMem, 0xfebf0fff, "taxi"},
		{memory.SpaceMem, 0x1_0000_ffff, "hi"},
		{memory.SpaceMem, 0x1_0001_0000, ""},
		{memory.SpaceMem, 0, ""},
	}
	for _, tt := range tests {
		m, ok := r.Lookup(tt.space, tt.a)
		got := ""
		if ok {
			got = m.Name
		}
		if got != tt.want {
			t.Errorf("Lookup(%v, %#x) = %q, want %q", tt.space, tt.a, got, tt.want)
		}
	}
	// The device is reached through the mapping.
	m, _ := r.Lookup(memory.SpaceIO, 0x302)
	m.Dev.Write(uint64(0x302-m.Base), 1, 0x21)
	if got := m.Dev.Read(2, 1); got != 0x21 {
		t.Errorf("register read back %#x, want 0x21", got)
	}
	var names []string
	for _, m := range r.Mappings() {
		names = append(names, m.Space.String()+":"+m.Name)
	}
	if diff := cmp.Diff([]string{"mem:fb", "mem:taxi", "mem:hi", "io:timer", "io:ne2000"}, names); diff != "" {
		t.Errorf("Mappings order (-want +got):\n%s", diff)
	}
}

func TestRegistryWriteTable(t *testing.T) {
	r, _ := testRegistry(t)
	var b strings.Builder
	r.WriteTable(&b)
	const want = `SPACE  NAME    START        END          SIZE    BUS  DEVICE
mem    fb      0x000a0000   0x000bffff   128KiB  -    -
mem    taxi    0xfebf0000   0xfebf0fff   4KiB    -    atmtaxi
mem    hi      0x100000000  0x10000ffff  64KiB   -    hi
io     timer   0x0040       0x0043       4B      isa  pit
io     ne2000  0x0300       0x031f       32B     isa  ne2000
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("WriteTable (-want +got):\n%s", diff)
	}
}

func TestBusCost(t *testing.T) {
	_, isa := testRegistry(t)
	for _, c := range []struct {
		bytes int
		want  sim.Time
	}{{0, 0}, {1, sim.Microsecond}, {2, sim.Microsecond}, {3, 2 * sim.Microsecond}, {1514, 757 * sim.Microsecond}} {
		if got := isa.Cost(c.bytes); got != c.want {
			t.Errorf("Cost(%d) = %v, want %v", c.bytes, got, c.want)
		}
	}
	// ceil(bytes/width) bus cycles at every width, read and write.
	for w := 1; w <= 8; w++ {
		b := memory.NewBus(memory.BusParams{Name: "b", AccessTime: 7, ReadTime: 11, Width: w})
		b0 := memory.NewBus(memory.BusParams{Name: "b0", AccessTime: 7, Width: w})
		for n := -1; n <= 40; n++ {
			cycles := sim.Time(max(0, (n+w-1)/w))
			if got := b.Cost(n); got != 7*cycles {
				t.Errorf("width %d: Cost(%d) = %v, want %v", w, n, got, 7*cycles)
			}
			if got := b.ReadCost(n); got != 11*cycles {
				t.Errorf("width %d: ReadCost(%d) = %v, want %v", w, n, got, 11*cycles)
			}
			if got := b0.ReadCost(n); got != 7*cycles { // no read time: reads cost AccessTime
				t.Errorf("width %d, no read time: ReadCost(%d) = %v, want %v", w, n, got, 7*cycles)
			}
		}
	}
	if err := (memory.BusParams{Name: "pci", AccessTime: 30 * sim.Nanosecond, Width: 9}).Validate(); err == nil ||
		err.Error() != "width: 9 must be between 1 and 8" {
		t.Errorf("Validate width 9 = %v", err)
	}
}

func TestSpaceText(t *testing.T) {
	for _, s := range []memory.Space{memory.SpaceMem, memory.SpaceIO} {
		b, err := s.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var got memory.Space
		if err := got.UnmarshalText(b); err != nil || got != s {
			t.Errorf("round trip of %v via %q = %v, %v", s, b, got, err)
		}
	}
	var s memory.Space
	if err := s.UnmarshalText([]byte("port")); err == nil {
		t.Errorf("UnmarshalText(port) succeeded")
	}
}
