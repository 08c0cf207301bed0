package machine_test

import (
	"runtime"
	"testing"

	"simkron/machine"
	"simkron/memory"
	"simkron/sim"
)

func smallExperiment() *machine.Experiment {
	exp := machine.DefaultExperiment()
	exp.Info.Name = "t"
	spec := machine.DefaultSpec()
	spec.Machine.Name = "m"
	spec.Cache.L1 = &memory.CacheParams{Size: 8 * sim.KiB, Line: 16, Assoc: 4, HitLatency: 1, WritePolicy: memory.WriteBack, WriteAllocate: true}
	exp.Hosts = []machine.HostSpec{{Name: "a", Machine: &spec}}
	membenchParams(&exp).MaxSize = 64 * sim.KiB
	return &exp
}

func TestMembenchRuns(t *testing.T) {
	exp := smallExperiment()
	r, err := machine.New(exp, machine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute(machine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete {
		t.Fatalf("incomplete: %s", res.Incomplete)
	}
	for _, row := range membenchRows(res) {
		t.Logf("%s %6d cold %8d warm %10.1f cpb %.2f L1 miss %.1f", row.Op, row.Size, row.ColdCycles, row.WarmCycles, row.CyclesPerByte, row.Levels[0].Misses)
	}
}

// A finished run leaves nothing running: every simulated context (a
// coroutine with a goroutine behind it) is ended, so repeated runs do not
// accumulate goroutines or memory.
func TestRunsReleaseTheirContexts(t *testing.T) {
	exp, err := machine.LoadExperiment("../configs/ne2000-mac.toml")
	if err != nil {
		t.Fatal(err)
	}
	macParams(exp).Sizes = []int{46}
	macParams(exp).Frames = 2
	run := func() {
		r, err := machine.New(exp, machine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Execute(machine.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	run()
	before := runtime.NumGoroutine()
	for range 10 {
		run()
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Errorf("goroutines grew from %d to %d over 10 runs", before, after)
	}
}
