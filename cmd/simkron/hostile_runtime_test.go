package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// zeroSizeResult is a result whose latency chart has a size of 0 beside
// one above it, and a workload chart on a log x axis with every x at 0
// and a lower bound of 0: what a log scale cannot place.
const zeroSizeResult = `{"schema": "simkron.result/3", "simkron_version": "x", "experiment": "x", "seed": 1,
 "complete": true, "sim_time_ps": 0, "events": 0, "hosts": [], "workload": "udp", "sections": [],
 "figures": {
  "breakdowns": [{"protocol": "UDP", "direction": "send", "size_name": "size", "unit": "message", "what": "x",
   "points": [{"size": 0, "layers": [{"layer": "UDP", "cycles": 5}]}, {"size": 64, "layers": [{"layer": "UDP", "cycles": 9}]}]}],
  "charts": [{"name": "medians", "caption": "x", "plots": [{"title": "send", "x_label": "size", "y_label": "cycles",
   "x_log": true, "x_min": 0, "lines": [{"label": "UDP", "points": [{"x": 0, "y": 1}, {"x": 0, "y": 2}]}]}]}]}}
`

// TestHostileRuntime: what happens once a run has started, and the
// report of its result.
func TestHostileRuntime(t *testing.T) {
	// drew checks that the report wrote file, saying each of want.
	drew := func(file string, want ...string) func(t *testing.T, dir, stdout, stderr string) {
		return func(t *testing.T, dir, stdout, stderr string) {
			data, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range want {
				if !strings.Contains(string(data), w) {
					t.Errorf("%s does not say %q", file, w)
				}
			}
		}
	}
	report := func(format, chart string, want ...string) hostileCase {
		args := []string{"report", "--format", format, "--output", "{dir}/chart." + format, "{dir}/result.json"}
		if chart != "" {
			args = append(args, "--chart", chart)
		}
		return hostileCase{item: 9, name: "a size of 0 on a log axis, " + format + " " + chart,
			files: map[string]string{"result.json": zeroSizeResult}, args: args,
			status: exitOK, check: drew("chart."+format, want...)}
	}
	cases := []hostileCase{
		report("svg", "latency", "1 point left out"),
		report("svg", "medians", "linear scale"),
		report("png", "latency"),
		report("png", "medians"),
		report("html", "", "1 point left out", "linear scale"),
	}
	runHostile(t, cases)
}
