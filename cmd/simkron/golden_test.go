package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/machine"
	"simkron/report"
)

// goldenSets are keys the golden test sets for configs that take long to
// run as they are (the TOP study's 10,000 messages a point): their
// outputs are pinned at fewer messages, every mechanism still in them.
var goldenSets = map[string][]string{
	"top-lower": {"workload.top.messages=1000"},
	"top-upper": {"workload.top.messages=500"},
}

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden.txt from this run (a change of results is its own commit that says why)")

const goldenFile = "testdata/golden.txt"

// TestGolden runs every experiment in configs/ at its own seed (with
// goldenSets) and pins
// what a user gets, byte for byte: every measured part of result.json
// (each top-level key on its own, so that a difference says where it
// is), the whole file, the summary, the table, the CSV, every capture,
// every chart the result has as SVG, and the HTML report. An
// optimisation must leave every hash as it is; a change of results is
// its own commit that says why and runs this test with -update-golden.
func TestGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every experiment")
	}
	configs, err := filepath.Glob("../../configs/*.toml")
	if err != nil || len(configs) == 0 {
		t.Fatalf("no configs: %v", err)
	}
	var got []string
	for _, cfg := range configs {
		name := strings.TrimSuffix(filepath.Base(cfg), ".toml")
		if bridged(cfg) {
			continue // bridged to real hosts: paced and non-deterministic, nothing to pin
		}
		dir := t.TempDir()
		args := []string{"run", "-q", "--out", dir, cfg}
		for _, kv := range goldenSets[name] {
			args = append(args, "--set", kv)
		}
		if st, _, stderr := simkron(t, args...); st != exitOK {
			t.Fatalf("%s exited %d: %s", cfg, st, stderr)
		}
		got = append(got, goldenHashes(t, name, dir)...)
	}
	if *updateGolden {
		if err := os.WriteFile(goldenFile, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outputs differ from %s (-want +got):\n%s", goldenFile, diff)
	}
}

// goldenHashes returns a line "CONFIG WHAT HASH" for each output of the
// run written to dir.
func goldenHashes(t *testing.T, name, dir string) []string {
	t.Helper()
	var lines []string
	add := func(what string, data []byte) {
		sum := sha256.Sum256(data)
		lines = append(lines, name+" "+what+" "+hex.EncodeToString(sum[:8]))
	}
	js, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	add("result.json", js)
	for _, kv := range resultParts(t, js) {
		add("result.json:"+kv[0], []byte(kv[1]))
	}
	for _, f := range []string{"summary.txt"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		add(f, b)
	}
	pcaps, _ := filepath.Glob(filepath.Join(dir, "*.pcap"))
	traces, _ := filepath.Glob(filepath.Join(dir, "*.cells")) // ATM cell traces
	for _, p := range append(pcaps, traces...) {
		b, _ := os.ReadFile(p)
		add(filepath.Base(p), b)
	}
	res, err := report.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	render := func(what string, o report.Options) {
		var b bytes.Buffer
		if err := report.Write(&b, res, o); err != nil {
			t.Fatalf("%s %s: %v", name, what, err)
		}
		add(what, b.Bytes())
	}
	render("report.table", report.Options{Format: report.FormatTable})
	render("report.csv", report.Options{Format: report.FormatCSV})
	render("report.html", report.Options{Format: report.FormatHTML})
	for _, c := range report.ChartNames(res) {
		render("chart-"+string(c)+".svg", report.Options{Format: report.FormatSVG, Chart: c})
	}
	return lines
}

// resultParts returns each top-level key of a result.json with its value
// in a canonical encoding (keys sorted), the schema and version left out:
// they say what wrote the file, not what was measured.
func resultParts(t *testing.T, js []byte) [][2]string {
	t.Helper()
	var top map[string]any
	if err := json.Unmarshal(js, &top); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range top {
		if k != "schema" && k != "simkron_version" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out [][2]string
	for _, k := range keys {
		b, err := json.Marshal(top[k])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, [2]string{k, string(b)})
	}
	return out
}

// TestGoldenSinceResult2 checks that the restructuring of the workloads
// into plug-ins (result schema simkron.result/2 to /3) changed no measured
// value: testdata/golden-result2.txt holds the hashes of every part of
// the /2 results, summaries, tables, CSV, captures and charts of the
// commit before it, and each is still what TestGolden pins. Only ping's
// table changed on purpose: it now shows ping's lines. A later change of
// results on purpose removes the lines it changes from that file.
func TestGoldenSinceResult2(t *testing.T) {
	old, err := os.ReadFile("testdata/golden-result2.txt")
	if err != nil {
		t.Fatal(err)
	}
	now, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(now), "\n") {
		have[l] = true
	}
	for _, l := range strings.Split(strings.TrimSuffix(string(old), "\n"), "\n") {
		if !have[l] {
			t.Errorf("%s: not in %s", l, goldenFile)
		}
	}
}

// bridged says whether the experiment file cfg bridges a segment to real
// hosts: such a run serves until a signal, so the tests that run every
// shipped config leave it out (the TestBridge tests run it).
func bridged(cfg string) bool {
	exp, err := machine.LoadExperiment(cfg)
	return err == nil && machine.RefuseBridges(exp, "") != nil
}
