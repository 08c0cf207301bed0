// Package session is the ISO 8327-1 session protocol (ITU-T X.225),
// kernel and duplex functional units, version 2, over a transport
// connection: the session protocol machine of one connection. Layer SES.
//
// # Contract
//
// The environment makes a Conn for each session connection with the
// Transport it runs over (T- requests) and the User above it, and passes
// the transport's indications to the Conn (TConnectIndication,
// TConnectConfirm, TData, TDisconnect, TReady). The user's requests
// (Connect, Accept, Refuse, Data, Release, ReleaseResponse, Abort) and
// indications follow the session service (ISO 8326) for the kernel and
// duplex units. User data travels as chains: every SPDU header is a PCI
// chained in front of the user's data (CN, AC, RF, FN, DN and AB carry
// it in their user data parameter, the DT after GT+DT), and a received
// SPDU's user data is handed up in place, by pointer manipulation.
//
//	initiator                                      responder
//	S-CONNECT req ─► T-CONNECT ···························► T-CONNECT resp
//	T-CONNECT conf ─► CN ─────────────────────────────► S-CONNECT ind
//	S-CONNECT conf ◄─ AC (or RF) ◄───────────────────── S-CONNECT resp
//	S-DATA ─► GT DT data ──────────────────────────────► S-DATA ind
//	S-RELEASE req ─► FN (release the transport) ───────► S-RELEASE ind
//	S-RELEASE conf ◄─ DN ◄───────────────────────────── S-RELEASE resp
//	T-DISCONNECT req ··································► (waits for it, TIM)
//
// The receive path never panics on bad bytes: an SPDU that does not
// parse or does not fit the state is a protocol error — the user gets an
// S-P-ABORT indication, an AB (protocol error) goes, and the transport
// connection is released — and is counted.
//
// # Simplifications
//
// Kernel and duplex only: no tokens (the GT in front of each DT gives
// none), no half duplex, expedited, typed or capability data, no
// synchronisation, resynchronisation or activities, no negotiated
// release (so no NF), no transport connection reuse (every FN asks for
// the transport's release), no connection identifier, no TSDU size
// negotiation (PI 21 is not sent and ignored when received); CN user
// data up to 10240 octets in PGI 193 (version 2) but not in the extended
// user data PGI 194.
package session

import (
	"encoding/binary"
	"fmt"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/osi"
)

// Params configures the session entity.
type Params struct {
	DisconnectTime sim.Time `toml:"disconnect_time" min:"10ms" max:"600s" help:"TIM: how long an entity that sent DN, RF or AB waits for the peer to release the transport connection before releasing it itself"`
}

// DefaultParams returns a TIM of 5 s.
func DefaultParams() Params { return Params{DisconnectTime: 5 * sim.Second} }

// Transport is the transport connection a session connection runs over,
// as the session entity uses it.
type Transport interface {
	// Connect issues the T-CONNECT request.
	Connect()
	// Accept issues the T-CONNECT response.
	Accept()
	// Data issues a T-DATA request with tsdu (consumed when true); false
	// when the transport cannot take it now (a TReady follows).
	Data(tsdu osi.Chain) bool
	// Disconnect issues the T-DISCONNECT request.
	Disconnect()
}

// User is the session service user of a connection. Chains it is given
// are its own.
type User interface {
	SConnectIndication(c *Conn, userData osi.Chain)
	SConnectConfirm(c *Conn, accepted bool, reason uint8, userData osi.Chain)
	SDataIndication(c *Conn, ssdu osi.Chain)
	SReleaseIndication(c *Conn, userData osi.Chain)
	SReleaseConfirm(c *Conn, userData osi.Chain)
	// SAbortIndication is S-U-ABORT (provider false) or S-P-ABORT.
	SAbortIndication(c *Conn, provider bool, userData osi.Chain)
	// SReady says the transport has room again after a refused Data.
	SReady(c *Conn)
}

// Stats counts the entity's events; every discard has a counter.
type Stats struct {
	TxCN, TxAC, TxRF, TxFN, TxDN, TxAB, TxDT uint64
	RxCN, RxAC, RxRF, RxFN, RxDN, RxAB, RxDT uint64
	RxBadSPDU, RxUnexpected, RxRefusedCN     uint64
	TxNoMemory, TxRefused                    uint64
	ProviderAborts, Timeouts                 uint64
}

// Costs in instructions per call. The seed's session entity is 15130
// lines and 177 KB of code (seed Table 1): the whole of ISO 8327 (every
// functional unit), which the measurements ran with the kernel and
// duplex units only. A protocol machine that size is the standard's
// state tables (ISO 8327-1 annex A) in C: every event — a request from
// the user, an indication from the transport, each SPDU received (a GT
// and a DT concatenated are two) — goes through one table-driven step of
// the SPM (ses_spm), after each received SPDU's generic decoding
// (ses_spdu_decode); the paths below are each event's own actions. Each
// count is the C of the path as a 16-bit compiler emitted it: a far
// pointer's load 2 instructions (LES and MOV), a call with its
// arguments 4 to 6, a test and branch 2; the machine's CPI (1.8 on the
// 486DX: one-cycle register moves and ALU operations, 3-cycle taken
// branches and far loads) turns them into cycles, and the loads and
// stores of structures in simulated memory are charged where they are.
var (
	defSPM     = cpu.Def{Name: "ses_spm", Layer: cpu.LayerSES, Instructions: 40, CodeBytes: 512, Why: "one event through the SPM's state table (ISO 8327-1 annex A): the (state, event) cell's address (IMUL, ADD, far load: 6), the cell's predicates on the token and functional-unit variables by a call through a pointer (12), its actions by calls through pointers (10), the next state (3), loop and return (9)"}
	defDecode  = cpu.Def{Name: "ses_spdu_decode", Layer: cpu.LayerSES, Instructions: 18, CodeBytes: 256, Why: "per SPDU received: SI and its category against what may follow (a table test: 5), LI in the short or the 0xFF long form (5), the parameter field's PI/PGI walk set up and ended (6; GT and DT have none), advance (2)"}
	defConnect = cpu.Def{Name: "ses_connect", Layer: cpu.LayerSES, Instructions: 80, CodeBytes: 768, Why: "S-CONNECT request, or the CN once the transport is up: build the CN's parameters, chain the user data"}
	defCNIn    = cpu.Def{Name: "ses_cn_input", Layer: cpu.LayerSES, Instructions: 120, CodeBytes: 1024, Why: "CN: parse the parameters, check SSAP, version and units, indicate"}
	defAccept  = cpu.Def{Name: "ses_accept", Layer: cpu.LayerSES, Instructions: 70, CodeBytes: 640, Why: "S-CONNECT response: build the AC or the RF"}
	defACIn    = cpu.Def{Name: "ses_ac_input", Layer: cpu.LayerSES, Instructions: 90, CodeBytes: 768, Why: "AC or RF: take the negotiated values, confirm"}
	defDataReq = cpu.Def{Name: "ses_data_request", Layer: cpu.LayerSES, Instructions: 28, CodeBytes: 320, Why: "S-DATA request's action: the SSDU's length from its Parameter Structure (far load: 2), pdu_prepend for the 4-octet PCI (call: 6), SI and LI of GT and DT (4 stores), the T-DATA request (call: 6), its refusal tested (3), return (3), frame (4)"}
	defDataIn  = cpu.Def{Name: "ses_data_input", Layer: cpu.LayerSES, Instructions: 26, CodeBytes: 384, Why: "T-DATA indication's action: the TSDU's length and first octets (pdu_len, pdu_read: 10), GT+DT recognised (4 compares: 4), pdu_pull over the PCI (call: 4), the S-DATA indication (call: 5), return (3)"}
	defRelease = cpu.Def{Name: "ses_release", Layer: cpu.LayerSES, Instructions: 50, CodeBytes: 448, Why: "S-RELEASE request or response: build the FN or DN"}
	defRelIn   = cpu.Def{Name: "ses_release_input", Layer: cpu.LayerSES, Instructions: 50, CodeBytes: 448, Why: "FN or DN: indicate, confirm, release the transport"}
	defAbort   = cpu.Def{Name: "ses_abort", Layer: cpu.LayerSES, Instructions: 45, CodeBytes: 384, Why: "S-U-ABORT request or a protocol error: build the AB, arm TIM"}
	defAbIn    = cpu.Def{Name: "ses_abort_input", Layer: cpu.LayerSES, Instructions: 40, CodeBytes: 320, Why: "AB or T-DISCONNECT: indicate the abort, release the transport"}
	defTimer   = cpu.Def{Name: "ses_tim_timeout", Layer: cpu.LayerSES, Instructions: 15, CodeBytes: 128, Why: "TIM ran out: release the transport connection"}
)

// Session is the session entity of one end system: its symbols,
// counters and parameters, shared by its connections.
type Session struct {
	env  osi.Env
	bufs *osi.Bufs
	c    *cpu.CPU
	p    Params
	st   Stats
	hdr  []byte // parameters being built
	out  []byte // an SPDU header being built
	in   [8]byte
	rbuf []byte // a control SPDU read whole
	gtdt [4]byte
	sym  struct{ spm, decode, connect, cnIn, accept, acIn, dataReq, dataIn, release, relIn, abort, abIn, timer *cpu.Symbol }
}

// New makes the session entity.
func New(env osi.Env, p Params) *Session {
	s := &Session{env: env, bufs: env.Bufs(), c: env.CPU(), p: p, hdr: make([]byte, 0, 512), out: make([]byte, 0, 512),
		gtdt: [4]byte{header.SPDUGiveTokens, 0, header.SPDUDataTransfer, 0}}
	m := &s.sym
	osi.DefineAll(env, osi.CatOther, []cpu.Binding{
		{&m.spm, defSPM}, {&m.decode, defDecode}, {&m.connect, defConnect}, {&m.cnIn, defCNIn}, {&m.accept, defAccept}, {&m.acIn, defACIn}, {&m.dataReq, defDataReq},
		{&m.dataIn, defDataIn}, {&m.release, defRelease}, {&m.relIn, defRelIn}, {&m.abort, defAbort}, {&m.abIn, defAbIn}, {&m.timer, defTimer},
	})
	return s
}

// Stats returns the counters.
func (s *Session) Stats() Stats { return s.st }

// event runs one event through the SPM's state table (ses_spm).
func (s *Session) event() {
	s.c.Enter(s.sym.spm)
	s.c.Exit(s.sym.spm)
}

// spdus decodes n received SPDUs and runs each through the SPM.
func (s *Session) spdus(n int) {
	for range n {
		s.c.Enter(s.sym.decode)
		s.c.Exit(s.sym.decode)
		s.event()
	}
}

// State is a session connection's state (ISO 8327-1 annex A names).
type State uint8

// States.
const (
	StateIdle      State = iota // STA01
	StateWaitTConf              // STA01B: T-CONNECT asked for
	StateWaitCN                 // STA01C: transport up, CN awaited
	StateWaitAC                 // STA02A: CN sent
	StateWaitUser               // STA08: CN indicated, response awaited
	StateData                   // STA713
	StateWaitDN                 // STA03: FN sent
	StateWaitResp               // STA09: FN indicated
	StateWaitTDisc              // STA16: DN, RF or AB sent, the peer releases the transport
	StateClosed
)

func (s State) String() string {
	return [...]string{"STA01", "STA01B", "STA01C", "STA02A", "STA08", "STA713", "STA03", "STA09", "STA16", "CLOSED"}[s]
}

// Conn is one session connection.
type Conn struct {
	s         *Session
	t         Transport
	u         User
	state     State
	local     []byte // SSAP selectors
	remote    []byte
	fu        uint16 // functional units in use
	pending   osi.Chain
	tim       osi.Timer
	initiator bool
}

// NewConn makes a session connection over t for u between SSAPs local
// and remote (the called one when u initiates).
func (s *Session) NewConn(t Transport, u User, local, remote []byte) *Conn {
	c := &Conn{s: s, t: t, u: u, local: append([]byte(nil), local...), remote: append([]byte(nil), remote...)}
	c.tim = s.env.NewTimer("ses.tim", c.timeout)
	return c
}

// State returns the connection's state.
func (c *Conn) State() State { return c.state }

// FunctionalUnits returns the units agreed (duplex: 0x0002).
func (c *Conn) FunctionalUnits() uint16 { return c.fu }

// Reset makes a closed (or idle) connection ready for reuse.
func (c *Conn) Reset() {
	if c.state == StateClosed {
		c.state = StateIdle
	}
}

// Connect asks for the connection (S-CONNECT request) with userData
// (consumed; 0 for none): the transport connection first, then the CN.
func (c *Conn) Connect(userData osi.Chain) error {
	s := c.s
	s.c.Enter(s.sym.connect)
	defer s.c.Exit(s.sym.connect)
	s.event()
	if c.state != StateIdle {
		s.bufs.Free(userData)
		return fmt.Errorf("session: connect in state %v", c.state)
	}
	if n := s.bufs.Len(userData); n > header.SESMaxConnectUserDataV2 {
		s.bufs.Free(userData)
		return fmt.Errorf("session: %d octets of connect user data, at most %d", n, header.SESMaxConnectUserDataV2)
	}
	c.initiator = true
	c.pending = userData
	c.state = StateWaitTConf
	c.t.Connect()
	return nil
}

// TConnectConfirm: the transport connection is up; the CN goes.
func (c *Conn) TConnectConfirm() {
	s := c.s
	s.c.Enter(s.sym.connect)
	defer s.c.Exit(s.sym.connect)
	s.event()
	if c.state != StateWaitTConf {
		s.st.RxUnexpected++
		return
	}
	item := header.AppendSESUnit(header.AppendSESUnit(nil, header.SESPIProtocolOptions, 0), header.SESPIVersion, header.SESVersion2)
	p := s.hdr[:0]
	p = header.AppendSESUnit(p, header.SESPGIConnectAccept, item...)
	p = header.AppendSESUnit(p, header.SESPIUserRequirements, 0, header.SESFUDuplex)
	p = header.AppendSESUnit(p, header.SESPICallingSSAP, c.local...)
	p = header.AppendSESUnit(p, header.SESPICalledSSAP, c.remote...)
	ud := c.pending
	c.pending = 0
	if !c.send(header.SPDUConnect, p, header.SESPGIUserData, nil, ud) {
		c.fail()
		return
	}
	s.st.TxCN++
	c.state = StateWaitAC
}

// TConnectIndication: a transport connection was offered for this
// session connection; it is accepted and the CN awaited.
func (c *Conn) TConnectIndication() {
	c.s.event()
	if c.state != StateIdle {
		c.s.st.RxUnexpected++
		return
	}
	c.state = StateWaitCN
	c.t.Accept()
}

// Accept accepts the connection (S-CONNECT response, positive) with
// userData (consumed).
func (c *Conn) Accept(userData osi.Chain) {
	s := c.s
	s.c.Enter(s.sym.accept)
	defer s.c.Exit(s.sym.accept)
	s.event()
	if c.state != StateWaitUser {
		s.bufs.Free(userData)
		return
	}
	item := header.AppendSESUnit(header.AppendSESUnit(nil, header.SESPIProtocolOptions, 0), header.SESPIVersion, header.SESVersion2)
	p := s.hdr[:0]
	p = header.AppendSESUnit(p, header.SESPGIConnectAccept, item...)
	p = header.AppendSESUnit(p, header.SESPIUserRequirements, byte(c.fu>>8), byte(c.fu))
	p = header.AppendSESUnit(p, header.SESPICalledSSAP, c.local...)
	if !c.send(header.SPDUAccept, p, header.SESPGIUserData, nil, userData) {
		c.fail()
		return
	}
	s.st.TxAC++
	c.state = StateData
}

// Refuse refuses the connection (S-CONNECT response, negative) with a
// reason (0: by the user) and userData (consumed); the peer releases
// the transport connection.
func (c *Conn) Refuse(reason uint8, userData osi.Chain) {
	s := c.s
	s.c.Enter(s.sym.accept)
	defer s.c.Exit(s.sym.accept)
	s.event()
	if c.state != StateWaitUser && c.state != StateWaitCN {
		s.bufs.Free(userData)
		return
	}
	c.refuse(reason, userData)
}

func (c *Conn) refuse(reason uint8, userData osi.Chain) {
	s := c.s
	p := s.hdr[:0]
	p = header.AppendSESUnit(p, header.SESPITransportDisc, header.SESTDRelease)
	p = header.AppendSESUnit(p, header.SESPIUserRequirements, 0, header.SESFUDuplex)
	p = header.AppendSESUnit(p, header.SESPIVersion, header.SESVersion2)
	// The reason code's value: the reason, then the user's data.
	if !c.send(header.SPDURefuse, p, header.SESPIReasonCode, []byte{reason}, userData) {
		c.fail()
		return
	}
	s.st.TxRF++
	c.waitTDisc()
}

// Data sends ssdu (consumed when true) behind GT and DT (S-DATA
// request). It returns false when the connection is not in the data
// phase or the transport cannot take it now (an SReady follows).
func (c *Conn) Data(ssdu osi.Chain) bool {
	s := c.s
	s.c.Enter(s.sym.dataReq)
	defer s.c.Exit(s.sym.dataReq)
	s.event()
	if c.state != StateData && c.state != StateWaitResp {
		s.st.TxRefused++
		return false
	}
	ch, a := s.bufs.Prepend(osi.Tx, ssdu, header.SESDataPhaseOverhead)
	if ch == 0 {
		s.st.TxNoMemory++
		return false
	}
	s.c.Write(a, s.gtdt[:])
	if !c.t.Data(ch) {
		// Take the PCI off again: the caller keeps its SSDU.
		s.bufs.Hold(ssdu)
		s.bufs.Free(ch)
		s.st.TxRefused++
		return false
	}
	s.st.TxDT++
	return true
}

// Release asks for the orderly release (S-RELEASE request): an FN that
// asks the peer to let the transport connection go.
func (c *Conn) Release(userData osi.Chain) {
	s := c.s
	s.c.Enter(s.sym.release)
	defer s.c.Exit(s.sym.release)
	s.event()
	if c.state != StateData {
		s.bufs.Free(userData)
		return
	}
	p := header.AppendSESUnit(s.hdr[:0], header.SESPITransportDisc, header.SESTDRelease)
	if !c.send(header.SPDUFinish, p, header.SESPGIUserData, nil, userData) {
		c.fail()
		return
	}
	s.st.TxFN++
	c.state = StateWaitDN
}

// ReleaseResponse accepts the release (S-RELEASE response): the DN goes
// and the entity waits for the peer to release the transport.
func (c *Conn) ReleaseResponse(userData osi.Chain) {
	s := c.s
	s.c.Enter(s.sym.release)
	defer s.c.Exit(s.sym.release)
	s.event()
	if c.state != StateWaitResp {
		s.bufs.Free(userData)
		return
	}
	if !c.send(header.SPDUDisconnect, nil, header.SESPGIUserData, nil, userData) {
		c.fail()
		return
	}
	s.st.TxDN++
	c.waitTDisc()
}

// Abort aborts the connection (S-U-ABORT request): an AB, then the peer
// releases the transport.
func (c *Conn) Abort(userData osi.Chain) {
	s := c.s
	s.c.Enter(s.sym.abort)
	defer s.c.Exit(s.sym.abort)
	s.event()
	switch c.state {
	case StateIdle, StateClosed, StateWaitTDisc:
		s.bufs.Free(userData)
		return
	case StateWaitTConf, StateWaitCN:
		s.bufs.Free(userData)
		c.t.Disconnect()
		c.close()
		return
	}
	c.sendAB(header.SESTDRelease|header.SESTDUserAbort, userData)
}

func (c *Conn) sendAB(td uint8, userData osi.Chain) {
	s := c.s
	p := header.AppendSESUnit(s.hdr[:0], header.SESPITransportDisc, td)
	if !c.send(header.SPDUAbort, p, header.SESPGIUserData, nil, userData) {
		c.fail()
		return
	}
	s.st.TxAB++
	c.waitTDisc()
}

func (c *Conn) waitTDisc() {
	c.state = StateWaitTDisc
	c.tim.Start(c.s.p.DisconnectTime)
}

// close ends the connection.
func (c *Conn) close() {
	c.tim.Stop()
	c.s.bufs.Free(c.pending)
	c.pending = 0
	c.state = StateClosed
}

// fail gives up a connection that cannot send (no memory, or the
// transport refused): the transport goes and the user is told.
func (c *Conn) fail() {
	c.s.st.ProviderAborts++
	c.t.Disconnect()
	c.close()
	c.u.SAbortIndication(c, true, 0)
}

// timeout: TIM ran out, the peer did not release the transport.
func (c *Conn) timeout() {
	s := c.s
	s.c.Enter(s.sym.timer)
	defer s.c.Exit(s.sym.timer)
	s.event()
	if c.state != StateWaitTDisc {
		return
	}
	s.st.Timeouts++
	c.t.Disconnect()
	c.close()
}

// TReady: the transport has room again.
func (c *Conn) TReady() {
	if c.state == StateData || c.state == StateWaitResp {
		c.u.SReady(c)
	}
}

// TDisconnect: the transport connection is gone.
func (c *Conn) TDisconnect() {
	s := c.s
	s.c.Enter(s.sym.abIn)
	defer s.c.Exit(s.sym.abIn)
	s.event()
	switch c.state {
	case StateWaitTDisc:
		c.close() // the release, refusal or abort is complete
	case StateIdle, StateClosed:
	case StateWaitCN:
		c.close()
	default:
		s.st.ProviderAborts++
		c.close()
		c.u.SAbortIndication(c, true, 0)
	}
}

// protocolError: an SPDU that does not parse or fit the state.
func (c *Conn) protocolError() {
	s := c.s
	s.st.ProviderAborts++
	switch c.state {
	case StateWaitTDisc, StateClosed, StateIdle:
		return
	case StateWaitCN:
		c.refuse(header.SESRefuseSPM, 0)
		return
	}
	c.sendAB(header.SESTDRelease|header.SESTDProtocolError, 0)
	c.u.SAbortIndication(c, true, 0)
}

// send builds an SPDU of parameters p and a last unit code whose value
// is prefix and then ud's octets (no last unit when code is 0, or when
// ud is 0 and prefix empty and code is the user data PGI), chained in
// front of ud (consumed), and hands it to the transport.
func (c *Conn) send(si uint8, p []byte, code uint8, prefix []byte, ud osi.Chain) bool {
	s := c.s
	n := s.bufs.Len(ud)
	b := s.out[:0]
	var last []byte
	if code != 0 && (ud != 0 && n > 0 || len(prefix) > 0 || code != header.SESPGIUserData) {
		v := len(prefix) + n
		if v > header.SESMaxShortLI {
			last = append(last, code, 0xFF, byte(v>>8), byte(v))
		} else {
			last = append(last, code, byte(v))
		}
		last = append(last, prefix...)
	}
	li := len(p) + len(last) + n
	if li > header.SESMaxLI {
		s.bufs.Free(ud)
		return false
	}
	b = append(b, si)
	if li > header.SESMaxShortLI {
		b = append(b, 0xFF, byte(li>>8), byte(li))
	} else {
		b = append(b, byte(li))
	}
	b = append(append(b, p...), last...)
	var ch osi.Chain
	var a memory.Addr
	if ud != 0 {
		ch, a = s.bufs.Prepend(osi.Tx, ud, len(b))
	} else {
		ch, a = s.bufs.New(osi.Tx, len(b))
	}
	if ch == 0 {
		s.st.TxNoMemory++
		s.bufs.Free(ud)
		return false
	}
	s.c.Write(a, b)
	s.out = b
	if !c.t.Data(ch) {
		s.st.TxRefused++
		s.bufs.Free(ch)
		return false
	}
	return true
}

// TData takes a TSDU (consumed) from the transport: the data phase's
// GT+DT on the fast path, any other SPDU parsed whole.
func (c *Conn) TData(tsdu osi.Chain) {
	s := c.s
	s.c.Enter(s.sym.dataIn)
	defer s.c.Exit(s.sym.dataIn)
	total := s.bufs.Len(tsdu)
	b := s.in[:min(total, 4)]
	s.bufs.Read(tsdu, 0, b)
	if total >= 4 && b[0] == header.SPDUGiveTokens && b[1] == 0 && b[2] == header.SPDUDataTransfer && b[3] == 0 {
		s.spdus(2) // GT, then DT
		if c.state != StateData && c.state != StateWaitDN {
			s.st.RxUnexpected++
			s.bufs.Free(tsdu)
			c.protocolError()
			return
		}
		s.st.RxDT++
		s.bufs.Pull(tsdu, header.SESDataPhaseOverhead)
		c.u.SDataIndication(c, tsdu)
		return
	}
	// Another SPDU: read it whole (connection set-up and release; not
	// the data path).
	if cap(s.rbuf) < total {
		s.rbuf = make([]byte, total)
	}
	all := s.rbuf[:total]
	s.bufs.Read(tsdu, 0, all)
	first, second, ok := header.SPDUs(all)
	if second != nil {
		s.spdus(2)
	} else {
		s.spdus(1)
	}
	if !ok {
		s.st.RxBadSPDU++
		s.bufs.Free(tsdu)
		c.protocolError()
		return
	}
	spdu := first
	if second != nil {
		// GT then another category 2 SPDU: only DT is known, and it was
		// handled above with an empty parameter field.
		if second.SI() != header.SPDUDataTransfer || c.state != StateData && c.state != StateWaitDN {
			s.st.RxUnexpected++
			s.bufs.Free(tsdu)
			c.protocolError()
			return
		}
		s.st.RxDT++
		s.bufs.Pull(tsdu, total-len(second.UserInfo()))
		c.u.SDataIndication(c, tsdu)
		return
	}
	if len(spdu.UserInfo()) != 0 {
		// Only a DT carries user information after its parameters.
		s.st.RxBadSPDU++
		s.bufs.Free(tsdu)
		c.protocolError()
		return
	}
	c.control(spdu, tsdu)
}

// userData turns the tsdu into a chain over the value of the unit code
// of spdu's parameters (prefix octets skipped), or frees it and returns
// 0 when there is none.
func (c *Conn) userData(spdu header.SPDU, tsdu osi.Chain, code uint8, skip int) osi.Chain {
	s := c.s
	p := spdu.Params()
	off := spdu.HeaderLen() - len(p)
	for len(p) > 0 {
		v, n := int(p[1]), 2
		if p[1] == 0xFF {
			v, n = int(binary.BigEndian.Uint16(p[2:])), 4
		}
		if p[0] == code && v > skip {
			s.bufs.Pull(tsdu, off+n+skip)
			s.bufs.Truncate(tsdu, v-skip)
			return tsdu
		}
		off += n + v
		p = p[n+v:]
	}
	s.bufs.Free(tsdu)
	return 0
}

// control handles a category 1 SPDU.
func (c *Conn) control(spdu header.SPDU, tsdu osi.Chain) {
	s := c.s
	switch spdu.SI() {
	case header.SPDUConnect:
		s.st.RxCN++
		c.cnInput(spdu, tsdu)
	case header.SPDUAccept:
		s.st.RxAC++
		c.acInput(spdu, tsdu)
	case header.SPDURefuse:
		s.st.RxRF++
		c.rfInput(spdu, tsdu)
	case header.SPDUFinish:
		s.st.RxFN++
		s.c.Enter(s.sym.relIn)
		defer s.c.Exit(s.sym.relIn)
		if c.state != StateData {
			s.st.RxUnexpected++
			s.bufs.Free(tsdu)
			c.protocolError()
			return
		}
		c.state = StateWaitResp
		c.u.SReleaseIndication(c, c.userData(spdu, tsdu, header.SESPGIUserData, 0))
	case header.SPDUDisconnect:
		s.st.RxDN++
		s.c.Enter(s.sym.relIn)
		defer s.c.Exit(s.sym.relIn)
		if c.state != StateWaitDN {
			s.st.RxUnexpected++
			s.bufs.Free(tsdu)
			c.protocolError()
			return
		}
		ud := c.userData(spdu, tsdu, header.SESPGIUserData, 0)
		c.t.Disconnect()
		c.close()
		c.u.SReleaseConfirm(c, ud)
	case header.SPDUAbort:
		s.st.RxAB++
		s.c.Enter(s.sym.abIn)
		defer s.c.Exit(s.sym.abIn)
		if c.state == StateIdle || c.state == StateClosed || c.state == StateWaitTDisc {
			s.bufs.Free(tsdu)
			return
		}
		td, _ := spdu.Param(header.SESPITransportDisc)
		provider := len(td) == 1 && td[0]&header.SESTDProtocolError != 0
		ud := c.userData(spdu, tsdu, header.SESPGIUserData, 0)
		c.t.Disconnect()
		c.close()
		c.u.SAbortIndication(c, provider, ud)
	default:
		s.st.RxUnexpected++
		s.bufs.Free(tsdu)
		c.protocolError()
	}
}

// cnInput handles a CN: SSAP, version and functional units are checked,
// the user is asked.
func (c *Conn) cnInput(spdu header.SPDU, tsdu osi.Chain) {
	s := c.s
	s.c.Enter(s.sym.cnIn)
	defer s.c.Exit(s.sym.cnIn)
	if c.state != StateWaitCN {
		s.st.RxUnexpected++
		s.bufs.Free(tsdu)
		c.protocolError()
		return
	}
	reason := -1
	version := byte(header.SESVersion1)
	if item, ok := spdu.Param(header.SESPGIConnectAccept); ok {
		if v, ok := header.SESUnit(item, header.SESPIVersion); ok && len(v) == 1 {
			version = v[0]
		}
	}
	fu := uint16(header.SESFUHalfDuplex) // the default when PI 20 is absent
	if v, ok := spdu.Param(header.SESPIUserRequirements); ok && len(v) == 2 {
		fu = binary.BigEndian.Uint16(v)
	}
	called, _ := spdu.Param(header.SESPICalledSSAP)
	remote, _ := spdu.Param(header.SESPICallingSSAP)
	switch {
	case string(called) != string(c.local):
		reason = header.SESRefuseSSAPUnknown
	case version&header.SESVersion2 == 0:
		reason = header.SESRefuseVersion
	case fu&header.SESFUDuplex == 0:
		reason = header.SESRefuseSPM
	}
	if reason >= 0 {
		s.st.RxRefusedCN++
		s.bufs.Free(tsdu)
		c.refuse(uint8(reason), 0)
		return
	}
	c.remote = append(c.remote[:0], remote...)
	c.fu = header.SESFUDuplex
	c.state = StateWaitUser
	c.u.SConnectIndication(c, c.userData(spdu, tsdu, header.SESPGIUserData, 0))
}

// acInput handles the AC: the connection is open.
func (c *Conn) acInput(spdu header.SPDU, tsdu osi.Chain) {
	s := c.s
	s.c.Enter(s.sym.acIn)
	defer s.c.Exit(s.sym.acIn)
	if c.state != StateWaitAC {
		s.st.RxUnexpected++
		s.bufs.Free(tsdu)
		c.protocolError()
		return
	}
	fu := uint16(header.SESFUHalfDuplex)
	if v, ok := spdu.Param(header.SESPIUserRequirements); ok && len(v) == 2 {
		fu = binary.BigEndian.Uint16(v)
	}
	if fu&header.SESFUDuplex == 0 {
		s.bufs.Free(tsdu)
		c.protocolError()
		return
	}
	c.fu = header.SESFUDuplex
	c.state = StateData
	c.u.SConnectConfirm(c, true, 0, c.userData(spdu, tsdu, header.SESPGIUserData, 0))
}

// rfInput handles an RF: the connection is refused; the transport goes.
func (c *Conn) rfInput(spdu header.SPDU, tsdu osi.Chain) {
	s := c.s
	s.c.Enter(s.sym.acIn)
	defer s.c.Exit(s.sym.acIn)
	if c.state != StateWaitAC {
		s.st.RxUnexpected++
		s.bufs.Free(tsdu)
		c.protocolError()
		return
	}
	reason := uint8(0)
	if v, ok := spdu.Param(header.SESPIReasonCode); ok && len(v) >= 1 {
		reason = v[0]
	}
	ud := c.userData(spdu, tsdu, header.SESPIReasonCode, 1)
	c.t.Disconnect()
	c.close()
	c.u.SConnectConfirm(c, false, reason, ud)
}
