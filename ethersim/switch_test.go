package ethersim_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/ethersim"
	"simkron/sim"
)

func switchParams() ethersim.SegmentParams {
	p := ethersim.DefaultSegmentParams()
	p.Mode = ethersim.ModeSwitch
	return p
}

func TestSwitchLearningAndFlooding(t *testing.T) {
	r := newRig(t, 1, switchParams())
	for _, n := range []string{"a", "b", "c"} {
		r.attach(n, ethersim.FaultParams{})
	}
	group := ethersim.MAC{0x01, 0x00, 0x5e, 0, 0, 1}
	steps := []struct {
		what     string
		from     string
		src, dst ethersim.MAC
		wantBy   []string
	}{
		{"unknown destination floods", "a", mac(1), mac(2), []string{"b", "c"}},
		{"learned destination", "b", mac(2), mac(1), []string{"a"}},
		{"learned from the first frame", "a", mac(1), mac(2), []string{"b"}},
		{"broadcast floods", "c", mac(3), ethersim.Broadcast, []string{"a", "b"}},
		{"multicast floods", "a", mac(1), group, []string{"b", "c"}},
		{"destination on the ingress port is filtered", "a", mac(1), mac(1), nil},
		{"c learned from its broadcast", "b", mac(2), mac(3), []string{"c"}},
		{"never-seen destination floods", "c", mac(3), mac(9), []string{"a", "b"}},
		{"a multicast source is not learned", "b", group, mac(2), nil},
	}
	for i, s := range steps {
		at := sim.Time(i) * sim.Millisecond
		r.send(at, s.from, frame(s.dst, s.src, 64, uint32(i)))
		r.k.RunUntil(at + sim.Millisecond - 1)
		var by []string
		for _, x := range r.l.rx {
			by = append(by, x.By)
		}
		r.l.rx = nil
		if diff := cmp.Diff(s.wantBy, by); diff != "" {
			t.Errorf("step %d (%s): receivers (-want +got):\n%s", i, s.what, diff)
		}
	}
	// The last frame (to b, from b's port, with a group source) is
	// filtered: b's own address is known on b's port.
	want := ethersim.SegmentStats{Frames: 9, Bytes: 9 * 64, Forwarded: 3, Flooded: 4, Filtered: 2, BusyTime: 9 * wire(64)}
	if diff := cmp.Diff(want, r.seg.Stats()); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
}

func TestSwitchTiming(t *testing.T) {
	p := switchParams()
	r := newRig(t, 1, p)
	r.attach("a", ethersim.FaultParams{})
	r.attach("b", ethersim.FaultParams{})
	r.attach("c", ethersim.FaultParams{})
	r.send(0, "a", frame(mac(2), mac(1), 64, 1))
	r.k.Run()
	// Store and forward: the whole frame to the switch, P, the lookup,
	// the whole frame again from the port, P.
	at := 2*wire(64) + 2*p.Propagation + p.SwitchLatency
	want := []rxAt{{at, "b", 1, 64}, {at, "c", 1, 64}}
	if diff := cmp.Diff(want, rxTimes(r.l)); diff != "" {
		t.Errorf("receptions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]txDone{{wire(64), "a", ethersim.TxStatus{OK: true}}}, r.l.done); diff != "" {
		t.Errorf("completions (-want +got):\n%s", diff)
	}
}

// stream makes name send count frames of n bytes to dst back to back,
// starting at start, with sequence numbers from seq0.
func (r *rig) stream(name string, src, dst ethersim.MAC, n, count int, seq0 uint32, start sim.Time) {
	a := r.att[name]
	sent := 0
	sendNext := func() {
		if sent < count {
			if err := a.Transmit(frame(dst, src, n, seq0+uint32(sent))); err != nil {
				r.t.Fatal(err)
			}
			sent++
		}
	}
	a.OnTxDone = func(ethersim.TxStatus) { sendNext() }
	r.at(start, sendNext)
}

func TestSwitchFullDuplex(t *testing.T) {
	p := switchParams()
	r := newRig(t, 1, p)
	r.attach("a", ethersim.FaultParams{})
	r.attach("b", ethersim.FaultParams{})
	// Teach the switch both addresses first.
	r.send(0, "a", frame(ethersim.Broadcast, mac(1), 64, 0))
	r.send(0, "b", frame(ethersim.Broadcast, mac(2), 64, 0))
	r.k.Run()
	r.l.rx = nil
	const count, n = 10, 1518
	t0 := sim.Millisecond
	r.stream("a", mac(1), mac(2), n, count, 100, t0)
	r.stream("b", mac(2), mac(1), n, count, 200, t0)
	r.k.Run()
	var want []rxAt
	for i := range count {
		start := t0 + sim.Time(i)*(wire(n)+ifg)
		at := start + 2*wire(n) + 2*p.Propagation + p.SwitchLatency
		want = append(want, rxAt{at, "b", 100 + uint32(i), n}, rxAt{at, "a", 200 + uint32(i), n})
	}
	if diff := cmp.Diff(want, rxTimes(r.l)); diff != "" {
		t.Errorf("receptions (-want +got):\n%s", diff)
	}
	if st := r.seg.Stats(); st.Collisions != 0 || st.Forwarded != 2*count {
		t.Errorf("stats %+v", st)
	}
}

func TestSwitchOutputQueue(t *testing.T) {
	p := switchParams()
	r := newRig(t, 1, p)
	r.attach("a", ethersim.FaultParams{})
	r.attach("b", ethersim.FaultParams{})
	c := r.attach("c", ethersim.FaultParams{})
	r.send(0, "c", frame(ethersim.Broadcast, mac(3), 64, 0))
	r.k.Run()
	r.l.rx = nil
	// a and b both send 5 full frames to c: the port to c is the
	// bottleneck, so frames queue and leave back to back, a's first at
	// each instant (its frame reached the switch first).
	const count, n = 5, 1518
	t0 := sim.Millisecond
	r.stream("a", mac(1), mac(3), n, count, 100, t0)
	r.stream("b", mac(2), mac(3), n, count, 200, t0)
	r.k.Run()
	first := t0 + wire(n) + p.Propagation + p.SwitchLatency // both arrive and are looked up
	var want []rxAt
	for i := range 2 * count {
		seq := uint32(100 + i/2)
		if i%2 == 1 {
			seq = uint32(200 + i/2)
		}
		at := first + sim.Time(i)*(wire(n)+ifg) + wire(n) + p.Propagation
		want = append(want, rxAt{at, "c", seq, n})
	}
	if diff := cmp.Diff(want, rxTimes(r.l)); diff != "" {
		t.Errorf("receptions (-want +got):\n%s", diff)
	}
	// Two frames arrive per frame time and one leaves, so the backlog
	// grows by one per pair; it peaks when the last pair arrives, at the
	// instant the port starts its next frame: what arrives from a link
	// comes first at an instant (sim.PriorityWire), so that frame is
	// still queued then.
	if got := c.Stats().QueuePeak; got != count+1 {
		t.Errorf("QueuePeak = %d, want %d", got, count+1)
	}
}
