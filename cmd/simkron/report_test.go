package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"simkron/report"
	"simkron/report/shape"
)

// writeSweep writes a small result with a UDP sweep split by layer.
func writeSweep(t *testing.T, dir string) string {
	t.Helper()
	r := &report.Result{Header: report.Header{Schema: report.Schema, Version: "test", Experiment: "sweep", Seed: 5, Complete: true, Workload: "udp"}}
	bs := []shape.Breakdown{{Protocol: "UDP", Direction: shape.Send, SizeName: "size", Unit: "message"},
		{Protocol: "UDP", Direction: shape.Receive, SizeName: "size", Unit: "message"}}
	for i, size := range []int{4, 256, 4096} {
		f := float64(i + 1)
		bs[0].Points = append(bs[0].Points, shape.Point{Size: size,
			Latency: &shape.Summary{N: 4, Mean: 600 * f, Min: 500 * f, Median: 600 * f, Max: 700 * f},
			Layers:  []shape.LayerCycles{{Layer: "APPL", Cycles: 100 * f}, {Layer: "IP", Cycles: 200 * f}, {Layer: "UDP", Cycles: 300 * f}}})
		bs[1].Points = append(bs[1].Points, shape.Point{Size: size,
			Latency: &shape.Summary{N: 4, Mean: 900 * f, Min: 800 * f, Median: 900 * f, Max: 990 * f},
			Layers:  []shape.LayerCycles{{Layer: "DEV", Cycles: 500 * f}, {Layer: "KERN", Cycles: 400 * f}}})
	}
	r.Figures = shape.Figures{Breakdowns: bs, Tables: []shape.Table{shape.LayerTable(bs[0]), shape.LayerTable(bs[1])}}
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "result.json")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReport(t *testing.T) {
	dir := t.TempDir()
	res := writeSweep(t, dir)
	st, stdout, stderr := simkron(t, "report", res)
	if st != exitOK || !strings.Contains(stdout, "size  APPL  UDP   IP  total") {
		t.Fatalf("report exited %d: %s\n%s", st, stderr, stdout)
	}
	for _, f := range report.Formats {
		st, stdout, stderr := simkron(t, "report", "--format", string(f), res)
		if st != exitOK || stdout == "" {
			t.Fatalf("--format %s exited %d: %s", f, st, stderr)
		}
		// --output writes the same bytes to the file, and nothing else:
		// no temporary file is left behind.
		out := filepath.Join(dir, "out", "report."+string(f))
		os.MkdirAll(filepath.Dir(out), 0o755)
		st, stdout2, stderr := simkron(t, "report", res, "--format", string(f), "--output", out)
		if st != exitOK || stdout2 != "" {
			t.Fatalf("--format %s --output exited %d: %s%s", f, st, stdout2, stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if f != report.FormatPNG && !bytes.Equal(b, []byte(stdout)) {
			t.Errorf("%s: the file differs from standard output", f)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "out"))
	if len(entries) != len(report.Formats) {
		t.Errorf("%d files in the output directory, want %d", len(entries), len(report.Formats))
	}
	st, stdout, _ = simkron(t, "report", "--format", "svg", "--chart", "latency", res)
	if st != exitOK || !strings.Contains(stdout, ">receive</text>") || !strings.Contains(stdout, ">UDP</text>") {
		t.Errorf("--chart latency exited %d", st)
	}
}

// Bad input exits with status 2, names the file and writes nothing.
func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	res := writeSweep(t, dir)
	notResult := filepath.Join(dir, "config.json")
	os.WriteFile(notResult, []byte(`{"experiment": {"name": "x"}, "hosts": 3}`), 0o644)
	unknown := filepath.Join(dir, "unknown.json")
	b, _ := os.ReadFile(res)
	os.WriteFile(unknown, bytes.Replace(b, []byte(`"seed"`), []byte(`"sead"`), 1), 0o644)
	membench := filepath.Join(dir, "membench.json")
	os.WriteFile(membench, []byte(`{"schema": "`+report.Schema+`", "workload": "membench"}`), 0o644)
	out := filepath.Join(dir, "out.html")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{filepath.Join(dir, "missing.json")}, "missing.json: no such file"},
		{[]string{notResult}, notResult + ": not a simkron result"},
		{[]string{unknown}, unknown + `: not a simkron result: json: unknown field "sead"`},
		{[]string{"--format", "svg", membench}, membench + `: the result has no measurements for this chart (workload "membench")`},
		{[]string{"--format", "svg", "--chart", "layers", membench}, membench + ": the result has no measurements for this chart: layers needs measurements this result lacks"},
		{[]string{"--chart", "progress", res}, `unknown chart "progress" (this result has: layers|latency)`},
		{[]string{"--format", "pdf", res}, `unknown format "pdf"`},
		{[]string{"--chart", "pie", res}, `unknown chart "pie"`},
		{[]string{"--size", "10", res}, "WIDTHxHEIGHT"},
		{[]string{res, res}, "want exactly one RESULT.json"},
	} {
		args := append([]string{"report", "--format", "html", "--output", out}, tc.args...)
		st, stdout, stderr := simkron(t, args...)
		if st != exitUsage || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, st, stderr, tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: wrote %s", tc.args, out)
		}
	}
}
