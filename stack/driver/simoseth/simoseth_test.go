package simoseth_test

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/cpu"
	"simkron/devices/simoseth"
	"simkron/ethersim"
	"simkron/memory"
	"simkron/sim"
	drv "simkron/stack/driver/simoseth"
	"simkron/stack/kernel"
	"simkron/stack/netdev"
)

// rawFrame is a frame without FCS: header, then payload bytes from seed.
func rawFrame(dst, src ethersim.MAC, payload int, seed byte) []byte {
	f := make([]byte, 14+payload)
	copy(f, dst[:])
	copy(f[6:], src[:])
	binary.BigEndian.PutUint16(f[12:], etherType)
	for i := range payload {
		f[14+i] = seed + byte(i*7+i>>8)
	}
	return f
}

// sendAll transmits frames from a thread of h through netdev, sleeping
// while the device queue is full; *sent counts those handed over.
func sendAll(h *host, frames [][]byte, sent *int) {
	h.kern.Spawn("send", func(th *kernel.Thread) { send(h, th, frames, sent) })
}

// send transmits frames from thread th of h.
func send(h *host, th *kernel.Thread, frames [][]byte, sent *int) {
	for _, f := range frames {
		b, ok := netdev.Alloc(h.kern, 0, len(f))
		if !ok {
			panic("out of kernel memory")
		}
		h.c.Write(b.Addr, f)
		for !h.ns.Transmit(h.drv.Queue(), b) {
			th.Sleep(h.ns.RoomQueue(h.drv.Queue()))
		}
		*sent++
	}
}

// TestRingsWrapBothWays sends frames of many sizes both ways at once
// through small rings (4 transmit, 8 receive descriptors), so both rings
// wrap many times over; every frame arrives byte for byte, in order. The
// DMA is slowed to 20 MB/s so that the transmit ring fills and the device
// queue stops and restarts.
func TestRingsWrapBothWays(t *testing.T) {
	dp := drv.DefaultParams()
	dp.TxRing, dp.RxRing = 4, 8
	cp := simoseth.DefaultParams()
	cp.DMARate = 20 * 1000 * 1000
	k, _, a, b := pair(t, cp, dp, dp)
	a.collect(t)
	b.collect(t)
	var toB, toA [][]byte
	for i := range 60 {
		toB = append(toB, rawFrame(b.mac, a.mac, []int{46, 1500, 700, 1, 1499}[i%5], byte(i)))
		toA = append(toA, rawFrame(a.mac, b.mac, []int{1500, 46, 999}[i%3], byte(100+i)))
	}
	var sa, sb int
	sendAll(a, toB, &sa)
	sendAll(b, toA, &sb)
	runUntil(t, k, sim.Second, func() bool { return len(a.got) == len(toA) && len(b.got) == len(toB) })
	// Short frames arrive padded to 60 bytes by the card.
	pad := func(fs [][]byte) [][]byte {
		var out [][]byte
		for _, f := range fs {
			for len(f) < 60 {
				f = append(f, 0)
			}
			out = append(out, f)
		}
		return out
	}
	if d := cmp.Diff(pad(toB), b.got); d != "" {
		t.Errorf("frames on B (-want +got):\n%s", d)
	}
	if d := cmp.Diff(pad(toA), a.got); d != "" {
		t.Errorf("frames on A (-want +got):\n%s", d)
	}
	for _, h := range []*host{a, b} {
		s := h.drv.Stats()
		if s.TxFrames != 60 || s.RxFrames != 60 || s.TxErrors != 0 || s.RxErrors != 0 {
			t.Errorf("%s driver: %+v", h.name, s)
		}
		if cs := h.card.Stats(); cs.RxNoDescriptor != 0 || cs.TxDescErrors != 0 {
			t.Errorf("%s card: %+v", h.name, cs)
		}
	}
	if s := a.drv.Stats(); s.TxBusy == 0 {
		t.Error("a 4-descriptor transmit ring never filled: the test does not exercise the stopped queue")
	}
	noGuestErrors(t, a, b)
}

// TestSharedGigabit: the card also works on a shared (CSMA/CD) segment at
// 1 Gbit/s, whose 512-bit slot allows at most 256 ns of propagation: both
// hosts send at once, each defers to the other's frames, and every frame
// arrives.
func TestSharedGigabit(t *testing.T) {
	sp := ethersim.DefaultSegmentParams()
	sp.Rate, sp.Propagation = sim.Gbps, 200*sim.Nanosecond
	k, seg, a, b := pairOn(t, sp, simoseth.DefaultParams(), drv.DefaultParams(), drv.DefaultParams())
	a.collect(t)
	b.collect(t)
	var toB, toA [][]byte
	for i := range 50 {
		toB = append(toB, rawFrame(b.mac, a.mac, 1500, byte(i)))
		toA = append(toA, rawFrame(a.mac, b.mac, 1000, byte(i)))
	}
	var sa, sb int
	sendAll(a, toB, &sa)
	sendAll(b, toA, &sb)
	runUntil(t, k, sim.Second, func() bool { return len(a.got) == 50 && len(b.got) == 50 })
	if d := cmp.Diff(toB, b.got); d != "" {
		t.Errorf("frames on B (-want +got):\n%s", d)
	}
	if a.port.Stats().Deferrals+b.port.Stats().Deferrals == 0 || seg.Stats().Frames != 100 {
		t.Errorf("the hosts never contended for the medium, or frames were lost: %+v", seg.Stats())
	}
	noGuestErrors(t, a, b)
}

// TestRingExhaustionFlood: A floods B while B's core runs with interrupts
// off for 2 ms; B's two-frame receive ring and 8 KiB card buffer fill, and
// the card drops what does not fit, counting each drop. Once B takes its
// interrupt the driver empties the ring and restarts the receiver, and the
// frames A sends later all arrive. Every frame either arrived intact, in
// order, or was counted as dropped.
func TestRingExhaustionFlood(t *testing.T) {
	cp := simoseth.DefaultParams()
	cp.RxBuffer = 8 * sim.KiB
	dp := drv.DefaultParams()
	dp.RxRing = 2
	k, _, a, b := pair(t, cp, drv.DefaultParams(), dp)
	b.collect(t)
	const n, during = 100, 80
	var frames [][]byte
	for i := range n {
		f := rawFrame(b.mac, a.mac, 1000, byte(i))
		binary.BigEndian.PutUint32(f[14:], uint32(i))
		frames = append(frames, f)
	}
	b.kern.Spawn("busy", func(th *kernel.Thread) {
		th.SleepFor(20 * sim.Millisecond) // past boot, before the flood
		was := b.c.DisableInterrupts()
		b.c.Charge(b.c.Clock().Cycles(20 * sim.Millisecond))
		b.c.RestoreInterrupts(was)
	})
	var sent int
	a.kern.Spawn("flood", func(th *kernel.Thread) {
		th.SleepFor(30 * sim.Millisecond) // a tick later: inside the stall
		send(a, th, frames[:during], &sent)
		th.SleepFor(40 * sim.Millisecond) // past it
		send(a, th, frames[during:], &sent)
	})
	runUntil(t, k, sim.Second, func() bool {
		cs := b.card.Stats()
		return sent == n && int(cs.RxFrames+cs.RxNoDescriptor+cs.RxOverflow) == n && !b.card.Busy()
	})
	k.RunUntil(k.Now() + 20*sim.Millisecond)
	cs, ds := b.card.Stats(), b.drv.Stats()
	dropped := cs.RxNoDescriptor + cs.RxOverflow
	if dropped == 0 || cs.RxNoDescriptor == 0 {
		t.Fatalf("nothing was dropped for want of descriptors: card %+v", cs)
	}
	if uint64(len(b.got))+dropped != n {
		t.Errorf("%d delivered + %d dropped != %d sent", len(b.got), dropped, n)
	}
	if ds.RxRestarts == 0 || ds.Missed != dropped {
		t.Errorf("driver restarts %d, missed %d; want > 0 and %d", ds.RxRestarts, ds.Missed, dropped)
	}
	last := -1
	for _, f := range b.got {
		i := int(binary.BigEndian.Uint32(f[14:]))
		if i <= last || i >= n || !cmp.Equal(f[18:], frames[i][18:]) {
			t.Fatalf("frame %d (after %d) arrived corrupted or out of order", i, last)
		}
		last = i
	}
	// Frames after the stall all arrive.
	if late := b.got[len(b.got)-(n-during):]; binary.BigEndian.Uint32(late[0][14:]) != during || last != n-1 {
		t.Errorf("the frames after the stall did not all arrive: the receiver did not recover")
	}
	noGuestErrors(t, a, b)
}

// TestCoherence runs a stream of frames both ways on three platforms: DMA
// that snoops (the default), DMA that does not with a driver that knows
// it (rings uncached, buffers flushed and invalidated), and the study's
// arrangement (rings and buffers uncached, frames copied). All deliver
// every frame intact without a guest error. A driver that believes a
// non-coherent platform coherent reads what the card wrote through stale
// cache lines and writes frames the card reads from unflushed lines: both
// are reported.
func TestCoherence(t *testing.T) {
	region := func(p drv.Params) drv.Params {
		p.DMABase, p.DMASize = dmaRegion, dmaSize
		return p
	}
	coherent := drv.DefaultParams()
	streamed := region(drv.DefaultParams())
	streamed.Coherent = false
	uncached := region(drv.DefaultParams())
	uncached.Coherent = false
	uncached.UncachedBuffers = true
	tests := []struct {
		name     string
		card     bool // the card's DMA is coherent
		dp       drv.Params
		wantErrs []string
	}{
		{"coherent", true, coherent, nil},
		{"non-coherent, streamed buffers", false, streamed, nil},
		{"non-coherent, uncached buffers", false, uncached, nil},
		{"non-coherent, driver thinks coherent", false, coherent, []string{"stale data", "unflushed dirty line"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cp := simoseth.DefaultParams()
			cp.Coherent = tt.card
			k, _, a, b := pair(t, cp, tt.dp, tt.dp)
			a.collect(t)
			b.collect(t)
			var toB, toA [][]byte
			for i := range 30 {
				toB = append(toB, rawFrame(b.mac, a.mac, 1000+i, byte(i)))
				toA = append(toA, rawFrame(a.mac, b.mac, 1200-i, byte(50+i)))
			}
			var sa, sb int
			sendAll(a, toB, &sa)
			sendAll(b, toA, &sb)
			runUntil(t, k, sim.Second, func() bool { return len(a.got) == 30 && len(b.got) == 30 })
			if d := cmp.Diff(toB, b.got); d != "" {
				t.Errorf("frames on B (-want +got):\n%s", d)
			}
			var msgs []string
			for _, h := range []*host{a, b} {
				for _, e := range h.sys.Guest.Records() {
					msgs = append(msgs, e.Msg)
				}
			}
			if tt.wantErrs == nil {
				if len(msgs) != 0 {
					t.Errorf("guest errors: %v", msgs)
				}
			} else {
				for _, w := range tt.wantErrs {
					found := false
					for _, m := range msgs {
						found = found || strings.Contains(m, w)
					}
					if !found {
						t.Errorf("no guest error saying %q among %d: %v", w, len(msgs), msgs[:min(3, len(msgs))])
					}
				}
			}
			if tt.dp.UncachedBuffers {
				if s := b.sys.Stats(); s.UncachedRefs == 0 {
					t.Error("uncached buffers, yet no uncached references")
				}
			}
		})
	}
}

// TestGatherTransmit: a frame given in three pieces, anywhere in memory,
// leaves as one frame; the completion runs once the card has read it,
// from the transmit interrupt.
func TestGatherTransmit(t *testing.T) {
	for _, uncached := range []bool{false, true} {
		dp := drv.DefaultParams()
		if uncached {
			dp.DMABase, dp.DMASize, dp.UncachedBuffers = dmaRegion, dmaSize, true
		}
		k, _, a, b := pair(t, simoseth.DefaultParams(), dp, drv.DefaultParams())
		b.collect(t)
		want := rawFrame(b.mac, a.mac, 1486, 3)
		var doneAt, postedAt sim.Time
		a.kern.Spawn("gather", func(th *kernel.Thread) {
			th.SleepFor(20 * sim.Millisecond)
			p := a.kern.Kmalloc(4096)
			cuts := []int{0, 14, 500, len(want)}
			var frags []netdev.Buf
			for i := range 3 {
				at := p + memory.Addr(cuts[i]+i*100) // scattered
				a.c.Write(at, want[cuts[i]:cuts[i+1]])
				frags = append(frags, netdev.Buf{Addr: at, Len: cuts[i+1] - cuts[i]})
			}
			frags = append(frags, netdev.Buf{Addr: p, Len: 0}) // empty pieces take no descriptor
			if !a.drv.StartXmitFrags(frags, func() { doneAt = k.Now() }) {
				t.Error("StartXmitFrags refused with an empty ring")
			}
			a.c.Sync()
			postedAt = k.Now()
		})
		runUntil(t, k, sim.Second, func() bool { return len(b.got) == 1 })
		if d := cmp.Diff(want, b.got[0]); d != "" {
			t.Errorf("uncached %v: frame (-want +got):\n%s", uncached, d)
		}
		switch {
		case doneAt == 0:
			t.Errorf("uncached %v: completion never ran", uncached)
		case uncached && doneAt > postedAt:
			t.Errorf("uncached %v: completion at %v, after the copy (%v)", uncached, doneAt, postedAt)
		case !uncached && doneAt <= postedAt:
			t.Errorf("uncached %v: completion at %v, before the card could read the pieces (posted %v)", uncached, doneAt, postedAt)
		}
		noGuestErrors(t, a, b)
	}
}

func TestParamsValidate(t *testing.T) {
	with := func(f func(p *drv.Params)) drv.Params {
		p := drv.DefaultParams()
		f(&p)
		return p
	}
	tests := []struct {
		p    drv.Params
		want string
	}{
		{drv.DefaultParams(), ""},
		{with(func(p *drv.Params) { p.TxRing = 1 }), "tx_ring:"},
		{with(func(p *drv.Params) { p.RxRing = 5000 }), "rx_ring:"},
		{with(func(p *drv.Params) { p.MTU = 60 }), "mtu:"},
		{with(func(p *drv.Params) { p.Coherent = false }), "coherent:"},
		{with(func(p *drv.Params) { p.UncachedBuffers = true }), "uncached_buffers:"},
		{with(func(p *drv.Params) { p.DMABase, p.DMASize = dmaRegion, 100 }), "dma_size:"},
		{with(func(p *drv.Params) { p.DMABase, p.DMASize, p.UncachedBuffers = dmaRegion, 64*sim.KiB, true }), "dma_size:"},
		{with(func(p *drv.Params) { p.DMABase, p.DMASize, p.UncachedBuffers = dmaRegion, sim.MiB, true }), ""},
	}
	for _, tt := range tests {
		err := tt.p.Validate()
		if (tt.want == "") != (err == nil) || err != nil && !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("Validate(%+v) = %v, want %q", tt.p, err, tt.want)
		}
	}
	if got := drv.DefaultParams().MaxFrame(); got != 1518 {
		t.Errorf("MaxFrame() = %d, want 1518", got)
	}
}

// TestCardWaitsForTheCore: the core charges its work ahead of the event
// clock, but the card must not see a descriptor before the core has done
// the work before handing it over. A sender hands a frame over, works
// 100 us without touching a device, and hands a second one over; the card,
// which looks at the ring again when the first frame is in, must find the
// second only then, so that it reaches the other host at least 100 us
// after the sender began.
func TestCardWaitsForTheCore(t *testing.T) {
	k, _, a, b := pair(t, simoseth.DefaultParams(), drv.DefaultParams(), drv.DefaultParams())
	var at []sim.Time
	err := b.ns.Register(etherType, func(buf netdev.Buf) {
		at = append(at, k.Now())
		buf.Free(b.kern)
	})
	if err != nil {
		t.Fatal(err)
	}
	const work = 100 * sim.Microsecond
	var began, handed sim.Time
	frames := [][]byte{rawFrame(b.mac, a.mac, 1500, 1), rawFrame(b.mac, a.mac, 1500, 2)}
	a.kern.Spawn("send", func(th *kernel.Thread) {
		th.SleepFor(sim.Millisecond) // the cards are up
		a.c.Sync()
		began = a.c.LocalTime()
		var n int
		send(a, th, frames[:1], &n)
		a.c.Exec(a.c.Clock().Cycles(work))
		handed = a.c.LocalTime()
		send(a, th, frames[1:], &n)
	})
	runUntil(t, k, sim.Second, func() bool { return len(at) == 2 })
	if handed-began < work {
		t.Fatalf("the sender's work took %v, want at least %v", handed-began, work)
	}
	if at[1] < handed {
		t.Errorf("the second frame arrived %v after the sender began, before the sender handed it over (%v)", at[1]-began, handed-began)
	}
	noGuestErrors(t, a, b)
}

// TestDirectReceive: frames of the EtherType given to SetDirectRx go from
// the receive interrupt to its handler, in the ring buffer the card wrote
// (no replacement allocated, nothing through netif_rx), on a coherent
// platform, with streamed buffers and with the study's uncached ones; a
// frame of another type still goes up through netif_rx and the receive
// softirq with a fresh buffer in the ring.
func TestDirectReceive(t *testing.T) {
	region := func(p drv.Params) drv.Params {
		p.DMABase, p.DMASize = dmaRegion, dmaSize
		p.Coherent = false
		return p
	}
	streamed := region(drv.DefaultParams())
	uncached := region(drv.DefaultParams())
	uncached.UncachedBuffers = true
	tests := []struct {
		name string
		dp   drv.Params
	}{
		{"coherent", drv.DefaultParams()},
		{"non-coherent, streamed buffers", streamed},
		{"non-coherent, uncached buffers", uncached},
	}
	const other = etherType + 1
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cp := simoseth.DefaultParams()
			cp.Coherent = tt.dp.Coherent
			k, _, a, b := pair(t, cp, tt.dp, tt.dp)
			var direct, up [][]byte
			inIRQ := true
			b.drv.SetDirectRx(etherType, func(f netdev.Buf) {
				inIRQ = inIRQ && b.c.InInterrupt()
				p := make([]byte, f.Len)
				b.c.Read(f.Addr, p)
				direct = append(direct, p)
			})
			if err := b.ns.Register(other, func(f netdev.Buf) {
				p := make([]byte, f.Len)
				b.c.Read(f.Addr, p)
				up = append(up, p)
				f.Free(b.kern)
			}); err != nil {
				t.Fatal(err)
			}
			kmallocs := 0
			km, _ := b.kern.Symbols().Lookup("kmalloc")
			var frames, want, wantUp [][]byte
			for i := range 40 {
				f := rawFrame(b.mac, a.mac, 200+i*30, byte(i))
				if i%4 == 3 {
					binary.BigEndian.PutUint16(f[12:], other)
					wantUp = append(wantUp, f)
				} else {
					want = append(want, f)
				}
				frames = append(frames, f)
			}
			var sent int
			a.kern.Spawn("send", func(th *kernel.Thread) {
				th.SleepFor(20 * sim.Millisecond) // the drivers are up
				b.c.SymbolTrace(km).Enter.Connect(func(*cpu.Symbol) { kmallocs++ })
				send(a, th, frames, &sent)
			})
			runUntil(t, k, sim.Second, func() bool { return len(direct)+len(up) == 40 })
			if d := cmp.Diff(want, direct); d != "" {
				t.Errorf("frames to the direct handler (-want +got):\n%s", d)
			}
			if d := cmp.Diff(wantUp, up); d != "" {
				t.Errorf("frames up through netif_rx (-want +got):\n%s", d)
			}
			if !inIRQ {
				t.Error("the direct handler ran outside the receive interrupt")
			}
			s := b.drv.Stats()
			if s.RxFrames != 40 || s.RxDirect != 30 || s.RxErrors != 0 {
				t.Errorf("driver: %d frames, %d direct, %d errors; want 40, 30, 0", s.RxFrames, s.RxDirect, s.RxErrors)
			}
			if n := b.ns.Stats().RxFrames; n != 10 {
				t.Errorf("%d frames through the receive softirq, want the 10 of the other type", n)
			}
			// A frame up through netif_rx takes a kernel buffer: a
			// replacement in the ring, or the copy out of an uncached
			// one; a direct frame none.
			if kmallocs != 10 {
				t.Errorf("%d kernel allocations on the receiver, want 10 (one per frame of the other type)", kmallocs)
			}
			noGuestErrors(t, a, b)
		})
	}
}
