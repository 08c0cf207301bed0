package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostileInstall: issue 37 item 1, a sweep --slurm run through
// "go run" names a binary in the Go build cache in its job script, which
// no cluster node has, and its hint names a "simkron" that may not be on
// the PATH. The built binary stands in for go run's: GOCACHE names its
// folder.
func TestHostileInstall(t *testing.T) {
	bin, _ := hostileBinary(t)
	sweep := []string{"sweep", "configs/udp-r4000.toml", "--set", "workload.udp.messages=2,3", "--slurm", "2", "--out", "{out}"}
	hint := func(want string) func(t *testing.T, dir, stdout, _ string) {
		return func(t *testing.T, dir, stdout, _ string) {
			out := filepath.Join(dir, "out")
			if !strings.Contains(stdout, "merge:  "+want+" merge "+out+"/shard-* --out "+out+"/all\n") {
				t.Errorf("the merge hint does not name %s:\n%s", want, stdout)
			}
			script := readText(t, filepath.Join(out, "sweep.sbatch"))
			if !strings.Contains(script, "# then, when every task has ended: "+bin+" merge ") || !strings.Contains(script, "\nexec "+bin+" sweep ") {
				t.Errorf("the job script does not name %s:\n%s", bin, script)
			}
		}
	}
	runHostile(t, []hostileCase{
		{item: 1, name: "sweep --slurm from a binary in the Go build cache is refused",
			args: sweep, env: []string{"GOCACHE=" + filepath.Dir(bin)},
			status: exitUsage, stderr: `simkron sweep: --slurm: this simkron is a binary "go run" built (` + bin + `)`,
			stderrAny: `"go install ./cmd/simkron"`, wrote: wroteNothing},
		{item: 1, name: "the merge hint names the binary used when simkron is not on the PATH",
			args: sweep, env: []string{"PATH=/usr/bin:/bin"}, status: exitOK, check: hint(bin)},
		{item: 1, name: "the merge hint says simkron when the PATH finds this one",
			args: sweep, env: []string{"PATH=" + filepath.Dir(bin) + ":/usr/bin:/bin"}, status: exitOK, check: hint("simkron")},
	})
}

func TestGoRunBuilt(t *testing.T) {
	home, _ := os.UserHomeDir()
	for _, tc := range []struct {
		exe, cache string
		want       bool
	}{
		{"/tmp/go-build3514961457/b001/exe/simkron", "", true},
		{"/var/tmp/x/go-build12/b001/exe/simkron", "/root/.cache/go-build", true},
		{"/root/.cache/go-build/ab/abcdef-d/simkron", "/root/.cache/go-build", true},
		{"/root/.cache/go-build", "/root/.cache/go-build", true},
		{"/root/.cache/go-build-old/simkron", "/root/.cache/go-build", false},
		{"/root/go/bin/simkron", "/root/.cache/go-build", false},
		{filepath.Join(home, "go", "bin", "simkron"), "", false},
		{"/usr/local/bin/simkron", "/usr/local", true},
		{"/tmp/go-builder/simkron", "", false},
		{"/tmp/go-build/simkron", "", false},
		{"/cluster/bin/simkron", "/tmp/gocache", false},
	} {
		if got := goRunBuilt(tc.exe, tc.cache); got != tc.want {
			t.Errorf("goRunBuilt(%q, %q) = %v, want %v", tc.exe, tc.cache, got, tc.want)
		}
	}
}
