package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sweepArgs is a small grid: 3 MTUs x 2 message sizes of the R4000s' UDP
// sweep, 5 round trips each.
var sweepArgs = []string{"sweep", "-q", "../../configs/udp-r4000.toml",
	"--set", "host.inet.mtu=576,1000,1500", "--set", "workload.udp.sizes=[1024],[8192]", "--set", "workload.udp.messages=5"}

func runSweep(t *testing.T, extra ...string) (int, string, string) {
	t.Helper()
	return simkron(t, append(append([]string(nil), sweepArgs...), extra...)...)
}

// The merged result is the same bytes with one worker or two, and merged
// from four shards given in any order; a resumed sweep runs nothing again.
func TestSweepDeterminism(t *testing.T) {
	dir := t.TempDir()
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	one, two := filepath.Join(dir, "j1"), filepath.Join(dir, "j2")
	if st, _, stderr := runSweep(t, "-j", "1", "--out", one); st != exitOK {
		t.Fatalf("sweep -j 1 exited %d: %s", st, stderr)
	}
	if st, _, stderr := runSweep(t, "-j", "2", "--out", two); st != exitOK {
		t.Fatalf("sweep -j 2 exited %d: %s", st, stderr)
	}
	want := read(filepath.Join(one, "result.json"))
	if !bytes.Equal(want, read(filepath.Join(two, "result.json"))) {
		t.Error("-j 1 and -j 2 merged differently")
	}
	var shards []string
	for i := range 4 {
		s := filepath.Join(dir, "s"+string(rune('0'+i)))
		if st, stdout, stderr := runSweep(t, "--shard", string(rune('0'+i))+"/4", "--out", s); st != exitOK || !strings.Contains(stdout, "merge every shard") {
			t.Fatalf("shard %d exited %d: %s%s", i, st, stdout, stderr)
		}
		shards = append(shards, s)
	}
	all := filepath.Join(dir, "all")
	if st, _, stderr := simkron(t, "merge", "-q", shards[2], shards[0], shards[3], shards[1], "--out", all); st != exitOK {
		t.Fatalf("merge exited %d: %s", st, stderr)
	}
	if !bytes.Equal(want, read(filepath.Join(all, "result.json"))) {
		t.Error("the four shards merged differently from the whole sweep")
	}
	// The merged tables have the swept keys in front.
	summary := string(read(filepath.Join(one, "summary.txt")))
	if !strings.Contains(summary, "host.inet.mtu  workload.udp.sizes  workload.udp.messages  size") {
		t.Errorf("merged table lacks the swept keys:\n%s", summary)
	}
	// A resume of a whole sweep runs no point again.
	before, _ := os.Stat(filepath.Join(one, "points", "000003.json"))
	if st, _, stderr := runSweep(t, "--resume", "--out", one); st != exitOK {
		t.Fatalf("resume exited %d: %s", st, stderr)
	}
	after, _ := os.Stat(filepath.Join(one, "points", "000003.json"))
	if !before.ModTime().Equal(after.ModTime()) || !bytes.Equal(want, read(filepath.Join(one, "result.json"))) {
		t.Error("resume ran a point again or changed the result")
	}
	// report renders the merged result, the swept key chart among its charts.
	if st, out, stderr := simkron(t, "report", "--format", "html", filepath.Join(one, "result.json")); st != exitOK || !strings.Contains(out, "chart-layers") {
		t.Errorf("report of the merged result exited %d: %s", st, stderr)
	}
	one1 := filepath.Join(dir, "mtu")
	if st, _, stderr := simkron(t, "sweep", "-q", "../../configs/udp-r4000.toml", "--set", "host.inet.mtu=576,1500",
		"--set", "workload.udp.messages=3", "--out", one1); st != exitOK {
		t.Fatalf("one-axis sweep exited %d: %s", st, stderr)
	}
	if st, out, _ := simkron(t, "report", "--format", "svg", "--chart", "sweep", filepath.Join(one1, "result.json")); st != exitOK || !strings.Contains(out, "against host.inet.mtu") {
		t.Errorf("no sweep chart for one numeric key (exit %d)", st)
	}
}

// Bad input is an error naming what is wrong, exit 2, nothing written.
func TestSweepBadInput(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other")
	if st, _, stderr := simkron(t, "sweep", "-q", "../../configs/udp-r4000.toml", "--set", "workload.udp.messages=2,3", "--out", other); st != exitOK {
		t.Fatalf("sweep exited %d: %s", st, stderr)
	}
	shard := filepath.Join(dir, "shard")
	if st, _, stderr := runSweep(t, "--shard", "0/2", "--out", shard); st != exitOK {
		t.Fatalf("shard exited %d: %s", st, stderr)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "../../configs/udp-r4000.toml", "--set", "host.inet.mtux=576,1500"}, `--set host.inet.mtux=576: host[0].inet.mtux: unknown key (did you mean "mtu"?)`},
		{[]string{"sweep", "../../configs/udp-r4000.toml", "--set", "workload.udp.messages=ten"}, `--set workload.udp.messages=ten: workload.udp.messages: expected an integer, got string "ten"`},
		{[]string{"sweep", "../../configs/udp-r4000.toml", "--set", "workload.udp.messages=0,5"}, "workload.udp.messages: 0 is below the minimum 1"},
		{[]string{"sweep", "../../configs/udp-r4000.toml"}, "the grid is empty"},
		{[]string{"sweep", "../../configs/udp-r4000.toml", "--set", "workload.udp.messages=2", "--shard", "4/4"}, `--shard "4/4": i must lie in 0..3`},
		{[]string{"sweep", "../../configs/udp-r4000.toml", "--set", "workload.udp.messages="}, "an empty value"},
		{[]string{"merge", other, shard}, "is a sweep of another grid"},
		{[]string{"merge", shard}, "points are missing"},
	} {
		out := filepath.Join(dir, "out")
		st, stdout, stderr := simkron(t, append(tc.args, "--out", out)...)
		if st != exitUsage || !strings.Contains(stderr, tc.want) || stdout != "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, st, stderr, tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: wrote %s", tc.args, out)
			os.RemoveAll(out)
		}
	}
	// A manifest of another schema is refused with what it is.
	m := filepath.Join(shard, "sweep.json")
	b, _ := os.ReadFile(m)
	os.WriteFile(m, bytes.Replace(b, []byte("simkron.sweep/1"), []byte("simkron.sweep/0"), 1), 0o644)
	if st, _, stderr := simkron(t, "merge", shard, "--out", filepath.Join(dir, "o2")); st != exitUsage || !strings.Contains(stderr, `a "simkron.sweep/0" manifest`) {
		t.Errorf("old manifest: exit %d, %q", st, stderr)
	}
}
