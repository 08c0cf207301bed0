// Package via is the workload "via": M-VIA's vpingpong test program —
// the exchange the Linux/SimOS study measured M-VIA with
// (docs/reference/via.md secs. 3, 5) — as a protocol of the echo latency
// run (stack/apps/latency), so that one program measures VIA with the
// same definitions and layer attribution as UDP and TCP. It registers the
// protocol "via" with the comparison (compare), which runs it after UDP
// and TCP on the same hosts with the study's tables (latency by layer
// side by side, improvement factors below and above the MTU), and the
// study's statements ("linux-simos"). It imports VIA itself, stack/via,
// as mvia. Layer APPL.
//
// Each end opens the VI NIC of its host's M-VIA agent, creates a
// protection tag, registers its descriptors and its buffers, creates a VI
// and pre-posts its receives, then connects (client: VipConnectRequest;
// server: VipConnectWait and VipConnectAccept on a discriminator made from
// the series' port). A message is the program's send step,
// vpingpong_send: it builds the message's descriptor in registered memory
// (a control segment and one data segment) and posts it with VipPostSend;
// the descriptor's completion (the NIC's DMA-completion interrupt, M-VIA's
// asynchronous post) is reaped with VipSendDone at the next send, or
// waited for with VipSendWait when all send descriptors are out. A
// receive is the receive step, vpingpong_recv: VipRecvWait, the message's
// length read from the completed descriptor, and the descriptor posted
// again at once with VipPostRecv, as vpingpong does. These two steps are
// the measured spans, as the Linux/SimOS study delimits them (docs/reference/via.md sec.
// 5): its send is VipPostSend with the creation of the descriptor in
// registered memory (APPL), its receive ends when VipPostRecv returns. The
// VIPL's user-level part and the program's descriptor are APPL, the agent
// (fast trap, translation, fragmentation, DMA set-up, reassembly and the
// copy into the receive buffer) TRANS, the NIC's interrupts DEV, the wait
// for the NIC's DMA DMA.
//
// Simplifications: every pre-posted receive descriptor points at the
// program's one receive buffer (the series'), which a ping-pong may do
// since one message is in flight at a time; receive descriptors completed
// with an error (a message lost in part on an unreliable connection) are
// counted, posted again and the wait goes on; completion queues and the
// polling receive (VipRecvDone in a loop) are not used.
package via

import (
	"encoding/binary"
	"fmt"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/apps/latency"
	"simkron/stack/header"
	"simkron/stack/kernel"
	mvia "simkron/stack/via"
)

// sendSlots is the number of send descriptors each end has: a ping-pong
// posts one message at a time.
const sendSlots = 2

// descStride is a descriptor slot: a control segment and one data
// segment, rounded up to VIA's 64-byte alignment.
const descStride = 64

// Protocol is VIA as a series runs over it: the hosts' agents and the
// series' settings.
type Protocol struct {
	p      Params
	agents map[string]*mvia.Agent // by host name
	stats  Stats
}

var _ latency.Protocol = (*Protocol)(nil)

// Stats counts what the programs saw go wrong (a clean run has none).
type Stats struct {
	// RecvErrors counts receive descriptors completed with an error
	// (posted again, the wait going on).
	RecvErrors uint64 `json:"recv_errors"`
}

// SectionValue is the vpingpong section: what the programs counted and
// each host's agent counters.
type SectionValue struct {
	Programs Stats        `json:"programs"`
	Agents   []AgentStats `json:"agents"`
}

// AgentStats are one host's agent counters at the end of the run.
type AgentStats struct {
	Host  string     `json:"host"`
	Stats mvia.Stats `json:"stats"`
}

// The program's two measured steps (APPL), defined on each host's kernel
// when the protocol is made.
var (
	defSend = cpu.Def{Name: "vpingpong_send", Layer: cpu.LayerAPPL, Instructions: 20, CodeBytes: 192, Why: "build the message's descriptor in registered memory: Control and SegCount, Length, the data segment's address, memory handle and length (6 stores, the 48 bytes' cache lines charged apart), look up the buffer's handle (4), call VipPostSend and test its result (4); prologue and epilogue (6)"}
	defRecv = cpu.Def{Name: "vpingpong_recv", Layer: cpu.LayerAPPL, Instructions: 15, CodeBytes: 160, Why: "call VipRecvWait, load the completed descriptor's Length and Status (2 loads), call VipPostRecv to post it again, test the results (9); prologue and epilogue (6)"}
)

// Info describes the VIA series.
func (tr *Protocol) Info() latency.Info {
	return latency.Info{Name: "VIA", Send: "VipPostSend", Recv: "VipPostRecv", SendSymbol: defSend.Name, RecvSymbol: defRecv.Name, Unit: "frags",
		SendNote: "with the building of its descriptor in registered memory",
		RecvNote: "after VipRecvWait, posting the descriptor again",
		Main:     cpu.Def{Name: "vpingpong_main", Layer: cpu.LayerAPPL, Instructions: 40, CodeBytes: 256, Why: "loop over sizes and messages, stamp the sequence number"},
		NoIP:     true}
}

// end is one program's VIA endpoint.
type end struct {
	tr    *Protocol
	t     *kernel.Thread
	c     *cpu.CPU
	l     *mvia.VIPL
	nic   *mvia.Nic
	ptag  mvia.Ptag
	vi    *mvia.VI
	descs memory.Addr // slots receive descriptors, then sendSlots send descriptors
	dmh   mvia.MemHandle
	// regions are the registered data buffers.
	regions []region
	buf     memory.Addr // the program's receive buffer
	cap     int
	// next is the send descriptor to use; out counts those posted and not
	// reaped yet.
	next, out int
	payload   int   // message bytes a frame carries
	repost    error // why a completed receive descriptor could not be posted again
	sym       struct{ send, recv *cpu.Symbol }
	ctl       [mvia.ControlSegSize]byte
	desc      [mvia.ControlSegSize + mvia.DataSegSize]byte
}

type region struct {
	base memory.Addr
	n    int
	mh   mvia.MemHandle
}

// discriminator is the endpoint name both programs agree on: the
// program's name and the series' port.
func (tr *Protocol) discriminator() []byte {
	d := []byte("vpingpong:..")
	binary.BigEndian.PutUint16(d[len(d)-2:], tr.p.Port)
	return d
}

func (tr *Protocol) agent(e *latency.End) (*mvia.Agent, error) {
	a := tr.agents[e.Host.Name]
	if a == nil || len(a.Nics()) == 0 {
		return nil, fmt.Errorf("host %q has no VIA agent on a card (machine file: [via] enabled = true)", e.Host.Name)
	}
	return a, nil
}

// open sets the endpoint up on t: NIC, Ptag, registered descriptors and
// receive buffer, a VI, the receives posted.
func (tr *Protocol) open(t *kernel.Thread, e *latency.End) (*end, error) {
	a, err := tr.agent(e)
	if err != nil {
		return nil, err
	}
	k := e.Host.Kernel
	x := &end{tr: tr, t: t, c: k.CPU(), l: a.NewVIPL(t), buf: e.Buffer(), cap: maxSize(tr.p.Sizes)}
	x.sym.send, _ = k.Symbols().Lookup(defSend.Name)
	x.sym.recv, _ = k.Symbols().Lookup(defRecv.Name)
	var rc mvia.Return
	fail := func(call string) error { return fmt.Errorf("%s: %v", call, rc) }
	if x.nic, rc = x.l.VipOpenNic(a.Nics()[0].Name()); rc != mvia.Success {
		return nil, fail("VipOpenNic")
	}
	attrs, _ := x.l.VipQueryNic(x.nic)
	x.payload = attrs.NativeMTU
	if x.ptag, rc = x.l.VipCreatePtag(x.nic); rc != mvia.Success {
		return nil, fail("VipCreatePtag")
	}
	n := (tr.p.Slots + sendSlots) * descStride
	if x.descs = k.Kmalloc(n); x.descs == 0 || x.descs%mvia.DescAlign != 0 {
		return nil, fmt.Errorf("no aligned memory for %d descriptors", tr.p.Slots+sendSlots)
	}
	if x.dmh, rc = x.l.VipRegisterMem(x.nic, x.descs, uint64(n), mvia.MemAttributes{Ptag: x.ptag}); rc != mvia.Success {
		return nil, fail("VipRegisterMem (descriptors)")
	}
	if _, err := x.register(x.buf); err != nil {
		return nil, err
	}
	rel := mvia.Unreliable
	if tr.p.Reliability == "reliable" {
		rel = mvia.ReliableDelivery
	}
	if x.vi, rc = x.l.VipCreateVi(x.nic, mvia.ViAttributes{ReliabilityLevel: rel, Ptag: x.ptag}, nil, nil); rc != mvia.Success {
		return nil, fail("VipCreateVi")
	}
	for i := range tr.p.Slots {
		d := x.descs + memory.Addr(i*descStride)
		x.write(d, x.buf, x.cap)
		if rc = x.l.VipPostRecv(x.vi, d, x.dmh); rc != mvia.Success {
			return nil, fail("VipPostRecv")
		}
	}
	return x, nil
}

// register returns the handle of the registered buffer holding a, the
// first call for a buffer registering the series' largest message there.
func (x *end) register(a memory.Addr) (mvia.MemHandle, error) {
	for _, r := range x.regions {
		if a >= r.base && a < r.base+memory.Addr(r.n) {
			return r.mh, nil
		}
	}
	mh, rc := x.l.VipRegisterMem(x.nic, a, uint64(x.cap), mvia.MemAttributes{Ptag: x.ptag})
	if rc != mvia.Success {
		return 0, fmt.Errorf("VipRegisterMem: %v", rc)
	}
	x.regions = append(x.regions, region{base: a, n: x.cap, mh: mh})
	return mh, nil
}

// write builds the descriptor at d, one data segment of n bytes at buf,
// with the program's stores.
func (x *end) write(d, buf memory.Addr, n int) {
	mh, _ := x.register(buf)
	dd := mvia.Descriptor{Segs: []mvia.Segment{{Addr: uint64(buf), Handle: mh, Length: uint32(n)}}}
	dd.Encode(x.desc[:])
	x.c.Write(d, x.desc[:])
}

// Listen sets the server's end up and accepts one connection.
func (tr *Protocol) Listen(t *kernel.Thread, e *latency.End) (latency.Conn, error) {
	x, err := tr.open(t, e)
	if err != nil {
		return nil, err
	}
	conn, _, _, rc := x.l.VipConnectWait(x.nic, mvia.NetAddress{Host: x.nic.MAC(), Discriminator: tr.discriminator()}, 0)
	if rc != mvia.Success {
		return nil, fmt.Errorf("VipConnectWait: %v", rc)
	}
	if rc := x.l.VipConnectAccept(conn, x.vi); rc != mvia.Success {
		return nil, fmt.Errorf("VipConnectAccept: %v", rc)
	}
	return x, nil
}

// Dial sets the client's end up and connects to the server's.
func (tr *Protocol) Dial(t *kernel.Thread, e *latency.End) (latency.Conn, error) {
	peer, err := tr.agent(e.Peer())
	if err != nil {
		return nil, err
	}
	x, err := tr.open(t, e)
	if err != nil {
		return nil, err
	}
	remote := mvia.NetAddress{Host: peer.Nics()[0].MAC(), Discriminator: tr.discriminator()}
	if _, rc := x.l.VipConnectRequest(x.vi, mvia.NetAddress{Host: x.nic.MAC()}, remote, tr.p.Timeout); rc != mvia.Success {
		return nil, fmt.Errorf("VipConnectRequest: %v", rc)
	}
	return x, nil
}

// Send posts the n bytes at buf as one message.
func (x *end) Send(t *kernel.Thread, buf memory.Addr, n int) error {
	for x.out >= sendSlots {
		if _, rc := x.l.VipSendWait(x.vi, x.tr.p.Timeout); rc != mvia.Success {
			return fmt.Errorf("VipSendWait: %v", rc)
		}
		x.out--
	}
	if _, err := x.register(buf); err != nil {
		return err
	}
	d := x.descs + memory.Addr((x.tr.p.Slots+x.next)*descStride)
	x.next = (x.next + 1) % sendSlots
	rc := mvia.Success
	x.c.Call(x.sym.send, func() {
		x.write(d, buf, n)
		rc = x.l.VipPostSend(x.vi, d, x.dmh)
	})
	if rc != mvia.Success {
		return fmt.Errorf("VipPostSend: %v", rc)
	}
	x.out++
	// Reap what has completed: earlier messages (the NIC's interrupt
	// completes a descriptor after the post), or this one when the post
	// was synchronous.
	for x.out > 0 {
		if _, rc := x.l.VipSendDone(x.vi); rc != mvia.Success {
			break
		}
		x.out--
	}
	return nil
}

// Recv waits for the next message in the program's receive buffer.
func (x *end) Recv(t *kernel.Thread, buf memory.Addr, n int, timeout sim.Time) (int, error) {
	if n == 0 {
		return 0, latency.ErrEnd
	}
	if buf != x.buf {
		return 0, fmt.Errorf("receive into %#x: the posted descriptors point at %#x", uint64(buf), uint64(x.buf))
	}
	if x.repost != nil {
		return 0, x.repost
	}
	deadline := x.c.LocalTime() + timeout
	for {
		left := deadline - x.c.LocalTime()
		if left <= 0 {
			return 0, latency.ErrTimeout
		}
		var cs mvia.Descriptor
		rc := mvia.Success
		x.c.Call(x.sym.recv, func() {
			var d memory.Addr
			if d, rc = x.l.VipRecvWait(x.vi, left); rc != mvia.Success {
				return
			}
			x.c.Read(d, x.ctl[:])
			cs, _ = mvia.DecodeControl(x.ctl[:])
			// Posted again at once, as vpingpong does. A peer that has
			// disconnected since the message came (the server after the
			// last echo) leaves the VI unable to take it: the message is
			// still the program's, and the next receive says so.
			if rc := x.l.VipPostRecv(x.vi, d, x.dmh); rc != mvia.Success {
				if x.repost == nil {
					x.repost = fmt.Errorf("VipPostRecv: %v", rc)
				}
			}
		})
		switch rc {
		case mvia.Success:
		case mvia.Timeout:
			return 0, latency.ErrTimeout
		default:
			return 0, fmt.Errorf("VipRecvWait: %v", rc)
		}
		switch {
		case cs.Status&mvia.StatusFlushed != 0:
			return 0, fmt.Errorf("the connection is closed (descriptor flushed, status %#x)", cs.Status)
		case cs.Status&mvia.StatusErrorMask != 0:
			x.tr.stats.RecvErrors++
			continue
		}
		return int(cs.Length), nil
	}
}

// Packets returns the frames a message of n bytes takes.
func (x *end) Packets(n int) int { return max(1, (n+x.payload-1)/x.payload) }

// Close disconnects (the peer's VI learns it; what is still posted here
// completes flushed) and releases the registered memory.
func (x *end) Close(t *kernel.Thread) {
	x.l.VipDisconnect(x.vi)
	for _, r := range x.regions {
		x.l.VipDeregisterMem(x.nic, r.base, r.mh)
	}
	x.l.VipDeregisterMem(x.nic, x.descs, x.dmh)
}

// Tracker follows the VIA data frames of the series' connection at e's
// host: the first frame of a message to arrive starts its receive
// latency, its first fragment's stamp names it, and VipRecvWait
// returning with the stamp in the receive buffer completes it.
func (tr *Protocol) Tracker(e *latency.End) latency.Tracker {
	return &tracker{e: e, tr: tr, bySeq: map[uint32]cpu.Account{}, byStamp: map[uint32]cpu.Account{}}
}

type tracker struct {
	e       *latency.End
	tr      *Protocol
	bySeq   map[uint32]cpu.Account // by message sequence, until its first fragment is in
	byStamp map[uint32]cpu.Account // by stamp, until a receive returns it
	out     [1]latency.Arrival
}

func (k *tracker) Frame(f []byte, now func(*cpu.Account)) {
	x, ok := k.e.Conn().(*end)
	a := k.tr.agents[k.e.Host.Name]
	if !ok || a == nil || len(f) < header.EthernetHeaderLen+header.VIAHeaderLen {
		return
	}
	eth := header.Ethernet(f)
	if eth.Type() != a.Params().EtherType || eth.Dst() != x.nic.MAC() {
		return
	}
	v := header.VIA(f[header.EthernetHeaderLen:])
	if !v.IsValid() || v.Type() != header.VIATypeData || int(v.DstVI()) != x.vi.Number() {
		return
	}
	start, seen := k.bySeq[v.Seq()]
	if !seen {
		now(&start) // a new account: each message keeps its own
		k.bySeq[v.Seq()] = start
	}
	if v.Offset() == 0 && v.PayloadLen() >= 4 {
		k.byStamp[binary.BigEndian.Uint32(v.Payload())] = start
		delete(k.bySeq, v.Seq())
	}
}

// Completed reads the stamp of the message VipRecvWait left in the
// program's buffer.
func (k *tracker) Completed(c *cpu.CPU, buf memory.Addr) []latency.Arrival {
	if buf == 0 {
		return nil
	}
	var stamp [4]byte
	c.System().Phys.Read(buf, stamp[:])
	st := binary.BigEndian.Uint32(stamp[:])
	start, ok := k.byStamp[st]
	if !ok {
		return nil
	}
	delete(k.byStamp, st)
	k.out[0] = latency.Arrival{Msg: k.e.Series().Index(st), Start: start}
	return k.out[:]
}

func maxSize(sizes []int) int {
	m := 0
	for _, n := range sizes {
		m = max(m, n)
	}
	return m
}
