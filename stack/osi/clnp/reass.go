package clnp

import (
	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/osi"
)

// reassemble keeps the new parts of one segment (pdu, consumed; its
// header h of li octets, k data octets) and delivers the NSDU once every
// part is there.
func (n *CLNP) reassemble(from [6]byte, h header.CLNP, src, dst osi.NSAP, seg header.CLNPSegmentation, pdu osi.Chain, k int) {
	c := n.c
	c.Enter(n.sym.reasm)
	defer c.Exit(n.sym.reasm)
	n.stats.ReasmSegments++
	li := h.HeaderLength()
	total := int(seg.Total) - li
	off, end := int(seg.Offset), int(seg.Offset)+k
	key := reasmKey{src: src, dst: dst, id: seg.ID}
	e := n.find(key)
	bad := total < 0 || end > total || k == 0 && h.MoreSegments() ||
		h.MoreSegments() && k%header.CLNPSegmentUnit != 0 || !h.MoreSegments() && end != total
	if e != nil && e.pieces.total != total {
		bad = true
	}
	if bad {
		n.stats.ReasmBad++
		if e != nil {
			n.drop(e)
		}
		n.discard(from, h, header.CLNPReasonReassembly, 0, pdu)
		return
	}
	if e == nil {
		e = n.free()
		if e == nil {
			n.stats.ReasmFull++
			n.discard(from, h, header.CLNPReasonCongestion, 0, pdu)
			return
		}
		e.used, e.key, e.snpa = true, key, from
		e.pieces = pieceList{total: total}
		e.hdr = append(e.hdr[:0], h...)
		// The timer is bounded by what is left of the PDU's lifetime.
		d := min(n.p.ReassemblyTimeout, sim.Time(h.Lifetime())*header.CLNPLifetimeUnitMS*sim.Millisecond)
		e.timer.Start(d)
	}
	gaps := e.pieces.gaps(off, end)
	if len(gaps) == 0 {
		n.stats.ReasmDuplicates++
	}
	for _, g := range gaps {
		part := n.bufs.Slice(osi.Rx, pdu, li+g.off-off, g.end-g.off)
		if part == 0 {
			n.stats.RxNoMemory++
			n.drop(e)
			n.bufs.Free(pdu)
			return
		}
		i := e.pieces.add(g)
		e.chains = append(e.chains, 0)
		copy(e.chains[i+1:], e.chains[i:])
		e.chains[i] = part
	}
	n.bufs.Free(pdu)
	if !e.pieces.complete() {
		return
	}
	var nsdu osi.Chain
	for _, ch := range e.chains {
		nsdu = n.bufs.Append(nsdu, ch)
	}
	e.chains = e.chains[:0]
	e.timer.Stop()
	e.used = false
	n.stats.ReasmOK++
	n.deliver(src, dst, nsdu, h)
}

func (n *CLNP) find(k reasmKey) *reasmEntry {
	for _, e := range n.reasm {
		if e.used && e.key == k {
			return e
		}
	}
	return nil
}

func (n *CLNP) free() *reasmEntry {
	for _, e := range n.reasm {
		if !e.used {
			return e
		}
	}
	return nil
}

// drop discards an entry's pieces.
func (n *CLNP) drop(e *reasmEntry) {
	for _, ch := range e.chains {
		n.bufs.Free(ch)
	}
	e.chains = e.chains[:0]
	e.timer.Stop()
	e.used = false
}

// reasmTimeout is the reassembly timer of e running out.
func (n *CLNP) reasmTimeout(e *reasmEntry) {
	c := n.c
	c.Enter(n.sym.reasmTO)
	defer c.Exit(n.sym.reasmTO)
	if !e.used {
		return
	}
	n.stats.ReasmTimeout++
	h := header.CLNP(e.hdr)
	if h.ErrorReport() {
		n.emitER(e.snpa, h, header.CLNPReasonLifetimeReasm, 3)
	}
	n.drop(e)
}
