package machine_test

import (
	"testing"

	"simkron/internal/machinetest"
	"simkron/machine"
)

// Hosts joined only by a switch run as linked islands, each on its own
// clock: what they simulate is what the whole run simulates, byte for
// byte but for the simulator's own counts, with a third host on the
// switch that runs no program, when stop_at comes first, when the switch
// is the SimOS study's gigabit one, and when the receiver hears nothing
// and the transfer fails; and a run is the same at any number of threads
// and GOMAXPROCS.
func TestLinkedSameAsWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ttcp transfers a few times over")
	}
	for _, tc := range []struct {
		name     string
		config   string
		edit     func(*machinetest.Builder)
		islands  int
		complete bool
	}{
		{"R4000s at 10 Mbit/s", "ttcp-switch-r4000", func(*machinetest.Builder) {}, 2, true},
		{"Mipsys at 100 Mbit/s", "ttcp-switch-simos", func(*machinetest.Builder) {}, 2, true},
		{"Mipsys at 1 Gbit/s", "ttcp-switch-simos", func(b *machinetest.Builder) { b.Set("segment[0].rate", "1Gbps") }, 2, true},
		{"a third host idle", "ttcp-switch-r4000", func(b *machinetest.Builder) {
			b.Append("host", map[string]any{"name": "r4kC", "machine": "../machines/r4000.toml",
				"nic": []any{map[string]any{"device": "nic0", "segment": "sw0", "mac": "02:00:00:00:00:0c", "ip": "10.0.0.3"}}})
		}, 3, true},
		{"stop_at first", "ttcp-switch-simos", func(b *machinetest.Builder) { b.Set("experiment.stop_at", "3ms") }, 2, false},
		{"the receiver hears nothing", "ttcp-switch-r4000", func(b *machinetest.Builder) {
			b.Set("host[1].nic[0].faults", map[string]any{"drop": 1.0})
		}, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := machinetest.Edit(t, machinetest.Config("examples/"+tc.config+".toml")).
				Set("workload.ttcp.case[0].writes", 60).Set("experiment.linked", true)
			tc.edit(b)
			if got := sameAsWhole(t, b.Experiment(), tc.islands, tc.complete); got.windows == 0 {
				t.Errorf("no linked window counted")
			}
		})
	}
}

// Which hosts run as linked islands: those joined only by a switch
// without a capture, when the experiment asks (linked) and the workload
// lets its hosts run apart; a shared segment, a captured switch, or an
// experiment that does not ask keeps them together.
func TestLinkedIslandsOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*machinetest.Builder)
		want int
	}{
		{"asked", func(*machinetest.Builder) {}, 2},
		{"not asked", func(b *machinetest.Builder) { b.Set("experiment.linked", false) }, 1},
		{"a shared segment", func(b *machinetest.Builder) { b.Set("segment[0].mode", "shared") }, 1},
		{"a captured switch", func(b *machinetest.Builder) { b.Set("segment[0].pcap", true) }, 1},
		{"a workload whose hosts share state", func(b *machinetest.Builder) {
			b.Set("workload.type", "udp").Delete("workload.ttcp").Set("workload.udp", map[string]any{"client": "r4kA", "server": "r4kB", "sizes": []any{64}})
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := machinetest.Edit(t, machinetest.Config("examples/ttcp-switch-r4000.toml")).Set("experiment.linked", true)
			tc.edit(b)
			r, err := machine.New(b.Experiment(), machine.Options{NoCapture: true})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.Islands() != tc.want {
				t.Errorf("%d islands, want %d", r.Islands(), tc.want)
			}
		})
	}
}

// Each linked island's host holds its own scheduler and no other: its
// instance of the switch holds only its own stations (item 3: no model
// reads another host's clock; what crosses goes through the switch as a
// message with its time). The race detector sees what reflection cannot
// (closures) when the islands run at once: go test -race.
func TestLinkedHoldOwnScheduler(t *testing.T) {
	exp := machinetest.Edit(t, machinetest.Config("examples/ttcp-switch-r4000.toml")).Set("experiment.linked", true).Experiment()
	r, err := machine.New(exp, machine.Options{NoCapture: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Islands() != 2 || r.Hosts[0].Sched == r.Hosts[1].Sched {
		t.Fatalf("%d islands, the hosts on schedulers %p and %p: want one each", r.Islands(), r.Hosts[0].Sched, r.Hosts[1].Sched)
	}
	holdOwnScheduler(t, r.Hosts)
}
