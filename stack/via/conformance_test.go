package via_test

// VIA conformance tests of our own (the points of VIA 1.0 and the VIPL
// that programs rely on): descriptor status and lengths, a message longer
// than the posted receive buffer, completion-queue order, disconnect with
// descriptors posted, the receive-queue-empty case per reliability level,
// loss, and protection.

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/ethersim"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/kernel"
	"simkron/stack/via"
)

// scenario runs a server program on b and a client program on a (which
// starts 20 ms later, past boot), each given its connected endpoint, and
// runs the simulation until both return.
type scenario struct {
	t      *testing.T
	oa, ob opts
	attrs  via.ViAttributes
	cq     bool
	room   int         // bytes of data room (0: 64 KiB)
	server func(e *ep) // after accepting; pre accepts before it
	pre    func(e *ep) // before accepting (post receives)
	client func(e *ep) // after connecting
	cpre   func(e *ep)
	fails  []string
	a, b   *host
}

func (s *scenario) failf(f string, args ...any) { s.fails = append(s.fails, fmt.Sprintf(f, args...)) }

func (s *scenario) run() {
	t := s.t
	t.Helper()
	if s.oa.via.MaxTransfer == 0 {
		s.oa = defaultOpts()
	}
	if s.ob.via.MaxTransfer == 0 {
		s.ob = defaultOpts()
	}
	if s.room == 0 {
		s.room = 64 << 10
	}
	k, _, a, b := pair(t, s.oa, s.ob)
	s.a, s.b = a, b
	done := 0
	b.kern.Spawn("server", func(th *kernel.Thread) {
		defer func() { done++ }()
		e, err := open(b, th, s.room, s.attrs, s.cq)
		if err != nil {
			s.failf("server: %v", err)
			return
		}
		if s.pre != nil {
			s.pre(e)
		}
		if err := e.accept(); err != nil {
			s.failf("%v", err)
			return
		}
		if s.server != nil {
			s.server(e)
		}
	})
	a.kern.Spawn("client", func(th *kernel.Thread) {
		defer func() { done++ }()
		th.SleepFor(20 * sim.Millisecond)
		e, err := open(a, th, s.room, s.attrs, s.cq)
		if err != nil {
			s.failf("client: %v", err)
			return
		}
		if s.cpre != nil {
			s.cpre(e)
		}
		if err := e.connect(b); err != nil {
			s.failf("%v", err)
			return
		}
		if s.client != nil {
			s.client(e)
		}
	})
	runUntil(t, k, 10*sim.Second, func() bool { return done == 2 })
	for _, f := range s.fails {
		t.Error(f)
	}
}

// recvAll waits for n receive completions and returns their Length and
// Status.
func recvAll(s *scenario, e *ep, n int) [][2]uint32 {
	var out [][2]uint32
	for range n {
		d, rc := e.l.VipRecvWait(e.vi, sim.Second)
		if rc != via.Success {
			s.failf("%s: VipRecvWait: %v", e.h.name, rc)
			return out
		}
		l, st, _ := e.status(d)
		out = append(out, [2]uint32{l, st})
	}
	return out
}

const (
	recvOK    = via.StatusDone | via.StatusOpReceive
	sendOK    = via.StatusDone | via.StatusOpSend
	recvFlush = via.StatusDone | via.StatusOpReceive | via.StatusFlushed
)

// TestLengthError: a message longer than the posted receive buffer
// completes that descriptor with a length error and places nothing; on an
// unreliable VI the next message goes to the next descriptor, on a
// reliable one the connection breaks and both sides' descriptors complete
// flushed.
func TestLengthError(t *testing.T) {
	for _, rel := range []via.Reliability{via.Unreliable, via.ReliableDelivery} {
		t.Run(fmt.Sprint(rel), func(t *testing.T) {
			s := &scenario{t: t, attrs: via.ViAttributes{ReliabilityLevel: rel}}
			var server, client [][2]uint32
			var clientState via.State
			var clientErrs []via.AsyncError
			s.pre = func(e *ep) {
				e.postRecv(0, 0, 100)
				e.postRecv(1, 100, 2000)
			}
			s.server = func(e *ep) { server = recvAll(s, e, 2) }
			s.cpre = func(e *ep) { e.postRecv(0, 0, 100) }
			s.client = func(e *ep) {
				e.pattern(0, 1000, 1)
				if rc := e.postSend(1, 0, 1000); rc != via.Success {
					s.failf("first send: %v", rc)
				}
				if rc := e.postSend(2, 0, 1000); rc != via.Success && rel == via.Unreliable {
					s.failf("second send: %v", rc)
				}
				e.th.SleepFor(20 * sim.Millisecond)
				if rel == via.ReliableDelivery {
					client = recvAll(s, e, 1)
				}
				clientState = e.vi.State()
				clientErrs = e.nic.Errors()
			}
			s.run()
			lenErr := [2]uint32{0, recvOK | via.StatusLengthError}
			if rel == via.Unreliable {
				if d := cmp.Diff([][2]uint32{lenErr, {1000, recvOK}}, server); d != "" {
					t.Errorf("server's descriptors (-want +got):\n%s", d)
				}
				if clientState != via.StateConnected {
					t.Errorf("client VI %v, want CONNECTED", clientState)
				}
				return
			}
			if d := cmp.Diff([][2]uint32{lenErr, {0, recvFlush}}, server); d != "" {
				t.Errorf("server's descriptors (-want +got):\n%s", d)
			}
			if d := cmp.Diff([][2]uint32{{0, recvFlush}}, client); d != "" {
				t.Errorf("client's descriptors (-want +got):\n%s", d)
			}
			if clientState != via.StateError || len(clientErrs) != 1 || clientErrs[0].Code != via.ErrConnLost {
				t.Errorf("client VI %v, async errors %+v; want ERROR and a lost connection", clientState, clientErrs)
			}
			if st := s.b.agent.Stats(); st.LengthErrors != 1 || st.ConnBroken != 1 {
				t.Errorf("server agent: %+v", st)
			}
		})
	}
}

// TestCQOrder: with both queues bound to one completion queue, entries
// appear in completion order, each naming the VI and its queue, and the
// descriptors are then reaped in posting order. The client sends three
// messages before the server looks; the server's CQ holds three receive
// entries, then its own two sends; the client's holds its three sends
// (each complete at its post), then the two receives.
func TestCQOrder(t *testing.T) {
	s := &scenario{t: t, cq: true}
	type entry struct {
		Recv bool
		Desc int
		Len  uint32
	}
	var server, client []entry
	var serverEmpty, clientEmpty via.Return
	reap := func(e *ep, n int, out *[]entry) {
		for range n {
			vi, isRecv, rc := e.l.VipCQWait(e.cq, sim.Second)
			if rc != via.Success || vi != e.vi {
				s.failf("%s: VipCQWait: %v (VI %v)", e.h.name, rc, vi)
				return
			}
			var d memory.Addr
			if isRecv {
				d, rc = e.l.VipRecvDone(e.vi)
			} else {
				d, rc = e.l.VipSendDone(e.vi)
			}
			if rc != via.Success {
				s.failf("%s: reaping after a CQ entry: %v", e.h.name, rc)
				return
			}
			l, _, _ := e.status(d)
			*out = append(*out, entry{isRecv, int(d-e.desc(0)) / descStride, l})
		}
	}
	s.pre = func(e *ep) {
		for i := range 3 {
			e.postRecv(i, i*2048, 2048)
		}
	}
	s.server = func(e *ep) {
		e.th.SleepFor(50 * sim.Millisecond)
		reap(e, 3, &server)
		e.postSend(3, 0, 10)
		e.postSend(4, 0, 20)
		reap(e, 2, &server)
		_, _, serverEmpty = e.l.VipCQDone(e.cq)
	}
	s.cpre = func(e *ep) {
		e.postRecv(0, 0, 2048)
		e.postRecv(1, 2048, 2048)
	}
	s.client = func(e *ep) {
		for i := range 3 {
			e.postSend(2+i, 0, 100*(i+1))
		}
		reap(e, 5, &client)
		_, _, clientEmpty = e.l.VipCQDone(e.cq)
	}
	s.run()
	wantS := []entry{{true, 0, 100}, {true, 1, 200}, {true, 2, 300}, {false, 3, 10}, {false, 4, 20}}
	wantC := []entry{{false, 2, 100}, {false, 3, 200}, {false, 4, 300}, {true, 0, 10}, {true, 1, 20}}
	if d := cmp.Diff(wantS, server); d != "" {
		t.Errorf("server's completions (-want +got):\n%s", d)
	}
	if d := cmp.Diff(wantC, client); d != "" {
		t.Errorf("client's completions (-want +got):\n%s", d)
	}
	if serverEmpty != via.NotDone || clientEmpty != via.NotDone {
		t.Errorf("VipCQDone on an empty CQ: %v %v, want VIP_NOT_DONE", serverEmpty, clientEmpty)
	}
}

// TestDisconnectFlushes: VipDisconnect completes every descriptor still
// posted on the VI, in order, flushed, and returns it to IDLE; the peer's
// VI goes to ERROR with a lost connection reported, and its posted
// descriptors complete flushed too.
func TestDisconnectFlushes(t *testing.T) {
	s := &scenario{t: t}
	var server, client [][2]uint32
	var serverState, clientState via.State
	var serverErrs []via.AsyncError
	var rc via.Return
	s.pre = func(e *ep) {
		for i := range 4 {
			e.postRecv(i, i*100, 100)
		}
	}
	s.server = func(e *ep) {
		server = recvAll(s, e, 4)
		serverState = e.vi.State()
		serverErrs = e.nic.Errors()
	}
	s.cpre = func(e *ep) {
		e.postRecv(0, 0, 100)
		e.postRecv(1, 100, 100)
	}
	s.client = func(e *ep) {
		e.postSend(2, 0, 50)
		e.th.SleepFor(10 * sim.Millisecond)
		e.postRecv(3, 200, 100) // after the server has its message
		rc = e.l.VipDisconnect(e.vi)
		client = recvAll(s, e, 3)
		clientState = e.vi.State()
		if _, rc := e.l.VipRecvDone(e.vi); rc != via.NotDone {
			s.failf("client: a descriptor left after the flush: %v", rc)
		}
		if rc := e.postSend(4, 0, 10); rc != via.InvalidState {
			s.failf("send after disconnect: %v, want VIP_INVALID_STATE", rc)
		}
	}
	s.run()
	if rc != via.Success {
		t.Errorf("VipDisconnect: %v", rc)
	}
	flushed := [2]uint32{0, recvFlush}
	// The server's first descriptor got the message.
	if d := cmp.Diff([][2]uint32{{50, recvOK}, flushed, flushed, flushed}, server); d != "" {
		t.Errorf("server's descriptors (-want +got):\n%s", d)
	}
	if d := cmp.Diff([][2]uint32{flushed, flushed, flushed}, client); d != "" {
		t.Errorf("client's descriptors (-want +got):\n%s", d)
	}
	if clientState != via.StateIdle || serverState != via.StateError {
		t.Errorf("states: client %v, server %v; want IDLE and ERROR", clientState, serverState)
	}
	if len(serverErrs) != 1 || serverErrs[0].Code != via.ErrConnLost || serverErrs[0].Resource != via.ResourceVI {
		t.Errorf("server's async errors %+v, want one lost connection", serverErrs)
	}
}

// TestRecvQueueEmpty: a message that finds no receive descriptor posted
// is dropped and counted on an unreliable VI, which stays connected and
// takes the next message into the next descriptor posted; on a reliable
// VI it breaks the connection, the receiver reporting VIP_ERROR_RECVQ_EMPTY
// and the sender, told by the receiver, the same code.
func TestRecvQueueEmpty(t *testing.T) {
	for _, rel := range []via.Reliability{via.Unreliable, via.ReliableDelivery} {
		t.Run(fmt.Sprint(rel), func(t *testing.T) {
			s := &scenario{t: t, attrs: via.ViAttributes{ReliabilityLevel: rel}}
			var server [][2]uint32
			var sState, cState via.State
			var sErrs, cErrs []via.AsyncError
			s.server = func(e *ep) {
				e.th.SleepFor(10 * sim.Millisecond) // the first message comes and goes
				e.postRecv(0, 0, 4096)
				if rel == via.Unreliable {
					server = recvAll(s, e, 1)
				}
				sState, sErrs = e.vi.State(), e.nic.Errors()
			}
			s.client = func(e *ep) {
				e.postSend(0, 0, 3000)
				e.th.SleepFor(40 * sim.Millisecond)
				if rc := e.postSend(1, 0, 2000); (rc == via.Success) != (rel == via.Unreliable) {
					s.failf("second send: %v", rc)
				}
				e.th.SleepFor(20 * sim.Millisecond)
				cState, cErrs = e.vi.State(), e.nic.Errors()
			}
			s.run()
			st := s.b.agent.Stats()
			if rel == via.Unreliable {
				if d := cmp.Diff([][2]uint32{{2000, recvOK}}, server); d != "" {
					t.Errorf("server's descriptors (-want +got):\n%s", d)
				}
				if st.DropRecvQEmpty != 1 || st.DropDiscarded != 3 || sState != via.StateConnected || cState != via.StateConnected {
					t.Errorf("dropped %d messages (%d frames); states %v %v", st.DropRecvQEmpty, st.DropDiscarded, sState, cState)
				}
				return
			}
			if sState != via.StateError || cState != via.StateError {
				t.Errorf("states: server %v, client %v; want ERROR both", sState, cState)
			}
			want := []via.AsyncError{{Resource: via.ResourceVI, Code: via.ErrRecvQEmpty, VI: 1}}
			opt := cmp.Comparer(func(x, y via.AsyncError) bool { return x.Resource == y.Resource && x.Code == y.Code && x.VI == y.VI })
			if d := cmp.Diff(want, sErrs, opt); d != "" {
				t.Errorf("server's async errors (-want +got):\n%s", d)
			}
			if d := cmp.Diff(want, cErrs, opt); d != "" {
				t.Errorf("client's async errors (-want +got):\n%s", d)
			}
		})
	}
}

// TestLoss: over a link that drops 20% of the frames to the server, every
// receive descriptor of an unreliable VI either holds its message intact
// or completes with a transport error (some of its fragments missing);
// messages of which nothing came are counted. On a reliable VI the first
// loss breaks the connection.
func TestLoss(t *testing.T) {
	const msgs, size = 40, 5000 // four frames each
	ob := defaultOpts()
	ob.faults = ethersim.FaultParams{Drop: 0.2}
	s := &scenario{t: t, ob: ob, room: msgs * size}
	var results [][2]uint32
	var data [][]byte
	var payload []byte
	s.pre = func(e *ep) {
		for i := range msgs {
			e.postRecv(i, i*size, size)
		}
	}
	s.server = func(e *ep) {
		for i := range msgs {
			d, rc := e.l.VipRecvWait(e.vi, 200*sim.Millisecond)
			if rc == via.Timeout {
				break // the rest were lost
			}
			if rc != via.Success {
				s.failf("VipRecvWait %d: %v", i, rc)
				break
			}
			l, st, _ := e.status(d)
			results = append(results, [2]uint32{l, st})
			data = append(data, e.read(i*size, int(l)))
		}
	}
	s.client = func(e *ep) {
		payload = e.pattern(0, size, 9)
		for i := range msgs {
			e.postSend(i, 0, size)
			e.th.SleepFor(10 * sim.Millisecond)
		}
	}
	s.run()
	st := s.b.agent.Stats()
	whole, partial := 0, 0
	for i, r := range results {
		switch r[1] {
		case recvOK:
			whole++
			if r[0] != size || !bytes.Equal(data[i], payload) {
				t.Errorf("message %d: %d bytes, corrupted", i, r[0])
			}
		case recvOK | via.StatusTransportError:
			partial++
			if r[0] >= size {
				t.Errorf("partial message %d says %d bytes", i, r[0])
			}
		default:
			t.Errorf("descriptor %d: status %#x", i, r[1])
		}
	}
	if partial == 0 || whole == 0 || uint64(partial) != st.PartialMessages {
		t.Errorf("whole %d, partial %d (agent %d): the loss did not show", whole, partial, st.PartialMessages)
	}
	t.Logf("whole %d, partial %d, lost %d, orphaned %d, discarded frames %d", whole, partial, st.MessagesLost, st.DropOrphanFragment, st.DropDiscarded)
	// Every message sent is accounted for: whole, partial, lost whole, or
	// cut off at its start (its first frame dropped: not seen as a message).
	// (The last message, if incomplete, is never completed: no message
	// comes after it.)
	if got := uint64(whole+partial) + st.MessagesLost + st.DropOrphanFragment; got > msgs || got < msgs-1 {
		t.Errorf("whole %d + partial %d + lost %d + orphaned %d do not account for %d messages", whole, partial, st.MessagesLost, st.DropOrphanFragment, msgs)
	}

	// Reliable delivery: the first loss breaks the connection.
	r := &scenario{t: t, ob: ob, room: msgs * size, attrs: via.ViAttributes{ReliabilityLevel: via.ReliableDelivery}}
	var state via.State
	r.pre = s.pre
	r.server = func(e *ep) {
		for range msgs {
			if _, rc := e.l.VipRecvWait(e.vi, 200*sim.Millisecond); rc != via.Success {
				break
			}
		}
		state = e.vi.State()
	}
	r.client = func(e *ep) {
		for i := range msgs {
			if e.postSend(i, 0, size) != via.Success {
				break
			}
			e.th.SleepFor(10 * sim.Millisecond)
		}
	}
	r.run()
	if rs := r.b.agent.Stats(); rs.ConnBroken != 1 || state != via.StateError {
		t.Errorf("reliable VI under loss: state %v, broken %d", state, rs.ConnBroken)
	}
}

// TestConnectRejectAndTimeout: a server's reject reaches the client as
// VIP_REJECT; a request nobody answers times out; both leave the VI idle.
func TestConnectRejectAndTimeout(t *testing.T) {
	k, _, a, b := pair(t, defaultOpts(), defaultOpts())
	var rcReject, rcTimeout, rcAfter via.Return
	var state via.State
	done := 0
	b.kern.Spawn("server", func(th *kernel.Thread) {
		defer func() { done++ }()
		e, _ := open(b, th, 4096, via.ViAttributes{}, false)
		conn, remote, attrs, rc := e.l.VipConnectWait(e.nic, via.NetAddress{Host: b.mac, Discriminator: disc}, 0)
		if rc != via.Success || remote.Host != a.mac || attrs.ReliabilityLevel != via.Unreliable {
			t.Errorf("VipConnectWait: %v, remote %v, attrs %+v", rc, remote, attrs)
			return
		}
		e.l.VipConnectReject(conn)
	})
	a.kern.Spawn("client", func(th *kernel.Thread) {
		defer func() { done++ }()
		th.SleepFor(20 * sim.Millisecond)
		e, _ := open(a, th, 4096, via.ViAttributes{}, false)
		_, rcReject = e.l.VipConnectRequest(e.vi, via.NetAddress{Host: a.mac}, via.NetAddress{Host: b.mac, Discriminator: disc}, sim.Second)
		_, rcTimeout = e.l.VipConnectRequest(e.vi, via.NetAddress{Host: a.mac}, via.NetAddress{Host: b.mac, Discriminator: []byte("nobody")}, 300*sim.Millisecond)
		state = e.vi.State()
		rcAfter = e.postSend(0, 0, 10)
	})
	runUntil(t, k, 5*sim.Second, func() bool { return done == 2 })
	if rcReject != via.Reject || rcTimeout != via.Timeout || state != via.StateIdle || rcAfter != via.InvalidState {
		t.Errorf("reject %v, timeout %v, state %v, send %v", rcReject, rcTimeout, state, rcAfter)
	}
}

// TestProtection: what the VIPL and the agent refuse, and how.
func TestProtection(t *testing.T) {
	type result struct {
		Name   string
		RC     via.Return
		Status uint32
	}
	var got []result
	s := &scenario{t: t}
	s.cpre = func(e *ep) {
		l := e.l
		// Attributes of a VI.
		for _, c := range []struct {
			name  string
			attrs via.ViAttributes
		}{
			{"reliable reception", via.ViAttributes{ReliabilityLevel: via.ReliableReception, Ptag: e.ptag}},
			{"transfer size", via.ViAttributes{ReliabilityLevel: via.Unreliable, Ptag: e.ptag, MaxTransferSize: 1 << 20}},
			{"RDMA read", via.ViAttributes{ReliabilityLevel: via.Unreliable, Ptag: e.ptag, EnableRdmaRead: true}},
			{"no Ptag", via.ViAttributes{ReliabilityLevel: via.Unreliable}},
		} {
			_, rc := l.VipCreateVi(e.nic, c.attrs, nil, nil)
			got = append(got, result{Name: "create VI: " + c.name, RC: rc})
		}
		// Another program's Ptag.
		other := e.h.agent.NewVIPL(e.th)
		op, _ := other.VipCreatePtag(e.nic)
		_, rc := l.VipRegisterMem(e.nic, e.mem, 4096, via.MemAttributes{Ptag: op})
		got = append(got, result{Name: "register with another program's Ptag", RC: rc})
		_, rc = l.VipRegisterMem(e.nic, 0x7FFFFFFF, 4096, via.MemAttributes{Ptag: e.ptag})
		got = append(got, result{Name: "register outside memory", RC: rc})
	}
	s.client = func(e *ep) {
		l := e.l
		// A second Ptag and a region under it.
		p2, _ := l.VipCreatePtag(e.nic)
		m2 := e.h.kern.Kmalloc(8192)
		h2, _ := l.VipRegisterMem(e.nic, m2, 8192, via.MemAttributes{Ptag: p2})
		unreg := e.h.kern.Kmalloc(8192) // never registered
		post := func(name string, at memory.Addr, mh via.MemHandle, d via.Descriptor) {
			b := make([]byte, d.Size())
			d.Encode(b)
			e.h.c.Write(at, b)
			rc := l.VipPostSend(e.vi, at, mh)
			if rc == via.Success {
				// The NIC's DMA-completion interrupt completes it.
				if _, wrc := l.VipSendWait(e.vi, sim.Second); wrc != via.Success {
					s.failf("%s: VipSendWait: %v", name, wrc)
				}
			}
			_, st, _ := e.status(at)
			got = append(got, result{name, rc, st})
		}
		seg := e.seg(0, 100)
		post("descriptor in unregistered memory", unreg, e.mh, via.Descriptor{Segs: []via.Segment{seg}})
		post("descriptor under another Ptag", m2, h2, via.Descriptor{Segs: []via.Segment{seg}})
		post("descriptor misaligned", e.desc(1)+16, e.mh, via.Descriptor{Segs: []via.Segment{seg}})
		post("wrong memory handle", e.desc(1), e.mh+7, via.Descriptor{Segs: []via.Segment{seg}})
		post("data in unregistered memory", e.desc(1), e.mh, via.Descriptor{Segs: []via.Segment{{Addr: uint64(unreg), Handle: e.mh, Length: 100}}})
		post("data under another Ptag", e.desc(1), e.mh, via.Descriptor{Segs: []via.Segment{{Addr: uint64(m2), Handle: h2, Length: 100}}})
		post("data past the region", e.desc(1), e.mh, via.Descriptor{Segs: []via.Segment{e.seg(64<<10-50, 100)}})
		post("RDMA write", e.desc(1), e.mh, via.Descriptor{Control: via.ControlOpRDMAWrite, Segs: []via.Segment{seg}})
		post("reserved control bits", e.desc(1), e.mh, via.Descriptor{Control: 0x100, Segs: []via.Segment{seg}})
		post("too many segments", e.desc(1), e.mh, via.Descriptor{Segs: make([]via.Segment, 17)})
		post("longer than the transfer size", e.desc(1), e.mh, via.Descriptor{Segs: []via.Segment{e.seg(0, 32768), e.seg(0, 1)}})
		if rc := l.VipDeregisterMem(e.nic, m2, h2); rc != via.Success {
			s.failf("deregister: %v", rc)
		}
		post("deregistered descriptor memory", m2, h2, via.Descriptor{Segs: []via.Segment{seg}})
		post("a good one after all that", e.desc(2), e.mh, via.Descriptor{Segs: []via.Segment{seg}})
		_, rc := e.h.agent.NewVIPL(e.th).VipSendDone(e.vi)
		got = append(got, result{Name: "another program's VI", RC: rc})
	}
	s.run()
	want := []result{
		{"create VI: reliable reception", via.InvalidReliabilityLevel, 0},
		{"create VI: transfer size", via.InvalidMTU, 0},
		{"create VI: RDMA read", via.InvalidRDMARead, 0},
		{"create VI: no Ptag", via.InvalidPtag, 0},
		{"register with another program's Ptag", via.InvalidPtag, 0},
		{"register outside memory", via.InvalidParameter, 0},
		{"descriptor in unregistered memory", via.InvalidParameter, 0},
		{"descriptor under another Ptag", via.InvalidPtag, 0},
		{"descriptor misaligned", via.InvalidParameter, 0},
		{"wrong memory handle", via.InvalidParameter, 0},
		{"data in unregistered memory", via.DescriptorError, via.StatusDone | via.StatusProtectionError},
		{"data under another Ptag", via.DescriptorError, via.StatusDone | via.StatusProtectionError},
		{"data past the region", via.DescriptorError, via.StatusDone | via.StatusProtectionError},
		{"RDMA write", via.DescriptorError, via.StatusDone | via.StatusFormatError},
		{"reserved control bits", via.DescriptorError, via.StatusDone | via.StatusFormatError},
		{"too many segments", via.DescriptorError, via.StatusDone | via.StatusFormatError},
		{"longer than the transfer size", via.DescriptorError, via.StatusDone | via.StatusLengthError},
		{"deregistered descriptor memory", via.InvalidParameter, 0},
		{"a good one after all that", via.Success, sendOK},
		{"another program's VI", via.InvalidParameter, 0},
	}
	// Refused posts that never reached the agent leave the status the
	// VIPL cleared (0), or the one the program wrote.
	for i := range got {
		if got[i].RC == via.InvalidParameter || got[i].RC == via.InvalidPtag {
			got[i].Status = 0
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if st := s.a.agent.Stats(); st.DescriptorErrors != 7 || st.MessagesSent != 1 {
		t.Errorf("client agent: %d descriptor errors, %d messages sent; want 7 and 1", st.DescriptorErrors, st.MessagesSent)
	}
	noGuestErrors(t, s.a, s.b)
}
