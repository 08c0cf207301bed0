package top

import (
	"encoding/binary"

	"simkron/cpu"
	"simkron/memory"
	"simkron/stack/header"
	"simkron/stack/osi"
	"simkron/stack/osi/clnp"
	"simkron/stack/osi/llc"
)

// The OSI layer entities in the TOP host: the protocol machines of
// stack/osi, each with its layer interfaces. A request to a layer and an
// indication from it are primitives in the FIFO queue between the two
// layers, their parameters (addresses, SAPs) in a block of the data
// area; the serving task takes each one and calls the machine. Between
// MAC and LLC the interface is the pair of circular buffers: LLC copies
// each frame it sends into the transmit one (the controller needs it
// contiguous), and each frame it receives out of the receive one, into
// a block of the reception region, so that the circular buffer's slot
// is free at once whatever the layers above keep (the study's Figure 9
// has copy in the LLC processing of the recipient as of the originator).
//
//	  NS user ── clns.down ──► CLNS ── llc.down ──► LLC ── tx ring ──► MAC
//	  NS user ◄── user queue ── CLNS ◄── clns.up ─── LLC ◄── rx ring ─── MAC
//
// CLNS maps each interface primitive it takes (N-UNITDATA request,
// DL-UNITDATA indication) onto a CLNS primitive of its own before its
// machine runs, and releases that as the machine issues what it maps to
// (the first DL-UNITDATA request, the N-UNITDATA indication), before
// that primitive's structures are taken, or when the machine is done
// without issuing anything (a PDU discarded): the study's
// CLNS was written for connection-oriented transport and LAP-D services
// below and above it and maps their primitives onto its own, which takes
// the allocations its Figure 10 shows. The model's CLNS primitive is a
// Primitive Structure, a Parameter Structure (the user data's length and
// pointer, the other parameters' pointer) and a block with the
// parameters, from the memory manager's region of the flow.

// Primitive codes.
const (
	PrimDLUnitdataReq uint16 = 1 + iota
	PrimDLUnitdataInd
	PrimNUnitdataReq
	PrimNUnitdataInd
)

// LLC is the host's LLC entity.
type LLC struct {
	h       *Runtime
	L       *llc.LLC
	down    *Queue
	rx      *Task
	copyIn  *cpu.Symbol
	stalled uint64
	noRoom  uint64
}

// Stalls returns how often a request waited for room in the MAC's
// transmit buffer.
func (e *LLC) Stalls() uint64 { return e.stalled }

// RxNoRoom returns the frames dropped for want of room in the reception
// region to copy them to.
func (e *LLC) RxNoRoom() uint64 { return e.noRoom }

var defLLCCopyIn = cpu.Def{Name: "llc_copy_in", Layer: cpu.LayerLLC, Instructions: 16, CodeBytes: 112,
	Why: "receive side of the MAC-LLC interface: the frame's length (pdu_len: 3), pdu_alloc for a reception block (call: 4), null test (2), the copy out of the circular buffer (pdu_copyout: 3), pdu_free releasing the slot (call: 2), return (2)"}

// NewLLC makes the LLC entity over the MAC; it takes every frame the MAC
// receives.
func (h *Runtime) NewLLC(m *MAC) *LLC {
	e := &LLC{h: h, L: llc.New(h.NewEnv("llc", cpu.LayerLLC), m)}
	e.copyIn = h.define(defLLCCopyIn, osi.CatOther)
	e.rx = h.NewTask(cpu.Def{Name: "llc_rx_task", Layer: cpu.LayerLLC, Instructions: 10, CodeBytes: 64, Why: "the task's entry: prologue (3), mac_get (call: 2), got one (2), llc_copy_in and llc_input (calls: 2), return (1)"}, osi.CatOther, func() {
		if src, dst, ch, ok := m.Receive(); ok {
			if ch = e.copy(ch); ch != 0 {
				e.L.Input(src, dst, ch)
			}
		}
	})
	m.SetUpper(e.rx)
	e.down = h.NewQueue("llc.down", cpu.Def{Name: "llc_down_task", Layer: cpu.LayerLLC, Instructions: 14, CodeBytes: 96, Why: "the task's entry: prologue (3), ifq_get (call: 2), the SDU's length and the transmit buffer's room (calls and test: 5), prim_params_get and llc_output (calls: 3), return (1)"}, func(p Prim) {
		if n := h.bufs.Len(p.Chain); n <= e.L.MaxSDU() && !m.HasRoom(header.LLCHeaderLen+n) {
			// The transmit buffer is full: the request waits at the head
			// of the queue until the MAC has sent a frame.
			if e.down.Unget(osi.Tx, p) {
				e.stalled++
				m.OnRoom(e.down.Task())
				return
			}
		}
		b := h.TakeParams(p.Params, 8)
		e.L.UnitdataRequest([6]byte(b[0:6]), b[6], b[7], p.Chain)
	})
	return e
}

// copy copies a received frame's data field (ch, consumed) out of the
// MAC's receive buffer into a block of the reception region and returns
// a chain over the copy; the buffer's slot is released. It returns 0 when
// the region has no room (the frame is dropped, counted).
func (e *LLC) copy(ch osi.Chain) osi.Chain {
	h := e.h
	c := h.c
	c.Enter(e.copyIn)
	defer c.Exit(e.copyIn)
	n := h.bufs.Len(ch)
	if n == 0 {
		return ch
	}
	cp, a := h.bufs.New(osi.Rx, n)
	if cp == 0 {
		e.noRoom++
		h.bufs.Free(ch)
		return 0
	}
	h.bufs.CopyOut(ch, a)
	h.bufs.Free(ch)
	return cp
}

// Request puts a DL-UNITDATA request (sdu consumed) into LLC's queue.
// It returns false when no structure was left (sdu is freed, counted).
func (e *LLC) Request(dst [6]byte, dsap, ssap uint8, sdu osi.Chain) bool {
	var b [8]byte
	copy(b[:6], dst[:])
	b[6], b[7] = dsap, ssap
	return e.h.put(e.down, osi.Tx, PrimDLUnitdataReq, sdu, b[:])
}

// put writes the parameters and puts the primitive; on failure it frees
// what it took and the chain.
func (h *Runtime) put(q *Queue, d osi.Dir, code uint16, ch osi.Chain, params []byte) bool {
	pa := h.PutParams(d, params)
	if pa == 0 {
		h.stats.PutFailures++
		h.bufs.Free(ch)
		return false
	}
	if !q.Put(d, Prim{Code: code, Chain: ch, Params: pa}) {
		h.mm.Free(pa)
		h.bufs.Free(ch)
		return false
	}
	return true
}

// dlUser is a SAP's DL user in another layer: its indications go into
// that layer's queue.
type dlUser struct {
	h *Runtime
	q *Queue
}

// dlIndParams is the size of a DL-UNITDATA indication's parameters: two
// station addresses and two SAPs.
const dlIndParams = 14

func (u dlUser) DLUnitdataIndication(src, dst [6]byte, dsap, ssap uint8, sdu osi.Chain) {
	var b [dlIndParams]byte
	copy(b[0:6], src[:])
	copy(b[6:12], dst[:])
	b[12], b[13] = dsap, ssap
	u.h.put(u.q, osi.Rx, PrimDLUnitdataInd, sdu, b[:])
}

// Bind registers the queue q as the user of sap: DL-UNITDATA indications
// arrive there (decode them with DLIndication).
func (e *LLC) Bind(sap uint8, q *Queue) error { return e.L.Register(sap, dlUser{e.h, q}) }

// DLIndication reads a DL-UNITDATA indication's parameters (and frees
// their block).
func (h *Runtime) DLIndication(p Prim) (src, dst [6]byte, dsap, ssap uint8) {
	b := h.TakeParams(p.Params, dlIndParams)
	return [6]byte(b[0:6]), [6]byte(b[6:12]), b[12], b[13]
}

// CLNS is the host's CLNP entity, over LLC at SAP 0xFE.
type CLNS struct {
	h    *Runtime
	N    *clnp.CLNP
	llc  *LLC
	down *Queue
	up   *Queue
	sym  struct{ mapIn, mapOut *cpu.Symbol }
	// cur is the CLNS primitive of each flow the machine is working on,
	// until mapped out.
	cur [2]clnsPrim
	// Mapped counts the primitives mapped onto CLNS primitives.
	Mapped uint64
}

var (
	defCLNSMapIn = cpu.Def{Name: "clns_map_in", Layer: cpu.LayerCLNS, Instructions: 40, CodeBytes: 320,
		Why: "map an interface primitive onto a CLNS one: switch on its name (4), a Primitive Structure, a Parameter Structure and a parameter block (3 calls: 12), the parameters copied in (REP MOVSW set-up: 5), length, user data and parameter pointers (3 far stores: 6), name and Parameter Structure (2 far stores: 4), null tests (6), prologue and epilogue (3)"}
	defCLNSMapOut = cpu.Def{Name: "clns_map_out", Layer: cpu.LayerCLNS, Instructions: 24, CodeBytes: 192,
		Why: "release the CLNS primitive: its three pointers (far loads: 6), the block, the Parameter and the Primitive Structure given back (3 calls: 12), null tests (3), return (3)"}
)

// clnsPrim is a CLNS primitive's structures in simulated memory.
type clnsPrim struct {
	prim, desc, params memory.Addr
	live               bool
}

// mapIn makes the CLNS primitive of flow d that an interface primitive
// code, carrying ch and params, is mapped onto. A structure the region
// lacks is counted by the memory manager and left out.
func (e *CLNS) mapIn(d osi.Dir, code uint16, ch osi.Chain, params []byte) {
	h := e.h
	c := h.c
	c.Enter(e.sym.mapIn)
	defer c.Exit(e.sym.mapIn)
	e.Mapped++
	p := clnsPrim{prim: h.mm.GetPrim(d), desc: h.mm.AllocDesc(d), params: h.mm.Alloc(d, len(params)), live: true}
	defer func() { e.cur[d] = p }()
	if p.params != 0 {
		c.Write(p.params, params)
	}
	var b [primSize]byte
	if p.desc != 0 {
		binary.LittleEndian.PutUint32(b[0:], uint32(ch))
		binary.LittleEndian.PutUint32(b[4:], uint32(p.params))
		binary.LittleEndian.PutUint16(b[8:], uint16(len(params)))
		c.Write(p.desc, b[:12])
	}
	if p.prim != 0 {
		b = [primSize]byte{}
		binary.LittleEndian.PutUint16(b[4:], code)
		binary.LittleEndian.PutUint32(b[8:], uint32(p.desc))
		c.Write(p.prim, b[:])
	}
}

// mapOut releases flow d's CLNS primitive, if it has one still.
func (e *CLNS) mapOut(d osi.Dir) {
	p := e.cur[d]
	if !p.live {
		return
	}
	e.cur[d] = clnsPrim{}
	h := e.h
	c := h.c
	c.Enter(e.sym.mapOut)
	defer c.Exit(e.sym.mapOut)
	if p.prim != 0 {
		c.Read(p.prim+8, e.h.tmp[:4])
		h.mm.PutPrim(p.prim)
	}
	if p.params != 0 {
		h.mm.Free(p.params)
	}
	if p.desc != 0 {
		h.mm.FreeDesc(p.desc)
	}
}

type subnet struct {
	e *LLC
	n *CLNS
}

func (s subnet) Address() [6]byte { return s.e.L.Address() }
func (s subnet) MaxSDU() int      { return s.e.L.MaxSDU() }
func (s subnet) Send(dst [6]byte, pdu osi.Chain) bool {
	s.n.mapOut(osi.Tx)
	return s.e.Request(dst, header.LLCSAPISONet, header.LLCSAPISONet, pdu)
}

// NewCLNS makes the CLNP entity over l.
func (h *Runtime) NewCLNS(l *LLC, p clnp.Params) (*CLNS, error) {
	e := &CLNS{h: h, llc: l}
	n, err := clnp.New(h.NewEnv("clnp", cpu.LayerCLNS), subnet{l, e}, p)
	if err != nil {
		return nil, err
	}
	e.N = n
	e.sym.mapIn = h.define(defCLNSMapIn, osi.CatOther)
	e.sym.mapOut = h.define(defCLNSMapOut, osi.CatOther)
	e.up = h.NewQueue("clns.up", cpu.Def{Name: "clns_up_task", Layer: cpu.LayerCLNS, Instructions: 10, CodeBytes: 64, Why: "the task's entry: prologue (3), ifq_get (call: 2), prim_params_get, clns_map_in, clnp_input, clns_map_out (calls: 4), return (1)"}, func(pr Prim) {
		b := h.TakeParams(pr.Params, dlIndParams)
		src := [6]byte(b[0:6])
		e.mapIn(osi.Rx, PrimDLUnitdataInd, pr.Chain, b)
		n.Input(src, pr.Chain)
		e.mapOut(osi.Rx)
	})
	if err := l.Bind(header.LLCSAPISONet, e.up); err != nil {
		return nil, err
	}
	e.down = h.NewQueue("clns.down", cpu.Def{Name: "clns_down_task", Layer: cpu.LayerCLNS, Instructions: 10, CodeBytes: 64, Why: "the task's entry: prologue (3), ifq_get (call: 2), prim_params_get, clns_map_in, clnp_output, clns_map_out (calls: 4), return (1)"}, func(pr Prim) {
		b := h.TakeParams(pr.Params, nsapParams)
		src, dst := getNSAP(b[0:21]), getNSAP(b[21:42])
		e.mapIn(osi.Tx, PrimNUnitdataReq, pr.Chain, b)
		n.UnitdataRequest(src, dst, pr.Chain)
		e.mapOut(osi.Tx)
	})
	return e, nil
}

// nsapParams is the size of an N-UNITDATA primitive's parameters: two
// addresses, each a length octet and 20 octets.
const nsapParams = 42

func putNSAP(b []byte, a osi.NSAP) {
	b[0] = byte(a.Len())
	copy(b[1:21], a.Bytes())
}

func getNSAP(b []byte) osi.NSAP {
	a, _ := osi.MakeNSAP(b[1 : 1+min(int(b[0]), 20)])
	return a
}

func (h *Runtime) nsaps(pa memory.Addr) (src, dst osi.NSAP) {
	b := h.TakeParams(pa, nsapParams)
	return getNSAP(b[0:21]), getNSAP(b[21:42])
}

// Request puts an N-UNITDATA request (nsdu consumed) into CLNS's queue.
func (e *CLNS) Request(src, dst osi.NSAP, nsdu osi.Chain) bool {
	var b [nsapParams]byte
	putNSAP(b[0:21], src)
	putNSAP(b[21:42], dst)
	return e.h.put(e.down, osi.Tx, PrimNUnitdataReq, nsdu, b[:])
}

type nsUser struct {
	h *Runtime
	n *CLNS
	q *Queue
}

func (u nsUser) NUnitdataIndication(src, dst osi.NSAP, nsdu osi.Chain) {
	u.n.mapOut(osi.Rx)
	var b [nsapParams]byte
	putNSAP(b[0:21], src)
	putNSAP(b[21:42], dst)
	u.h.put(u.q, osi.Rx, PrimNUnitdataInd, nsdu, b[:])
}

// Bind registers q as the NS user of selector sel.
func (e *CLNS) Bind(sel byte, q *Queue) error { return e.N.Register(sel, nsUser{e.h, e, q}) }

// NIndication reads an N-UNITDATA indication's addresses (and frees
// their block).
func (h *Runtime) NIndication(p Prim) (src, dst osi.NSAP) { return h.nsaps(p.Params) }
