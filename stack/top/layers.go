package top

import (
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
// MAC and LLC the interface is the pair of circular buffers.
//
//	  NS user ── clns.down ──► CLNS ── llc.down ──► LLC ── tx ring ──► MAC
//	  NS user ◄── user queue ── CLNS ◄── clns.up ─── LLC ◄── rx ring ─── MAC

// Primitive codes.
const (
	PrimDLUnitdataReq uint16 = 1 + iota
	PrimDLUnitdataInd
	PrimNUnitdataReq
	PrimNUnitdataInd
)

// LLC is the host's LLC entity.
type LLC struct {
	h       *Host
	L       *llc.LLC
	down    *Queue
	rx      *Task
	stalled uint64
}

// Stalls returns how often a request waited for room in the MAC's
// transmit buffer.
func (e *LLC) Stalls() uint64 { return e.stalled }

// NewLLC makes the LLC entity over the MAC; it takes every frame the MAC
// receives.
func (h *Host) NewLLC(m *MAC) *LLC {
	e := &LLC{h: h, L: llc.New(h.NewEnv("llc", cpu.LayerLLC), m)}
	e.rx = h.NewTask(cpu.Def{Name: "llc_rx_task", Layer: cpu.LayerLLC, Instructions: 10, CodeBytes: 64, Why: "take a frame from the receive buffer, run LLC on it"}, osi.CatOther, func() {
		if src, dst, ch, ok := m.Receive(); ok {
			e.L.Input(src, dst, ch)
		}
	})
	m.SetUpper(e.rx)
	e.down = h.NewQueue("llc.down", cpu.Def{Name: "llc_down_task", Layer: cpu.LayerLLC, Instructions: 14, CodeBytes: 96, Why: "take a DL-UNITDATA request; with room in the transmit buffer run LLC on it, else put it back and wait"}, func(p Prim) {
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
func (h *Host) put(q *Queue, d osi.Dir, code uint16, ch osi.Chain, params []byte) bool {
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
	h *Host
	q *Queue
}

func (u dlUser) DLUnitdataIndication(src, dst [6]byte, dsap, ssap uint8, sdu osi.Chain) {
	var b [14]byte
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
func (h *Host) DLIndication(p Prim) (src, dst [6]byte, dsap, ssap uint8) {
	b := h.TakeParams(p.Params, 14)
	return [6]byte(b[0:6]), [6]byte(b[6:12]), b[12], b[13]
}

// CLNS is the host's CLNP entity, over LLC at SAP 0xFE.
type CLNS struct {
	h    *Host
	N    *clnp.CLNP
	llc  *LLC
	down *Queue
	up   *Queue
}

type subnet struct{ e *LLC }

func (s subnet) Address() [6]byte { return s.e.L.Address() }
func (s subnet) MaxSDU() int      { return s.e.L.MaxSDU() }
func (s subnet) Send(dst [6]byte, pdu osi.Chain) bool {
	return s.e.Request(dst, header.LLCSAPISONet, header.LLCSAPISONet, pdu)
}

// NewCLNS makes the CLNP entity over l.
func (h *Host) NewCLNS(l *LLC, p clnp.Params) (*CLNS, error) {
	n, err := clnp.New(h.NewEnv("clnp", cpu.LayerCLNS), subnet{l}, p)
	if err != nil {
		return nil, err
	}
	e := &CLNS{h: h, N: n, llc: l}
	e.up = h.NewQueue("clns.up", cpu.Def{Name: "clns_up_task", Layer: cpu.LayerCLNS, Instructions: 10, CodeBytes: 64, Why: "take a DL-UNITDATA indication, run CLNP on it"}, func(pr Prim) {
		src, _, _, _ := h.DLIndication(pr)
		n.Input(src, pr.Chain)
	})
	if err := l.Bind(header.LLCSAPISONet, e.up); err != nil {
		return nil, err
	}
	e.down = h.NewQueue("clns.down", cpu.Def{Name: "clns_down_task", Layer: cpu.LayerCLNS, Instructions: 10, CodeBytes: 64, Why: "take an N-UNITDATA request, run CLNP on it"}, func(pr Prim) {
		src, dst := h.nsaps(pr.Params)
		n.UnitdataRequest(src, dst, pr.Chain)
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

func (h *Host) nsaps(pa memory.Addr) (src, dst osi.NSAP) {
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
	h *Host
	q *Queue
}

func (u nsUser) NUnitdataIndication(src, dst osi.NSAP, nsdu osi.Chain) {
	var b [nsapParams]byte
	putNSAP(b[0:21], src)
	putNSAP(b[21:42], dst)
	u.h.put(u.q, osi.Rx, PrimNUnitdataInd, nsdu, b[:])
}

// Bind registers q as the NS user of selector sel.
func (e *CLNS) Bind(sel byte, q *Queue) error { return e.N.Register(sel, nsUser{e.h, q}) }

// NIndication reads an N-UNITDATA indication's addresses (and frees
// their block).
func (h *Host) NIndication(p Prim) (src, dst osi.NSAP) { return h.nsaps(p.Params) }
