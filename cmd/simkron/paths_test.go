package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// A result holds paths relative to the experiment file: a sweep given
// its config as typed here and the same sweep given the absolute path in
// shards, as on a cluster's nodes, merge to the same bytes, and neither
// names the absolute path (issue 37 item 11); so do a run's annotation
// scripts.
func TestResultPathsRelative(t *testing.T) {
	const rel = "../../configs/udp-r4000.toml"
	abs, err := filepath.Abs(rel)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-q", "--set", "host.inet.mtu=576,1500", "--set", "workload.udp.messages=3", "--set", "workload.udp.sizes=[1024]"}
	dir := t.TempDir()
	local := filepath.Join(dir, "local")
	if st, _, stderr := simkron(t, append([]string{"sweep", rel, "--out", local}, args...)...); st != exitOK {
		t.Fatalf("sweep exited %d: %s", st, stderr)
	}
	var shards []string
	for _, s := range []string{"0/2", "1/2"} {
		out := filepath.Join(dir, "shard-"+s[:1])
		if st, _, stderr := simkron(t, append([]string{"sweep", abs, "--shard", s, "--out", out}, args...)...); st != exitOK {
			t.Fatalf("shard %s exited %d: %s", s, st, stderr)
		}
		shards = append(shards, out)
	}
	all := filepath.Join(dir, "all")
	if st, _, stderr := simkron(t, append([]string{"merge", "-q", "--out", all}, shards...)...); st != exitOK {
		t.Fatalf("merge exited %d: %s", st, stderr)
	}
	for _, f := range []string{"result.json", "summary.txt"} {
		want, err1 := os.ReadFile(filepath.Join(local, f))
		got, err2 := os.ReadFile(filepath.Join(all, f))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the sweep merged from shards given the absolute path differs from the one run here", f)
		}
		if bytes.Contains(got, []byte(abs)) || bytes.Contains(want, []byte("configs/udp-r4000.toml")) {
			t.Errorf("%s names the config by a path, not by its name relative to itself", f)
		}
	}
	if !bytes.Contains(readFile(t, filepath.Join(local, "result.json")), []byte(`"config": "udp-r4000.toml"`)) {
		t.Error(`the merged result does not name its config "udp-r4000.toml"`)
	}

	// A run's annotation scripts, given relative and absolute.
	const cfg, script = rel, "../../configs/annotations/ip_output.tcl"
	absScript, _ := filepath.Abs(script)
	var results [][]byte
	for _, a := range [][2]string{{cfg, script}, {abs, absScript}} {
		out := t.TempDir()
		if st, _, stderr := simkron(t, "run", "-q", "--out", out, "--set", "workload.udp.messages=2", "--annotate", a[1], a[0]); st != exitOK {
			t.Fatalf("run %v exited %d: %s", a, st, stderr)
		}
		results = append(results, readFile(t, filepath.Join(out, "result.json")))
	}
	if !bytes.Equal(results[0], results[1]) {
		t.Error("a run with its config and script given by absolute paths differs from one given relative paths")
	}
	if !bytes.Contains(results[0], []byte(`"annotations/ip_output.tcl"`)) {
		t.Error("the result does not name the script relative to the experiment file")
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
