package memory

// AccessRange is a fast path of Access (fast_access.go) called for each
// word of a range in turn: runs of first-level hits (hitWords), the
// words of one line at a time (lineRun, lineRunMiss) and the writes a
// write-through cache passes on as one run (writeRun); the 486's
// arrangement's runs are in fast_486.go. TestAccessRangeMatchesAccess
// holds AccessRange equal to the word-by-word loop on random ranges,
// stale marks and flushes, on every arrangement: the same cycles,
// counters, LRU order and stale reports.

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
	runs := hits || kind == Write && h.arrangement == Arrangement486
	for words > 0 {
		if runs {
			left := words
			var add int64
			switch {
			case kind == Read && h.arrangement == Arrangement486:
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
