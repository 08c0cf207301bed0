package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The hostile cases of issue 40: runs in islands and -j.
func TestHostileIslands(t *testing.T) {
	bin, root := hostileBinary(t)
	// The TOP study's lower users, a few messages: two islands.
	top := []string{"configs/top-lower.toml", "--set", "workload.top.messages=20", "--set", "workload.top.sizes=[128, 1152]"}
	run := func(args ...string) []string { return append(append([]string{"run"}, args...), top...) }
	// sameAs runs the experiment again with more arguments (and env) and
	// wants every file the case wrote, byte for byte.
	sameAs := func(env []string, args ...string) func(t *testing.T, dir, _, _ string) {
		return func(t *testing.T, dir, _, _ string) {
			again := filepath.Join(dir, "again")
			cmd := exec.Command(bin, run(append([]string{"-q", "--out", again}, args...)...)...)
			cmd.Dir, cmd.Env = root, append(os.Environ(), env...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v: %v\n%s", args, err, out)
			}
			names, err := os.ReadDir(filepath.Join(dir, "out"))
			if err != nil || len(names) == 0 {
				t.Fatalf("nothing written: %v", err)
			}
			for _, n := range names {
				a := readText(t, filepath.Join(dir, "out", n.Name()))
				if b := readText(t, filepath.Join(again, n.Name())); a != b {
					t.Errorf("%s differs with %v %v", n.Name(), env, args)
				}
			}
		}
	}
	runHostile(t, []hostileCase{
		{item: 4, name: "-j 0 is refused",
			args:   run("-j", "0", "--out", "{out}"),
			status: exitUsage, stderr: "simkron run: -j 0: at least one island must run at a time", wrote: wroteNothing},
		{item: 4, name: "a negative -j is refused",
			args:   run("-j", "-2", "--out", "{out}"),
			status: exitUsage, stderr: "simkron run: -j -2: at least one island must run at a time", wrote: wroteNothing},
		{item: 4, name: "-j that is no number is refused",
			args:   run("-j", "two", "--out", "{out}"),
			status: exitUsage, stderr: `simkron run: invalid value "two" for flag -j: parse error`, wrote: wroteNothing},
		{item: 4, name: "sweep -j 0 is refused",
			args:   append([]string{"sweep", "-j", "0", "--out", "{out}", "--set", "workload.top.messages=20,30"}, top[:1]...),
			status: exitUsage, stderr: "simkron sweep: -j 0: at least one point must run at a time", wrote: wroteNothing},
		{item: 1, name: "islands at -j 1 and -j 8 write the same bytes",
			args:   run("-q", "-j", "1", "--out", "{out}"),
			status: exitOK, wrote: wroteComplete, check: sameAs(nil, "-j", "8")},
		{item: 1, name: "islands with one Go thread write the same bytes",
			args:   run("-q", "-j", "2", "--out", "{out}"),
			status: exitOK, wrote: wroteComplete, check: sameAs([]string{"GOMAXPROCS=1"}, "-j", "2")},
		{item: 1, name: "an annotated run is whole and complete",
			files:  map[string]string{"a.tcl": "annotation set sim exit { puts \"the end\" }\n"},
			args:   append([]string{"-v"}, run("--annotate", "{dir}/a.tcl", "--out", "{out}")...),
			status: exitOK, wrote: wroteComplete,
			check: func(t *testing.T, _, stdout, stderr string) {
				if !slices.Contains(strings.Split(stdout, "\n"), "the end") {
					t.Errorf("the script's sim exit did not run: %q", stdout)
				}
				if !strings.Contains(stderr, "islands=1") {
					t.Errorf("the log does not say the run was whole: %q", stderr)
				}
			}},
		{item: 1, name: "validate loads the annotations of an experiment in islands",
			files: map[string]string{
				"a.tcl":  "annotation set sim exit { puts \"the end\" }\n",
				"e.toml": strings.ReplaceAll(strings.Replace(readText(t, filepath.Join(root, "configs/top-lower.toml")), "seed = 1\n", "seed = 1\nannotations = [\"a.tcl\"]\n", 1), `machine = "machines/`, `machine = "`+filepath.Join(root, "configs/machines")+"/"),
			},
			args:   []string{"validate", "{dir}/e.toml"},
			status: exitOK},
		{item: 4, name: "the log says how many islands and threads ran",
			args:   []string{"-v", "run", "-q", "-j", "1", "configs/top-lower.toml", "--set", "workload.top.messages=20", "--set", "workload.top.sizes=[128]"},
			status: exitOK,
			check: func(t *testing.T, _, _, stderr string) {
				if !strings.Contains(stderr, "islands=2") || !strings.Contains(stderr, "threads=1") {
					t.Errorf("the log does not say 2 islands on 1 thread: %q", stderr)
				}
			}},
	})
}
