package top

import (
	"simkron/cpu"
	"simkron/stack/osi"
)

// The connection-mode layer interfaces of the TOP host (transport,
// session, presentation): one pair of FIFO queues per connection, the
// seed's layer interface. A user's requests go into the down queue,
// served by a task of the layer below, which runs its protocol machine;
// the layer's indications and confirmations go into the user's own queue
// (the up queue), served by the user's task.
//
//	  user ── SAP.down (requests) ───────► layer task ──► protocol machine
//	  user ◄── SAP.up (indications) ─────── layer glue ◄── protocol machine
//
// A request the machine cannot take now (no credit, no room) waits at
// the head of the down queue until the machine says it has room, as
// LLC's requests wait for the MAC's transmit buffer.

// Connection-mode primitive codes, one numbering for the three layers
// (the queue says which layer's service it is).
const (
	PrimConnectReq uint16 = 16 + iota
	PrimConnectInd
	PrimConnectResp
	PrimConnectConf
	PrimRefuseReq
	PrimDataReq
	PrimDataInd
	PrimExpeditedReq
	PrimExpeditedInd
	PrimReleaseReq
	PrimReleaseInd
	PrimReleaseResp
	PrimReleaseConf
	PrimAbortReq
	PrimAbortInd // also T-DISCONNECT indication: Arg holds the cause and reason
)

// SAP is one connection's end of a connection-mode layer interface.
type SAP struct {
	h     *Runtime
	name  string
	down  *Queue
	up    *Queue
	serve func(p Prim) bool // the layer's handling; false: not now
	waits int               // runs of the down task that served nothing (each owes a run)
	ready []*Task           // users waiting for room
	// Refused counts requests that waited for room.
	Refused uint64
}

// newSAP makes the interface: the down queue's task (entry d, in the
// layer's own layer) calls serve for each request; up is the user's
// queue.
func (h *Runtime) newSAP(name string, d cpu.Def, up *Queue, serve func(p Prim) bool) *SAP {
	s := &SAP{h: h, name: name, up: up, serve: serve}
	s.down = h.NewQueue(name+".down", d, func(p Prim) {
		if s.serve(p) {
			return
		}
		// Not now: back to the head of the queue, until Ready.
		if s.down.Unget(osi.Tx, p) {
			s.Refused++
			s.waits++
			return
		}
		h.bufs.Free(p.Chain)
	})
	return s
}

// Name returns the interface's name.
func (s *SAP) Name() string { return s.name }

// Up returns the user's queue.
func (s *SAP) Up() *Queue { return s.up }

// Down returns the requests' queue.
func (s *SAP) Down() *Queue { return s.down }

// Request puts a request with its chain (consumed) and a small argument
// into the down queue. It returns false when no structure was left (the
// chain is freed, counted).
func (s *SAP) Request(code uint16, ch osi.Chain, arg uint16) bool {
	if !s.down.Put(osi.Tx, Prim{Code: code, Arg: arg, Chain: ch}) {
		s.h.bufs.Free(ch)
		return false
	}
	return true
}

// offer puts a data request whose chain stays the caller's when it
// returns false (no structure left): the protocol machine above keeps
// its SDU, as with any refusal from below.
func (s *SAP) offer(code uint16, ch osi.Chain) bool {
	return s.down.Put(osi.Tx, Prim{Code: code, Chain: ch})
}

// indicate puts an indication or confirmation into the user's queue.
func (s *SAP) indicate(code uint16, ch osi.Chain, arg uint16) {
	if !s.up.Put(osi.Rx, Prim{Code: code, Arg: arg, Chain: ch}) {
		s.h.bufs.Free(ch)
	}
}

// OnReady schedules t once the layer has room again (the user found its
// buffers or the layer's room exhausted).
func (s *SAP) OnReady(t *Task) {
	for _, x := range s.ready {
		if x == t {
			return
		}
	}
	s.ready = append(s.ready, t)
}

// readyNow is the layer saying it has room: the waiting requests and
// users run again.
func (s *SAP) readyNow() {
	for ; s.waits > 0; s.waits-- {
		s.h.Schedule(s.down.Task())
	}
	for _, t := range s.ready {
		s.h.Schedule(t)
	}
	s.ready = s.ready[:0]
}
