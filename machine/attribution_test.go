package machine_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/report"
)

// sweep runs a short UDP sweep with the built-in layer attribution on or
// off and returns the result and a hash of the event trace (time and name
// of every event).
func sweep(t testing.TB, attribution bool, messages int) (*report.Result, uint64) {
	exp, err := machine.LoadExperiment("../configs/udp-ne2000.toml")
	if err != nil {
		t.Fatal(err)
	}
	machinetest.Segments(exp)[0].Pcap = false
	udpParams(exp).Sizes = []int{4, 1024, 4096}
	udpParams(exp).Messages = messages
	tr := machinetest.NewEventTrace()
	opt := machine.Options{Trace: tr.Fire}
	r, err := machine.New(exp, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range r.Hosts {
		host.CPU.SetAttribution(attribution)
	}
	res, err := r.Execute(opt)
	if err != nil || !res.Complete {
		t.Fatal(err, res.Incomplete)
	}
	return res, tr.Sum()
}

// The built-in attribution only counts: with it off the event trace and
// every latency are the same; only the layer splits are empty.
func TestAttributionDoesNotChangeTheRun(t *testing.T) {
	on, hashOn := sweep(t, true, 5)
	off, hashOff := sweep(t, false, 5)
	if hashOn != hashOff || on.Events != off.Events || on.SimTimePS != off.SimTimePS {
		t.Errorf("trace %x (%d events) with attribution, %x (%d) without", hashOn, on.Events, hashOff, off.Events)
	}
	for i := range udpRows(on) {
		a, b := udpRows(on)[i], udpRows(off)[i]
		if diff := cmp.Diff([]any{a.Send, a.Receive, a.RTTMicros}, []any{b.Send, b.Receive, b.RTTMicros}); diff != "" {
			t.Errorf("size %d: latencies differ with attribution off (-on +off):\n%s", a.Size, diff)
		}
		if len(a.SendLayers) == 0 {
			t.Errorf("size %d: no send layers with attribution on", a.Size)
		}
	}
}

// BenchmarkAttribution runs the sweep with the built-in layer attribution
// on and off: the difference is what attributing every cycle costs.
func BenchmarkAttribution(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				sweep(b, on, 20)
			}
		})
	}
}
