package machine_test

import (
	"math"
	"testing"

	"simkron/internal/machinetest"
	"simkron/machine"
)

// A [layers] table moves functions to other layers for the run: the
// receive split then shows the new layer and no cycles are lost.
func TestLayerOverride(t *testing.T) {
	run := func(layers map[string]string) map[string]float64 {
		exp, err := machine.LoadExperiment("../configs/udp-ne2000.toml")
		if err != nil {
			t.Fatal(err)
		}
		machinetest.Segments(exp)[0].Pcap = false
		udpParams(exp).Sizes = []int{1024}
		udpParams(exp).Messages = 3
		exp.Layers = layers
		r, err := machine.New(exp, machine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := r.Execute(machine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		by := map[string]float64{}
		for _, l := range udpRows(res)[0].RecvLayers {
			by[l.Layer] = l.Cycles
		}
		return by
	}
	before := run(nil)
	after := run(map[string]string{"ip_rcv": "IPIN", "udp_rcv": "IPIN"})
	if after["IPIN"] == 0 {
		t.Fatalf("no IPIN layer after the override: %v", after)
	}
	var sumBefore, sumAfter float64
	for _, v := range before {
		sumBefore += v
	}
	for _, v := range after {
		sumAfter += v
	}
	if math.Abs(sumBefore-sumAfter) > 1e-9*sumBefore {
		t.Errorf("total receive cycles changed from %.1f to %.1f", sumBefore, sumAfter)
	}
	if after["IP"] >= before["IP"] || after["UDP"] >= before["UDP"] {
		t.Errorf("IP and UDP should shrink: before %v, after %v", before, after)
	}

	exp, _ := machine.LoadExperiment("../configs/udp-ne2000.toml")
	exp.Layers = map[string]string{"no_such_function": "X"}
	if _, err := machine.New(exp, machine.Options{}); err == nil {
		t.Error("a layer for an unknown function was accepted")
	}
}
