package machine

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/machine/part"
	"simkron/memory"
	"simkron/sim"
)

// How islandsOf splits the TOP study's experiment, and what keeps a run
// whole though its hosts are apart: a sequence of workloads, a sync
// quantum, a functional warm-up, an event trace, an observer.
func TestIslandsOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Experiment)
		opt  Options
		want [][]int
	}{
		{"apart", func(*Experiment) {}, Options{}, [][]int{{0, 1}, {2}}},
		{"then", func(e *Experiment) { e.Workload.Then = []string{"top"} }, Options{}, [][]int{{0, 1, 2}}},
		{"sync quantum", func(e *Experiment) { e.Info.SyncQuantum = 500 * sim.Nanosecond }, Options{}, [][]int{{0, 1, 2}}},
		{"functional warm-up", func(e *Experiment) {
			e.Info.Detail, e.Info.FullFrom = memory.DetailFunctional, sim.Millisecond
		}, Options{}, [][]int{{0, 1, 2}}},
		{"functional throughout", func(e *Experiment) { e.Info.Detail = memory.DetailFunctional }, Options{}, [][]int{{0, 1}, {2}}},
		{"trace", func(*Experiment) {}, Options{Trace: func(*sim.Event) {}}, [][]int{{0, 1, 2}}},
		{"whole", func(*Experiment) {}, Options{Whole: true}, [][]int{{0, 1, 2}}},
		{"one group", func(e *Experiment) {
			// The loopback PC on the segment too: one network joins all.
			e.Hosts[2].Bindings = e.Hosts[0].Bindings
		}, Options{}, [][]int{{0, 1, 2}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exp, err := LoadExperiment("../configs/top-lower.toml")
			if err != nil {
				t.Fatal(err)
			}
			tc.edit(exp)
			l := islandsOf(exp, tc.opt)
			got, owner := l.islands, l.owner
			if !equalIslands(got, tc.want) {
				t.Errorf("islands %v, want %v", got, tc.want)
			}
			if len(got) > 1 && (owner("ethernet", "lan0") != 0 || owner("ethernet", "nowhere") != 0) {
				t.Errorf("lan0 in island %d, want the pair's (0)", owner("ethernet", "lan0"))
			}
		})
	}
}

func equalIslands(a, b [][]int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				return false
			}
		}
	}
	return true
}

// What each network joins in the ATM study's experiment: each loop-back
// link its one host; the switch the hosts on its four ports, with the
// links; in the TOP study's, the segment its pair; a bridge to real hosts
// is paced, which keeps its run whole.
func TestJoins(t *testing.T) {
	for _, tc := range []struct {
		config, tech string
		want         []part.Join
		paced        bool
	}{
		{"atm-yesv2.toml", "atm", []part.Join{
			{Hosts: []int{0}, Elements: []string{"lo-ultrix-pio"}},
			{Hosts: []int{1}, Elements: []string{"lo-wanda-pio"}},
			{Hosts: []int{2}, Elements: []string{"lo-ultrix-dma"}},
			{Hosts: []int{3}, Elements: []string{"lo-wanda-dma"}},
			{Hosts: []int{4}, Elements: []string{"lo-wanda-aal5"}},
			{Hosts: []int{5}, Elements: []string{"lo-wanda-crc"}},
			{Hosts: []int{6}, Elements: []string{"lo-wanda-insert"}},
			{Hosts: []int{7}, Elements: []string{"lo-wanda-sort"}},
			{Hosts: []int{8, 9, 10, 11}, Elements: []string{"s1", "sw0", "s2", "r-soft", "r-sort"}},
		}, false},
		{"top-lower.toml", "ethernet", []part.Join{{Hosts: []int{0, 1}, Elements: []string{"lan0"}}}, false},
		{"bridge-ne2000.toml", "ethernet", []part.Join{{Hosts: []int{0}, Elements: []string{"lan0"}}}, true},
	} {
		exp, err := LoadExperiment("../configs/" + tc.config)
		if err != nil {
			t.Fatal(err)
		}
		for _, tech := range part.Technologies() {
			if tech.Name != tc.tech {
				continue
			}
			got, paced := tech.Joins(exp.tables(tech), exp.Hosts)
			if diff := cmp.Diff(tc.want, got); diff != "" || paced != tc.paced {
				t.Errorf("%s: %s joins (-want +got), paced %v:\n%s", tc.config, tc.tech, paced, diff)
			}
		}
	}
}
