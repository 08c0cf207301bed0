package machine_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/internal/machinetest"
	"simkron/machine"
)

var updateBenchGolden = flag.Bool("update-bench-golden", false, "rewrite testdata/bench-golden.txt")

// TestBenchmarkRunsGolden runs once the experiment of every benchmark
// (the workloads as the benchmarks cut them) at its fixed seed and pins
// its whole result: speed work must leave every one unchanged, as the
// golden test of cmd/simkron does for the configs.
func TestBenchmarkRunsGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every benchmark's experiment")
	}
	runs := []struct {
		name string
		exp  *machine.Experiment
	}{
		{"udp-1KiB-ne2000", udpBench1KiB(t, "../configs/udp-ne2000.toml")},
		{"udp-1KiB-r4000", udpBench1KiB(t, "../configs/udp-r4000.toml")},
		{"tcp-1KiB", tcpSweep1KiB(t)},
		{"ttcp-i486dx33", ttcpBulk(t, "", ttcpBenchWrites)},
		{"ttcp-r4000", ttcpBulk(t, "../configs/machines/r4000.toml", ttcpBenchWrites)},
		{"mac-1024", func() *machine.Experiment {
			e := loadMac(t, []int{1024}, 200)
			machinetest.Segments(e)[0].Pcap = false
			return e
		}()},
		{"membench-copy", membenchCopy(t)},
	}
	var got []string
	for _, r := range runs {
		res := machinetest.Execute(t, machinetest.Build(t, r.exp, machine.Options{}))
		res.Version = ""
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		got = append(got, r.name+" "+hex.EncodeToString(sum[:8]))
	}
	const file = "testdata/bench-golden.txt"
	if *updateBenchGolden {
		if err := os.WriteFile(file, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(strings.Split(strings.TrimSpace(string(data)), "\n"), got); diff != "" {
		t.Errorf("benchmark runs differ from %s (-want +got):\n%s", file, diff)
	}
}
