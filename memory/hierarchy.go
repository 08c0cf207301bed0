package memory

import "fmt"

// HierarchyParams configures the caches of one CPU. Set L1 for a unified
// first level, or L1I and L1D for split ones; L2 (unified) is optional.
type HierarchyParams struct {
	L1              *CacheParams `toml:"l1" help:"unified first-level cache (instead of l1i and l1d)"`
	L1I             *CacheParams `toml:"l1i" help:"first-level instruction cache"`
	L1D             *CacheParams `toml:"l1d" help:"first-level data cache"`
	L2              *CacheParams `toml:"l2" help:"optional unified second-level cache"`
	MemLatency      int64        `toml:"mem_latency" min:"0" max:"100000" help:"cycles from a last-level miss until the data arrives"`
	MemWriteLatency int64        `toml:"mem_write_latency" min:"0" max:"100000" help:"cycles a write to memory costs the CPU (write-through or flush)"`
}

// Validate checks p; errors name the TOML key at fault, e.g.
// "l1d.line: 24B is not a power of two".
func (p HierarchyParams) Validate() error {
	switch {
	case p.L1 != nil && (p.L1I != nil || p.L1D != nil):
		return fmt.Errorf("l1: a unified l1 excludes l1i and l1d")
	case p.L1 == nil && (p.L1I == nil || p.L1D == nil):
		return fmt.Errorf("l1: set either l1 (unified) or both l1i and l1d")
	case p.MemLatency < 0 || p.MemLatency > 100000:
		return fmt.Errorf("mem_latency: %d must be between 0 and 100000", p.MemLatency)
	case p.MemWriteLatency < 0 || p.MemWriteLatency > 100000:
		return fmt.Errorf("mem_write_latency: %d must be between 0 and 100000", p.MemWriteLatency)
	}
	for _, c := range []struct {
		key string
		p   *CacheParams
	}{{"l1", p.L1}, {"l1i", p.L1I}, {"l1d", p.L1D}, {"l2", p.L2}} {
		if c.p == nil {
			continue
		}
		if err := c.p.Validate(); err != nil {
			return fmt.Errorf("%s.%w", c.key, err)
		}
	}
	return nil
}

// Hierarchy is the cache hierarchy of one CPU: first-level caches (unified
// or split), an optional unified L2, and memory. It decides what each
// reference costs in CPU cycles:
//
//	CPU ─► L1I / L1D (or unified L1) ─► L2 (optional) ─► memory
//
//	read/fetch   HitLatency of the first level holding the line, else
//	             MemLatency; the line is filled into every level it missed.
//	write        write-back hit: HitLatency, line dirty.
//	             write-through: HitLatency if hit, plus the write at the
//	             next level (L2: a demand write there; memory:
//	             MemWriteLatency).
//	             miss, no allocate: the write at the next level.
//	             miss, allocate: filled like a read, then written as a hit
//	             (the fill's latency stands for both).
//	victims      a dirty victim goes to L2 if L2 holds the line (made dirty,
//	             or written through to memory), else to memory. It costs
//	             nothing (write buffer) and counts as a Writeback.
//
// L2 is not inclusive: evicting an L2 line leaves L1 copies alone.
//
// The reference model is this file's (reference and the maintenance
// operations); every other path that charges references is a fast path of
// it, in a file of its own (see the package doc).
type Hierarchy struct {
	l1i, l1d, l2 *Cache
	l1           [3]*Cache // first level by access kind
	direct       []*Cache  // the direct-mapped data caches (CopyRange)
	// arrangement chooses the fast paths of runs and copies: the 486's
	// have loops of their own.
	arrangement Arrangement
	// pieces sends every copy through copyPieces (a test's reference).
	pieces      bool
	memLat      int64
	memWriteLat int64
	memReads    uint64
	memWrites   uint64

	// OnStale, if set, is called when a CPU read or fetch hits a line that
	// non-coherent DMA overwrote while it was cached (the System reports it
	// as a guest error).
	OnStale func(a Addr)
}

// NewHierarchy builds empty caches from p.
func NewHierarchy(p HierarchyParams) (*Hierarchy, error) {
	h, err := newHierarchy(p)
	if err != nil {
		return nil, err
	}
	h.reserve()
	return h, nil
}

// newHierarchy is NewHierarchy whose caches do not have their arrays
// yet (reserve).
func newHierarchy(p HierarchyParams) (*Hierarchy, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	h := &Hierarchy{memLat: p.MemLatency, memWriteLat: p.MemWriteLatency}
	if p.L1 != nil {
		h.l1d = newCache("l1", *p.L1)
		h.l1i = h.l1d
	} else {
		h.l1i = newCache("l1i", *p.L1I)
		h.l1d = newCache("l1d", *p.L1D)
	}
	if p.L2 != nil {
		h.l2 = newCache("l2", *p.L2)
	}
	h.l1 = [3]*Cache{Read: h.l1d, Write: h.l1d, Fetch: h.l1i}
	h.l1i.memo = true
	for _, c := range h.dataCaches() {
		if c.assoc == 1 {
			h.direct = append(h.direct, c)
		}
	}
	h.arrangement = h.arranged()
	return h, nil
}

// reserve gives every cache its arrays, unless it has them.
func (h *Hierarchy) reserve() {
	for _, c := range h.Caches() {
		c.reserve()
	}
}

// Arrangement names an arrangement of caches that has fast paths of its
// own. Every arrangement follows the one reference model (Hierarchy); the
// arrangement only chooses the loops that charge runs of references and
// copies, which give the same results.
type Arrangement uint8

// Arrangements.
const (
	// ArrangementGeneral is any caches: runs and copies go through the
	// general loops (fast_range.go, fast_copy.go).
	ArrangementGeneral Arrangement = iota
	// Arrangement486 is the 486's: a four-way write-through first level
	// that does not allocate on a write, over a direct-mapped write-back
	// L2. Runs of reads and writes go through readThrough and
	// throughWords, copies through copyThrough (fast_486.go).
	Arrangement486
)

// String returns "general" or "486".
func (a Arrangement) String() string {
	switch a {
	case ArrangementGeneral:
		return "general"
	case Arrangement486:
		return "486"
	}
	return fmt.Sprintf("Arrangement(%d)", uint8(a))
}

// arranged returns the arrangement of h's caches.
func (h *Hierarchy) arranged() Arrangement {
	c := h.l1d
	if c.assoc == 4 && c.through[Write] && !c.p.WriteAllocate &&
		h.l2 != nil && h.l2.assoc == 1 && h.l2.p.WritePolicy == WriteBack {
		return Arrangement486
	}
	return ArrangementGeneral
}

// Arrangement returns the arrangement of the caches, which chooses the
// fast paths of runs and copies.
func (h *Hierarchy) Arrangement() Arrangement { return h.arrangement }

// L1I returns the first-level cache instruction fetches use.
func (h *Hierarchy) L1I() *Cache { return h.l1i }

// L1D returns the first-level data cache (the same as L1I when unified).
func (h *Hierarchy) L1D() *Cache { return h.l1d }

// L2 returns the second-level cache, or nil.
func (h *Hierarchy) L2() *Cache { return h.l2 }

// MemReads returns how many line fills memory served.
func (h *Hierarchy) MemReads() uint64 { return h.memReads }

// MemWrites returns how many writes reached memory (write-through words,
// write-backs of dirty lines, flushes).
func (h *Hierarchy) MemWrites() uint64 { return h.memWrites }

// ResetStats zeroes every cache's counters and the memory counters.
func (h *Hierarchy) ResetStats() {
	for _, c := range h.caches() {
		c.ResetStats()
	}
	h.memReads, h.memWrites = 0, 0
}

// Caches returns the distinct caches, first level first: L1D then L1I when
// split (one L1 when unified), then L2 if present.
func (h *Hierarchy) Caches() []*Cache {
	out := []*Cache{h.L1D()}
	if h.L1I() != h.L1D() {
		out = append(out, h.L1I())
	}
	if h.L2() != nil {
		out = append(out, h.L2())
	}
	return out
}

// dataCaches returns the caches data maintenance (Flush, Invalidate)
// works on: the first-level data cache and L2.
func (h *Hierarchy) dataCaches() []*Cache {
	if h.l2 == nil {
		return []*Cache{h.l1d}
	}
	return []*Cache{h.l1d, h.l2}
}

// caches returns the distinct caches, first level first.
func (h *Hierarchy) caches() []*Cache {
	cs := make([]*Cache, 0, 3)
	cs = append(cs, h.l1i)
	if h.l1d != h.l1i {
		cs = append(cs, h.l1d)
	}
	if h.l2 != nil {
		cs = append(cs, h.l2)
	}
	return cs
}

// below returns the cache under c, or nil for memory.
func (h *Hierarchy) below(c *Cache) *Cache {
	if c == h.l2 {
		return nil
	}
	return h.l2
}

// reference performs one reference of up to a word at a and returns its
// cost in CPU cycles: the reference model of every path that charges data
// references and fetches. The first level for kind serves it (read), or
// takes it as a demand write (write).
func (h *Hierarchy) reference(a Addr, kind AccessKind) int64 {
	c := h.l1[kind]
	if kind == Write {
		return h.write(c, a)
	}
	cost, _ := h.read(c, a, kind)
	return cost
}

// fillKind is the demand kind a write-allocate fill presents below: it is
// counted as a read, but a stale line is passed up rather than reported.
const fillKind AccessKind = 0xff

// read serves a read-like reference at level c (nil = memory) and returns
// its cost and, for fills on behalf of a write, whether the data was stale.
func (h *Hierarchy) read(c *Cache, a Addr, kind AccessKind) (int64, bool) {
	if c == nil {
		h.memReads++
		return h.memLat, false
	}
	count := kind
	if kind == fillKind {
		count = Read
	}
	line := c.lineOf(uint64(a))
	if i := c.find(line); i >= 0 {
		c.countHit(count)
		c.use(i)
		stale := false
		if c.flags[i]&lineStale != 0 {
			if kind == fillKind {
				stale = true
			} else {
				h.staleRead(c, i, a)
			}
		}
		return c.hit, stale
	}
	return h.miss(c, line, a, kind)
}

// miss handles a read-like miss of line in c: it reads from below and fills.
func (h *Hierarchy) miss(c *Cache, line uint64, a Addr, kind AccessKind) (int64, bool) {
	if kind == fillKind {
		c.countMiss(Read)
	} else {
		c.countMiss(kind)
	}
	cost, stale := h.read(h.below(c), a, kind)
	i := h.fill(c, line)
	if stale {
		c.flags[i] |= lineStale
	}
	return cost, stale
}

// write serves a demand write at level c (nil = memory) and returns its
// cost.
func (h *Hierarchy) write(c *Cache, a Addr) int64 {
	if c == nil {
		h.memWrites++
		return h.memWriteLat
	}
	line := c.lineOf(uint64(a))
	i := c.find(line)
	if i < 0 {
		return h.writeMiss(c, line, a)
	}
	c.hits[Write]++
	c.use(i)
	if c.p.WritePolicy == WriteBack {
		c.flags[i] |= lineDirty
		return c.hit
	}
	return c.hit + h.write(h.below(c), a)
}

// writeMiss handles a write that missed line in c.
func (h *Hierarchy) writeMiss(c *Cache, line uint64, a Addr) int64 {
	c.misses[Write]++
	if !c.p.WriteAllocate {
		return h.write(h.below(c), a)
	}
	cost, stale := h.read(h.below(c), a, fillKind)
	i := h.fill(c, line)
	if stale {
		c.flags[i] |= lineStale
	}
	if c.p.WritePolicy == WriteBack {
		c.flags[i] |= lineDirty
		return cost
	}
	return cost + h.write(h.below(c), a)
}

// fill installs line in c and writes back a dirty victim. It returns the
// new entry.
func (h *Hierarchy) fill(c *Cache, line uint64) int {
	// The victim: the first invalid way of the set, else the least
	// recently used one. An invalid way has stamp 0 and every valid one a
	// later, distinct stamp, so that is the first way of the smallest
	// stamp.
	set := int(line & c.setMask)
	base := set * c.assoc
	v := 0
	if c.assoc == 4 {
		// Four ways (the 486's L1): ties go to the lower way.
		v = victim4(&c.stamps4[set])
	} else {
		stamps := c.stamps[base : base+c.assoc]
		for w := 1; w < len(stamps); w++ {
			if stamps[w] < stamps[v] {
				v = w
			}
		}
	}
	i := base + v
	// The write-back goes below c only: it may come first. A
	// write-through cache holds no dirty line.
	if c.p.WritePolicy == WriteBack {
		if t := c.tags[i]; t != 0 && c.flags[i]&lineDirty != 0 {
			c.stats.Writebacks++
			h.writeback(c, Addr((t-1)<<c.lineShift))
		}
	}
	c.tags[i], c.flags[i] = line+1, 0
	if c.assoc > 1 {
		c.clock++
		c.stamps[i] = c.clock
	}
	if c.memo {
		c.gen[set]++
		c.epoch++
	}
	return i
}

// victim4 is the way of a four-way set with the stamps s that a fill
// takes: the first of the smallest stamp, by a knockout (TestVictim4
// holds it equal to the scan of the general case). Which stamp is
// older is unpredictable, so it is decided without a branch: x-y has its
// top bit set just when x < y, stamps being below 1<<63.
func victim4(s *[4]uint64) int {
	a := (s[1] - s[0]) >> 63
	b := 2 + (s[3]-s[2])>>63
	m := -((s[b&3] - s[a&3]) >> 63)
	return int((a ^ (a^b)&m) & 3)
}

// writeback sends the dirty line at a (line size of c) below c: into L2 if
// L2 holds it, otherwise to memory. It costs the CPU nothing.
func (h *Hierarchy) writeback(c *Cache, a Addr) {
	n := h.below(c)
	if n == nil {
		h.memWrites++
		return
	}
	// An L1 line may span several (smaller) L2 lines.
	pieces := uint64(1)
	if c.lineShift > n.lineShift {
		pieces <<= c.lineShift - n.lineShift
	}
	for k := range pieces {
		i := n.find((n.lineOf(uint64(a))) + k)
		switch {
		case i < 0:
			h.memWrites++
		case n.p.WritePolicy == WriteBack:
			n.flags[i] |= lineDirty
		default:
			h.memWrites++
		}
	}
}

func (h *Hierarchy) staleRead(c *Cache, i int, a Addr) {
	c.stats.StaleReads++
	c.flags[i] &^= lineStale
	if h.OnStale != nil {
		h.OnStale(a)
	}
}

// Flush writes back the dirty lines of [a, a+n) and invalidates every
// cached line there, in the data caches (L1D and L2; a split L1I is not
// touched), as a driver does before a non-coherent device reads memory. It costs each level's HitLatency per
// line looked up plus MemWriteLatency per line written to memory. A dirty L1
// line goes to L2 when L2 holds it, and L2 then writes it once.
func (h *Hierarchy) Flush(a Addr, n uint64) int64 {
	if n == 0 {
		return 0
	}
	before := h.memWrites
	var cost int64
	for _, c := range h.dataCaches() {
		cost += int64(c.linesIn(a, n)) * c.hit
		c.eachPresent(a, n, func(i int) {
			if c.flags[i]&lineDirty != 0 {
				c.stats.Writebacks++
				h.writeback(c, Addr((c.tags[i]-1)<<c.lineShift))
			}
			c.drop(i)
		})
	}
	return cost + int64(h.memWrites-before)*h.memWriteLat
}

// Invalidate drops every cached line of [a, a+n) in the data caches (L1D
// and L2; a split L1I is not touched) without writing it back, as a driver
// does before reading what a non-coherent device wrote. It
// costs each level's HitLatency per line looked up.
func (h *Hierarchy) Invalidate(a Addr, n uint64) int64 {
	if n == 0 {
		return 0
	}
	var cost int64
	for _, c := range h.dataCaches() {
		cost += int64(c.linesIn(a, n)) * c.hit
		c.eachPresent(a, n, c.drop)
	}
	return cost
}

// SnoopInvalidate drops every cached line of [a, a+n), dirty or not, at no
// CPU cost: a coherent DMA write snooped by the caches.
func (h *Hierarchy) SnoopInvalidate(a Addr, n uint64) {
	if n == 0 {
		return
	}
	for _, c := range h.caches() {
		c.eachPresent(a, n, c.drop)
	}
}

// MarkStale marks every cached line of [a, a+n) stale: non-coherent DMA
// wrote memory underneath. The next CPU read hitting such a line counts a
// StaleRead and calls OnStale.
func (h *Hierarchy) MarkStale(a Addr, n uint64) {
	if n == 0 {
		return
	}
	for _, c := range h.caches() {
		c.eachPresent(a, n, func(i int) { c.flags[i] |= lineStale; c.changed(i) })
	}
}

// DirtyIn reports whether any cached line of [a, a+n) is dirty: a
// non-coherent device reading there would miss the CPU's latest writes.
func (h *Hierarchy) DirtyIn(a Addr, n uint64) bool {
	if n == 0 {
		return false
	}
	dirty := false
	for _, c := range h.caches() {
		c.eachPresent(a, n, func(i int) {
			if c.flags[i]&lineDirty != 0 {
				dirty = true
			}
		})
	}
	return dirty
}
