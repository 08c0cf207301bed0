package memory

// The 486's arrangement's fast paths (Arrangement486: a four-way
// write-through first level that does not allocate on a write, over a
// direct-mapped write-back L2). readThrough and throughWords specialise
// lineRun (fast_range.go) for runs of reads and writes; AccessRange's
// test, TestAccessRangeMatchesAccess, holds them equal to Access word by
// word on three 486 arrangements. copyThrough specialises copyPieces
// (fast_copy.go) for copies; TestCopyThroughMatchesPieces holds it equal
// to copyPieces at any byte alignment: the same cycles, counters, LRU
// order and stale reports.

// readThrough is accessWords' run of reads in the 486's caches (see
// Arrangement486) from w on: it takes the words a line at a time while
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
// Arrangement486) from w on: it takes the words a line at a time
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
