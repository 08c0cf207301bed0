package via

import (
	"strings"
	"testing"

	"simkron/stack/apps/latency"
)

// row makes a row of size n whose send and receive have the layers given
// (name, cycles, name, cycles, ...), each latency their sum.
func row(n int, send, recv []any) latency.Row {
	r := latency.Row{Size: n}
	sum := func(kv []any) ([]latency.LayerCost, latency.Summary) {
		var ls []latency.LayerCost
		var t float64
		for i := 0; i+1 < len(kv); i += 2 {
			c := float64(kv[i+1].(int))
			ls = append(ls, latency.LayerCost{Layer: kv[i].(string), Cycles: c})
			t += c
		}
		return ls, latency.Summary{N: 2, Mean: t, Median: t, Min: t, Max: t}
	}
	r.SendLayers, r.Send = sum(send)
	r.RecvLayers, r.Receive = sum(recv)
	return r
}

// Each statement's check says yes where the rows have the study's shape
// and no where they lack it; a statement whose protocol did not run is
// left out.
func TestLinuxSimOSStatements(t *testing.T) {
	sizes := []int{4, 1024, 8192, 32768}
	// The study's shapes, drawn to order.
	good := map[string][]latency.Row{}
	for _, n := range sizes {
		k := n / 4
		frag := 0 // IP's fragmentation above the MTU
		if n > 1500 {
			frag = 2 * k
		}
		good["udp"] = append(good["udp"], row(n, []any{"APPL", 70, "UDP", 110, "IP", 300 + 3*k + frag, "DEV", 200 + k, "DMA", 100 + k},
			[]any{"UDP", 100 + 2*k, "IP", 100 + 2*k, "DEV", 500 + k/2, "DMA", 50 + k/2, "KERN", 100 + k/4}))
		good["tcp"] = append(good["tcp"], row(n, []any{"APPL", 70, "TCP", 2000 + 6*k, "IP", 100, "DEV", 200 + k/2}, []any{"TCP", 3000 + 6*k}))
		good["via"] = append(good["via"], row(n, []any{"APPL", 100, "TRANS", 150 + k/8, "DEV", 150 + k/8, "DMA", 50 + 5*k}, []any{"TRANS", 300 + 4*k}))
	}
	for _, x := range linuxSimOS(good, 1500) {
		if !x.Holds || x.Model == "" {
			t.Errorf("the study's shape: %q does not hold (%s)", x.Claim, x.Model)
		}
	}
	if n := len(linuxSimOS(good, 1500)); n != 12 {
		t.Errorf("%d statements, want 12", n)
	}
	// The opposite shapes: each statement fails.
	bad := map[string][]latency.Row{}
	for _, n := range sizes {
		k := n / 4
		bad["udp"] = append(bad["udp"], row(n, []any{"APPL", 70 + k, "UDP", 5000, "IP", 300, "DEV", 200, "DMA", 1},
			[]any{"UDP", 100, "IP", 100, "DEV", 500 + 9*k, "KERN", 100}))
		bad["tcp"] = append(bad["tcp"], row(n, []any{"APPL", 70, "TCP", 100, "IP", 5000, "DEV", 200}, []any{"TCP", 100}))
		bad["via"] = append(bad["via"], row(n, []any{"APPL", 10, "TRANS", 400, "DEV", 400, "DMA", 1}, []any{"TRANS", 1000000}))
	}
	for _, x := range linuxSimOS(bad, 1500) {
		if x.Holds {
			t.Errorf("the opposite shape: %q holds (%s)", x.Claim, x.Model)
		}
	}
	// Without TCP its statements, and the ones comparing with it, go.
	delete(good, "tcp")
	for _, x := range linuxSimOS(good, 1500) {
		if strings.Contains(x.Claim, "TCP") {
			t.Errorf("a statement about TCP without TCP: %q", x.Claim)
		}
	}
}
