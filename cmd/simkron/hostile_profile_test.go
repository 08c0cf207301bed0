package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// --cycles-profile FILE (issue "see one message cross two machines",
// item 2): a file that cannot be written, or that names a folder or a
// file the run writes besides, is refused before anything runs, exit 2,
// naming the flag and nothing written; a run that fails still writes
// the profile of what ran.
func TestHostileProfile(t *testing.T) {
	const udp = "configs/udp-ne2000.toml"
	small := []string{"--set", "workload.udp.messages=1", "--set", "workload.udp.warmup=0", "--set", "workload.udp.sizes=[4]"}
	run := func(args ...string) []string {
		return append(append([]string{"run", "-q", "--out", "{out}"}, small...), append(args, udp)...)
	}
	// noFile checks that no profile was left at path (nor a temporary
	// file beside it).
	noFile := func(path string) func(t *testing.T, dir, stdout, stderr string) {
		return func(t *testing.T, dir, stdout, stderr string) {
			p := strings.ReplaceAll(path, "{dir}", dir)
			if _, err := os.Stat(p); err == nil {
				t.Errorf("%s was written", p)
			}
			if tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(p), ".*.tmp")); len(tmps) > 0 {
				t.Errorf("temporary files left: %v", tmps)
			}
		}
	}
	// profiled checks that path holds a profile pprof reads, with cycles
	// of both hosts and, when comment is set, a comment saying it.
	profiled := func(path, comment string) func(t *testing.T, dir, stdout, stderr string) {
		return func(t *testing.T, dir, stdout, stderr string) {
			f, err := os.Open(strings.ReplaceAll(path, "{dir}", dir))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			p, err := profile.Parse(f)
			if err != nil {
				t.Fatal(err)
			}
			hosts := map[string]int64{}
			for _, s := range p.Sample {
				hosts[s.Label["host"][0]] += s.Value[0]
			}
			if hosts["pcA"] == 0 || hosts["pcB"] == 0 {
				t.Errorf("cycles by host %v, want some of pcA and pcB", hosts)
			}
			if comment != "" && !strings.Contains(strings.Join(p.Comments, "\n"), comment) {
				t.Errorf("comments %q do not say %q", p.Comments, comment)
			}
		}
	}
	runHostile(t, []hostileCase{
		{item: 2, name: "cycles profile under a file",
			files: map[string]string{"notes.txt": "x"}, args: run("--cycles-profile", "{dir}/notes.txt/cycles.pb.gz"),
			status: exitUsage, stderr: "simkron run: --cycles-profile {dir}/notes.txt/cycles.pb.gz: cannot make its folder: not a directory",
			wrote: wroteNothing},
		{item: 2, name: "cycles profile in a folder nobody writes",
			args:   run("--cycles-profile", "/proc/cycles.pb.gz"),
			status: exitUsage, stderr: "simkron run: --cycles-profile /proc/cycles.pb.gz: cannot write there",
			wrote: wroteNothing},
		{item: 2, name: "cycles profile is a folder",
			files: map[string]string{"prof/keep": ""}, args: run("--cycles-profile", "{dir}/prof"),
			status: exitUsage, stderr: "simkron run: --cycles-profile {dir}/prof: is a folder",
			wrote: wroteNothing, check: noFile("{dir}/prof/cycles.pb.gz")},
		{item: 2, name: "cycles profile names a folder",
			args:   run("--cycles-profile", "{dir}/new/"),
			status: exitUsage, stderr: "simkron run: --cycles-profile {dir}/new/: names a folder; want a file",
			wrote: wroteNothing, check: noFile("{dir}/new")},
		{item: 2, name: "cycles profile empty",
			args:   run("--cycles-profile", ""),
			status: exitUsage, stderr: "simkron run: --cycles-profile '': an empty file name",
			wrote: wroteNothing},
		{item: 2, name: "cycles profile is the result",
			args:   run("--cycles-profile", "{out}/result.json"),
			status: exitUsage, stderr: "simkron run: --cycles-profile {out}/result.json: is the run's result.json (--out {out})",
			wrote: wroteNothing},
		{item: 2, name: "cycles profile is the cpu profile",
			args:   run("--cpuprofile", "{dir}/p.pb.gz", "--cycles-profile", "{dir}/p.pb.gz"),
			status: exitUsage, stderr: "simkron run: --cycles-profile {dir}/p.pb.gz: is also --cpuprofile's file",
			wrote: wroteNothing, check: noFile("{dir}/p.pb.gz")},
		{item: 2, name: "cycles profile with a bad config",
			files:  map[string]string{"bad.toml": "[experiment\n"},
			args:   []string{"run", "--out", "{out}", "--cycles-profile", "{dir}/cycles.pb.gz", "{dir}/bad.toml"},
			status: exitUsage, stderr: "{dir}/bad.toml:1: ",
			wrote: wroteNothing, check: noFile("{dir}/cycles.pb.gz")},
		{item: 2, name: "cycles profile in a missing folder",
			args:   run("--cycles-profile", "{dir}/a/b/cycles.pb.gz"),
			status: exitOK, wrote: wroteComplete, check: profiled("{dir}/a/b/cycles.pb.gz", `experiment "udp-ne2000"`)},
		{item: 2, name: "cycles profile of a run that stopped",
			args:   run("--set", "experiment.stop_at=2ms", "--cycles-profile", "{dir}/cycles.pb.gz"),
			status: exitFailed, wrote: wroteIncomplete, check: profiled("{dir}/cycles.pb.gz", "incomplete run: ")},
	})
}
