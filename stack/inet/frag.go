package inet

import (
	"simkron/memory"
	"simkron/stack/header"
	"simkron/stack/kernel"
	"simkron/stack/netdev"
)

// Reassembly (RFC 791 section 3.2, RFC 815; Linux ip_fragment.c): the
// fragments of one datagram, keyed by (source, destination, protocol,
// identification), are kept sorted by offset. A new fragment's front is
// cut where its predecessor ends; fragments it covers are dropped, and one
// it partly covers loses its front. When the last fragment has been seen
// and no hole is left, the pieces are copied into one buffer (ip_glue).
//
//	offset: 0        1480       2960      3448 (total, from the last fragment)
//	        [ frag 0 ][ frag 1  ][ frag 2 ]
//
// A queue that is not complete within frag_timeout is dropped; when the
// fragments held exceed frag_memory, whole queues are dropped, oldest
// first, until a quarter is free again.

type fragKey struct {
	src, dst Addr
	proto    uint8
	id       uint16
}

// piece is one fragment's data: bytes [off, end) of the datagram, held in
// buf (whose data starts at byte off).
type piece struct {
	off, end int
	buf      netdev.Buf
}

// fragList is the bookkeeping of one datagram's fragments, apart from
// memory so that it can be checked on its own: insert returns what to do
// with the buffers.
type fragList struct {
	pieces []piece
	total  int // datagram length, -1 until the last fragment is seen
}

// insertResult says what insert decided.
type insertResult uint8

const (
	insertAdded     insertResult = iota
	insertDuplicate              // nothing new: drop the fragment
	insertBad                    // inconsistent lengths: drop the whole datagram
)

// insert adds bytes [off, end) held in buf. trim(p, n) is called when the
// front n bytes of a kept piece's data must be skipped (it returns the
// adjusted piece); drop(p) when a piece is discarded.
func (l *fragList) insert(off, end int, more bool, buf netdev.Buf, trim func(p piece, n int) piece, drop func(p piece)) insertResult {
	// The datagram, header included, must fit the total-length field:
	// anything beyond is the "ping of death" (Linux: "Oversized IP packet").
	if end <= off || end > maxDatagram-header.IPv4MinimumSize {
		return insertBad
	}
	if !more {
		if l.total >= 0 && l.total != end || l.maxEnd() > end {
			return insertBad
		}
		l.total = end
	} else {
		if end%8 != 0 || l.total >= 0 && end > l.total {
			return insertBad
		}
	}
	p := piece{off: off, end: end, buf: buf}
	// Find the first piece that starts at or after off.
	i := 0
	for i < len(l.pieces) && l.pieces[i].off < off {
		i++
	}
	// Cut the new piece's front where the previous one ends.
	if i > 0 {
		if prevEnd := l.pieces[i-1].end; prevEnd > p.off {
			if prevEnd >= p.end {
				return insertDuplicate
			}
			p = trim(p, prevEnd-p.off)
		}
	}
	// Drop the pieces the new one covers; cut the front of one it overlaps.
	j := i
	for j < len(l.pieces) && l.pieces[j].off < p.end {
		if l.pieces[j].end <= p.end {
			drop(l.pieces[j])
			j++
			continue
		}
		l.pieces[j] = trim(l.pieces[j], p.end-l.pieces[j].off)
		break
	}
	l.pieces = append(l.pieces[:i], append([]piece{p}, l.pieces[j:]...)...)
	return insertAdded
}

func (l *fragList) maxEnd() int {
	if n := len(l.pieces); n > 0 {
		return l.pieces[n-1].end
	}
	return 0
}

// complete reports whether every byte of the datagram is present.
func (l *fragList) complete() bool {
	if l.total < 0 {
		return false
	}
	at := 0
	for _, p := range l.pieces {
		if p.off > at {
			return false
		}
		at = max(at, p.end)
	}
	return at == l.total
}

type fragQueue struct {
	key   fragKey
	list  fragList
	bytes int // buffer memory held
	timer kernel.Timer
	seq   uint64 // creation order, for eviction
}

type reassembler struct {
	s      *Stack
	queues map[fragKey]*fragQueue
	order  []*fragQueue // by creation
	bytes  int
	seq    uint64
}

func (r *reassembler) init(s *Stack) {
	r.s = s
	r.queues = map[fragKey]*fragQueue{}
}

// add takes a fragment (b's data at its IP header of hl bytes, v the
// header) and returns the reassembled datagram (data at a 20-byte IP
// header) when it completes one.
func (r *reassembler) add(b netdev.Buf, v header.IPv4, hl int) (netdev.Buf, bool) {
	s := r.s
	c := s.c
	c.Enter(s.sym.ipDefrag)
	defer c.Exit(s.sym.ipDefrag)
	key := fragKey{src: v.Src(), dst: v.Dst(), proto: v.Protocol(), id: v.ID()}
	q, ok := r.queues[key]
	if !ok {
		r.seq++
		q = &fragQueue{key: key, list: fragList{total: -1}, seq: r.seq}
		q.timer = kernel.Timer{Name: "ipfrag", Func: func() { r.expire(q) }}
		s.k.AddTimer(&q.timer, s.k.TicksFor(s.p.FragTimeout))
		r.queues[key] = q
		r.order = append(r.order, q)
	}
	off := int(v.FragmentOffset())
	b.Pull(hl)
	size := b.Len + b.Headroom()
	trim := func(p piece, n int) piece {
		s.stats.IPReasmOverlaps++
		p.buf.Pull(n)
		p.off += n
		return p
	}
	drop := func(p piece) {
		s.stats.IPReasmOverlaps++
		q.bytes -= p.buf.Len + p.buf.Headroom()
		r.bytes -= p.buf.Len + p.buf.Headroom()
		p.buf.Free(s.k)
	}
	switch q.list.insert(off, off+b.Len, v.More(), b, trim, drop) {
	case insertDuplicate:
		s.stats.IPReasmOverlaps++
		b.Free(s.k)
		return netdev.Buf{}, false
	case insertBad:
		s.stats.IPReasmFails++
		b.Free(s.k)
		r.remove(q)
		return netdev.Buf{}, false
	}
	q.bytes += size
	r.bytes += size
	if q.list.complete() {
		whole, ok := r.glue(q)
		r.remove(q)
		return whole, ok
	}
	r.evict()
	return netdev.Buf{}, false
}

// glue copies the fragments into one buffer with a fresh 20-byte header.
func (r *reassembler) glue(q *fragQueue) (netdev.Buf, bool) {
	s := r.s
	c := s.c
	c.Enter(s.sym.ipGlue)
	defer c.Exit(s.sym.ipGlue)
	b, ok := s.alloc(header.IPv4MinimumSize + q.list.total)
	if !ok {
		s.stats.IPReasmFails++
		return netdev.Buf{}, false
	}
	var h [header.IPv4MinimumSize]byte
	header.IPv4(h[:]).Encode(&header.IPv4Fields{
		TotalLength: uint16(header.IPv4MinimumSize + q.list.total), ID: q.key.id,
		TTL: 1, Protocol: q.key.proto, Src: q.key.src, Dst: q.key.dst,
	})
	s.write(b.Addr, h[:])
	for _, p := range q.list.pieces {
		s.k.Bcopy(b.Addr+header.IPv4MinimumSize+memory.Addr(p.off), p.buf.Addr, p.end-p.off)
	}
	s.stats.IPReasmOKs++
	return b, true
}

// remove frees a queue's fragments and forgets it.
func (r *reassembler) remove(q *fragQueue) {
	s := r.s
	s.k.DelTimer(&q.timer)
	for _, p := range q.list.pieces {
		p.buf.Free(s.k)
	}
	r.bytes -= q.bytes
	q.list.pieces = nil
	delete(r.queues, q.key)
	for i, x := range r.order {
		if x == q {
			r.order = append(r.order[:i], r.order[i+1:]...)
			break
		}
	}
}

// expire is a queue's timer: the datagram did not complete in time.
func (r *reassembler) expire(q *fragQueue) {
	s := r.s
	c := s.c
	c.Enter(s.sym.ipExpire)
	defer c.Exit(s.sym.ipExpire)
	s.stats.IPReasmTimeouts++
	s.stats.IPReasmFails++
	r.remove(q)
}

// evict drops whole queues, oldest first, while over the memory bound.
func (r *reassembler) evict() {
	s := r.s
	limit := int(s.p.FragMemory)
	if r.bytes <= limit {
		return
	}
	for r.bytes > limit*3/4 && len(r.order) > 0 {
		s.stats.IPReasmEvicted++
		s.stats.IPReasmFails++
		r.remove(r.order[0])
	}
}

// ReassemblyPending returns the datagrams waiting for fragments and the
// bytes held.
func (s *Stack) ReassemblyPending() (queues, bytes int) {
	return len(s.reasm.queues), s.reasm.bytes
}
