package annotations_test

import (
	"encoding/json"
	"testing"

	"simkron/annotations"
	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/report"
	"simkron/stack/apps/udp"
)

const udpConfig = "../configs/udp-ne2000.toml"

// loadUDP loads the UDP sweep of configs/udp-ne2000.toml with the given
// sizes, measured messages and one warmup round trip, without capture.
func loadUDP(t testing.TB, sizes []int, messages int) *machine.Experiment {
	t.Helper()
	exp, err := machine.LoadExperiment(udpConfig)
	if err != nil {
		t.Fatal(err)
	}
	machinetest.Segments(exp)[0].Pcap = false
	udp := exp.Workload.Params["udp"].(*udp.Params)
	udp.Sizes = sizes
	udp.Messages = messages
	udp.Warmup = 1
	return exp
}

// run is one simulation, with the engine when scripts are given.
type run struct {
	r      *machine.Run
	res    *report.Result
	e      *annotations.Engine
	finish error // Finish's error
	trace  uint64
	events int
}

// simulate builds exp, installs a hashing trace listener of its own and,
// when scripts is not nil, an engine over them, and runs to the end.
func simulate(t testing.TB, exp *machine.Experiment, scripts []annotations.Source, dir string) *run {
	t.Helper()
	return simulateIn(t, exp, scripts, dir, nil)
}

// simulateWith is simulate with setup run on the engine before the run.
func simulateWith(t testing.TB, exp *machine.Experiment, scripts []annotations.Source, setup func(*annotations.Engine)) *run {
	t.Helper()
	return simulateIn(t, exp, scripts, "", setup)
}

func simulateIn(t testing.TB, exp *machine.Experiment, scripts []annotations.Source, dir string, setup func(*annotations.Engine)) *run {
	t.Helper()
	out := &run{}
	tr := machinetest.NewEventTrace()
	opt := machine.Options{Trace: tr.Fire}
	r, err := machine.New(exp, opt)
	if err != nil {
		t.Fatal(err)
	}
	out.r = r
	if scripts != nil {
		e, err := annotations.New(r.AnnotationTarget(), scripts, annotations.Options{Dir: dir})
		if err != nil {
			r.Close()
			t.Fatal(err)
		}
		if err := e.Install(); err != nil {
			t.Fatal(err)
		}
		if setup != nil {
			setup(e)
		}
		out.e = e
	}
	res, err := r.Execute(opt)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete {
		t.Fatalf("run incomplete: %s", res.Incomplete)
	}
	out.res = res
	if out.e != nil {
		out.finish = out.e.Finish()
	}
	out.trace, out.events = tr.Sum(), tr.Events
	return out
}

// script is one Source called name.
func script(name, text string) []annotations.Source {
	return []annotations.Source{{Name: name, Text: text}}
}

func resultJSON(t testing.TB, res *report.Result) string {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// bucketCount returns the count of bucket name, or -1.
func bucketCount(e *annotations.Engine, name string) int {
	for _, b := range e.Buckets() {
		if b.Name == name {
			return b.Count
		}
	}
	return -1
}
