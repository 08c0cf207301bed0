package machine_test

import (
	"testing"

	"simkron/machine"
	"simkron/sim"
)

// BenchmarkMembenchCopy reports how many simulated CPU cycles of the copy
// workload run per host second, on the R4000-class machine of the
// quickstart (64 B to 1 MiB, every cache level exercised).
func BenchmarkMembenchCopy(b *testing.B) {
	exp := membenchCopy(b)
	var cycles int64
	b.ReportAllocs()
	for b.Loop() {
		r, err := machine.New(exp, machine.Options{})
		if err != nil {
			b.Fatal(err)
		}
		res, err := r.Execute(machine.Options{})
		if err != nil || !res.Complete {
			b.Fatal(err, res.Incomplete)
		}
		cycles += res.Hosts[0].CPU.Cycles - res.Hosts[0].CPU.IdleCycles
	}
	b.ReportMetric(float64(cycles)/b.Elapsed().Seconds(), "sim-cycles/s")
}

// membenchCopy is the quickstart's copy loop on its R4000-class host, 64 B
// to 1 MiB.
func membenchCopy(tb testing.TB) *machine.Experiment {
	tb.Helper()
	exp, err := machine.LoadExperiment("../configs/quickstart.toml")
	if err != nil {
		tb.Fatal(err)
	}
	exp.Hosts = exp.Hosts[1:] // mips
	membenchParams(exp).Ops = []string{"copy"}
	membenchParams(exp).MaxSize = sim.MiB
	return exp
}
