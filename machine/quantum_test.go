package machine_test

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"simkron/memory"
	"simkron/sim"
)

// quantumBound is the largest error TestSyncQuantumError accepts, against
// exact full detail, on a size's median send or receive latency or mean
// round trip.
const quantumBound = 0.02

// quantumConfigs are the sweeps whose error with a sync quantum
// docs/detail-modes.md states, each with the quantum it is measured at:
// 20 us for the NE2000 and ATM hosts, 500 ns for the study's 1 GHz hosts
// and 1200 MB/s descriptor NIC (the fastest thing their devices do).
var quantumConfigs = []struct {
	config   string
	sections []string
	quantum  sim.Time
}{
	{"udp-ne2000", []string{"udp"}, 20 * sim.Microsecond},
	{"udp-r4000", []string{"udp"}, 20 * sim.Microsecond},
	{"tcp-ne2000", []string{"tcp", "udp"}, 20 * sim.Microsecond},
	{"tcp-r4000", []string{"tcp", "udp"}, 20 * sim.Microsecond},
	{"atm-ip", []string{"udp", "tcp"}, 20 * sim.Microsecond},
	{"simos-study", []string{"udp", "tcp"}, 500 * sim.Nanosecond},
}

// TestSyncQuantumError runs UDP/TCP sweeps in full detail exactly and with
// a sync quantum: each size's medians and round trip stay within
// quantumBound, the hosts hand over less often (fewer slow Syncs, some
// accesses made early), and the result says which quantum it had.
func TestSyncQuantumError(t *testing.T) {
	for _, c := range quantumConfigs {
		exact, re := runSweep(t, loadSweep(t, c.config, memory.DetailFull))
		exp := loadSweep(t, c.config, memory.DetailFull)
		exp.Info.SyncQuantum = c.quantum
		q, rq := runSweep(t, exp)
		if want := "full, sync quantum " + c.quantum.String(); q.Detail != want {
			t.Errorf("%s: detail %q, want %q", c.config, q.Detail, want)
		}
		var slowExact, slowQ, early uint64
		for i := range re.Hosts {
			slowExact += re.Hosts[i].CPU.Stats().SyncsSlow
			slowQ += rq.Hosts[i].CPU.Stats().SyncsSlow
			early += rq.Hosts[i].CPU.Stats().SyncsEarly
		}
		t.Logf("%s: slow syncs %d exact, %d with a %v quantum (%d accesses early); events %d and %d", c.config, slowExact, slowQ, c.quantum, early, exact.Events, q.Events)
		if slowQ >= slowExact || early == 0 {
			t.Errorf("%s: slow syncs %d exact and %d with the quantum, %d accesses early: the quantum saved nothing", c.config, slowExact, slowQ, early)
		}
		check := func(what string, e, _ float64) {
			if math.Abs(e) > quantumBound {
				t.Errorf("%s: the sync quantum is off by %+.2f%%, more than %.0f%%", what, 100*e, 100*quantumBound)
			}
		}
		worst, at := errorTable(t, c.config, "a sync quantum of "+c.quantum.String(), c.sections, exact, q, check, quantumBound)
		t.Logf("%s: largest error %+.2f%% (%s)", c.config, 100*worst, at)
	}
}

// A run with a sync quantum is as deterministic as an exact one: the same
// config and seed give the same result, byte for byte.
func TestSyncQuantumDeterministic(t *testing.T) {
	var out [2][]byte
	for i := range out {
		exp := loadSweep(t, "tcp-ne2000", memory.DetailFunctional)
		exp.Info.SyncQuantum = 50 * sim.Microsecond
		res, _ := runSweep(t, exp)
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Error("two runs with a sync quantum gave different results")
	}
}
