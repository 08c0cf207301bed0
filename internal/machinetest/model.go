package machinetest

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"simkron/report"
)

// SimulatorCounters are the result's counts of the simulator's own work
// that depend on how the hosts share a scheduler (package machine's
// islands): every other byte of a result is the same whole and in
// islands.
var SimulatorCounters = []string{".syncs_fast", ".syncs_slow", ".waits_nested"}

// ModelOnly returns res as JSON without the simulator's own counts: the
// events and SimulatorCounters.
func ModelOnly(t testing.TB, res *report.Result) string {
	t.Helper()
	c := *res
	c.Events = 0
	c.Hosts = slices.Clone(c.Hosts)
	for i := range c.Hosts {
		c.Hosts[i].Counters = slices.DeleteFunc(slices.Clone(c.Hosts[i].Counters), func(k report.Counter) bool {
			return slices.ContainsFunc(SimulatorCounters, func(s string) bool { return strings.HasSuffix(k.Name, s) })
		})
	}
	b, err := json.MarshalIndent(&c, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
