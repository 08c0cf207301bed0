package top

import (
	"fmt"

	"simkron/cpu"
	"simkron/stack/osi"
	"simkron/stack/osi/tp4"
)

// TP4 is the host's transport entity (ISO 8073 class 4) over CLNS at a
// selector: N-UNITDATA indications for the selector arrive in its queue,
// and each TS user's connection has its own pair of queues (a TSAP).
//
//	TS user ── tsap.down ──► TP4 ── clns.down ──► CLNS
//	TS user ◄── user queue ── TP4 ◄── tp4.up ───── CLNS
type TP4 struct {
	h    *Runtime
	T    *tp4.TP4
	clns *CLNS
	sel  byte
	up   *Queue
}

type tpNetwork struct{ n *CLNS }

func (x tpNetwork) UnitdataRequest(src, dst osi.NSAP, nsdu osi.Chain) bool {
	return x.n.Request(src, dst, nsdu)
}

// NewTP4 makes the transport entity over n, bound to NSAP selector sel.
func (h *Runtime) NewTP4(n *CLNS, sel byte, p tp4.Params) (*TP4, error) {
	t, err := tp4.New(h.NewEnv("tp4", cpu.LayerTP4), tpNetwork{n}, p)
	if err != nil {
		return nil, err
	}
	e := &TP4{h: h, T: t, clns: n, sel: sel}
	e.up = h.NewQueue("tp4.up", cpu.Def{Name: "tp4_up_task", Layer: cpu.LayerTP4, Instructions: 10, CodeBytes: 64, Why: "the task's entry: prologue (3), ifq_get (call: 2), prim_params_get (call: 2), tp4_input (call: 2), return (1)"}, func(pr Prim) {
		src, dst := h.NIndication(pr)
		t.Input(src, dst, pr.Chain)
	})
	if err := n.Bind(sel, e.up); err != nil {
		return nil, err
	}
	return e, nil
}

// Address returns the transport address of TSAP tsap on this host.
func (e *TP4) Address(tsap []byte) tp4.Address {
	return tp4.Address{NSAP: e.clns.N.Address(e.sel), TSAP: tsap}
}

// TSAP is one TS user's connection endpoint: its pair of queues, the
// addresses it connects between, and the connection once there is one.
type TSAP struct {
	*SAP
	e      *TP4
	local  tp4.Address
	remote tp4.Address
	conn   *tp4.Conn
	// Disconnect is the last T-DISCONNECT indication's parameters.
	Disconnect tp4.Disconnect
}

// Bind makes the endpoint of TSAP local for a user whose indications go
// into up; remote is the address a connect request calls. The endpoint
// listens, so a CR calling local is indicated to the user.
func (e *TP4) Bind(local []byte, remote tp4.Address, up *Queue) (*TSAP, error) {
	s := &TSAP{e: e, local: e.Address(local), remote: remote}
	name := fmt.Sprintf("tsap.%x", local)
	s.SAP = e.h.newSAP(name, cpu.Def{Name: "tp4_req_task", Layer: cpu.LayerTP4, Instructions: 10, CodeBytes: 64, Why: "the task's entry: prologue (3), ifq_get (call: 2), switch on the primitive's name (jump table: 3), return (2)"}, up, s.request)
	if err := e.T.Listen(local, s); err != nil {
		return nil, err
	}
	return s, nil
}

// Conn returns the connection (nil before one is set up).
func (s *TSAP) Conn() *tp4.Conn { return s.conn }

// request serves one T- request from the user.
func (s *TSAP) request(p Prim) bool {
	switch p.Code {
	case PrimConnectReq:
		c, err := s.e.T.Connect(s, s.local, s.remote)
		if err != nil {
			s.indicate(PrimAbortInd, 0, uint16(tp4.CauseNoMemory)<<8)
			return true
		}
		s.conn = c
	case PrimConnectResp:
		if s.conn != nil {
			s.conn.Accept()
		}
	case PrimRefuseReq:
		if s.conn != nil {
			s.conn.Refuse(uint8(p.Arg))
		}
	case PrimDataReq:
		if s.conn == nil || !s.conn.Data(p.Chain) {
			if s.conn != nil && s.conn.State() == tp4.StateOpen {
				return false // no room: wait for TReady
			}
			s.h.bufs.Free(p.Chain)
		}
	case PrimExpeditedReq:
		if s.conn == nil || !s.conn.Expedited(p.Chain) {
			if s.conn != nil && s.conn.State() == tp4.StateOpen && s.conn.Window().EDOutstanding {
				return false
			}
			s.h.bufs.Free(p.Chain)
		}
	case PrimAbortReq, PrimReleaseReq:
		if s.conn != nil {
			s.conn.Disconnect()
		}
		s.h.bufs.Free(p.Chain)
	default:
		s.h.bufs.Free(p.Chain)
	}
	return true
}

// WaitReady schedules t when the connection has room again for data.
func (s *TSAP) WaitReady(t *Task) {
	s.OnReady(t)
	if s.conn != nil {
		s.conn.NotifyReady()
	}
}

// The TS user side of the endpoint: TP4's indications become primitives
// in the user's queue.

// TConnectIndication implements tp4.User.
func (s *TSAP) TConnectIndication(c *tp4.Conn) {
	s.conn = c
	s.indicate(PrimConnectInd, 0, 0)
}

// TConnectConfirm implements tp4.User.
func (s *TSAP) TConnectConfirm(c *tp4.Conn) { s.indicate(PrimConnectConf, 0, 0) }

// TDataIndication implements tp4.User.
func (s *TSAP) TDataIndication(c *tp4.Conn, tsdu osi.Chain) { s.indicate(PrimDataInd, tsdu, 0) }

// TExpeditedIndication implements tp4.User.
func (s *TSAP) TExpeditedIndication(c *tp4.Conn, data osi.Chain) {
	s.indicate(PrimExpeditedInd, data, 0)
}

// TDisconnectIndication implements tp4.User.
func (s *TSAP) TDisconnectIndication(c *tp4.Conn, d tp4.Disconnect) {
	s.Disconnect = d
	s.indicate(PrimAbortInd, 0, uint16(d.Cause)<<8|uint16(d.Reason))
}

// TReady implements tp4.User.
func (s *TSAP) TReady(c *tp4.Conn) { s.readyNow() }

var _ tp4.User = (*TSAP)(nil)
