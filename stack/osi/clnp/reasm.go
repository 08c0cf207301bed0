package clnp

// Reassembly bookkeeping (ISO 8473-1 clause 6.8;
// docs/reference/osi-top.md sec. 3): the data of one initial PDU, identified by
// (source, destination, data unit identifier), arrives as segments that
// may come in any order, overlap, repeat, or never complete. The pieces
// kept are disjoint and sorted by offset; a new segment contributes only
// the parts no kept piece covers (its gaps), so kept pieces never change.
//
//	data:   0        512      1024      1448   (total, from the segments)
//	kept:   [ piece ][ piece  ]        [piece]
//	new:         [=======================]     → gaps [1024, 1400)
//
// The list is pure bookkeeping, apart from memory, so that it can be
// checked on its own; the machine turns each gap into a slice of the
// segment's chain.

// span is a kept piece: data octets [off, end).
type span struct{ off, end int }

// pieceList holds the kept pieces of one PDU.
type pieceList struct {
	spans []span
	total int // data octets of the initial PDU; -1 until known
}

// gaps returns the parts of [off, end) that no kept piece covers, in
// order.
func (l *pieceList) gaps(off, end int) []span {
	var out []span
	at := off
	for _, s := range l.spans {
		if s.end <= at {
			continue
		}
		if s.off >= end {
			break
		}
		if s.off > at {
			out = append(out, span{at, s.off})
		}
		at = max(at, s.end)
		if at >= end {
			break
		}
	}
	if at < end {
		out = append(out, span{at, end})
	}
	return out
}

// add keeps a gap returned by gaps (it must not overlap a kept piece)
// and returns its index in the list.
func (l *pieceList) add(g span) int {
	i := 0
	for i < len(l.spans) && l.spans[i].off < g.off {
		i++
	}
	l.spans = append(l.spans, span{})
	copy(l.spans[i+1:], l.spans[i:])
	l.spans[i] = g
	return i
}

// complete reports whether the kept pieces cover [0, total).
func (l *pieceList) complete() bool {
	if l.total < 0 {
		return false
	}
	at := 0
	for _, s := range l.spans {
		if s.off != at {
			return false
		}
		at = s.end
	}
	return at == l.total
}
