package top

import (
	"fmt"

	"simkron/cpu"
	"simkron/stack/osi"
	"simkron/stack/osi/pres"
	"simkron/stack/osi/session"
	"simkron/stack/osi/tp4"
)

// The session and presentation entities in the TOP host. Each
// connection has its pair of queues at every layer boundary:
//
//	P-user ── psap.down ──► PRES ── ssap.down ──► SES ── tsap.down ──► TP4
//	P-user ◄── user queue ── PRES ◄── pres.up ──── SES ◄── ses.up ───── TP4
//
// The protocol machines (stack/osi/session, stack/osi/pres) see the
// layer below through its requests, which the glue here turns into
// primitives in the lower layer's down queue, and get its indications
// from their own up queue's task.

// refusedArg marks a negative connect confirmation's argument.
const refusedArg = 0x8000

// Session is the host's session entity.
type Session struct {
	h  *Runtime
	S  *session.Session
	tp *TP4
}

// NewSession makes the session entity over the transport entity tp.
func (h *Runtime) NewSession(tp *TP4, p session.Params) *Session {
	return &Session{h: h, S: session.New(h.NewEnv("ses", cpu.LayerSES), p), tp: tp}
}

// SSAP is one session connection's endpoint: the session user's pair of
// queues, the session machine, and below it the transport endpoint whose
// indications come up in the session's own queue.
type SSAP struct {
	*SAP
	e    *Session
	tsap *TSAP
	up   *Queue // TP4's indications for this connection
	conn *session.Conn
}

// Bind makes a session endpoint: SSAP local over TSAP tlocal, calling
// the SSAP remote at the transport address tremote when its user asks
// for a connection; the user's indications go into up.
func (e *Session) Bind(local, tlocal []byte, remote []byte, tremote tp4.Address, up *Queue) (*SSAP, error) {
	h := e.h
	s := &SSAP{e: e}
	s.up = h.NewQueue(fmt.Sprintf("ses.up.%x", local), cpu.Def{Name: "ses_up_task", Layer: cpu.LayerSES, Instructions: 10, CodeBytes: 64, Why: "the task's entry: prologue (3), ifq_get (call: 2), switch on the primitive's name (jump table: 3), return (2)"}, s.fromBelow)
	ts, err := e.tp.Bind(tlocal, tremote, s.up)
	if err != nil {
		return nil, err
	}
	s.tsap = ts
	s.conn = e.S.NewConn(sesTransport{s}, s, local, remote)
	s.SAP = h.newSAP(fmt.Sprintf("ssap.%x", local), cpu.Def{Name: "ses_req_task", Layer: cpu.LayerSES, Instructions: 10, CodeBytes: 64, Why: "the task's entry: prologue (3), ifq_get (call: 2), switch on the primitive's name (jump table: 3), return (2)"}, up, s.request)
	return s, nil
}

// Conn returns the session machine.
func (s *SSAP) Conn() *session.Conn { return s.conn }

// TSAP returns the transport endpoint below.
func (s *SSAP) TSAP() *TSAP { return s.tsap }

// WaitReady schedules t when the connection has room again (the
// transport's acknowledgements free the user's buffers).
func (s *SSAP) WaitReady(t *Task) { s.tsap.WaitReady(t) }

type sesTransport struct{ s *SSAP }

func (x sesTransport) Connect()                 { x.s.tsap.Request(PrimConnectReq, 0, 0) }
func (x sesTransport) Accept()                  { x.s.tsap.Request(PrimConnectResp, 0, 0) }
func (x sesTransport) Data(tsdu osi.Chain) bool { return x.s.tsap.offer(PrimDataReq, tsdu) }
func (x sesTransport) Disconnect()              { x.s.tsap.Request(PrimAbortReq, 0, 0) }

func (s *SSAP) fromBelow(p Prim) {
	c := s.conn
	switch p.Code {
	case PrimConnectInd:
		c.Reset()
		c.TConnectIndication()
	case PrimConnectConf:
		c.TConnectConfirm()
	case PrimDataInd:
		c.TData(p.Chain)
		return
	case PrimAbortInd:
		c.TDisconnect()
	}
	s.h.bufs.Free(p.Chain)
}

func (s *SSAP) request(p Prim) bool {
	c := s.conn
	switch p.Code {
	case PrimConnectReq:
		c.Reset()
		if err := c.Connect(p.Chain); err != nil {
			s.indicate(PrimAbortInd, 0, 1)
		}
	case PrimConnectResp:
		c.Accept(p.Chain)
	case PrimRefuseReq:
		c.Refuse(uint8(p.Arg), p.Chain)
	case PrimDataReq:
		if !c.Data(p.Chain) {
			if c.State() == session.StateData {
				return false
			}
			s.h.bufs.Free(p.Chain)
		}
	case PrimReleaseReq:
		c.Release(p.Chain)
	case PrimReleaseResp:
		c.ReleaseResponse(p.Chain)
	case PrimAbortReq:
		c.Abort(p.Chain)
	default:
		s.h.bufs.Free(p.Chain)
	}
	return true
}

// The session user side: indications into the user's queue.

// SConnectIndication implements session.User.
func (s *SSAP) SConnectIndication(c *session.Conn, ud osi.Chain) { s.indicate(PrimConnectInd, ud, 0) }

// SConnectConfirm implements session.User.
func (s *SSAP) SConnectConfirm(c *session.Conn, ok bool, reason uint8, ud osi.Chain) {
	arg := uint16(0)
	if !ok {
		arg = refusedArg | uint16(reason)
	}
	s.indicate(PrimConnectConf, ud, arg)
}

// SDataIndication implements session.User.
func (s *SSAP) SDataIndication(c *session.Conn, ssdu osi.Chain) { s.indicate(PrimDataInd, ssdu, 0) }

// SReleaseIndication implements session.User.
func (s *SSAP) SReleaseIndication(c *session.Conn, ud osi.Chain) { s.indicate(PrimReleaseInd, ud, 0) }

// SReleaseConfirm implements session.User.
func (s *SSAP) SReleaseConfirm(c *session.Conn, ud osi.Chain) { s.indicate(PrimReleaseConf, ud, 0) }

// SAbortIndication implements session.User.
func (s *SSAP) SAbortIndication(c *session.Conn, provider bool, ud osi.Chain) {
	arg := uint16(0)
	if provider {
		arg = 1
	}
	s.indicate(PrimAbortInd, ud, arg)
}

// SReady implements session.User.
func (s *SSAP) SReady(c *session.Conn) { s.readyNow() }

var _ session.User = (*SSAP)(nil)

// Presentation is the host's presentation entity.
type Presentation struct {
	h *Runtime
	P *pres.Presentation
	s *Session
}

// NewPresentation makes the presentation entity over the session entity.
func (h *Runtime) NewPresentation(s *Session, p pres.Params) (*Presentation, error) {
	e, err := pres.New(h.NewEnv("pres", cpu.LayerPRES), p)
	if err != nil {
		return nil, err
	}
	return &Presentation{h: h, P: e, s: s}, nil
}

// PSAP is one presentation connection's endpoint.
type PSAP struct {
	*SAP
	e    *Presentation
	ssap *SSAP
	up   *Queue // the session's indications for this connection
	conn *pres.Conn
}

// Bind makes a presentation endpoint: PSAP local over SSAP slocal over
// TSAP tlocal, calling PSAP remote at SSAP sremote and transport address
// tremote; the user's indications go into up.
func (e *Presentation) Bind(local, slocal, tlocal, remote, sremote []byte, tremote tp4.Address, up *Queue) (*PSAP, error) {
	h := e.h
	p := &PSAP{e: e}
	p.up = h.NewQueue(fmt.Sprintf("pres.up.%x", local), cpu.Def{Name: "pres_up_task", Layer: cpu.LayerPRES, Instructions: 10, CodeBytes: 64, Why: "the task's entry: prologue (3), ifq_get (call: 2), switch on the primitive's name (jump table: 3), return (2)"}, p.fromBelow)
	ss, err := e.s.Bind(slocal, tlocal, sremote, tremote, p.up)
	if err != nil {
		return nil, err
	}
	p.ssap = ss
	p.conn = e.P.NewConn(presSession{p}, p, local, remote)
	p.SAP = h.newSAP(fmt.Sprintf("psap.%x", local), cpu.Def{Name: "pres_req_task", Layer: cpu.LayerPRES, Instructions: 10, CodeBytes: 64, Why: "the task's entry: prologue (3), ifq_get (call: 2), switch on the primitive's name (jump table: 3), return (2)"}, up, p.request)
	return p, nil
}

// Conn returns the presentation machine.
func (p *PSAP) Conn() *pres.Conn { return p.conn }

// SSAP returns the session endpoint below.
func (p *PSAP) SSAP() *SSAP { return p.ssap }

// WaitReady schedules t when the connection has room again.
func (p *PSAP) WaitReady(t *Task) { p.ssap.WaitReady(t) }

type presSession struct{ p *PSAP }

func (x presSession) Connect(ud osi.Chain) { x.p.ssap.Request(PrimConnectReq, ud, 0) }
func (x presSession) Accept(ud osi.Chain)  { x.p.ssap.Request(PrimConnectResp, ud, 0) }
func (x presSession) Refuse(reason uint8, ud osi.Chain) {
	x.p.ssap.Request(PrimRefuseReq, ud, uint16(reason))
}
func (x presSession) Data(ssdu osi.Chain) bool     { return x.p.ssap.offer(PrimDataReq, ssdu) }
func (x presSession) Release(ud osi.Chain)         { x.p.ssap.Request(PrimReleaseReq, ud, 0) }
func (x presSession) ReleaseResponse(ud osi.Chain) { x.p.ssap.Request(PrimReleaseResp, ud, 0) }
func (x presSession) Abort(ud osi.Chain)           { x.p.ssap.Request(PrimAbortReq, ud, 0) }

func (p *PSAP) fromBelow(pr Prim) {
	c := p.conn
	switch pr.Code {
	case PrimConnectInd:
		c.Reset()
		c.SConnectIndication(pr.Chain)
	case PrimConnectConf:
		c.SConnectConfirm(pr.Arg&refusedArg == 0, pr.Chain)
	case PrimDataInd:
		c.SData(pr.Chain)
	case PrimReleaseInd:
		c.SReleaseIndication(pr.Chain)
	case PrimReleaseConf:
		c.SReleaseConfirm(pr.Chain)
	case PrimAbortInd:
		c.SAbort(pr.Arg != 0, pr.Chain)
	default:
		p.h.bufs.Free(pr.Chain)
	}
}

func (p *PSAP) request(pr Prim) bool {
	c := p.conn
	switch pr.Code {
	case PrimConnectReq:
		c.Reset()
		if err := c.Connect(); err != nil {
			p.indicate(PrimAbortInd, 0, 1)
		}
	case PrimConnectResp:
		c.Accept()
	case PrimRefuseReq:
		c.Refuse()
	case PrimDataReq:
		if !c.Data(pr.Chain) {
			if c.State() == pres.StateData {
				return false
			}
			p.h.bufs.Free(pr.Chain)
		}
		return true
	case PrimReleaseReq:
		c.Release()
	case PrimReleaseResp:
		c.ReleaseResponse()
	case PrimAbortReq:
		c.Abort()
	}
	p.h.bufs.Free(pr.Chain)
	return true
}

// The presentation user side.

// PConnectIndication implements pres.User.
func (p *PSAP) PConnectIndication(c *pres.Conn) { p.indicate(PrimConnectInd, 0, 0) }

// PConnectConfirm implements pres.User.
func (p *PSAP) PConnectConfirm(c *pres.Conn, ok bool) {
	arg := uint16(0)
	if !ok {
		arg = refusedArg
	}
	p.indicate(PrimConnectConf, 0, arg)
}

// PDataIndication implements pres.User.
func (p *PSAP) PDataIndication(c *pres.Conn, data osi.Chain) { p.indicate(PrimDataInd, data, 0) }

// PReleaseIndication implements pres.User.
func (p *PSAP) PReleaseIndication(c *pres.Conn) { p.indicate(PrimReleaseInd, 0, 0) }

// PReleaseConfirm implements pres.User.
func (p *PSAP) PReleaseConfirm(c *pres.Conn) { p.indicate(PrimReleaseConf, 0, 0) }

// PAbortIndication implements pres.User.
func (p *PSAP) PAbortIndication(c *pres.Conn, provider bool) {
	arg := uint16(0)
	if provider {
		arg = 1
	}
	p.indicate(PrimAbortInd, 0, arg)
}

// PReady implements pres.User.
func (p *PSAP) PReady(c *pres.Conn) { p.readyNow() }

var _ pres.User = (*PSAP)(nil)
