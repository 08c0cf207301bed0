package memory

// Access is a fast path of reference (hierarchy.go), the reference model
// of one reference: the first-level hit is inline, without branches on
// the kind, and a miss goes to the model's own miss and writeMiss.
// TestAccessMatchesReference holds the two equal on random sequences of
// references, stale marks, flushes and invalidations on every arrangement
// of caches: the same cycles, counters, tags, flags, LRU stamps and stale
// reports.

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
