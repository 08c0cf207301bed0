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
type Hierarchy struct {
	l1i, l1d, l2 *Cache
	l1           [3]*Cache // first level by access kind
	direct       []*Cache  // the direct-mapped data caches (CopyRange)
	// through says the caches are the 486's: a four-way write-through L1
	// that does not allocate on a write, over a direct-mapped write-back
	// L2. Copies and runs of reads and writes there go through
	// copyThrough, readThrough and throughWords.
	through bool
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
	if err := p.Validate(); err != nil {
		return nil, err
	}
	h := &Hierarchy{memLat: p.MemLatency, memWriteLat: p.MemWriteLatency}
	if p.L1 != nil {
		h.l1d = NewCache("l1", *p.L1)
		h.l1i = h.l1d
	} else {
		h.l1i = NewCache("l1i", *p.L1I)
		h.l1d = NewCache("l1d", *p.L1D)
	}
	if p.L2 != nil {
		h.l2 = NewCache("l2", *p.L2)
	}
	h.l1 = [3]*Cache{Read: h.l1d, Write: h.l1d, Fetch: h.l1i}
	h.l1i.memo = true
	for _, c := range h.dataCaches() {
		if c.assoc == 1 {
			h.direct = append(h.direct, c)
		}
	}
	h.through = h.is486()
	return h, nil
}

// is486 reports whether the caches are arranged as the 486's (see
// Hierarchy.through).
func (h *Hierarchy) is486() bool {
	c := h.l1d
	return c.assoc == 4 && c.through[Write] && !c.p.WriteAllocate &&
		h.l2 != nil && h.l2.assoc == 1 && h.l2.p.WritePolicy == WriteBack
}

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

// Access performs one reference of up to a word at a and returns its cost
// in CPU cycles.
func (h *Hierarchy) Access(a Addr, kind AccessKind) int64 {
	c := h.l1[kind]
	// L1 hit fast path, without branches on the kind.
	line := c.lineOf(uint64(a))
	base := int(line&c.setMask) * c.assoc
	tags := c.tags
	for i := base; i < base+c.assoc; i++ {
		if tags[i] == line+1 {
			c.hits[kind]++
			c.clock++
			c.stamps[i] = c.clock
			f := c.flags[i] | c.dirtyOn[kind]
			c.flags[i] = f
			if f&c.staleOn[kind] != 0 {
				h.staleRead(c, i, a)
			}
			if c.through[kind] {
				return c.hit + h.write(h.below(c), a)
			}
			return c.hit
		}
	}
	if kind == Write {
		return h.writeMiss(c, line, a)
	}
	cost, _ := h.miss(c, line, a, kind)
	return cost
}

// FetchLines fetches n consecutive lines of the instruction cache, the
// first being the one holding a, in address order, each referenced at its
// first byte, and returns the total cycles. The result and every counter,
// LRU stamp, fill, write-back and stale-read report are exactly those of
// calling Access(line, Fetch) for each line address in turn (addresses
// wrap as that sum would); it is faster because the walk is one loop with
// Access's fetch hit inline.
func (h *Hierarchy) FetchLines(a Addr, n uint64) int64 { return h.fetchWalk(a, n, nil) }

// fetchWalk is FetchLines; with m, it notes each line's entry in m.idx.
func (h *Hierarchy) fetchWalk(a Addr, n uint64, m *FetchMemo) int64 {
	c := h.l1i
	shift := c.lineShift & 63
	step := uint64(1) << shift
	var cost int64
	if m == nil && c.assoc == 4 {
		// The same walk without a memo to note, in a four-way cache
		// (the 486's): a simpler loop, which costs less per line.
		for addr := uint64(a) &^ (step - 1); n > 0; n-- {
			line := addr >> shift
			if i := c.find4(line); i >= 0 {
				c.hits[Fetch]++
				c.clock++
				c.stamps[i] = c.clock
				if c.flags[i]&lineStale != 0 {
					h.staleRead(c, i, Addr(addr))
				}
				cost += c.hit
			} else if n2 := h.l2; n2 != nil && n2.assoc == 1 {
				// fetchMiss, its step through a direct-mapped L2 inline.
				c.misses[Fetch]++
				l := addr >> (n2.lineShift & 63)
				if j := int(l & n2.setMask); n2.tags[j] == l+1 {
					n2.hits[Fetch]++
					if n2.flags[j]&lineStale != 0 {
						h.staleRead(n2, j, Addr(addr))
					}
					cost += n2.hit
				} else {
					n2.misses[Fetch]++
					h.memReads++
					cost += h.memLat
					h.fill(n2, l)
				}
				h.fill(c, line)
			} else {
				add, _ := h.fetchMiss(c, line, Addr(addr))
				cost += add
			}
			addr += step
		}
		return cost
	}
	for addr := uint64(a) &^ (step - 1); n > 0; n-- {
		line := addr >> shift
		var i int
		if c.assoc == 4 {
			i = c.find4(line)
		} else {
			i = c.find(line)
		}
		if i >= 0 {
			// Access's hit: a fetch sets no flag and is never passed on.
			c.hits[Fetch]++
			c.clock++
			c.stamps[i] = c.clock
			if c.flags[i]&lineStale != 0 {
				h.staleRead(c, i, Addr(addr))
			}
			cost += c.hit
		} else {
			var add int64
			add, i = h.fetchMiss(c, line, Addr(addr))
			cost += add
		}
		if m != nil {
			m.idx = append(m.idx, int32(i))
		}
		addr += step
	}
	return cost
}

// FetchMemo remembers where the lines of one code range sat in the
// instruction cache after they were last fetched, so that fetching them
// again while nothing has changed in their sets costs one check per line
// instead of a lookup. The zero value is empty; a CPU keeps one per
// modelled function.
type FetchMemo struct {
	addr  Addr
	n     uint64
	epoch uint64   // the cache's epoch when the memo was made or last checked
	idx   []int32  // the entry of each line
	sets  []int32  // its set
	gen   []uint32 // the set's generation then
	ok    bool
	// fails counts the memo's failures in a row; skip how many walks to
	// make before recording it again.
	fails, skip uint8
}

// FetchLinesMemo is FetchLines(a, n) with memo m: the result, every
// counter and every LRU stamp are exactly FetchLines's. When m holds this
// range and no set of its lines has changed since (no install, drop or
// stale mark; hits do not count), every line is a hit at the entry m
// remembers, and only the hits and the stamps are charged; otherwise the
// walk runs and m is made anew.
func (h *Hierarchy) FetchLinesMemo(a Addr, n uint64, m *FetchMemo) int64 {
	c := h.l1i
	if m.skip > 0 {
		m.skip--
		return h.fetchWalk(a, n, nil)
	}
	if m.ok && m.addr == a && m.n == n {
		valid := m.epoch == c.epoch
		if !valid {
			valid = true
			for k, s := range m.sets {
				if c.gen[s] != m.gen[k] {
					valid = false
					break
				}
			}
		}
		if valid {
			m.fails = 0
			m.epoch = c.epoch
			c.hits[Fetch] += n
			clock, stamps := c.clock, c.stamps
			for _, i := range m.idx {
				clock++
				stamps[i] = clock
			}
			c.clock = clock
			return int64(n) * c.hit
		}
		// The memo did not hold. One that keeps failing (its sets are busy
		// with other lines, as in a unified cache) is made again only now
		// and then, so that it costs little.
		m.ok = false
		m.fails = min(m.fails+1, 6)
		if m.skip = 1<<m.fails - 1; m.skip > 0 {
			m.skip--
			return h.fetchWalk(a, n, nil)
		}
	}
	m.addr, m.n = a, n
	m.idx, m.sets, m.gen = m.idx[:0], m.sets[:0], m.gen[:0]
	cost := h.fetchWalk(a, n, m)
	line := c.lineOf(uint64(a))
	for k, i := range m.idx {
		if c.tags[i] != line+uint64(k)+1 {
			return cost // a line of the range evicted another: no memo
		}
		s := int(i) / c.assoc
		m.sets = append(m.sets, int32(s))
		m.gen = append(m.gen, c.gen[s])
	}
	m.ok, m.epoch = true, c.epoch
	return cost
}

// fetchMiss is Access's fetch miss of line in the first-level cache c,
// referenced at a: miss and read with kind Fetch, which never pass a
// stale line up, with the step through L2 inline. It returns the cost and
// the line's new entry.
func (h *Hierarchy) fetchMiss(c *Cache, line uint64, a Addr) (int64, int) {
	c.misses[Fetch]++
	n := h.l2
	if n == nil {
		h.memReads++
		return h.memLat, h.fill(c, line)
	}
	var cost int64
	l := n.lineOf(uint64(a))
	if j := n.find(l); j >= 0 {
		n.hits[Fetch]++
		n.use(j)
		if n.flags[j]&lineStale != 0 {
			h.staleRead(n, j, a)
		}
		cost = n.hit
	} else {
		n.misses[Fetch]++
		h.memReads++
		cost = h.memLat
		h.fill(n, l)
	}
	return cost, h.fill(c, line)
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
// takes: the first of the smallest stamp, by a knockout. Which stamp is
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

// AccessRange references every word (4 bytes) touching [a, a+n) in address
// order and returns the total cycles. The result and all counters are
// exactly those of calling Access for each word address; it is faster
// because each first-level line is looked up once (lineRun).
func (h *Hierarchy) AccessRange(a Addr, n uint64, kind AccessKind) int64 {
	if n == 0 {
		return 0
	}
	w := uint64(a) &^ 3
	last := (uint64(a) + n - 1) &^ 3
	if last < w { // wrapped
		last = ^uint64(3)
	}
	return h.accessWords(w, (last-w)/4+1, kind)
}

// accessWords references the words starting at w, w+4, ... (words of
// them; w need not be aligned) in turn: exactly Access at each address.
func (h *Hierarchy) accessWords(w, words uint64, kind AccessKind) int64 {
	c := h.l1[kind]
	lineBytes := uint64(c.p.Line)
	var cost int64
	// Runs of hits go through hitWords, and the 486's runs of reads and
	// writes through readThrough and throughWords, until a line where one
	// stopped straight away suggests the rest will not run.
	hits := !c.through[kind]
	runs := hits || kind == Write && h.through
	for words > 0 {
		if runs {
			left := words
			var add int64
			switch {
			case kind == Read && h.through:
				w, words, add = h.readThrough(w, words)
			case hits:
				w, words, add = c.hitWords(w, words, kind)
			default:
				w, words, add = h.throughWords(w, words)
			}
			cost += add
			if words == 0 {
				break
			}
			runs = words != left
		}
		// The words starting in this line.
		k := min(words, ((w|(lineBytes-1))-w)/4+1)
		cost += h.lineRun(c, kind, w, k)
		w, words = w+4*k, words-k
	}
	return cost
}

// hitWords is accessWords' run of first-level hits in c from w on: it
// takes the words a line at a time while the line is there and nothing
// is to be reported (a read of a stale line) or passed on (c does not
// write through), and returns where it stopped, the words left and the
// cycles. The loop calls nothing, so that its values stay in registers.
func (c *Cache) hitWords(w, words uint64, kind AccessKind) (uint64, uint64, int64) {
	tags, stamps, flags := c.tags, c.stamps, c.flags
	shift, mask, assoc, clock := c.lineShift&63, c.setMask, c.assoc, c.clock
	lineBytes := uint64(1) << shift
	set, stale := c.dirtyOn[kind&3], c.staleOn[kind&3]
	var hits uint64
	for words > 0 {
		k := min(words, ((w|(lineBytes-1))-w)/4+1)
		line := w >> shift
		i := way(tags, int(line&mask)*assoc, assoc, line+1)
		if i < 0 || flags[i]&stale != 0 {
			break
		}
		clock += k
		stamps[i] = clock
		flags[i] |= set
		hits += k
		w, words = w+4*k, words-k
	}
	c.clock = clock
	c.hits[kind&3] += hits
	return w, words, int64(hits) * c.hit
}

// readThrough is accessWords' run of reads in the 486's caches (see
// Hierarchy.through) from w on: it takes the words a line at a time while
// the line is in the first level, or is not but L2 holds it (the first
// word then costs L2's hit and fills the line, the others hit it), and
// nothing is to be reported (a stale line). It returns where it stopped,
// the words left and the cycles.
func (h *Hierarchy) readThrough(w, words uint64) (uint64, uint64, int64) {
	c, l2 := h.l1d, h.l2
	stamps, clock := c.stamps, c.clock
	shift := c.lineShift & 63
	lineBytes := uint64(1) << shift
	// An L1 line longer than L2's is filled from several: left to lineRun.
	fills := shift == l2.lineShift
	var hits, misses uint64
	for words > 0 {
		k := min(words, ((w|(lineBytes-1))-w)/4+1)
		line := w >> shift
		hit := k // the words that hit the first level
		i := c.find4(line)
		if i >= 0 {
			if c.flags[i]&lineStale != 0 {
				break
			}
		} else {
			j := int(line & l2.setMask)
			if !fills || l2.tags[j] != line+1 || l2.flags[j]&lineStale != 0 {
				break
			}
			c.clock = clock
			i = h.fill(c, line)
			clock = c.clock
			misses++
			hit--
		}
		clock += hit
		stamps[i] = clock
		hits += hit
		w, words = w+4*k, words-k
	}
	c.clock = clock
	c.hits[Read] += hits
	c.misses[Read] += misses
	l2.hits[Read] += misses
	return w, words, int64(hits)*c.hit + int64(misses)*l2.hit
}

// throughWords is accessWords' run of writes in the 486's caches (see
// Hierarchy.through) from w on: it takes the words a line at a time
// while L2 holds the line. A word then costs the first level's hit if the
// line is there too, and L2's hit, where the line turns dirty. It returns
// where it stopped, the words left and the cycles.
func (h *Hierarchy) throughWords(w, words uint64) (uint64, uint64, int64) {
	c, l2 := h.l1d, h.l2
	stamps, clock := c.stamps, c.clock
	shift2 := l2.lineShift & 63
	lineBytes := uint64(c.p.Line)
	var writeHits, writeMisses uint64
	for words > 0 {
		k := min(words, ((w|(lineBytes-1))-w)/4+1)
		l := w >> shift2
		j := int(l & l2.setMask)
		if l2.tags[j] != l+1 || l2.lineOf(w+4*(k-1)) != l {
			break
		}
		if i := c.find4(c.lineOf(w)); i >= 0 {
			clock += k
			stamps[i] = clock
			writeHits += k
		} else {
			writeMisses += k
		}
		l2.flags[j] |= lineDirty // direct-mapped: no LRU stamp to set
		w, words = w+4*k, words-k
	}
	c.clock = clock
	c.hits[Write] += writeHits
	c.misses[Write] += writeMisses
	l2.hits[Write] += writeHits + writeMisses
	return w, words, int64(writeHits)*c.hit + int64(writeHits+writeMisses)*l2.hit
}

// lineRun references words consecutive words from w, all in one line of
// the first-level cache c (the one for kind), and returns the cycles:
// exactly Access for each in turn. The line is looked up once; after the
// first word the outcome of each is known (a hit in the line, or, for a
// write that does not allocate, a miss again), and the writes a
// write-through cache passes on go below as one run (writeRun).
func (h *Hierarchy) lineRun(c *Cache, kind AccessKind, w, words uint64) int64 {
	line := c.lineOf(w)
	var i int
	if c.assoc == 4 {
		i = c.find4(line)
	} else {
		i = c.find(line)
	}
	if i < 0 {
		return h.lineRunMiss(c, kind, line, w, words)
	}
	// Access's hit, words times.
	c.hits[kind] += words
	c.clock += words
	c.stamps[i] = c.clock
	f := c.flags[i] | c.dirtyOn[kind]
	c.flags[i] = f
	if f&c.staleOn[kind] != 0 {
		h.staleRead(c, i, Addr(w))
	}
	cost := int64(words) * c.hit
	if c.through[kind] {
		cost += h.writeRun(h.below(c), w, words)
	}
	return cost
}

// lineRunMiss is lineRun when the first word misses line.
func (h *Hierarchy) lineRunMiss(c *Cache, kind AccessKind, line, w, words uint64) int64 {
	var cost int64
	switch {
	case kind != Write:
		cost, _ = h.miss(c, line, Addr(w), kind)
	case !c.p.WriteAllocate:
		// Every word misses and goes on below.
		c.misses[Write] += words
		return h.writeRun(h.below(c), w, words)
	default:
		cost = h.writeMiss(c, line, Addr(w))
	}
	if words == 1 {
		return cost
	}
	// The first word filled the line: the others hit it.
	more := words - 1
	i := c.find(line)
	c.hits[kind] += more
	c.clock += more
	c.stamps[i] = c.clock
	c.flags[i] |= c.dirtyOn[kind]
	cost += int64(more) * c.hit
	if c.through[kind] {
		cost += h.writeRun(h.below(c), w+4, more)
	}
	return cost
}

// writeRun serves words consecutive demand writes of words from w at
// level c (nil = memory), as write for each in turn would, and returns
// their cost. It takes them a line of c at a time.
func (h *Hierarchy) writeRun(c *Cache, w, words uint64) int64 {
	if c == nil {
		h.memWrites += words
		return int64(words) * h.memWriteLat
	}
	// The common case, a run in one line that a write-back c holds, in one
	// step.
	line := c.lineOf(w)
	if words > 0 && c.lineOf(w+4*(words-1)) == line && c.p.WritePolicy == WriteBack {
		if i := c.find(line); i >= 0 {
			c.hits[Write] += words
			c.clock += words
			c.stamps[i] = c.clock
			c.flags[i] |= lineDirty
			return int64(words) * c.hit
		}
	}
	var cost int64
	for words > 0 {
		k := min(words, ((w|(uint64(c.p.Line)-1))-w)/4+1)
		line := c.lineOf(w)
		i := c.find(line)
		if i < 0 {
			cost += h.writeMiss(c, line, Addr(w))
			if !c.p.WriteAllocate {
				// The line is still absent: the rest miss too.
				c.misses[Write] += k - 1
				cost += h.writeRun(h.below(c), w+4, k-1)
				w, words = w+4*k, words-k
				continue
			}
			i = c.find(line)
			w, words, k = w+4, words-1, k-1
		}
		if k > 0 {
			c.hits[Write] += k
			c.clock += k
			c.stamps[i] = c.clock
			cost += int64(k) * c.hit
			if c.p.WritePolicy == WriteBack {
				c.flags[i] |= lineDirty
			} else {
				cost += h.writeRun(h.below(c), w, k)
			}
		}
		w, words = w+4*k, words-k
	}
	return cost
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

// CopyRange charges the data references of a copy loop that reads the
// words of [src, src+n) and writes those of [dst, dst+n). The loop is
// taken a line-sized piece at a time: the source piece's words, then the
// destination piece's. That gives exactly the counters and cycles of
// interleaving the words one by one (load, store, load, ...) whenever the
// two pieces cannot evict each other — they map to different sets, or
// their sets have two ways or more — and the pieces are then referenced
// that way, word by word. Pieces end at the smallest line size of the
// data caches; a word that straddles a piece's end is referenced in both
// pieces.
func (h *Hierarchy) CopyRange(dst, src Addr, n uint64) int64 {
	step := uint64(h.l1d.p.Line)
	if h.l2 != nil {
		step = min(step, uint64(h.l2.p.Line))
	}
	check := h.mayConflict(uint64(src), uint64(dst))
	c, through := h.l1d, h.through
	if check || c.through[Write] && !through || h.pieces {
		return h.copyPieces(uint64(dst), uint64(src), 0, n, step, check)
	}
	// Runs of pieces that hit go through copyHits (a write-back first
	// level) or copyThrough (the 486's); the piece where one stops,
	// through copyPieces. When copyHits stops straight away twice, the
	// copy is mostly missing and the rest goes through copyPieces.
	var cost int64
	idle := 0
	for off := uint64(0); off < n; {
		var add int64
		from := off
		if through {
			off, add = h.copyThrough(uint64(src), uint64(dst), off, n, step)
		} else if idle < 2 {
			off, add = c.copyHits(uint64(src), uint64(dst), off, n, step)
			if off == from {
				idle++
			}
		} else {
			return cost + h.copyPieces(uint64(dst), uint64(src), off, n, step, false)
		}
		cost += add
		if off < n {
			s, d := uint64(src)+off, uint64(dst)+off
			k := min(n-off, step-s&(step-1), step-d&(step-1))
			cost += h.copyPieces(uint64(dst), uint64(src), off, off+k, step, false)
			off += k
		}
	}
	return cost
}

// copyPieces is CopyRange's loop over the pieces from off to end, which
// may conflict where check is set.
func (h *Hierarchy) copyPieces(dst, src, off, end, step uint64, check bool) int64 {
	c := h.l1d
	var cost int64
	for off < end {
		s, d := src+off, dst+off
		k, sn, dn := piece(s, d, end-off, step)
		if check && h.conflict(s, d) {
			for x := uint64(0); x < k; x += 4 {
				cost += h.Access(Addr(s+x), Read)
				cost += h.Access(Addr(d+x), Write)
			}
		} else {
			// Each piece lies in one line of every data cache: the
			// source's words, then the destination's, each a lineRun.
			// The commonest, a first-level hit that reports nothing and
			// passes nothing on (not stale; not written through), is
			// charged here without the call.
			sw, dw := s&^3, d&^3
			if i := c.find(c.lineOf(sw)); i >= 0 && c.flags[i]&lineStale == 0 {
				c.hits[Read] += sn
				c.clock += sn
				c.stamps[i] = c.clock
				cost += int64(sn) * c.hit
			} else {
				cost += h.lineRun(c, Read, sw, sn)
			}
			if c.through[Write] {
				cost += h.lineRun(c, Write, dw, dn)
			} else if i := c.find(c.lineOf(dw)); i >= 0 {
				c.hits[Write] += dn
				c.clock += dn
				c.stamps[i] = c.clock
				c.flags[i] |= c.dirtyOn[Write]
				cost += int64(dn) * c.hit
			} else {
				cost += h.lineRun(c, Write, dw, dn)
			}
		}
		off += k
	}
	return cost
}

// piece returns the length of a copy's piece at source s and destination
// d: up to left bytes, within one step-aligned block on each side (step
// being the shortest line, so within one line of every cache), and the
// words [s, s+k) and [d, d+k) touch.
func piece(s, d, left, step uint64) (k, sn, dn uint64) {
	k = min(left, step-s&(step-1), step-d&(step-1))
	return k, (s+k-1)>>2 - s>>2 + 1, (d+k-1)>>2 - d>>2 + 1
}

// copyHits charges CopyRange's pieces from off on while both the source
// piece and the destination piece hit the first-level data cache c, the
// source not stale, where c writes back (a write hit then goes no
// further), and the two pieces cannot evict each other. It returns where
// it stopped and the cycles. The loop calls nothing, so that its values
// stay in registers.
func (c *Cache) copyHits(src, dst, off, n, step uint64) (uint64, int64) {
	tags, stamps, flags := c.tags, c.stamps, c.flags
	shift, mask, assoc, clock := c.lineShift&63, c.setMask, c.assoc, c.clock
	start := clock
	lmask := uint64(1)<<shift - 1
	var reads uint64
	// The entries of the lines the last piece used, -1 before the first:
	// a piece is on a new line just when it starts one, the pieces being
	// contiguous and none crossing a line, and nothing here moves a line.
	si, di := -1, -1
	s, d, left := src+off, dst+off, n-off
	// Where the lines are one piece long and the two sides sit differently
	// in them, a line's worth from a source line start is two pieces of
	// the same lengths and word counts every time (see copyThrough): A, on
	// a new source line and the destination line B began, and B, on the
	// same source line and a new destination line.
	dOff := (d - s) & (step - 1)
	pair := step == lmask+1 && dOff != 0
	kA, snA, dnA := piece(0, dOff, step, step)
	_, snB, dnB := piece(kA, step, step-kA, step)
	for left > 0 {
		if pair && s&lmask == 0 && left >= step && di >= 0 {
			sl := s >> shift
			si = way(tags, int(sl&mask)*assoc, assoc, sl+1)
			if si < 0 || flags[si]&lineStale != 0 {
				break
			}
			clock += snA
			stamps[si] = clock
			clock += dnA
			stamps[di] = clock
			flags[di] |= lineDirty
			reads += snA
			s, d, left = s+kA, d+kA, left-kA
			dl := d >> shift
			if di = way(tags, int(dl&mask)*assoc, assoc, dl+1); di < 0 {
				break
			}
			clock += snB
			stamps[si] = clock
			clock += dnB
			stamps[di] = clock
			flags[di] |= lineDirty
			reads += snB
			s, d, left = s+dOff, d+dOff, left-dOff
			continue
		}
		k, sn, dn := piece(s, d, left, step)
		if s&lmask == 0 || si < 0 {
			sl := s >> shift
			si = way(tags, int(sl&mask)*assoc, assoc, sl+1)
			if si < 0 || flags[si]&lineStale != 0 {
				break
			}
		}
		if d&lmask == 0 || di < 0 {
			dl := d >> shift
			di = way(tags, int(dl&mask)*assoc, assoc, dl+1)
			if di < 0 {
				break
			}
		}
		clock += sn
		stamps[si] = clock
		clock += dn
		stamps[di] = clock
		flags[di] |= lineDirty
		reads += sn
		s, d, left = s+k, d+k, left-k
	}
	c.clock = clock
	// Every word moved the clock once.
	writes := clock - start - reads
	c.hits[Read] += reads
	c.hits[Write] += writes
	return n - left, int64(reads+writes) * c.hit
}

// copyThrough is copyHits for a four-way write-through first level that
// does not allocate on a write, over a direct-mapped write-back L2 (the
// 486's caches): it takes pieces while L2 holds the destination and the
// source is in the first level or in L2, not stale. A source that misses
// the first level costs L2's hit and is filled; a destination word costs
// the first level's hit if the line is there too, and L2's hit, where the
// line turns dirty.
//
// A copy whose two sides sit differently in their lines has two pieces
// on each line, and the second finds the line where the first left it:
// on the source side because only a store came between and a store
// allocates nothing; on the destination side unless a source line was
// filled between, which takes the least recently used way of its set (never
// the line the last piece stored to) but may be the very line that store
// missed (a copy onto itself a little ahead, with first-level lines longer
// than L2's): a fill forgets it; in L2 because nothing here fills L2. So
// each line is looked up about once. Where both levels' lines are one
// piece long (the 486's), the two pieces of a line have the same lengths
// and word counts all along the copy, and the loop takes them as a pair.
func (h *Hierarchy) copyThrough(src, dst, off, n, step uint64) (uint64, int64) {
	c, l2 := h.l1d, h.l2
	stamps, clock := c.stamps, c.clock
	start := clock
	shift, shift2 := c.lineShift&63, l2.lineShift&63
	lmask, lmask2 := uint64(1)<<shift-1, uint64(1)<<shift2-1
	var readMisses, writeHits, writeMisses uint64
	// The entries of the lines the last piece used: a piece is on a new
	// line just when it starts one, the pieces being contiguous and none
	// crossing a line. si and di2 are -1 before the first piece; di is -1
	// when the destination line is not in the first level, -2 when it is
	// to be looked up again.
	si, di, di2 := -1, -2, -1
	s, d, left := src+off, dst+off, n-off
	// Where both levels have lines of step bytes and the two sides sit
	// differently in them, a line's worth from a source line start is two
	// pieces of the same lengths and word counts every time: A, on a new
	// source line and the destination line B began, and B, on the same
	// source line and a new destination line. pair takes the two at once.
	dOff := (d - s) & (step - 1)
	pair := shift == shift2 && step == lmask+1 && dOff != 0
	kA, snA, dnA := piece(0, dOff, step, step)
	_, snB, dnB := piece(kA, step, step-kA, step)
	for left > 0 {
		// (di is never -2 here: the general loop looks a forgotten line
		// up again within the piece that forgot it.)
		if pair && s&lmask == 0 && left >= step && di2 >= 0 {
			// A: the source line, looked up as below. Its fill cannot
			// evict B's destination line, stored to last, nor install it
			// while mayConflict sends copies whose two sides share a line
			// to copyPieces; the lookup after a fill does not rely on
			// that.
			sl := s >> shift
			if i := c.find4(sl); i >= 0 {
				if c.flags[i]&lineStale != 0 {
					break
				}
				si = i
				clock += snA
			} else {
				j := int(sl & l2.setMask)
				if l2.tags[j] != sl+1 || l2.flags[j]&lineStale != 0 {
					break
				}
				c.clock = clock
				si = h.fill(c, sl)
				clock = c.clock + snA - 1
				readMisses++
				di = c.find4(d >> shift)
			}
			stamps[si] = clock
			if di >= 0 {
				clock += dnA
				stamps[di] = clock
				writeHits += dnA
			} else {
				writeMisses += dnA
			}
			l2.flags[di2] |= lineDirty
			s, d, left = s+kA, d+kA, left-kA
			// B: the destination line, in L2 or the copy stops here.
			dl := d >> shift
			j := int(dl & l2.setMask)
			if l2.tags[j] != dl+1 {
				break
			}
			di2 = j
			clock += snB
			stamps[si] = clock
			if di = c.find4(dl); di >= 0 {
				clock += dnB
				stamps[di] = clock
				writeHits += dnB
			} else {
				writeMisses += dnB
			}
			l2.flags[di2] |= lineDirty
			s, d, left = s+dOff, d+dOff, left-dOff
			continue
		}
		k, sn, dn := piece(s, d, left, step)
		if d&lmask2 == 0 || di2 < 0 {
			dl2 := d >> shift2
			j := int(dl2 & l2.setMask)
			if l2.tags[j] != dl2+1 {
				break
			}
			di2 = j
		}
		if s&lmask == 0 || si < 0 {
			sl := s >> shift
			if i := c.find4(sl); i >= 0 {
				if c.flags[i]&lineStale != 0 {
					break
				}
				si = i
				clock += sn
			} else {
				// The first word misses, L2 serves it and the line is
				// filled; the others hit.
				sl2 := s >> shift2
				j := int(sl2 & l2.setMask)
				if l2.tags[j] != sl2+1 || l2.flags[j]&lineStale != 0 {
					break
				}
				c.clock = clock
				si = h.fill(c, sl)
				clock = c.clock + sn - 1
				readMisses++
				di = -2
			}
		} else {
			clock += sn
		}
		stamps[si] = clock
		if d&lmask == 0 || di == -2 {
			di = c.find4(d >> shift)
		}
		if di >= 0 {
			clock += dn
			stamps[di] = clock
			writeHits += dn
		} else {
			writeMisses += dn
		}
		l2.flags[di2] |= lineDirty
		s, d, left = s+k, d+k, left-k
	}
	c.clock = clock
	// Every word read and every first-level write hit moved the clock
	// once, and every fill once for its first word.
	reads := clock - start - readMisses - writeHits
	c.hits[Read] += reads
	c.misses[Read] += readMisses
	c.hits[Write] += writeHits
	c.misses[Write] += writeMisses
	l2.hits[Read] += readMisses
	l2.hits[Write] += writeHits + writeMisses
	return n - left, int64(reads+writeHits)*c.hit + int64(readMisses+writeHits+writeMisses)*l2.hit
}

// CopyWords charges a copy loop's words at their own addresses: a load
// at src+4i, then a store at dst+4i, for i below words (src and dst need
// not be aligned). The result and every counter are exactly those of
// Access on each in turn; it goes a piece at a time as CopyRange does,
// each piece's words starting in one line of every data cache on both
// sides.
func (h *Hierarchy) CopyWords(dst, src Addr, words uint64) int64 {
	step := uint64(h.l1d.p.Line)
	if h.l2 != nil {
		step = min(step, uint64(h.l2.p.Line))
	}
	c := h.l1d
	var cost int64
	s, d := uint64(src), uint64(dst)
	for words > 0 {
		k := min(words, ((s|(step-1))-s)/4+1, ((d|(step-1))-d)/4+1)
		if h.conflict(s, d) {
			for x := uint64(0); x < 4*k; x += 4 {
				cost += h.Access(Addr(s+x), Read)
				cost += h.Access(Addr(d+x), Write)
			}
		} else {
			cost += h.lineRun(c, Read, s, k)
			cost += h.lineRun(c, Write, d, k)
		}
		s, d, words = s+4*k, d+4*k, words-k
	}
	return cost
}

// mayConflict reports whether some piece of a copy from src to dst may
// conflict: whether, in a direct-mapped data cache, lineOf(src) -
// lineOf(dst) is within one of a multiple of the number of sets. Two lines
// share a set when their difference is such a multiple, and the lines of
// the pieces at src+off and dst+off differ by that of the first pieces
// up to one.
func (h *Hierarchy) mayConflict(src, dst uint64) bool {
	for _, c := range h.direct {
		d := c.lineOf(src) - c.lineOf(dst)
		if (d-1)&c.setMask == 0 || d&c.setMask == 0 || (d+1)&c.setMask == 0 {
			return true
		}
	}
	return false
}

// conflict reports whether the lines holding a and b are different lines
// of one set in a direct-mapped data cache, where they evict each other.
func (h *Hierarchy) conflict(a, b uint64) bool {
	for _, c := range h.direct {
		la, lb := c.lineOf(a), c.lineOf(b)
		if la != lb && la&c.setMask == lb&c.setMask {
			return true
		}
	}
	return false
}
