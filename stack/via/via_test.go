package via_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/sim"
	"simkron/stack/kernel"
	"simkron/stack/via"
)

var sizes = []int{0, 4, 1471, 1472, 1473, 4000, 32768}

type got struct {
	Length, Status, Imm uint32
	Data                []byte
}

// exchange runs a client on a that sends one message of each size (with
// immediate data on every other one) to a server on b that pre-posted a
// receive for each; it returns what the server's descriptors say, and the
// client's send descriptors.
func exchange(t *testing.T, oa, ob opts, hook func(a, b *host)) (recv, sent []got, want [][]byte, a, b *host) {
	t.Helper()
	k, _, a, b := pair(t, oa, ob)
	if hook != nil {
		hook(a, b)
	}
	done := 0
	var fail []string
	failf := func(f string, args ...any) { fail = append(fail, fmt.Sprintf(f, args...)) }
	b.kern.Spawn("server", func(th *kernel.Thread) {
		defer func() { done++ }()
		e, err := open(b, th, 64<<10, via.ViAttributes{}, false)
		if err != nil {
			failf("server: %v", err)
			return
		}
		off := 0
		for i, n := range sizes {
			if rc := e.postRecv(i, off, n); rc != via.Success {
				failf("VipPostRecv %d: %v", i, rc)
			}
			off += n
		}
		if err := e.accept(); err != nil {
			failf("%v", err)
			return
		}
		off = 0
		for i, n := range sizes {
			d, rc := e.l.VipRecvWait(e.vi, sim.Second)
			if rc != via.Success || d != e.desc(i) {
				failf("VipRecvWait %d: %v, descriptor %#x want %#x", i, rc, d, e.desc(i))
				return
			}
			l, st, imm := e.status(d)
			recv = append(recv, got{l, st, imm, e.read(off, int(l))})
			off += n
		}
	})
	a.kern.Spawn("client", func(th *kernel.Thread) {
		defer func() { done++ }()
		th.SleepFor(20 * sim.Millisecond)
		e, err := open(a, th, 64<<10, via.ViAttributes{}, false)
		if err != nil {
			failf("client: %v", err)
			return
		}
		if err := e.connect(b); err != nil {
			failf("%v", err)
			return
		}
		for i, n := range sizes {
			want = append(want, e.pattern(0, n, byte(i)))
			d := via.Descriptor{Segs: []via.Segment{e.seg(0, n)}}
			if i%2 == 1 {
				d.Control, d.Immediate = via.ControlImmediate, 0x1000+uint32(i)
			}
			if rc := e.l.VipPostSend(e.vi, e.put(i, d), e.mh); rc != via.Success {
				failf("VipPostSend %d: %v", i, rc)
				return
			}
			s, rc := e.l.VipSendWait(e.vi, sim.Second)
			if rc != via.Success || s != e.desc(i) {
				failf("VipSendWait %d: %v", i, rc)
				return
			}
			l, st, imm := e.status(s)
			sent = append(sent, got{Length: l, Status: st, Imm: imm})
		}
	})
	runUntil(t, k, 5*sim.Second, func() bool { return done == 2 })
	for _, f := range fail {
		t.Error(f)
	}
	return recv, sent, want, a, b
}

// TestMessages: messages of 0 bytes to 32 KiB, fragmented past a frame's
// payload (1472 bytes), arrive whole in the posted descriptors, which say
// DONE, the receive op, the length and the immediate data; the sender's
// descriptors say DONE, the send op and the length: completed by the NIC's
// DMA-completion interrupt after an asynchronous post (M-VIA's), when
// VipPostSend returns after a synchronous one.
func TestMessages(t *testing.T) {
	for _, sync := range []bool{true, false} {
		t.Run(fmt.Sprintf("sync_send=%v", sync), func(t *testing.T) {
			o := defaultOpts()
			o.via.SyncSend = sync
			recv, sent, want, a, b := exchange(t, o, o, nil)
			var wr, ws []got
			for i, n := range sizes {
				r := got{Length: uint32(n), Status: via.StatusDone | via.StatusOpReceive, Data: want[i]}
				s := got{Length: uint32(n), Status: via.StatusDone | via.StatusOpSend}
				if i%2 == 1 {
					r.Status |= via.StatusImmediate
					r.Imm = 0x1000 + uint32(i)
					s.Imm = r.Imm
				}
				wr, ws = append(wr, r), append(ws, s)
			}
			if d := cmp.Diff(wr, recv); d != "" {
				t.Errorf("receive descriptors (-want +got):\n%s", d)
			}
			if d := cmp.Diff(ws, sent); d != "" {
				t.Errorf("send descriptors (-want +got):\n%s", d)
			}
			frames := 0
			for _, n := range sizes {
				frames += max(1, (n+1471)/1472)
			}
			if s := b.agent.Stats(); s.MessagesReceived != uint64(len(sizes)) || s.FramesReceived < uint64(frames) {
				t.Errorf("server agent: %+v", s)
			}
			if s := a.agent.Stats(); s.FramesSent != uint64(frames) {
				t.Errorf("client sent %d data frames, want %d", s.FramesSent, frames)
			}
			// The bus-master NIC's driver hands the agent its frames from
			// the receive interrupt, as M-VIA's drivers do: none goes
			// through netif_rx and the receive softirq.
			if !b.nic.Direct() || b.drv.Stats().RxDirect < uint64(frames) || b.ns.Stats().RxFrames != 0 {
				t.Errorf("server: direct %v, %d frames to the agent from the interrupt (want at least %d), %d through the softirq (want 0)",
					b.nic.Direct(), b.drv.Stats().RxDirect, frames, b.ns.Stats().RxFrames)
			}
			noGuestErrors(t, a, b)
		})
	}
}

// TestOverNE2000: the same exchange between two hosts with NE2000 cards:
// the agent copies each frame into a kernel buffer for the device layer,
// and the driver moves it to the card by programmed I/O (ne_block_output,
// layer DMA) on the CPU: inside VipPostSend while the card has a free
// transmit slot, later from its transmit interrupts.
func TestOverNE2000(t *testing.T) {
	o := defaultOpts()
	o.ne2000 = true
	var dma, total int64
	recv, _, want, a, b := exchange(t, o, o, func(a, b *host) {
		newWatch(a, "VipPostSend").onCall = func(c call) {
			dma += c.layers["DMA"]
			total += c.cycles
		}
	})
	for i := range sizes {
		if i >= len(recv) || !bytes.Equal(recv[i].Data, want[i]) || recv[i].Status&via.StatusErrorMask != 0 {
			t.Fatalf("message %d did not arrive intact over the NE2000s", i)
		}
	}
	if a.nic.Gather() || b.nic.Gather() {
		t.Error("the NE2000 driver has no gather transmit, yet the NIC says it has")
	}
	// Nor a direct receive: the frames come through the receive softirq.
	if b.nic.Direct() || b.ns.Stats().RxFrames == 0 {
		t.Errorf("NE2000: direct %v, %d frames through the receive softirq", b.nic.Direct(), b.ns.Stats().RxFrames)
	}
	if dma == 0 {
		t.Errorf("no DMA-layer cycles (the NE2000's programmed I/O) inside VipPostSend (of %d)", total)
	}
	// Every byte sent crossed the data port, a 16-bit word per 100 ns
	// system-bus cycle, at 1 GHz.
	bytesSent := 0
	for _, n := range sizes {
		bytesSent += max(n+14+28, 60)
	}
	var all int64
	for _, l := range a.c.LayerCycles() {
		if l.Layer == "DMA" {
			all = l.Cycles
		}
	}
	if min := int64(bytesSent/2) * 100; all < min {
		t.Errorf("client's DMA-layer cycles %d, less than the %d the programmed I/O of %d bytes takes", all, min, bytesSent)
	}
	noGuestErrors(t, a, b)
}
