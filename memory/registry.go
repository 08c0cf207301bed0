package memory

import (
	"cmp"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"simkron/sim"
)

// Space is an address space a device can be mapped into.
type Space uint8

// Address spaces.
const (
	SpaceMem Space = iota // memory-mapped (physical addresses)
	SpaceIO               // x86-style I/O ports
	numSpaces
)

// String returns "mem" or "io".
func (s Space) String() string {
	switch s {
	case SpaceMem:
		return "mem"
	case SpaceIO:
		return "io"
	}
	return fmt.Sprintf("Space(%d)", uint8(s))
}

// MarshalText writes the space as UnmarshalText reads it.
func (s Space) MarshalText() ([]byte, error) {
	if s >= numSpaces {
		return nil, fmt.Errorf("memory: invalid space %d", uint8(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText reads "mem" or "io".
func (s *Space) UnmarshalText(b []byte) error {
	switch string(b) {
	case "mem":
		*s = SpaceMem
	case "io":
		*s = SpaceIO
	default:
		return fmt.Errorf("space %q: want \"mem\" or \"io\"", b)
	}
	return nil
}

// Device is a register-level device model. Read and Write happen at the
// kernel's current time, and so do their side effects (reading an
// interrupt status register may clear it). off is relative to the
// mapping's base; size is the access width in bytes (1, 2, 4 or 8).
type Device interface {
	Name() string
	Read(off uint64, size int) uint64
	Write(off uint64, size int, v uint64)
}

// Peeker is implemented by devices whose registers an observer (an
// annotation) may read without the side effects of a bus read: Peek
// returns the register at off, or false where that cannot be done.
type Peeker interface {
	Peek(off uint64) (uint64, bool)
}

// BlockDevice is implemented by devices with a data port, so that string
// I/O (rep ins/outs) moves many words in one call. len(p)/width accesses of
// width bytes each are made at off, little-endian.
type BlockDevice interface {
	ReadBlock(off uint64, width int, p []byte)
	WriteBlock(off uint64, width int, p []byte)
}

// BusParams configures a bus (ISA, PCI, the memory bus), from its TOML
// table.
type BusParams struct {
	Name       string   `toml:"name" help:"bus name, e.g. isa (a name: letters, digits, '-' and '_', at most 64)"`
	AccessTime sim.Time `toml:"access_time" help:"time of one bus cycle of up to width bytes"`
	Width      int      `toml:"width" min:"1" max:"8" help:"bytes moved per bus cycle"`
	// ReadTime serves buses where the CPU waits longer for a read than a
	// write costs it: a store to a device is posted in the CPU's write
	// buffer and retires at the bus's write rate, a load stalls the CPU
	// for the whole read transaction (the R3000 and its TURBOchannel).
	ReadTime sim.Time `toml:"read_time" help:"time of one bus read cycle, when a read costs the CPU more than access_time (a load waits for the whole transaction, a store is posted); 0: access_time"`
}

// Validate checks p; errors name the TOML key at fault.
func (p BusParams) Validate() error {
	switch {
	case p.Name == "":
		return fmt.Errorf("name: must not be empty")
	case p.AccessTime < 0:
		return fmt.Errorf("access_time: %v must not be negative", p.AccessTime)
	case p.ReadTime < 0:
		return fmt.Errorf("read_time: %v must not be negative", p.ReadTime)
	case p.Width < 1 || p.Width > 8:
		return fmt.Errorf("width: %d must be between 1 and 8", p.Width)
	}
	return nil
}

// Bus times device accesses: each bus cycle moves up to Width bytes and
// takes AccessTime.
type Bus struct {
	p BusParams
}

// NewBus returns a bus. It panics if p is invalid: validate configuration
// with BusParams.Validate first.
func NewBus(p BusParams) *Bus {
	if err := p.Validate(); err != nil {
		panic(fmt.Sprintf("memory: NewBus(%q): %v", p.Name, err))
	}
	return &Bus{p: p}
}

// span returns the time of moving bytes in bus cycles of cycle each.
func (b *Bus) span(bytes int, cycle sim.Time) sim.Time {
	if bytes <= 0 {
		return 0
	}
	return sim.Time((bytes+b.p.Width-1)/b.p.Width) * cycle
}

// Name returns the bus name.
func (b *Bus) Name() string { return b.p.Name }

// Params returns the bus configuration.
func (b *Bus) Params() BusParams { return b.p }

// Cost returns the time to move bytes over the bus: ceil(bytes/width) bus
// cycles.
func (b *Bus) Cost(bytes int) sim.Time { return b.span(bytes, b.p.AccessTime) }

// ReadCost returns the time of a read of bytes: ceil(bytes/width) read
// cycles, each ReadTime (AccessTime when ReadTime is 0).
func (b *Bus) ReadCost(bytes int) sim.Time {
	return b.span(bytes, cmp.Or(b.p.ReadTime, b.p.AccessTime))
}

// Mapping places a device (or a named region without a device model) at
// [Base, Base+Size) in one address space, reached over Bus (nil: the
// memory bus, no extra timing).
type Mapping struct {
	Name  string
	Space Space
	Base  Addr
	Size  uint64
	Dev   Device
	Bus   *Bus
}

// End returns the first address after the mapping.
func (m *Mapping) End() Addr { return m.Base + Addr(m.Size) }

// Contains reports whether a falls in the mapping.
func (m *Mapping) Contains(a Addr) bool { return a >= m.Base && uint64(a-m.Base) < m.Size }

// Registry maps addresses to devices: per space, a slice of mappings
// sorted by base, searched by binary search. A mapping, once made, is
// never removed or changed: a core keeps the mappings it accessed (and
// their bus costs in its cycles) and answers a run of accesses to one
// device without asking the registry.
type Registry struct {
	spaces [numSpaces][]*Mapping
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

// Map adds m. It fails if the size is zero, the range wraps, the space is
// unknown or the range overlaps an existing mapping (both are named).
func (r *Registry) Map(m Mapping) error {
	switch {
	case m.Space >= numSpaces:
		return fmt.Errorf("memory: mapping %q: invalid space %d", m.Name, uint8(m.Space))
	case m.Size == 0:
		return fmt.Errorf("memory: mapping %q at %s %#x has zero size", m.Name, m.Space, uint64(m.Base))
	case uint64(m.Base)+m.Size-1 < uint64(m.Base):
		return fmt.Errorf("memory: mapping %q at %s %#x of size %#x wraps around the address space", m.Name, m.Space, uint64(m.Base), m.Size)
	}
	list := r.spaces[m.Space]
	i := sort.Search(len(list), func(i int) bool { return list[i].Base > m.Base })
	for _, j := range []int{i - 1, i} {
		if j < 0 || j >= len(list) {
			continue
		}
		o := list[j]
		if m.Base <= o.lastAddr() && o.Base <= m.lastAddr() {
			return fmt.Errorf("memory: mapping %q %s [%#x, %#x] overlaps %q [%#x, %#x]",
				m.Name, m.Space, uint64(m.Base), uint64(m.lastAddr()), o.Name, uint64(o.Base), uint64(o.lastAddr()))
		}
	}
	nm := m
	list = append(list, nil)
	copy(list[i+1:], list[i:])
	list[i] = &nm
	r.spaces[m.Space] = list
	return nil
}

func (m *Mapping) lastAddr() Addr { return m.Base + Addr(m.Size-1) }

// Lookup returns the mapping holding a in space.
func (r *Registry) Lookup(space Space, a Addr) (*Mapping, bool) {
	if space >= numSpaces {
		return nil, false
	}
	list := r.spaces[space]
	lo, hi := 0, len(list)
	for lo < hi { // first mapping with Base > a
		mid := int(uint(lo+hi) >> 1)
		if list[mid].Base <= a {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == 0 || !list[lo-1].Contains(a) {
		return nil, false
	}
	return list[lo-1], true
}

// Mappings returns copies of all mappings, sorted by space then base.
func (r *Registry) Mappings() []Mapping {
	var out []Mapping
	for _, list := range r.spaces {
		for _, m := range list {
			out = append(out, *m)
		}
	}
	return out
}

// WriteTable prints the address map, one mapping per line, like SimOS's
// table of device address ranges:
//
//	SPACE  NAME    START       END         SIZE    BUS  DEVICE
//	mem    fb      0x000a0000  0x000bffff  128KiB  -    -
//	io     ne2000  0x0300      0x031f      32B     isa  ne2000
//
// END is inclusive. Memory addresses print with 8 hex digits (more if
// needed), ports with 4.
func (r *Registry) WriteTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SPACE\tNAME\tSTART\tEND\tSIZE\tBUS\tDEVICE")
	for _, list := range r.spaces {
		for _, m := range list {
			digits := 8
			if m.Space == SpaceIO {
				digits = 4
			}
			bus, dev := "-", "-"
			if m.Bus != nil {
				bus = m.Bus.Name()
			}
			if m.Dev != nil {
				dev = m.Dev.Name()
			}
			fmt.Fprintf(tw, "%s\t%s\t%#0*x\t%#0*x\t%v\t%s\t%s\n", m.Space, m.Name,
				digits, uint64(m.Base), digits, uint64(m.lastAddr()), sim.Size(m.Size), bus, dev)
		}
	}
	tw.Flush()
}
