package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"simkron/internal/charttest"
)

// A run with --trace writes the same result files, byte for byte, as one
// without: the trace only looks. Two traces of the same run are the same
// bytes.
func TestTraceLeavesResultsAlone(t *testing.T) {
	for _, c := range []struct{ config, window string }{
		{"../../configs/simos-study.toml", "message=udp:1024:3"},
		{"../../configs/atm-ip.toml", "message=tcp:16384:2"},
		{"../../configs/udp-ne2000.toml", "message=udp:8192:3"},
		{"testdata/small.toml", ""},
	} {
		plain := t.TempDir()
		if st, _, stderr := simkron(t, "run", "-q", "--out", plain, c.config); st != exitOK {
			t.Fatalf("%s: exit %d: %s", c.config, st, stderr)
		}
		var traces [][]byte
		for range 2 {
			dir := t.TempDir()
			trace := filepath.Join(t.TempDir(), "trace.json")
			args := []string{"run", "-q", "--out", dir, "--trace", trace, c.config}
			if c.window != "" {
				args = append(args, "--trace-window", c.window)
			}
			if st, _, stderr := simkron(t, args...); st != exitOK {
				t.Fatalf("%s with a trace: exit %d: %s", c.config, st, stderr)
			}
			want, got := readDir(t, plain), readDir(t, dir)
			if len(got) != len(want) {
				t.Errorf("%s: %d files with a trace, %d without", c.config, len(got), len(want))
			}
			for name, b := range want {
				if !bytes.Equal(got[name], b) {
					t.Errorf("%s: %s differs with a trace", c.config, name)
				}
			}
			data, err := os.ReadFile(trace)
			if err != nil {
				t.Fatal(err)
			}
			traces = append(traces, data)
		}
		if !bytes.Equal(traces[0], traces[1]) {
			t.Errorf("%s: two traces of one run differ", c.config)
		}
	}
}

// One UDP echo of the Linux/SimOS study, traced and drawn by simkron
// report as a waterfall: its SVG is readable (no text over another or off
// the canvas), shows both hosts, the wire and the four measurements, and
// the HTML page holds it.
func TestWaterfallOfOneEcho(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.json")
	if st, _, stderr := simkron(t, "run", "-q", "--out", dir, "--trace", trace, "--trace-window", "message=udp:1024:3", "../../configs/simos-study.toml"); st != exitOK {
		t.Fatalf("run: exit %d: %s", st, stderr)
	}
	result := filepath.Join(dir, "result.json")
	st, svg, stderr := simkron(t, "report", "--format", "svg", "--trace", trace, result)
	if st != exitOK {
		t.Fatalf("report: exit %d: %s", st, stderr)
	}
	problems, err := charttest.Problems([]byte(svg))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	for _, want := range []string{"message udp:1024:3", ">mipsA<", ">lan0<", ">mipsB<", "mipsA → mipsB", "mipsB → mipsA", ">send 3,967 cycles<", ">receive 5,850 cycles<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the waterfall lacks %q", want)
		}
	}
	st, page, stderr := simkron(t, "report", "--format", "html", "--trace", trace, result)
	if st != exitOK || !strings.Contains(page, `<section id="waterfall">`) {
		t.Errorf("report --format html --trace: exit %d, %s; a waterfall section: %v", st, stderr, strings.Contains(page, "waterfall"))
	}
}
