package machine_test

import (
	"strings"
	"testing"

	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/memory"
)

// The steady state allocates nothing: a UDP sweep of 1 KiB messages makes
// exactly as many Go allocations with 400 round trips as with 200 (what
// differs is only the sample slices, which grow by doubling: a few). Each
// configuration of BenchmarkUDPRoundTrips1KiB is checked.
func TestNoAllocationPerRoundTrip(t *testing.T) {
	for _, cfg := range []string{"udp-ne2000", "udp-r4000", "udp-ne2000-functional", "udp-r4000-functional"} {
		file, functional := strings.CutSuffix(cfg, "-functional")
		allocs := func(messages int) float64 {
			exp, err := machine.LoadExperiment("../configs/" + file + ".toml")
			if err != nil {
				t.Fatal(err)
			}
			if functional {
				exp.Info.Detail = memory.DetailFunctional
			}
			machinetest.Segments(exp)[0].Pcap = false
			udpParams(exp).Sizes = []int{1024}
			udpParams(exp).Warmup = 1
			udpParams(exp).Messages = messages
			return testing.AllocsPerRun(1, func() {
				r, err := machine.New(exp, machine.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := r.Execute(machine.Options{}); err != nil {
					t.Fatal(err)
				}
			})
		}
		a, b := allocs(200), allocs(400)
		perTrip := (b - a) / 200
		t.Logf("%s: %.0f allocations with 200 round trips, %.0f with 400: %.3f per round trip", cfg, a, b, perTrip)
		if perTrip > 0.05 {
			t.Errorf("%s: %.2f allocations per round trip in the steady state, want 0", cfg, perTrip)
		}
	}
}
