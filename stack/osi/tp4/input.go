package tp4

import (
	"encoding/binary"

	"simkron/stack/header"
	"simkron/stack/osi"
)

// NUnitdataIndication takes an NSDU from the network (consumed); the
// entity is the NS user of its selector.
func (t *TP4) NUnitdataIndication(src, dst osi.NSAP, nsdu osi.Chain) { t.Input(src, dst, nsdu) }

// Input takes an NSDU (consumed) from src to dst: one TPDU or several
// concatenated, each checked and handed to its connection. A TPDU that
// carries user data is the last; the rest of an NSDU whose header cannot
// be delimited or whose checksum fails is discarded and counted.
func (t *TP4) Input(src, dst osi.NSAP, nsdu osi.Chain) {
	c := t.c
	c.Enter(t.sym.input)
	defer c.Exit(t.sym.input)
	t.stats.RxNSDUs++
	total := t.bufs.Len(nsdu)
	b := t.in[:]
	for off := 0; off < total; {
		t.stats.RxTPDUs++
		if off > 0 {
			c.Exec(defInput.Instructions / 2) // the next TPDU of the NSDU
		}
		if t.bufs.Read(nsdu, off, b[:2]) < 2 {
			t.stats.RxShort++
			break
		}
		hl := int(b[0]) + 1
		code := b[1] & 0xF0
		if b[0] == 255 || off+hl > total {
			t.stats.RxHeaderErrors++
			break
		}
		t.bufs.Read(nsdu, off, b[:hl])
		end := off + hl
		if header.TPDUHasData(code) {
			end = total
		}
		var k *Conn
		if code != header.TPDUCodeCR && hl >= 4 {
			k = t.byRef(binary.BigEndian.Uint16(b[2:4]))
		}
		ext := k != nil && k.ext
		h := header.TPDU(b[:hl])
		if !h.IsValid(ext) {
			t.stats.RxHeaderErrors++
			t.invalid(k, h)
			break
		}
		_, hasSum := h.Param(ext, header.TPDUParamChecksum)
		if hasSum {
			if _, ok := h.ChecksumOffset(ext); !ok || !t.verify(nsdu, off, end) {
				t.stats.RxBadChecksum++
				break
			}
		} else if code == header.TPDUCodeCR || k != nil && k.cksum && k.state != stFrozen {
			// Class 4 with the checksum in use: a TPDU without it is
			// discarded as a corrupted one would be.
			t.stats.RxNoChecksum++
			break
		}
		if header.TPDUHasData(code) {
			t.dispatchData(k, h, src, dst, nsdu, off+hl, total-off-hl)
			return
		}
		t.dispatch(k, h, src, dst)
		off = end
	}
	t.bufs.Free(nsdu)
}

// invalid answers a TPDU whose header does not parse: an ER when it
// names an open connection of ours (ISO 8073 12.2.3.? "invalid TPDU"),
// nothing otherwise.
func (t *TP4) invalid(k *Conn, h header.TPDU) {
	if k == nil || k.state != stOpen && k.state != stWaitAck {
		return
	}
	t.stats.RxProtocolErrors++
	cause := uint8(header.TPDUCauseParamValue)
	switch {
	case header.TPDUFixedLen(h[1], k.ext) == 0 || h.Code() == header.TPDUCodeRJ:
		cause = header.TPDUCauseType
	case h.LI() < header.TPDUFixedLen(h[1], k.ext):
		cause = header.TPDUCauseNotSpecified
	}
	k.sendER(cause)
}

// dispatch handles a TPDU without user data: AK, EA, DC, ER, or a DR/CC
// for which there is no connection.
func (t *TP4) dispatch(k *Conn, h header.TPDU, src, dst osi.NSAP) {
	code := h.Code()
	if k != nil && k.state != stFrozen && k.remote.NSAP != src {
		// A reference of ours from another system: not this connection.
		k = nil
	}
	switch code {
	case header.TPDUCodeAK:
		t.stats.RxAK++
	case header.TPDUCodeEA:
		t.stats.RxEA++
	case header.TPDUCodeDC:
		t.stats.RxDC++
	case header.TPDUCodeER:
		t.stats.RxER++
	case header.TPDUCodeRJ:
		if k != nil && k.state == stOpen {
			t.invalid(k, h)
		}
		return
	}
	if k == nil || k.state == stFrozen {
		if k == nil {
			t.stats.RxUnknownRef++
		} else {
			t.stats.RxFrozenRef++
		}
		return
	}
	k.heard()
	switch code {
	case header.TPDUCodeAK:
		k.akInput(h)
	case header.TPDUCodeEA:
		k.eaInput(h)
	case header.TPDUCodeDC:
		k.dcInput(h)
	case header.TPDUCodeER:
		k.erInput(h)
	}
}

// dispatchData handles a TPDU with user data (n octets from dataOff of
// nsdu, consumed): CR, CC, DR, DT, ED.
func (t *TP4) dispatchData(k *Conn, h header.TPDU, src, dst osi.NSAP, nsdu osi.Chain, dataOff, n int) {
	code := h.Code()
	if k != nil && k.state != stFrozen && k.remote.NSAP != src {
		k = nil
	}
	switch code {
	case header.TPDUCodeCR:
		t.stats.RxCR++
		t.crInput(h, src, dst)
		t.bufs.Free(nsdu)
		return
	case header.TPDUCodeCC:
		t.stats.RxCC++
		if k == nil || k.state == stFrozen {
			t.noConnection(k, h, src, dst)
		} else {
			k.heard()
			k.ccInput(h)
		}
		t.bufs.Free(nsdu)
		return
	case header.TPDUCodeDR:
		t.stats.RxDR++
		if k == nil || k.state == stFrozen {
			t.noConnection(k, h, src, dst)
		} else {
			k.drInput(h)
		}
		t.bufs.Free(nsdu)
		return
	case header.TPDUCodeDT:
		t.stats.RxDT++
	case header.TPDUCodeED:
		t.stats.RxED++
	}
	if k == nil || k.state == stFrozen {
		if k == nil {
			t.stats.RxUnknownRef++
		} else {
			t.stats.RxFrozenRef++
		}
		t.bufs.Free(nsdu)
		return
	}
	k.heard()
	if code == header.TPDUCodeDT {
		k.dtInput(h, nsdu, dataOff, n)
	} else {
		k.edInput(h, nsdu, dataOff, n)
	}
}

// noConnection answers a CC or DR that names no live connection: a DR
// for a CC (mismatched references), a DC for a DR (RFC 905 6.22).
func (t *TP4) noConnection(k *Conn, h header.TPDU, src, dst osi.NSAP) {
	if k == nil {
		t.stats.RxUnknownRef++
	} else {
		t.stats.RxFrozenRef++
	}
	_, sum := h.Param(false, header.TPDUParamChecksum)
	switch h.Code() {
	case header.TPDUCodeCC:
		t.sendDRTo(dst, src, h.SrcRef(), h.DstRef(), header.TPDUReasonMismatchedRefs, sum)
	case header.TPDUCodeDR:
		if h.SrcRef() != 0 {
			t.sendDC(dst, src, h.SrcRef(), h.DstRef(), sum)
		}
	}
}

// heard restarts the inactivity timer: a TPDU of the connection arrived.
func (k *Conn) heard() {
	if k.state == stOpen || k.state == stWaitAck {
		k.tInact.Start(k.t.p.Inactivity)
	}
}

// crInput handles a connection request.
func (t *TP4) crInput(h header.TPDU, src, dst osi.NSAP) {
	c := t.c
	c.Enter(t.sym.crIn)
	defer c.Exit(t.sym.crIn)
	if k := t.byPeer(src, h.SrcRef()); k != nil {
		// A repeated CR (ours answered, the answer lost): answer again.
		t.stats.RxCRDuplicates++
		if k.state == stWaitAck {
			k.sendCC()
		}
		return
	}
	var called, calling []byte
	if v, ok := h.Param(false, header.TPDUParamCalledTSAP); ok {
		called = v
	}
	if v, ok := h.Param(false, header.TPDUParamCallingTSAP); ok {
		calling = v
	}
	cksum := true
	refuse := func(reason uint8) {
		t.stats.RxCRRefused++
		t.sendDRTo(dst, src, h.SrcRef(), 0, reason, cksum)
	}
	if h.SrcRef() == 0 || h.DstRef() != 0 {
		t.stats.RxProtocolErrors++
		refuse(header.TPDUReasonProtocolError)
		return
	}
	class := h.ClassOption() >> 4
	if class != 4 {
		alt, _ := h.Param(false, header.TPDUParamAltClasses)
		found := false
		for _, a := range alt {
			found = found || a>>4 == 4
		}
		if !found {
			refuse(header.TPDUReasonNegotiation)
			return
		}
	}
	u, ok := t.listen[string(called)]
	if !ok {
		refuse(header.TPDUReasonNotAttached)
		return
	}
	size := 128
	if v, ok := h.Param(false, header.TPDUParamTPDUSize); ok {
		if len(v) != 1 || v[0] < header.TPDUSizeMinLog2 || v[0] > header.TPDUSizeMaxLog2 {
			refuse(header.TPDUReasonHeaderLength)
			return
		}
		size = 1 << v[0]
	}
	opts := byte(0)
	if v, ok := h.Param(false, header.TPDUParamOptions); ok && len(v) == 1 {
		opts = v[0]
	}
	k := t.freeSlot()
	if k == nil {
		refuse(header.TPDUReasonRefOverflow)
		return
	}
	k.open(u, Address{dst, called}, Address{src, calling}, false)
	k.peerRef = h.SrcRef()
	k.setFormat(class == 4 && h.ClassOption()&header.TPDUOptExtended != 0 && t.p.Extended)
	k.tpduSize = min(size, int(t.p.TPDUSize))
	k.cksum = opts&header.TPDUAddOptNoChecksum == 0 || t.p.Checksum
	k.expedited = opts&header.TPDUAddOptExpedited != 0 && t.p.Expedited
	k.peerCDT = uint32(h.CDT())
	k.state = stWaitUser
	u.TConnectIndication(k)
}

// Accept accepts an offered connection (T-CONNECT response): the CC goes
// and the connection waits for the peer's confirmation, taking data
// requests meanwhile.
func (k *Conn) Accept() {
	t := k.t
	c := t.c
	c.Enter(t.sym.accept)
	defer c.Exit(t.sym.accept)
	if k.state != stWaitUser {
		return
	}
	k.state = stWaitAck
	k.ctlTries = 0
	k.sendCC()
	k.t1.Start(t.p.T1)
	k.tInact.Start(t.p.Inactivity)
}

// Refuse refuses an offered connection with a DR of the given reason.
func (k *Conn) Refuse(reason uint8) {
	t := k.t
	c := t.c
	c.Enter(t.sym.disc)
	defer c.Exit(t.sym.disc)
	if k.state != stWaitUser {
		return
	}
	t.sendDRTo(k.local.NSAP, k.remote.NSAP, k.peerRef, 0, reason, k.cksum)
	k.release()
}

// ccInput handles the connection confirm.
func (k *Conn) ccInput(h header.TPDU) {
	t := k.t
	c := t.c
	c.Enter(t.sym.ccIn)
	defer c.Exit(t.sym.ccIn)
	if k.state == stOpen && h.SrcRef() == k.peerRef {
		// A repeated CC: our AK was lost.
		k.akOwed = true
		k.output()
		return
	}
	if k.state != stWaitCC {
		t.stats.RxWrongState++
		return
	}
	k.peerRef = h.SrcRef()
	ok := h.ClassOption()>>4 == 4
	ext := h.ClassOption()&header.TPDUOptExtended != 0
	ok = ok && (!ext || t.p.Extended)
	size := 128
	if v, has := h.Param(false, header.TPDUParamTPDUSize); has {
		if len(v) == 1 && v[0] >= header.TPDUSizeMinLog2 && v[0] <= header.TPDUSizeMaxLog2 {
			size = 1 << v[0]
		} else {
			ok = false
		}
	}
	ok = ok && size <= int(t.p.TPDUSize)
	opts := byte(0)
	if v, has := h.Param(false, header.TPDUParamOptions); has && len(v) == 1 {
		opts = v[0]
	}
	noSum := opts&header.TPDUAddOptNoChecksum != 0
	ok = ok && (!noSum || !t.p.Checksum)
	ok = ok && (opts&header.TPDUAddOptExpedited == 0 || t.p.Expedited)
	if !ok {
		// The responder chose what we did not offer.
		t.stats.RxProtocolErrors++
		u := k.user
		k.closeWith(header.TPDUReasonNegotiation)
		u.TDisconnectIndication(k, Disconnect{Cause: CauseProtocolError})
		return
	}
	k.setFormat(ext)
	k.tpduSize = size
	k.cksum = !noSum
	k.expedited = opts&header.TPDUAddOptExpedited != 0
	k.peerCDT = uint32(h.CDT())
	k.state = stOpen
	k.t1.Stop()
	k.tInact.Start(t.p.Inactivity)
	t.stats.Opened++
	k.akOwed = true // the AK that confirms the CC
	k.output()
	k.user.TConnectConfirm(k)
}

// confirmed ends the responder's wait: a TPDU of the peer's shows it got
// the CC.
func (k *Conn) confirmed() {
	if k.state != stWaitAck {
		return
	}
	k.state = stOpen
	k.t1.Stop()
	k.t.stats.Opened++
	// The window timer runs on every open connection, so that an idle
	// one keeps the peer's inactivity timer from running out.
	k.restartWindowTimer()
}

// drInput handles a disconnect request for a live connection.
func (k *Conn) drInput(h header.TPDU) {
	t := k.t
	c := t.c
	c.Enter(t.sym.drIn)
	defer c.Exit(t.sym.drIn)
	if h.SrcRef() != 0 {
		t.sendDC(k.local.NSAP, k.remote.NSAP, h.SrcRef(), k.ref, k.cksum)
	}
	u, st := k.user, k.state
	k.freeze()
	switch st {
	case stClosing:
		// The DRs crossed: the release is complete.
	case stWaitCC:
		u.TDisconnectIndication(k, Disconnect{Cause: CauseRefused, Reason: h.Reason()})
	default:
		if u != nil {
			u.TDisconnectIndication(k, Disconnect{Cause: CausePeer, Reason: h.Reason()})
		}
	}
}

// dcInput ends a release.
func (k *Conn) dcInput(h header.TPDU) {
	t := k.t
	c := t.c
	c.Enter(t.sym.dcIn)
	defer c.Exit(t.sym.dcIn)
	if k.state != stClosing {
		t.stats.RxWrongState++
		return
	}
	k.freeze()
}

// erInput: the peer rejected a TPDU; the connection is released.
func (k *Conn) erInput(h header.TPDU) {
	t := k.t
	c := t.c
	c.Enter(t.sym.erIn)
	defer c.Exit(t.sym.erIn)
	switch k.state {
	case stOpen, stWaitAck:
		k.giveUp(CauseErrorTPDU)
	case stWaitCC:
		u := k.user
		k.freeze()
		u.TDisconnectIndication(k, Disconnect{Cause: CauseErrorTPDU})
	}
}

// protocolError releases the connection with a DR, reason protocol
// error, after a procedure violation of the peer's.
func (k *Conn) protocolError() {
	k.t.stats.RxProtocolErrors++
	k.giveUp(CauseProtocolError)
}
