package memory

// CopyRange and CopyWords are fast paths of a copy loop's references
// made one by one: Access(src+4i, Read), then Access(dst+4i, Write)
// (fast_access.go), for every word in turn. They go a piece at a time
// (copyPieces: each piece's words in one line of every data cache), and
// CopyRange takes runs of pieces that hit in one loop (copyHits; the
// 486's arrangement's copyThrough is in fast_486.go).
// TestCopyRangeMatchesInterleavedWords holds both equal to the
// word-by-word loop, and TestCopyHitsMatchesPieces holds copyHits equal
// to copyPieces: the same cycles, counters, LRU order and stale reports.

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
	c, through := h.l1d, h.arrangement == Arrangement486
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
