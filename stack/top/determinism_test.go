package top_test

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"testing"

	"simkron/sim"
	"simkron/stack/osi/clnp"
	"simkron/stack/top"
)

// runTrace runs a CLNS exchange with a tap and an event-trace hash.
func runTrace(t *testing.T, observe bool) (top.Result, []byte, uint64) {
	r := build(t, top.LevelCLNS, 2000, 100, false, clnp.DefaultParams())
	var buf bytes.Buffer
	if err := r.seg.Tap(&buf); err != nil {
		t.Fatal(err)
	}
	h := fnv.New64a()
	r.k.Firing.Connect(func(ev *sim.Event) { fmt.Fprintf(h, "%d %s\n", ev.When(), ev.Name()) })
	if !observe {
		// Without the per-layer counting the run must not change.
		r.a.c.SetAttribution(false)
		r.b.c.SetAttribution(false)
	}
	res := r.run(t, 10*sim.Second)
	return res, buf.Bytes(), h.Sum64()
}

// The same configuration and seed give the same result, the same
// capture bytes and the same event trace; counting cycles by symbol and
// layer changes none of them.
func TestDeterminism(t *testing.T) {
	r1, p1, h1 := runTrace(t, true)
	r2, p2, h2 := runTrace(t, true)
	r3, p3, h3 := runTrace(t, false)
	if r1 != r2 || !bytes.Equal(p1, p2) || h1 != h2 {
		t.Errorf("two runs differ: %+v / %+v, pcap equal %v, trace %x / %x", r1, r2, bytes.Equal(p1, p2), h1, h2)
	}
	if r1 != r3 || !bytes.Equal(p1, p3) || h1 != h3 {
		t.Errorf("attribution changed the run: %+v / %+v, pcap equal %v, trace %x / %x", r1, r3, bytes.Equal(p1, p3), h1, h3)
	}
}

// BenchmarkCLNSRemote1024 reports simulated TOP messages per host second
// for the CLNS user at 1024 bytes between two PCs.
func BenchmarkCLNSRemote1024(b *testing.B) {
	const msgs = 2000
	var n int
	for b.Loop() {
		r := build(b, top.LevelCLNS, 1024, msgs, false, clnp.DefaultParams())
		r.run(b, 10*sim.Second)
		n += msgs
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "msgs/s")
}
