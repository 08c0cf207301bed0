// Package pres is the ISO 8823 presentation protocol (ITU-T X.226),
// kernel functional unit, normal mode, over a session connection: the
// presentation protocol machine of one connection. Layer PRES.
//
// # Contract
//
// The environment makes a Conn for each presentation connection with
// the Session service it runs over and the User above it, and passes the
// session's indications to it (SConnectIndication, SConnectConfirm,
// SData, SReleaseIndication, SReleaseConfirm, SAbort, SReady). The
// user's requests are Connect, Accept, Refuse, Data, Release,
// ReleaseResponse and Abort.
//
// The PPDUs are BER encoded by this package's own code (stack/header's
// encoders) into simulated memory, and decoded from it, each octet read
// or written through the caches and each TLV charged, so that the
// encoding's cost is part of what is measured:
//
//   - P-CONNECT: a CP (calling and called P-selectors, one presentation
//     context: the user's abstract syntax with the basic encoding rules
//     as transfer syntax) as S-CONNECT user data; the responder checks
//     the mode, its selector and the context and answers with a CPA (the
//     context accepted) or a CPR (the reason) as S-CONNECT response user
//     data.
//   - P-DATA: the TD PPDU, fully encoded data with one PDV-list whose
//     value is the user's data, octet aligned: its BER header (about 8 to
//     15 octets) is a PCI chained in front of the data (no copy); a
//     received TD is decoded from its first octets and the value handed
//     up in place.
//   - P-RELEASE: the session's orderly release, no PPDU of its own.
//   - P-U-ABORT: an ARU PPDU in the S-U-ABORT; a PPDU that does not
//     decode is a protocol error: an ARP PPDU goes in an S-U-ABORT, the
//     user gets a P-P-ABORT indication, and it is counted. The receive
//     path never panics on bad bytes.
//
// # Simplifications
//
// Kernel unit only (no context management or restoration), one
// presentation context, no default context, no user data in CP, CPA and
// release (an ACSE above would put its PDUs there); a TD with more than
// one PDV-list is a protocol error.
package pres

import (
	"fmt"

	"simkron/cpu"
	"simkron/memory"
	"simkron/stack/header"
	"simkron/stack/osi"
)

// Params configures the presentation entity.
type Params struct {
	AbstractSyntax header.OID `toml:"abstract_syntax" help:"object identifier of the abstract syntax of the users' data, the one presentation context's (dotted)"`
	ContextID      int64      `toml:"context_id" min:"1" max:"127" help:"the presentation context identifier proposed (odd for the initiator, ISO 8823 6.2.2.4)"`
}

// DefaultParams returns context 1 with a private abstract syntax for the
// layer users' octets.
func DefaultParams() Params {
	return Params{AbstractSyntax: header.OID{1, 3, 6, 1, 4, 1, 99999, 1}, ContextID: 1}
}

// Validate checks p.
func (p Params) Validate() error {
	if len(p.AbstractSyntax) < 2 {
		return fmt.Errorf("abstract syntax %v: an OID needs two arcs", p.AbstractSyntax)
	}
	if p.ContextID%2 == 0 {
		return fmt.Errorf("context_id: %d is even; the initiator proposes odd identifiers", p.ContextID)
	}
	return nil
}

// Session is the session connection a presentation connection runs
// over, as the presentation entity uses it (the S- requests).
type Session interface {
	Connect(userData osi.Chain)
	Accept(userData osi.Chain)
	Refuse(reason uint8, userData osi.Chain)
	// Data issues an S-DATA request (ssdu consumed when true); false
	// when it cannot be taken now (an SReady follows).
	Data(ssdu osi.Chain) bool
	Release(userData osi.Chain)
	ReleaseResponse(userData osi.Chain)
	Abort(userData osi.Chain)
}

// User is the presentation service user of a connection.
type User interface {
	PConnectIndication(c *Conn)
	PConnectConfirm(c *Conn, accepted bool)
	PDataIndication(c *Conn, data osi.Chain)
	PReleaseIndication(c *Conn)
	PReleaseConfirm(c *Conn)
	// PAbortIndication is P-U-ABORT (provider false) or P-P-ABORT.
	PAbortIndication(c *Conn, provider bool)
	PReady(c *Conn)
}

// Stats counts the entity's events; every discard has a counter.
type Stats struct {
	TxCP, TxCPA, TxCPR, TxTD, TxARU, TxARP uint64
	RxCP, RxCPA, RxCPR, RxTD, RxARU        uint64
	RxBadPPDU, RxUnexpected, RxRefusedCP   uint64
	TxNoMemory, TxRefused                  uint64
	EncodedOctets, DecodedOctets, TLVs     uint64
}

// Costs in instructions per call. The seed's presentation entity is
// 2930 lines and 22 KB (seed Table 1): the kernel unit's PPM, as ISO 8823
// gives it in state tables, and the BER encoder and decoder. Every event
// (a request from the user, an indication from the session) goes through
// one table-driven step of the PPM (pres_ppm); the paths below are each
// event's own actions, and the BER work is charged per TLV and octet on
// top. Counts are the C of each path as a 16-bit compiler emitted it
// (see session's: a far load 2, a call with its arguments 4 to 6, a test
// and branch 2), turned into cycles by the machine's CPI.
var (
	defPPM     = cpu.Def{Name: "pres_ppm", Layer: cpu.LayerPRES, Instructions: 30, CodeBytes: 384, Why: "one event through the PPM's state table (ISO 8823, kernel unit): the (state, event) cell (IMUL, ADD, far load: 6), its predicates by a call through a pointer (8), its actions by calls through pointers (8), the next state (3), return (5)"}
	defConnect = cpu.Def{Name: "pres_connect", Layer: cpu.LayerPRES, Instructions: 60, CodeBytes: 512, Why: "P-CONNECT request: the CP's fields, encode, S-CONNECT request"}
	defCPIn    = cpu.Def{Name: "pres_cp_input", Layer: cpu.LayerPRES, Instructions: 80, CodeBytes: 768, Why: "S-CONNECT indication: decode the CP, check mode, selector and context, indicate"}
	defAccept  = cpu.Def{Name: "pres_accept", Layer: cpu.LayerPRES, Instructions: 50, CodeBytes: 448, Why: "P-CONNECT response: the CPA or CPR, encode, S-CONNECT response"}
	defCPAIn   = cpu.Def{Name: "pres_cpa_input", Layer: cpu.LayerPRES, Instructions: 60, CodeBytes: 512, Why: "S-CONNECT confirm: decode the CPA or CPR, take the context, confirm"}
	defDataReq = cpu.Def{Name: "pres_data_request", Layer: cpu.LayerPRES, Instructions: 30, CodeBytes: 256, Why: "P-DATA request's action: the data's length (pdu_len: 4), the TD header's lengths worked out (6), pdu_prepend (call: 6), the encoder (call: 5), the S-DATA request and its refusal (call and test: 6), return (3)"}
	defDataIn  = cpu.Def{Name: "pres_data_input", Layer: cpu.LayerPRES, Instructions: 30, CodeBytes: 256, Why: "S-DATA indication's action: length and first octets (pdu_len, pdu_read: 10), the decoder (call: 4), context and length checked (6), pdu_pull over the header (call: 4), the P-DATA indication (call: 4), return (2)"}
	defCtl     = cpu.Def{Name: "pres_control", Layer: cpu.LayerPRES, Instructions: 30, CodeBytes: 256, Why: "release and abort requests and indications: map to the session's, build or decode the ARU/ARP"}
	defEncode  = cpu.Def{Name: "pres_ber_encode", Layer: cpu.LayerPRES, Instructions: 12, CodeBytes: 384, Why: "BER encoder's entry: the TLV list set up and the output pointer (far: 12); per TLV and octet below"}
	defDecode  = cpu.Def{Name: "pres_ber_decode", Layer: cpu.LayerPRES, Instructions: 12, CodeBytes: 384, Why: "BER decoder's entry: the input pointer and bounds (far: 12); per TLV and octet below"}
)

// Presentation is the presentation entity of one end system.
type Presentation struct {
	env   osi.Env
	bufs  *osi.Bufs
	c     *cpu.CPU
	p     Params
	st    Stats
	perTL int64
	perB  int64
	hdr   []byte
	in    [24]byte
	rbuf  []byte
	sym   struct{ ppm, connect, cpIn, accept, cpaIn, dataReq, dataIn, ctl, enc, dec *cpu.Symbol }
}

// New makes the presentation entity.
func New(env osi.Env, p Params) (*Presentation, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	e := &Presentation{env: env, bufs: env.Bufs(), c: env.CPU(), p: p, hdr: make([]byte, 0, 32)}
	m := &e.sym
	osi.DefineAll(env, osi.CatOther, []cpu.Binding{
		{&m.ppm, defPPM}, {&m.connect, defConnect}, {&m.cpIn, defCPIn}, {&m.accept, defAccept}, {&m.cpaIn, defCPAIn}, {&m.dataReq, defDataReq},
		{&m.dataIn, defDataIn}, {&m.ctl, defCtl}, {&m.enc, defEncode}, {&m.dec, defDecode},
	})
	e.perTL = env.Cost("pres_ber.tlv", 14, "per TLV: identifier class and number, length form and octets, nesting bookkeeping")
	e.perB = env.Cost("pres_ber.octet", 2, "per octet of identifiers and lengths: load or store, shift")
	return e, nil
}

// Stats returns the counters.
func (e *Presentation) Stats() Stats { return e.st }

// event runs one event through the PPM's state table (pres_ppm).
func (e *Presentation) event() {
	e.c.Enter(e.sym.ppm)
	e.c.Exit(e.sym.ppm)
}

// Params returns the configuration.
func (e *Presentation) Params() Params { return e.p }

// countTLVs returns the TLVs in b (values nested in constructed ones
// counted too), for the charge.
func countTLVs(b []byte) int {
	n := 0
	for len(b) > 0 {
		v := header.BER(b)
		if !v.IsValid() {
			return n
		}
		n++
		if v.Tag().Constructed {
			n += countTLVs(v.Content())
		}
		b = b[v.Len():]
	}
	return n
}

// encode writes the encoded octets b at a in simulated memory, charging
// the encoder's work: per TLV and per octet written.
func (e *Presentation) encode(a memory.Addr, b []byte, tlvs int) {
	c := e.c
	c.Enter(e.sym.enc)
	defer c.Exit(e.sym.enc)
	c.Exec(int64(tlvs)*e.perTL + int64(len(b))*e.perB)
	c.Write(a, b)
	e.st.EncodedOctets += uint64(len(b))
	e.st.TLVs += uint64(tlvs)
}

// decodeCharge charges the decoder's work over n octets holding tlvs
// TLVs (already read through the caches by the caller).
func (e *Presentation) decodeCharge(n, tlvs int) {
	c := e.c
	c.Enter(e.sym.dec)
	defer c.Exit(e.sym.dec)
	c.Exec(int64(tlvs)*e.perTL + int64(n)*e.perB)
	e.st.DecodedOctets += uint64(n)
	e.st.TLVs += uint64(tlvs)
}

// block encodes b into a fresh chain.
func (e *Presentation) block(b []byte) osi.Chain {
	ch, a := e.bufs.New(osi.Tx, len(b))
	if ch == 0 {
		e.st.TxNoMemory++
		return 0
	}
	e.encode(a, b, countTLVs(b))
	return ch
}

// readAll reads a whole chain (a connection-time PPDU) through the
// caches.
func (e *Presentation) readAll(ch osi.Chain) []byte {
	n := e.bufs.Len(ch)
	if cap(e.rbuf) < n {
		e.rbuf = make([]byte, n)
	}
	b := e.rbuf[:n]
	e.bufs.Read(ch, 0, b)
	e.bufs.Free(ch)
	return b
}

// State is a presentation connection's state.
type State uint8

// States (ISO 8823 annex A names).
const (
	StateIdle     State = iota // STAI0
	StateWaitCPA               // STAI1: CP sent
	StateWaitUser              // STAI2: CP indicated
	StateData                  // STAt0
	StateWaitRel               // release asked for
	StateWaitResp              // release indicated
	StateClosed
)

func (s State) String() string {
	return [...]string{"STAI0", "STAI1", "STAI2", "STAt0", "REL-WAIT", "REL-IND", "CLOSED"}[s]
}

// Conn is one presentation connection.
type Conn struct {
	e      *Presentation
	s      Session
	u      User
	state  State
	local  []byte // P-selectors
	remote []byte
	ctx    int64
}

// NewConn makes a presentation connection over s for u between the
// P-selectors local and remote (the called one when u initiates).
func (e *Presentation) NewConn(s Session, u User, local, remote []byte) *Conn {
	return &Conn{e: e, s: s, u: u, local: append([]byte(nil), local...), remote: append([]byte(nil), remote...)}
}

// State returns the connection's state.
func (c *Conn) State() State { return c.state }

// Context returns the presentation context identifier in use.
func (c *Conn) Context() int64 { return c.ctx }

// Reset makes a closed connection ready for reuse.
func (c *Conn) Reset() {
	if c.state == StateClosed {
		c.state = StateIdle
	}
}

// Connect asks for the connection (P-CONNECT request): a CP in the
// S-CONNECT request.
func (c *Conn) Connect() error {
	e := c.e
	e.c.Enter(e.sym.connect)
	defer e.c.Exit(e.sym.connect)
	e.event()
	if c.state != StateIdle {
		return fmt.Errorf("pres: connect in state %v", c.state)
	}
	cp := header.EncodeCP(&header.PresCP{Calling: c.local, Called: c.remote,
		Contexts: []header.PresContext{{ID: e.p.ContextID, Abstract: e.p.AbstractSyntax, Transfer: []header.OID{header.BERTransferSyntax}}}})
	ch := e.block(cp)
	if ch == 0 {
		return fmt.Errorf("pres: no memory for the CP")
	}
	e.st.TxCP++
	c.ctx = e.p.ContextID
	c.state = StateWaitCPA
	c.s.Connect(ch)
	return nil
}

// SConnectIndication: the peer's S-CONNECT with its CP (consumed).
func (c *Conn) SConnectIndication(userData osi.Chain) {
	e := c.e
	e.c.Enter(e.sym.cpIn)
	defer e.c.Exit(e.sym.cpIn)
	e.event()
	if c.state != StateIdle {
		e.st.RxUnexpected++
		e.bufs.Free(userData)
		c.s.Refuse(header.SESRefuseSPM, 0)
		return
	}
	e.st.RxCP++
	b := e.readAll(userData)
	cp, ok := header.ParseCP(b)
	e.decodeCharge(len(b), countTLVs(b))
	why := int64(-1)
	switch {
	case !ok:
		e.st.RxBadPPDU++
		why = header.PresCPRNotSpecified
	case string(cp.Called) != string(c.local):
		why = header.PresCPRAddressUnknown
	}
	ctx := int64(-1)
	for _, pc := range cp.Contexts {
		if pc.Abstract.Equal(e.p.AbstractSyntax) {
			for _, ts := range pc.Transfer {
				if ts.Equal(header.BERTransferSyntax) {
					ctx = pc.ID
				}
			}
		}
	}
	if why < 0 && ctx < 0 {
		why = header.PresCPRNotSpecified
	}
	if why >= 0 {
		e.st.RxRefusedCP++
		cpr := header.EncodeCPR(&header.PresCPA{Responding: c.local, Reason: why,
			Results: []header.PresResult{{Result: header.PresResultProvReject, Reason: header.PresReasonAbstract}}})
		e.st.TxCPR++
		c.s.Refuse(header.SESRefuseUser, e.block(cpr))
		c.state = StateClosed
		return
	}
	c.ctx = ctx
	c.remote = append(c.remote[:0], cp.Calling...)
	c.state = StateWaitUser
	c.u.PConnectIndication(c)
}

// Accept accepts the connection (P-CONNECT response): a CPA accepting
// the context.
func (c *Conn) Accept() {
	e := c.e
	e.c.Enter(e.sym.accept)
	defer e.c.Exit(e.sym.accept)
	e.event()
	if c.state != StateWaitUser {
		return
	}
	cpa := header.EncodeCPA(&header.PresCPA{Responding: c.local, Reason: -1,
		Results: []header.PresResult{{Result: header.PresResultAccept, Transfer: header.BERTransferSyntax, Reason: -1}}})
	ch := e.block(cpa)
	e.st.TxCPA++
	c.state = StateData
	c.s.Accept(ch)
}

// Refuse refuses the connection: a CPR (user rejection).
func (c *Conn) Refuse() {
	e := c.e
	e.c.Enter(e.sym.accept)
	defer e.c.Exit(e.sym.accept)
	e.event()
	if c.state != StateWaitUser {
		return
	}
	cpr := header.EncodeCPR(&header.PresCPA{Responding: c.local, Reason: -1,
		Results: []header.PresResult{{Result: header.PresResultUserReject, Reason: -1}}})
	e.st.TxCPR++
	c.state = StateClosed
	c.s.Refuse(header.SESRefuseUser, e.block(cpr))
}

// SConnectConfirm: the peer's answer, with its CPA or CPR (consumed).
func (c *Conn) SConnectConfirm(accepted bool, userData osi.Chain) {
	e := c.e
	e.c.Enter(e.sym.cpaIn)
	defer e.c.Exit(e.sym.cpaIn)
	e.event()
	if c.state != StateWaitCPA {
		e.st.RxUnexpected++
		e.bufs.Free(userData)
		return
	}
	b := e.readAll(userData)
	e.decodeCharge(len(b), countTLVs(b))
	if !accepted {
		e.st.RxCPR++
		c.state = StateClosed
		c.u.PConnectConfirm(c, false)
		return
	}
	e.st.RxCPA++
	cpa, ok := header.ParseCPA(b)
	if !ok || len(cpa.Results) != 1 || cpa.Results[0].Result != header.PresResultAccept {
		e.st.RxBadPPDU++
		c.abortProvider(header.PresARPInvalidPPDUParm)
		return
	}
	c.state = StateData
	c.u.PConnectConfirm(c, true)
}

// Data sends data (consumed when true) as a TD: the BER header chained
// in front (P-DATA request). False when not in the data phase or when
// the session cannot take it now (a PReady follows).
func (c *Conn) Data(data osi.Chain) bool {
	e := c.e
	cpu := e.c
	cpu.Enter(e.sym.dataReq)
	defer cpu.Exit(e.sym.dataReq)
	e.event()
	if c.state != StateData && c.state != StateWaitResp {
		e.st.TxRefused++
		return false
	}
	n := e.bufs.Len(data)
	h := header.PresDataHeader(e.hdr[:0], c.ctx, n)
	e.hdr = h
	ch, a := e.bufs.Prepend(osi.Tx, data, len(h))
	if ch == 0 {
		e.st.TxNoMemory++
		return false
	}
	e.encode(a, h, 4)
	if !c.s.Data(ch) {
		e.bufs.Hold(data)
		e.bufs.Free(ch)
		e.st.TxRefused++
		return false
	}
	e.st.TxTD++
	return true
}

// SData: an S-DATA indication with a TD (consumed).
func (c *Conn) SData(ssdu osi.Chain) {
	e := c.e
	cpu := e.c
	cpu.Enter(e.sym.dataIn)
	defer cpu.Exit(e.sym.dataIn)
	e.event()
	if c.state != StateData && c.state != StateWaitRel {
		e.st.RxUnexpected++
		e.bufs.Free(ssdu)
		c.abortProvider(header.PresARPUnexpectedPPU)
		return
	}
	total := e.bufs.Len(ssdu)
	b := e.in[:min(total, len(e.in))]
	e.bufs.Read(ssdu, 0, b)
	ctx, hl, n, ok := header.ParsePresDataHeader(b, total)
	e.decodeCharge(hl, 4)
	if !ok || ctx != c.ctx || hl+n != total {
		e.st.RxBadPPDU++
		e.bufs.Free(ssdu)
		c.abortProvider(header.PresARPInvalidPPDUParm)
		return
	}
	e.st.RxTD++
	e.bufs.Pull(ssdu, hl)
	c.u.PDataIndication(c, ssdu)
}

// Release asks for the release (P-RELEASE request).
func (c *Conn) Release() {
	e := c.e
	e.c.Enter(e.sym.ctl)
	defer e.c.Exit(e.sym.ctl)
	e.event()
	if c.state != StateData {
		return
	}
	c.state = StateWaitRel
	c.s.Release(0)
}

// SReleaseIndication: the peer asks for the release.
func (c *Conn) SReleaseIndication(userData osi.Chain) {
	e := c.e
	e.c.Enter(e.sym.ctl)
	defer e.c.Exit(e.sym.ctl)
	e.event()
	e.bufs.Free(userData)
	if c.state != StateData {
		e.st.RxUnexpected++
		return
	}
	c.state = StateWaitResp
	c.u.PReleaseIndication(c)
}

// ReleaseResponse accepts the release.
func (c *Conn) ReleaseResponse() {
	e := c.e
	e.c.Enter(e.sym.ctl)
	defer e.c.Exit(e.sym.ctl)
	e.event()
	if c.state != StateWaitResp {
		return
	}
	c.state = StateClosed
	c.s.ReleaseResponse(0)
}

// SReleaseConfirm: the release is complete.
func (c *Conn) SReleaseConfirm(userData osi.Chain) {
	e := c.e
	e.c.Enter(e.sym.ctl)
	defer e.c.Exit(e.sym.ctl)
	e.event()
	e.bufs.Free(userData)
	if c.state != StateWaitRel {
		e.st.RxUnexpected++
		return
	}
	c.state = StateClosed
	c.u.PReleaseConfirm(c)
}

// Abort aborts the connection (P-U-ABORT request): an ARU in the
// S-U-ABORT.
func (c *Conn) Abort() {
	e := c.e
	e.c.Enter(e.sym.ctl)
	defer e.c.Exit(e.sym.ctl)
	e.event()
	if c.state == StateIdle || c.state == StateClosed {
		return
	}
	e.st.TxARU++
	c.state = StateClosed
	c.s.Abort(e.block(header.EncodeARU(nil)))
}

// abortProvider aborts after a protocol error: an ARP, and the user is
// told (P-P-ABORT).
func (c *Conn) abortProvider(reason int64) {
	e := c.e
	if c.state == StateIdle || c.state == StateClosed {
		return
	}
	e.st.TxARP++
	c.state = StateClosed
	c.s.Abort(e.block(header.EncodeARP(reason)))
	c.u.PAbortIndication(c, true)
}

// SAbort: the session connection was aborted (by the peer's user, whose
// ARU or ARP is in userData, or by the provider).
func (c *Conn) SAbort(provider bool, userData osi.Chain) {
	e := c.e
	e.c.Enter(e.sym.ctl)
	defer e.c.Exit(e.sym.ctl)
	e.event()
	if userData != 0 {
		b := e.readAll(userData)
		e.decodeCharge(len(b), countTLVs(b))
		if v := header.BER(b); v.IsValid() && v.Is(header.PresTagARU) {
			e.st.RxARU++
		} else {
			provider = true // an ARP, or what does not decode
		}
	}
	if c.state == StateIdle || c.state == StateClosed {
		return
	}
	c.state = StateClosed
	c.u.PAbortIndication(c, provider)
}

// SReady: the session has room again.
func (c *Conn) SReady() {
	if c.state == StateData || c.state == StateWaitResp {
		c.u.PReady(c)
	}
}
