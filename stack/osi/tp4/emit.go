package tp4

import (
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/osi"
)

// cksumParam starts a variable part with the checksum parameter, its
// value zero until computed (in the entity's parameter scratch).
func (t *TP4) cksumParam() []byte {
	return append(t.params[:0], header.TPDUParamChecksum, 2, 0, 0)
}

// checksum generates the checksum of a TPDU whose header h was just
// written at a, the first piece of ch, and whose user data follows in
// ch's other pieces (total octets in all): the sums run over every
// octet, each read through the cache, and X and Y are stored in the
// header in simulated memory (and in h).
func (t *TP4) checksum(ch osi.Chain, a memory.Addr, h header.TPDU, total int) {
	c := t.c
	c.Enter(t.sym.cksum)
	defer c.Exit(t.sym.cksum)
	off, _ := h.ChecksumOffset(t.extOf(h))
	var f header.Fletcher
	first := true
	t.bufs.Pieces(ch, func(p memory.Addr, n int) {
		c.ReferenceRange(p, uint64(n), memory.Read)
		if first {
			f.Write(h) // the header as just written
			first = false
			return
		}
		f.Write(t.look(p, n))
	})
	c.Exec(int64(total) * t.cksumPB)
	h[off], h[off+1] = f.Checksum(off)
	c.Write(a+memory.Addr(off), h[off:off+2])
}

// checksumHeader generates the checksum of a TPDU without user data,
// just written at a.
func (t *TP4) checksumHeader(a memory.Addr, h header.TPDU) {
	c := t.c
	c.Enter(t.sym.cksum)
	defer c.Exit(t.sym.cksum)
	off, _ := h.ChecksumOffset(t.extOf(h))
	c.ReferenceRange(a, uint64(len(h)), memory.Read)
	c.Exec(int64(len(h)) * t.cksumPB)
	var f header.Fletcher
	f.Write(h)
	h[off], h[off+1] = f.Checksum(off)
	c.Write(a+memory.Addr(off), h[off:off+2])
}

// extOf tells the format of a header this entity built: only the
// numbered TPDUs differ, and the entity knows their length.
func (t *TP4) extOf(h header.TPDU) bool {
	switch h.Code() {
	case header.TPDUCodeDT, header.TPDUCodeED, header.TPDUCodeEA:
		return h.LI() == 7 || h.LI() == 11
	case header.TPDUCodeAK, header.TPDUCodeRJ:
		return h.LI()%2 == 1
	}
	return false
}

// verify runs the checksum over octets [off, end) of nsdu (one TPDU)
// and reports whether it passes.
func (t *TP4) verify(nsdu osi.Chain, off, end int) bool {
	c := t.c
	c.Enter(t.sym.check)
	defer c.Exit(t.sym.check)
	var f header.Fletcher
	at := 0
	t.bufs.Pieces(nsdu, func(p memory.Addr, n int) {
		lo, hi := max(off, at), min(end, at+n)
		if lo < hi {
			q := p + memory.Addr(lo-at)
			c.ReferenceRange(q, uint64(hi-lo), memory.Read)
			f.Write(t.look(q, hi-lo))
		}
		at += n
	})
	c.Exec(int64(end-off) * t.cksumPB)
	return f.Len() == end-off && f.Valid()
}

// emit builds a control TPDU f (no user data) in a fresh block, with the
// checksum when cksum, and sends it from local to remote.
func (t *TP4) emit(f *header.TPDUFields, cksum bool, local, remote osi.NSAP) bool {
	c := t.c
	c.Enter(t.sym.emit)
	defer c.Exit(t.sym.emit)
	hl := header.TPDUHeaderLen(f)
	ch, a := t.bufs.New(osi.Tx, hl)
	if ch == 0 {
		t.stats.TxNoMemory++
		return false
	}
	h := header.TPDU(t.hdr[:hl])
	h.Encode(f)
	c.Write(a, h)
	if cksum {
		t.checksumHeader(a, h)
	}
	return t.net.UnitdataRequest(local, remote, ch)
}

// withChecksum puts the checksum parameter in front of params when on.
func (t *TP4) withChecksum(on bool, params []byte) []byte {
	if !on {
		return params
	}
	return append(append(t.params2[:0], header.TPDUParamChecksum, 2, 0, 0), params...)
}

// sendCR sends (or resends) the connection request.
func (k *Conn) sendCR() bool {
	t := k.t
	p := t.crParams[:0]
	p = header.AppendTPDUParam(p, header.TPDUParamCallingTSAP, k.local.TSAP...)
	p = header.AppendTPDUParam(p, header.TPDUParamCalledTSAP, k.remote.TSAP...)
	sz, _ := header.TPDUSizeCode(int(t.p.TPDUSize))
	p = header.AppendTPDUParam(p, header.TPDUParamTPDUSize, sz)
	p = header.AppendTPDUParam(p, header.TPDUParamVersion, header.TPDUVersion)
	opts := byte(0)
	if t.p.Expedited {
		opts |= header.TPDUAddOptExpedited
	}
	if !t.p.Checksum {
		opts |= header.TPDUAddOptNoChecksum
	}
	p = header.AppendTPDUParam(p, header.TPDUParamOptions, opts)
	ms := uint16(t.p.AckTime / sim.Millisecond)
	p = header.AppendTPDUParam(p, header.TPDUParamAckTime, byte(ms>>8), byte(ms))
	class := byte(header.TPDUClass4)
	if t.p.Extended {
		class |= header.TPDUOptExtended
	}
	f := header.TPDUFields{Code: header.TPDUCodeCR, CDT: uint16(min(k.rcvCDT, header.TPDUNormalMaxCredit)), SrcRef: k.ref, Class: class,
		Params: t.withChecksum(true, p)} // a CR always carries the checksum
	k.ctlTries++
	if !t.emit(&f, true, k.local.NSAP, k.remote.NSAP) {
		return false
	}
	t.stats.TxCR++
	return true
}

// sendCC sends (or resends) the connection confirm with the agreed
// values.
func (k *Conn) sendCC() bool {
	t := k.t
	p := t.crParams[:0]
	p = header.AppendTPDUParam(p, header.TPDUParamCallingTSAP, k.remote.TSAP...)
	p = header.AppendTPDUParam(p, header.TPDUParamCalledTSAP, k.local.TSAP...)
	sz, _ := header.TPDUSizeCode(k.tpduSize)
	p = header.AppendTPDUParam(p, header.TPDUParamTPDUSize, sz)
	p = header.AppendTPDUParam(p, header.TPDUParamVersion, header.TPDUVersion)
	opts := byte(0)
	if k.expedited {
		opts |= header.TPDUAddOptExpedited
	}
	if !k.cksum {
		opts |= header.TPDUAddOptNoChecksum
	}
	p = header.AppendTPDUParam(p, header.TPDUParamOptions, opts)
	ms := uint16(t.p.AckTime / sim.Millisecond)
	p = header.AppendTPDUParam(p, header.TPDUParamAckTime, byte(ms>>8), byte(ms))
	class := byte(header.TPDUClass4)
	if k.ext {
		class |= header.TPDUOptExtended
	}
	f := header.TPDUFields{Code: header.TPDUCodeCC, CDT: uint16(min(k.rcvCDT, header.TPDUNormalMaxCredit)), DstRef: k.peerRef, SrcRef: k.ref, Class: class,
		Params: t.withChecksum(k.cksum, p)}
	k.ctlTries++
	if !t.emit(&f, k.cksum, k.local.NSAP, k.remote.NSAP) {
		return false
	}
	t.stats.TxCC++
	return true
}

// sendDR sends (or resends) the disconnect request.
func (k *Conn) sendDR() {
	t := k.t
	f := header.TPDUFields{Code: header.TPDUCodeDR, DstRef: k.peerRef, SrcRef: k.ref, Reason: k.drReason, Params: t.withChecksum(k.cksum, nil)}
	k.ctlTries++
	if t.emit(&f, k.cksum, k.local.NSAP, k.remote.NSAP) {
		t.stats.TxDR++
	}
}

// sendDRTo answers a TPDU that has no connection here with a DR.
func (t *TP4) sendDRTo(local, remote osi.NSAP, dst, src uint16, reason uint8, cksum bool) {
	f := header.TPDUFields{Code: header.TPDUCodeDR, DstRef: dst, SrcRef: src, Reason: reason, Params: t.withChecksum(cksum, nil)}
	if t.emit(&f, cksum, local, remote) {
		t.stats.TxDR++
	}
}

// sendDC confirms a DR.
func (t *TP4) sendDC(local, remote osi.NSAP, dst, src uint16, cksum bool) {
	f := header.TPDUFields{Code: header.TPDUCodeDC, DstRef: dst, SrcRef: src, Params: t.withChecksum(cksum, nil)}
	if t.emit(&f, cksum, local, remote) {
		t.stats.TxDC++
	}
}

// sendEA acknowledges the ED numbered nr.
func (k *Conn) sendEA(nr uint32) {
	t := k.t
	f := header.TPDUFields{Code: header.TPDUCodeEA, Extended: k.ext, DstRef: k.peerRef, Number: nr, Params: t.withChecksum(k.cksum, nil)}
	if t.emit(&f, k.cksum, k.local.NSAP, k.remote.NSAP) {
		t.stats.TxEA++
	}
}

// sendER rejects a TPDU the connection's peer sent.
func (k *Conn) sendER(cause uint8) {
	t := k.t
	f := header.TPDUFields{Code: header.TPDUCodeER, DstRef: k.peerRef, Reason: cause, Params: t.withChecksum(k.cksum, nil)}
	if t.emit(&f, k.cksum, k.local.NSAP, k.remote.NSAP) {
		t.stats.TxER++
	}
}
