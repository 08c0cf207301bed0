package memory

// FetchLines and FetchLinesMemo are fast paths of Access(line, Fetch)
// (fast_access.go) called for each line of a code range in turn: one
// loop with the hit inline, and a memo that skips the lookups while
// nothing has changed in the lines' sets. TestFetchLinesMatchesPerLine
// holds them equal to that loop on random mixed traffic (references,
// ranges, copies, flushes, invalidations, coherent and non-coherent DMA,
// uncached regions): the same cycles, counters, LRU order and stale
// reports.

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
