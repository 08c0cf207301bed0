package inet

// Internal tests of the write queue (tcp_wq.go): whatever ranges the send
// decisions ask for, the buffer sent holds exactly those bytes with their
// sum, the queue stays one run of consecutive sequence numbers whose every
// buffer's sum is right, a retransmission copies while the card holds the
// last clone, and every block goes back to the kernel in the end. The
// operations run in a kernel thread of a bare kernel, on a Stack with
// TCP's symbols and nothing else.

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/kernel"
	"simkron/stack/netdev"
)

type wqHost struct {
	k    *sim.Scheduler
	kern *kernel.Kernel
	sys  *memory.System
	s    *Stack
}

func newWQHost(t *testing.T) *wqHost {
	t.Helper()
	k := sim.NewScheduler(1)
	l1 := &memory.CacheParams{Size: 8 * sim.KiB, Line: 16, Assoc: 4, HitLatency: 1, WritePolicy: memory.WriteBack, WriteAllocate: true}
	hier, err := memory.NewHierarchy(memory.HierarchyParams{L1: l1, MemLatency: 1, MemWriteLatency: 1})
	if err != nil {
		t.Fatal(err)
	}
	sys := memory.NewSystem(k, "h", memory.NewPhys(16*sim.MiB), hier)
	c, err := cpu.New(k, "h.cpu0", cpu.Params{Clock: 100 * sim.MHz, CPI: 1, TrapCycles: 100, IRQEntryCycles: 80, IRQExitCycles: 40, SwitchCycles: 300, Lines: 16}, sys)
	if err != nil {
		t.Fatal(err)
	}
	kern, err := kernel.Boot("h", c, cpu.NewSymbolTable(0x100000, nil), kernel.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	s := &Stack{k: kern, c: c, p: DefaultParams(), linkHdr: header.EthernetHeaderLen}
	s.tcpInit()
	return &wqHost{k: k, kern: kern, sys: sys, s: s}
}

// run runs body in a kernel thread to its end.
func (h *wqHost) run(t *testing.T, body func()) {
	t.Helper()
	done := false
	h.kern.Spawn("test", func(*kernel.Thread) { body(); done = true })
	h.k.RunUntil(sim.Second)
	if !done {
		t.Fatal("the test thread did not finish")
	}
	if n := h.sys.Guest.Count(); n != 0 {
		t.Fatalf("%d guest errors: %v", n, h.sys.Guest.Records())
	}
}

func (h *wqHost) inUse() uint64 {
	now, _ := h.kern.Allocator().InUse()
	return now
}

// sumOf is the folded one's-complement sum of p (RFC 1071).
func sumOf(p []byte) uint16 {
	s, _ := kernel.SumBytes(0, p, false)
	return kernel.Fold(s)
}

// checkQueue holds the queue to what was queued: buffers of consecutive
// sequence numbers from sndBase, slen bytes in all, each holding the
// stream's bytes at its place with their sum, none over the MSS.
func (h *wqHost) checkQueue(t *testing.T, tp *tcb, stream []byte, base uint32) {
	t.Helper()
	seq, total := tp.sndBase, 0
	for i, w := range tp.wq {
		if w.seq != seq {
			t.Fatalf("buffer %d starts at %d, want %d", i, w.seq-base, seq-base)
		}
		if w.b.Len <= 0 || w.b.Len > tp.mss || w.b.Tailroom() < 0 {
			t.Fatalf("buffer %d: %d bytes, tailroom %d (MSS %d)", i, w.b.Len, w.b.Tailroom(), tp.mss)
		}
		got := make([]byte, w.b.Len)
		h.s.c.Read(w.b.Addr, got)
		off := int(w.seq - base)
		if !bytes.Equal(got, stream[off:off+w.b.Len]) {
			t.Fatalf("buffer %d (bytes %d+%d) holds the wrong data", i, off, w.b.Len)
		}
		if kernel.Fold(w.sum) != sumOf(got) {
			t.Fatalf("buffer %d: sum %#04x, want %#04x", i, kernel.Fold(w.sum), sumOf(got))
		}
		seq += uint32(w.b.Len)
		total += w.b.Len
	}
	if total != tp.slen {
		t.Fatalf("the queue holds %d bytes, slen %d", total, tp.slen)
	}
}

// A seeded random mix of writes of any size, transmissions of any range
// from snd_una on (new data, resends, ranges cut short or spanning
// several buffers) with some clones held by the "card" for a while, and
// acknowledgements of any amount, against the bytes written.
func TestWriteQueueRanges(t *testing.T) {
	for _, mss := range []int{536, 1460} {
		for seed := uint64(1); seed <= 4; seed++ {
			h := newWQHost(t)
			h.run(t, func() {
				s := h.s
				rng := rand.New(rand.NewPCG(seed, uint64(mss)))
				s.c.EnableSelfCycles()
				base := h.inUse()
				const iss = 1000
				tp := s.newTCB(nil)
				tp.rbuf = 1 // live: only the write queue is exercised
				tp.mss, tp.maxSndWnd, tp.scap = mss, 8*mss, 16*mss
				tp.sndBase, tp.sndUna, tp.sndMax = iss, iss, iss
				user := s.k.Kmalloc(4 * mss)
				var stream []byte
				var held []netdev.Buf
				copies, clones := 0, 0
				for step := 0; step < 400; step++ {
					switch op := rng.IntN(10); {
					case op < 4 && tp.slen < tp.scap: // write
						n := min(1+rng.IntN(2*mss), tp.scap-tp.slen)
						p := make([]byte, n)
						for i := range p {
							p[i] = byte(rng.Uint32())
						}
						s.c.Write(user, p)
						for done := 0; done < n; {
							m := s.tcpQueue(tp, user+memory.Addr(done), n-done)
							if m == 0 {
								t.Fatalf("step %d: %d bytes queued of %d left", step, m, n-done)
							}
							done += m
							tp.slen += m
						}
						stream = append(stream, p...)
					case op < 8 && tp.slen > 0: // transmit a range
						// Any start from snd_una up to the data never
						// sent, any length up to the MSS.
						unsent := int(tp.sndMax - tp.sndBase)
						off := rng.IntN(min(unsent, tp.slen-1) + 1)
						length := 1 + rng.IntN(min(tp.mss, tp.slen-off))
						if unsent > 0 && rng.IntN(2) == 0 {
							// A sent buffer again, whole, as after a
							// timeout.
							w := tp.wq[tp.wqFind(tp.sndBase+uint32(rng.IntN(unsent)))]
							off, length = int(w.seq-tp.sndBase), w.b.Len
						}
						resend := seqLT(tp.sndBase+uint32(off), tp.sndMax)
						cloned := false
						if resend {
							w := tp.wq[tp.wqFind(tp.sndBase+uint32(off))]
							cloned = w.seq == tp.sndBase+uint32(off) && w.b.Len == length && netdev.Cloned(s.k, w.b)
						}
						b, sum, ok := s.tcpSegment(tp, off, length)
						if !ok {
							t.Fatalf("step %d: no buffer for %d+%d", step, off, length)
						}
						if b.CloneHead == 0 {
							copies++
						} else {
							clones++
						}
						if cloned && b.CloneHead != 0 {
							t.Fatalf("step %d: a resend of a buffer the card holds was cloned, not copied", step)
						}
						got := make([]byte, b.Len)
						s.c.Read(b.Addr, got)
						abs := int(tp.sndBase-iss) + off
						if !bytes.Equal(got, stream[abs:abs+length]) {
							t.Fatalf("step %d: segment %d+%d holds the wrong bytes", step, abs, length)
						}
						if kernel.Fold(sum) != sumOf(got) {
							t.Fatalf("step %d: segment sum %#04x, want %#04x", step, kernel.Fold(sum), sumOf(got))
						}
						// The headers go in front, as tcp_transmit_skb and
						// ip_queue_xmit push them.
						b.Push(header.TCPMinimumSize + header.IPv4MinimumSize + header.EthernetHeaderLen)
						if end := tp.sndBase + uint32(off+length); seqGT(end, tp.sndMax) {
							tp.sndMax = end
						}
						held = append(held, b)
					case op < 9 && len(held) > 0: // the card is done with some
						k := rng.IntN(len(held)) + 1
						for _, b := range held[:k] {
							b.Free(s.k)
						}
						held = append(held[:0], held[k:]...)
					case tp.sndMax != tp.sndBase: // an ACK of some sent data
						n := 1 + rng.IntN(int(tp.sndMax-tp.sndBase))
						s.tcpCleanRtx(tp, n)
						tp.slen -= n
						tp.sndBase += uint32(n)
					}
					h.checkQueue(t, tp, stream, iss)
				}
				if copies == 0 || clones == 0 {
					t.Errorf("mss %d seed %d: %d copies and %d clones sent: the mix missed a path", mss, seed, copies, clones)
				}
				ran := map[*cpu.Symbol]bool{}
				for _, sc := range s.c.SelfCycles() {
					ran[sc.Symbol] = true
				}
				for _, sym := range []*cpu.Symbol{s.tcp.sym.fragment, s.tcp.sym.collapse, s.tcp.sym.cleanRtx, s.tcp.sym.sendSkb} {
					if !ran[sym] {
						t.Errorf("mss %d seed %d: %s never ran: the mix missed a path", mss, seed, sym.Name)
					}
				}
				for _, b := range held {
					b.Free(s.k)
				}
				tp.rbuf = 0
				tp.freeBuffers()
				s.k.Kfree(user)
				if h.inUse() != base {
					t.Errorf("mss %d seed %d: %d bytes still allocated", mss, seed, h.inUse()-base)
				}
			})
		}
	}
}

// A write fills the last buffer while it has never been sent and holds
// less than a segment, and no further: a small write after a send starts
// a new buffer, sized for a whole segment (Linux's queue_it), and a write
// of a whole segment gets a buffer of its size.
func TestWriteQueueFillsUnsentTail(t *testing.T) {
	h := newWQHost(t)
	h.run(t, func() {
		s := h.s
		tp := s.newTCB(nil)
		tp.rbuf = 1
		tp.mss, tp.maxSndWnd, tp.scap = 1460, 32768, 32768
		tp.sndBase, tp.sndUna, tp.sndMax = 1, 1, 1
		user := s.k.Kmalloc(4096)
		queue := func(n int) {
			for done := 0; done < n; {
				m := s.tcpQueue(tp, user+memory.Addr(done), n-done)
				if m == 0 {
					t.Fatalf("%d of %d bytes queued", done, n)
				}
				done += m
				tp.slen += m
			}
		}
		lens := func() []int {
			var l []int
			for _, w := range tp.wq {
				l = append(l, w.b.Len)
			}
			return l
		}
		queue(100)
		queue(200)
		if got := lens(); len(got) != 1 || got[0] != 300 || tp.wq[0].b.Tailroom() != 1460-300 {
			t.Fatalf("two small writes: buffers %v, tailroom %d; want one of 300 with room for a segment", got, tp.wq[0].b.Tailroom())
		}
		tp.sndMax = tp.sndBase + 300 // sent
		queue(50)
		if got := lens(); len(got) != 2 || got[1] != 50 {
			t.Fatalf("a write after a send: buffers %v, want [300 50]", got)
		}
		tp.sndMax = tp.sndBase + 350
		queue(3000)
		if got := lens(); len(got) != 5 || got[2] != 1460 || got[3] != 1460 || got[4] != 80 || tp.wq[2].b.Tailroom() != 0 {
			t.Fatalf("a write of 3000: buffers %v (tailroom of the first full one %d), want [300 50 1460 1460 80] and 0", got, tp.wq[2].b.Tailroom())
		}
		tp.rbuf = 0
		tp.freeBuffers()
	})
}
