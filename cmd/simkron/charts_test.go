package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"simkron/internal/charttest"
	"simkron/report"
)

// chartSets shorten the experiments whose charts TestChartsReadable
// reads: fewer messages draw the same charts.
var chartSets = map[string][]string{
	"top-lower": {"workload.top.messages=100"},
	"top-upper": {"workload.top.messages=100"},
}

// Every chart of every experiment in configs/, and of the compare
// command's report, is readable: no two series of a chart share a colour
// (a series has one entry in its legend however many panels draw it), no
// two texts overlap and none runs off the canvas (charttest estimates
// each text's box from its font size and characters), at the default
// size and at the HTML report's.
func TestChartsReadable(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every experiment")
	}
	configs, err := filepath.Glob("../../configs/*.toml")
	if err != nil || len(configs) == 0 {
		t.Fatalf("no configs: %v", err)
	}
	type run struct {
		name string
		args []string
	}
	var runs []run
	for _, cfg := range configs {
		if bridged(cfg) {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(cfg), ".toml")
		args := []string{"run", "-q", cfg}
		for _, kv := range chartSets[name] {
			args = append(args, "--set", kv)
		}
		runs = append(runs, run{name, args})
	}
	runs = append(runs, run{"compare simos-mipsy", []string{"compare", "../../configs/machines/simos-mipsy.toml"}})
	charts := 0
	for _, r := range runs {
		dir := t.TempDir()
		if st, _, stderr := simkron(t, append(r.args, "--out", dir)...); st != exitOK {
			t.Fatalf("%s exited %d: %s", r.name, st, stderr)
		}
		res, err := report.ReadFile(filepath.Join(dir, "result.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range report.ChartNames(res) {
			charts++
			for _, size := range []report.ChartSize{{}, {Width: 1100}} {
				legend, err := report.ChartLegend(res, c, size)
				if err != nil {
					t.Fatalf("%s %s: %v", r.name, c, err)
				}
				colors := map[string]string{}
				for _, e := range legend {
					if other, ok := colors[e.Color]; ok {
						t.Errorf("%s %s: %q and %q are both %s", r.name, c, other, e.Label, e.Color)
					}
					colors[e.Color] = e.Label
				}
				var b bytes.Buffer
				if err := report.WriteSVG(&b, res, c, size); err != nil {
					t.Fatalf("%s %s: %v", r.name, c, err)
				}
				problems, err := charttest.Problems(b.Bytes())
				if err != nil {
					t.Fatalf("%s %s: %v", r.name, c, err)
				}
				for _, p := range problems {
					t.Errorf("%s %s at %dx%d: %s", r.name, c, size.Width, size.Height, p)
				}
			}
		}
	}
	if charts < 15 {
		t.Errorf("only %d charts read", charts)
	}
}
