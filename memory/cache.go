package memory

import (
	"fmt"
	"math/bits"
	"unsafe"

	"simkron/sim"
)

// WritePolicy says what a cache does with a write hit.
type WritePolicy uint8

// Write policies.
const (
	// WriteBack marks the line dirty; memory is updated when the line is
	// evicted or flushed.
	WriteBack WritePolicy = iota
	// WriteThrough passes every write on to the next level.
	WriteThrough
)

// String returns "write-back" or "write-through".
func (w WritePolicy) String() string {
	switch w {
	case WriteBack:
		return "write-back"
	case WriteThrough:
		return "write-through"
	}
	return fmt.Sprintf("WritePolicy(%d)", uint8(w))
}

// MarshalText writes the policy as UnmarshalText reads it.
func (w WritePolicy) MarshalText() ([]byte, error) {
	if w > WriteThrough {
		return nil, fmt.Errorf("memory: invalid write policy %d", uint8(w))
	}
	return []byte(w.String()), nil
}

// UnmarshalText reads "write-back" or "write-through".
func (w *WritePolicy) UnmarshalText(b []byte) error {
	switch string(b) {
	case "write-back":
		*w = WriteBack
	case "write-through":
		*w = WriteThrough
	default:
		return fmt.Errorf("write policy %q: want \"write-back\" or \"write-through\"", b)
	}
	return nil
}

// CacheParams configures one cache, from its TOML table.
type CacheParams struct {
	Size          sim.Size    `toml:"size" help:"capacity"`
	Line          sim.Size    `toml:"line" help:"line size"`
	Assoc         int         `toml:"assoc" min:"1" max:"64" help:"ways per set (1 = direct-mapped)"`
	HitLatency    int64       `toml:"hit_latency" min:"0" max:"1000" help:"cycles for a hit at this level"`
	WritePolicy   WritePolicy `toml:"write_policy" help:"write-back or write-through"`
	WriteAllocate bool        `toml:"write_allocate" help:"allocate a line on a write miss"`
}

func isPow2(v uint64) bool { return v != 0 && v&(v-1) == 0 }

// Validate checks p; each error names the TOML field at fault.
func (p CacheParams) Validate() error {
	switch {
	case p.Line < 4 || p.Line > 1<<20:
		return fmt.Errorf("line: %v must be between 4B and 1MiB", p.Line)
	case !isPow2(uint64(p.Line)):
		return fmt.Errorf("line: %v is not a power of two", p.Line)
	case p.Assoc < 1 || p.Assoc > 64:
		return fmt.Errorf("assoc: %d must be between 1 and 64", p.Assoc)
	case p.Size == 0:
		return fmt.Errorf("size: must not be zero")
	case p.Size > 1<<40:
		return fmt.Errorf("size: %v is larger than 1TiB", p.Size)
	case isPow2(uint64(p.Assoc)) && !isPow2(uint64(p.Size)):
		return fmt.Errorf("size: %v is not a power of two", p.Size)
	case p.Size%(p.Line*sim.Size(p.Assoc)) != 0:
		return fmt.Errorf("size: %v is not a multiple of line (%v) × assoc (%d)", p.Size, p.Line, p.Assoc)
	case !isPow2(uint64(p.Size / (p.Line * sim.Size(p.Assoc)))):
		return fmt.Errorf("size: %v with %v lines and %d ways gives %d sets, not a power of two",
			p.Size, p.Line, p.Assoc, p.Size/(p.Line*sim.Size(p.Assoc)))
	case p.HitLatency < 0 || p.HitLatency > 1000:
		return fmt.Errorf("hit_latency: %d must be between 0 and 1000", p.HitLatency)
	case p.WritePolicy > WriteThrough:
		return fmt.Errorf("write_policy: invalid value %d", uint8(p.WritePolicy))
	}
	return nil
}

// AccessKind is the kind of one CPU reference.
type AccessKind uint8

// Access kinds.
const (
	Read  AccessKind = iota // data load
	Write                   // data store
	Fetch                   // instruction fetch
)

// String returns "read", "write" or "fetch".
func (k AccessKind) String() string {
	switch k {
	case Read:
		return "read"
	case Write:
		return "write"
	case Fetch:
		return "fetch"
	}
	return fmt.Sprintf("AccessKind(%d)", uint8(k))
}

// CacheStats counts the events of one cache. Hits and misses count demand
// references only (CPU references and, at L2, L1 misses and write-through
// traffic); victim write-backs arriving from above are not counted there.
type CacheStats struct {
	ReadHits, ReadMisses   uint64 // data loads
	WriteHits, WriteMisses uint64 // data stores
	FetchHits, FetchMisses uint64 // instruction fetches
	Writebacks             uint64 // dirty lines written to the next level (evicted or flushed)
	Invalidations          uint64 // valid lines dropped by Flush, Invalidate or a DMA snoop
	StaleReads             uint64 // reads that hit a line non-coherent DMA had overwritten
}

// Accesses returns all demand references.
func (s CacheStats) Accesses() uint64 {
	return s.ReadHits + s.ReadMisses + s.WriteHits + s.WriteMisses + s.FetchHits + s.FetchMisses
}

// Misses returns all demand misses.
func (s CacheStats) Misses() uint64 { return s.ReadMisses + s.WriteMisses + s.FetchMisses }

// MissRate returns Misses/Accesses, or 0 without accesses.
func (s CacheStats) MissRate() float64 {
	if a := s.Accesses(); a != 0 {
		return float64(s.Misses()) / float64(a)
	}
	return 0
}

// Line state bits.
const (
	lineDirty uint8 = 1 << iota
	lineStale       // non-coherent DMA wrote memory under this line
)

// Cache is the tag store of one cache with LRU replacement. It holds no
// data: data always lives in Phys. The arrays are flat, indexed by
// set*assoc + way, so that a set's ways are adjacent:
//
//	tags[i]    line number + 1 (0 = invalid)
//	stamps[i]  value of clock at the last use (LRU: smallest is evicted);
//	           a direct-mapped cache has no choice to make, and the paths
//	           made for one (the 486's L2) leave its stamps alone
//	flags[i]   lineDirty | lineStale
//
// A lookup reads only tags, a set's in a row.
//
// A Cache is driven by a Hierarchy.
type Cache struct {
	name      string
	p         CacheParams
	lineShift uint
	setMask   uint64
	assoc     int
	hit       int64
	tags      []uint64
	stamps    []uint64
	// In a four-way cache, tags and stamps by set: views of the same
	// memory, so that a set's lookup or victim choice checks one index.
	tags4, stamps4 [][4]uint64
	flags          []uint8
	clock          uint64
	// gen counts, per set, the changes to which lines it holds and their
	// flags (an install, a drop, a stale mark); epoch counts them over
	// the whole cache. A hit changes neither. FetchMemo relies on them,
	// and they are kept only where memo is set: in the cache that serves
	// instruction fetch (gen is nil in the others).
	gen   []uint32
	epoch uint64
	memo  bool

	// Per access kind (index Read, Write, Fetch), so the hit path needs no
	// branch on the kind.
	hits, misses [3]uint64
	dirtyOn      [3]uint8 // flags a hit sets: lineDirty for a write-back write
	staleOn      [3]uint8 // flags that make a hit report: lineStale for reads
	through      [3]bool  // a hit passes on below: write-through writes

	stats CacheStats // Writebacks, Invalidations, StaleReads
}

// NewCache returns an empty cache. It panics if p is invalid: validate
// configuration with CacheParams.Validate first.
func NewCache(name string, p CacheParams) *Cache {
	c := newCache(name, p)
	c.reserve()
	return c
}

// newCache is NewCache without the tag and state arrays (reserve makes
// them): the caches of a system in functional detail, which never touch
// them (NewFunctionalSystem).
func newCache(name string, p CacheParams) *Cache {
	if err := p.Validate(); err != nil {
		panic(fmt.Sprintf("memory: NewCache(%q): %v", name, err))
	}
	lines := int(p.Size / p.Line)
	sets := uint64(lines / p.Assoc)
	c := &Cache{
		name:      name,
		p:         p,
		lineShift: uint(bits.TrailingZeros64(uint64(p.Line))),
		setMask:   sets - 1,
		assoc:     p.Assoc,
		hit:       p.HitLatency,
		staleOn:   [3]uint8{Read: lineStale, Fetch: lineStale},
	}
	if p.WritePolicy == WriteBack {
		c.dirtyOn[Write] = lineDirty
	} else {
		c.through[Write] = true
	}
	return c
}

// reserve makes the cache's arrays, empty, unless it has them.
func (c *Cache) reserve() {
	if c.tags != nil {
		return
	}
	lines := int(c.p.Size / c.p.Line)
	c.tags = make([]uint64, lines)
	c.stamps = make([]uint64, lines)
	c.flags = make([]uint8, lines)
	if c.memo {
		c.gen = make([]uint32, c.setMask+1)
	}
	if c.assoc == 4 {
		c.tags4, c.stamps4 = bySet(c.tags), bySet(c.stamps)
	}
}

// bySet returns s, whose length is a multiple of 4, as one array per
// four-way set, sharing s's memory.
func bySet(s []uint64) [][4]uint64 {
	return unsafe.Slice((*[4]uint64)(unsafe.Pointer(unsafe.SliceData(s))), len(s)/4)
}

// Name returns the cache's hierarchical name.
func (c *Cache) Name() string { return c.name }

// Params returns the cache's configuration.
func (c *Cache) Params() CacheParams { return c.p }

// Stats returns the counters.
func (c *Cache) Stats() CacheStats {
	s := c.stats
	s.ReadHits, s.WriteHits, s.FetchHits = c.hits[Read], c.hits[Write], c.hits[Fetch]
	s.ReadMisses, s.WriteMisses, s.FetchMisses = c.misses[Read], c.misses[Write], c.misses[Fetch]
	return s
}

// ResetStats zeroes the counters; the contents stay.
func (c *Cache) ResetStats() {
	c.stats = CacheStats{}
	c.hits, c.misses = [3]uint64{}, [3]uint64{}
}

// Probe reports whether the line holding a is cached and whether it is
// dirty, without changing replacement state or counters.
func (c *Cache) Probe(a Addr) (present, dirty bool) {
	i := c.find(c.lineOf(uint64(a)))
	if i < 0 {
		return false, false
	}
	return true, c.flags[i]&lineDirty != 0
}

// lineOf returns the number of the line holding address a. (The shift is
// below 64: masking it says so to the compiler.)
func (c *Cache) lineOf(a uint64) uint64 { return a >> (c.lineShift & 63) }

// find returns the index of line, or -1.
func (c *Cache) find(line uint64) int {
	return way(c.tags, int(line&c.setMask)*c.assoc, c.assoc, line+1)
}

// way returns the entry holding tag among the assoc entries of tags from
// base, or -1: find, for loops that hold the tags in a local.
func way(tags []uint64, base, assoc int, tag uint64) int {
	switch assoc {
	case 1:
		if tags[base] == tag {
			return base
		}
	case 2:
		if tags[base] == tag {
			return base
		}
		if tags[base+1] == tag {
			return base + 1
		}
	default:
		for i := base; i < base+assoc; i++ {
			if tags[i] == tag {
				return i
			}
		}
	}
	return -1
}

// find4 is find in a four-way cache (the 486's L1), its tags compared
// without a loop: instruction fetch, whose lines mostly miss in a small
// unified cache, and the first level's runs use it.
func (c *Cache) find4(line uint64) int {
	tag := line + 1
	set := line & c.setMask
	t := &c.tags4[set]
	base := int(set) * 4
	switch tag {
	case t[0]:
		return base
	case t[1]:
		return base + 1
	case t[2]:
		return base + 2
	case t[3]:
		return base + 3
	}
	return -1
}

// use marks entry i most recently used.
func (c *Cache) use(i int) {
	c.clock++
	c.stamps[i] = c.clock
}

// drop invalidates entry i.
func (c *Cache) drop(i int) {
	c.tags[i], c.stamps[i] = 0, 0
	c.flags[i] = 0
	c.stats.Invalidations++
	c.changed(i)
}

// changed notes a change to entry i's line or flags.
func (c *Cache) changed(i int) {
	if c.memo {
		c.gen[i/c.assoc]++
		c.epoch++
	}
}

func (c *Cache) countHit(k AccessKind)  { c.hits[k]++ }
func (c *Cache) countMiss(k AccessKind) { c.misses[k]++ }

// lineSpan returns the first and last line numbers touched by [a, a+n),
// n > 0.
func (c *Cache) lineSpan(a Addr, n uint64) (first, last uint64) {
	end := uint64(a) + n - 1
	if end < uint64(a) { // wraps: clip at the top of the address space
		end = ^uint64(0)
	}
	return uint64(a) >> c.lineShift, end >> c.lineShift
}

// eachPresent calls fn with the index of every valid entry whose line
// intersects [a, a+n), n > 0. It walks the range line by line, or the whole
// tag store when that is shorter.
func (c *Cache) eachPresent(a Addr, n uint64, fn func(i int)) {
	first, last := c.lineSpan(a, n)
	if last-first < uint64(len(c.tags)) {
		for l := first; ; l++ {
			if i := c.find(l); i >= 0 {
				fn(i)
			}
			if l == last {
				return
			}
		}
	}
	for i, t := range c.tags {
		if t != 0 && t-1 >= first && t-1 <= last {
			fn(i)
		}
	}
}

// linesIn returns how many lines of c [a, a+n) touches (saturating).
func (c *Cache) linesIn(a Addr, n uint64) uint64 {
	if n == 0 {
		return 0
	}
	first, last := c.lineSpan(a, n)
	if last-first == ^uint64(0) {
		return last - first
	}
	return last - first + 1
}
