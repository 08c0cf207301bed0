package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The hostile cases of sweeps, shards, merges, the Slurm job script and
// the flags of run, compare and params.
func TestHostileSweep(t *testing.T) {
	bin, root := hostileBinary(t)
	fx := newSweepFixture(t, bin, root)
	udp := []string{"sweep", "-q", "configs/udp-ne2000.toml"}
	sweep23 := append(append([]string(nil), udp...), "--set", "workload.udp.messages=2,3")
	// The experiment with its machine files named from the project root,
	// so that a copy of it may lie anywhere under any name.
	exp := strings.ReplaceAll(readText(t, filepath.Join(root, "configs/udp-ne2000.toml")),
		`machine = "machines/`, `machine = "`+filepath.Join(root, "configs/machines")+"/")
	big := func(key string) string {
		var b strings.Builder
		b.WriteString("[[axis]]\nkey = \"" + key + "\"\nvalues = [")
		for i := range 1000 {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Itoa(576 + i))
		}
		b.WriteString("]\n\n")
		return b.String()
	}
	// The sweep's points as Run wrote them, and damaged copies.
	shard := func(points ...string) map[string]string {
		files := map[string]string{"s/sweep.json": fx.manifest}
		for i, p := range points {
			if p != "" {
				files["s/points/"+pointName(i)] = p
			}
		}
		return files
	}
	sameMerged := func(t *testing.T, dir, _, _ string) {
		if got := readText(t, filepath.Join(dir, "out", "result.json")); got != fx.merged {
			t.Error("the merged result differs from the sweep's run whole")
		}
	}
	runCases := []hostileCase{
		// 5: the job script quotes what it embeds; a newline is refused.
		{item: 5, name: "a newline in --out of a Slurm job is refused",
			args:   append(append([]string(nil), sweep23...), "--slurm", "2", "--out", "{dir}/a\ntouch PWNED #"),
			status: exitUsage, stderr: `simkron sweep: --out "{dir}/a\ntouch PWNED #": a control character ("\n") in what the job script would embed`,
			check: func(t *testing.T, dir, _, _ string) {
				// The reproduction: run whatever job script there is.
				runScripts(t, dir, filepath.Join(dir, "a*", "sweep.sbatch"))
				noneWritten(t, dir)
				noPWNED(t, dir, root)
			}},
		{item: 5, name: "a newline in the config's name of a Slurm job is refused",
			files:  map[string]string{"x\n#SBATCH --wrap=touch PWNED\n.toml": exp},
			args:   []string{"sweep", "{dir}/x\n#SBATCH --wrap=touch PWNED\n.toml", "--set", "workload.udp.messages=2,3", "--slurm", "2", "--out", "{out}"},
			status: exitUsage, stderr: `simkron sweep: CONFIG "{dir}/x\n#SBATCH --wrap=touch PWNED\n.toml": a control character`, wrote: wroteNothing},
		{item: 5, name: "a Slurm job's script quotes a hostile --out and a hostile config name",
			files: map[string]string{"it's $(touch PWNED) #1.toml": exp},
			args: []string{"sweep", "{dir}/it's $(touch PWNED) #1.toml", "--set", "workload.udp.messages=2,3", "--set", "experiment.description=\"a;b `touch PWNED`\"",
				"--slurm", "2", "--out", "{dir}/o'u t$(touch PWNED)#%A`touch PWNED`\\x"},
			status: exitUsage, stderr: `simkron sweep: --out "{dir}/o'u t$(touch PWNED)#%A` + "`touch PWNED`" + `\\x": a backslash`},
		{item: 5, name: "a Slurm job's script runs with a hostile --out and config name, and injects nothing",
			files: map[string]string{"it's $(touch PWNED) #1.toml": exp},
			args: []string{"sweep", "{dir}/it's $(touch PWNED) #1.toml", "--set", "workload.udp.messages=2,3", "--set", "experiment.description=\"a;b `touch PWNED`\"",
				"--slurm", "2", "--out", "{dir}/o'u t$(touch PWNED)#%A`touch PWNED`"},
			status: exitOK,
			check: func(t *testing.T, dir, stdout, _ string) {
				out := filepath.Join(dir, "o'u t$(touch PWNED)#%A`touch PWNED`")
				script := filepath.Join(out, "sweep.sbatch")
				checkJobScript(t, script, out)
				for _, task := range []string{"0", "1"} {
					cmd := exec.Command("bash", script)
					cmd.Dir = dir
					cmd.Env = append(os.Environ(), "SLURM_ARRAY_TASK_ID="+task)
					if b, err := cmd.CombinedOutput(); err != nil {
						t.Fatalf("task %s: %v\n%s", task, err, b)
					}
				}
				noPWNED(t, dir, root)
				m := exec.Command(bin, "merge", "-q", filepath.Join(out, "shard-0"), filepath.Join(out, "shard-1"), "--out", filepath.Join(out, "all"))
				if b, err := m.CombinedOutput(); err != nil {
					t.Fatalf("merge: %v\n%s", err, b)
				}
				// The submit command it prints names the script, quoted.
				_, submit, _ := strings.Cut(stdout, "submit: sbatch ")
				submit, _, _ = strings.Cut(submit, "\n")
				if b, err := exec.Command("bash", "-c", "printf %s "+submit).Output(); err != nil || string(b) != script {
					t.Errorf("the submit command names %q (%v), not %q", b, err, script)
				}
			}},

		// 14: a grid's size is checked before anything is loaded.
		{item: 14, name: "a grid file of three axes of 1,000 values",
			files:  map[string]string{"g.toml": big("host.inet.mtu") + big("workload.udp.sizes") + big("workload.udp.warmup")},
			args:   append(append([]string(nil), udp...), "--grid", "{dir}/g.toml", "--out", "{out}"),
			status: exitUsage, stderr: "simkron sweep: {dir}/g.toml:7: workload.udp.sizes: the grid would have 1000000 (1000 × 1000) points, more than the 10000 a sweep may have",
			wrote: wroteNothing},
		{item: 14, name: "three --set of 1,000 values",
			args: append(append([]string(nil), udp...), "--set", "host.inet.mtu="+seq(576, 1000), "--set", "workload.udp.sizes="+seq(4, 1000),
				"--set", "workload.udp.warmup="+seq(0, 1000), "--out", "{out}"),
			status: exitUsage, stderr: "simkron sweep: --set workload.udp.sizes=4,5,6,", stderrAny: "(1000 values): the grid would have 1000000 (1000 × 1000) points",
			wrote: wroteNothing},

		// 18: resume, merge and grids.
		{item: 18, name: "resume runs a truncated point again",
			files:  map[string]string{"out/sweep.json": fx.manifest, "out/points/000000.json": fx.points[0], "out/points/000001.json": fx.points[1][:100]},
			args:   append(append([]string(nil), sweep23...), "--resume", "--out", "{out}"),
			status: exitOK, stderr: "simkron sweep: {out}/points/000001.json: not a point's result (damaged or truncated?)",
			wrote: wroteComplete, check: sameMerged},
		{item: 18, name: "resume runs again a point of another sweep and a plain run's result",
			files:  map[string]string{"out/sweep.json": fx.manifest, "out/points/000000.json": fx.foreign, "out/points/000001.json": fx.plain},
			args:   append(append([]string(nil), sweep23...), "--resume", "--out", "{out}"),
			status: exitOK, stderr: "simkron sweep: {out}/points/000000.json: a point of another sweep",
			stderrAny: `{out}/points/000001.json: not a point's result of a sweep: the result has no section "sweep_point"; running the point again`,
			wrote:     wroteComplete, check: sameMerged},
		{item: 18, name: "resume into a folder whose manifest is damaged",
			files:  map[string]string{"out/sweep.json": fx.manifest[:50]},
			args:   append(append([]string(nil), sweep23...), "--resume", "--out", "{out}"),
			status: exitUsage, stderr: "simkron sweep: {out}/sweep.json: not a sweep manifest"},
		{item: 18, name: "merge of swapped point files",
			files:  shard(fx.points[1], fx.points[0]),
			args:   []string{"merge", "-q", "{dir}/s", "--out", "{out}"},
			status: exitUsage, stderr: "simkron merge: {dir}/s/points/000000.json: point 1's result, not point 0's", wrote: wroteNothing},
		{item: 18, name: "merge of a plain run's result.json as a point",
			files:  shard(fx.points[0], fx.plain),
			args:   []string{"merge", "-q", "{dir}/s", "--out", "{out}"},
			status: exitUsage, stderr: `simkron merge: {dir}/s/points/000001.json: not a point's result of a sweep: the result has no section "sweep_point"`, wrote: wroteNothing},
		{item: 18, name: "merge of a truncated point",
			files:  shard(fx.points[0], fx.points[1][:100]),
			args:   []string{"merge", "-q", "{dir}/s", "--out", "{out}"},
			status: exitUsage, stderr: "simkron merge: {dir}/s/points/000001.json: not a point's result (damaged or truncated?)", wrote: wroteNothing},
		{item: 18, name: "merge of a manifest that claims a billion points",
			files:  map[string]string{"s/sweep.json": strings.Replace(fx.manifest, `"points": 2`, `"points": 1000000000`, 1)},
			args:   []string{"merge", "-q", "{dir}/s", "--out", "{out}"},
			status: exitUsage, stderr: "simkron merge: {dir}/s/sweep.json: not a sweep manifest: it says 1000000000 points, its grid has 2", wrote: wroteNothing},
		{item: 18, name: "merge of the points as written",
			files:  shard(fx.points[0], fx.points[1]),
			args:   []string{"merge", "-q", "{dir}/s", "--out", "{out}"},
			status: exitOK, wrote: wroteComplete, check: sameMerged},
		{item: 18, name: "a grid file sweeping a key twice",
			files:  map[string]string{"g.toml": "[[axis]]\nkey = \"workload.udp.messages\"\nvalues = [2, 3]\n\n[[axis]]\nkey = \"workload.udp.messages\"\nvalues = [4]\n"},
			args:   append(append([]string(nil), udp...), "--grid", "{dir}/g.toml", "--out", "{out}"),
			status: exitUsage, stderr: "simkron sweep: {dir}/g.toml:7: workload.udp.messages: swept already by {dir}/g.toml:3: give each key once", wrote: wroteNothing},
		{item: 18, name: "a grid file and a --set sweeping one key",
			files:  map[string]string{"g.toml": "[[axis]]\nkey = \"workload.udp.messages\"\nvalues = [4, 5]\n"},
			args:   append(append([]string(nil), sweep23...), "--grid", "{dir}/g.toml", "--out", "{out}"),
			status: exitUsage, stderr: "simkron sweep: {dir}/g.toml:3: workload.udp.messages: swept already by --set workload.udp.messages=2,3", wrote: wroteNothing},
		{item: 18, name: "every host's key and one host's",
			args:   append(append([]string(nil), udp...), "--set", "host.inet.mtu=576,1500", "--set", "host[1].inet.mtu=1000", "--out", "{out}"),
			status: exitUsage, stderr: "simkron sweep: --set host[1].inet.mtu=1000: sets what host.inet.mtu (--set host.inet.mtu=576,1500) sets too", wrote: wroteNothing},
		{item: 18, name: "a grid file's bad value names its line, not a --set",
			files:  map[string]string{"g.toml": "[[axis]]\nkey = \"workload.udp.messages\"\nvalues = [0, 2]\n"},
			args:   append(append([]string(nil), udp...), "--grid", "{dir}/g.toml", "--out", "{out}"),
			status: exitUsage, stderr: "point 0 (workload.udp.messages=0): configs/udp-ne2000.toml: {dir}/g.toml:3 (workload.udp.messages = 0): workload.udp.messages: 0 is below the minimum 1",
			wrote: wroteNothing},
		{item: 18, name: "a point that stops incomplete: the others run, the merge says which",
			args:   append(append([]string(nil), udp...), "--set", "experiment.stop_at=1ms,1000s", "--set", "workload.udp.messages=2", "--out", "{out}"),
			status: exitFailed, stderr: "simkron sweep: point 0 (experiment.stop_at=1ms workload.udp.messages=2): stop_at 1ms reached",
			stderrAny: "1 of 2 points failed; the others ran",
			wrote:     wroteIncomplete, check: func(t *testing.T, dir, _, _ string) {
				if s := readText(t, filepath.Join(dir, "out", "result.json")); !strings.Contains(s, `"incomplete_reason": "point 0 (experiment.stop_at=1ms workload.udp.messages=2): stop_at 1ms reached`) {
					t.Error("the merged result does not name the point that stopped")
				}
			}},

		// 22: params, compare's flags and --out ''.
		{item: 22, name: "params with a key nothing matches",
			args: []string{"params", "foo"}, status: exitUsage, stderr: `simkron params: no parameter's key contains "foo"`},
		{item: 22, name: "params with a key lists the parameters matching",
			args: []string{"params", "MTU"}, status: exitOK,
			check: func(t *testing.T, _, stdout, _ string) {
				if !strings.Contains(stdout, "\ninet.mtu ") || !strings.Contains(stdout, "\nhost[].nic[].mtu ") || strings.Contains(stdout, "cpu.clock") {
					t.Errorf("params MTU:\n%s", clip(stdout))
				}
			}},
		{item: 22, name: "compare --sizes ''",
			args:   []string{"compare", "configs/udp-ne2000.toml", "--sizes", "", "--out", "{out}"},
			status: exitUsage, stderr: "simkron compare: --sizes '': no sizes", wrote: wroteNothing},
		{item: 22, name: "compare --sizes with a range up to the largest int64",
			args:   []string{"compare", "configs/udp-ne2000.toml", "--sizes", "4-9223372036854775807", "--out", "{out}"},
			status: exitUsage, stderr: "workload.compare.sizes", wrote: wroteNothing},
		{item: 22, name: "run --out ''",
			args: []string{"run", "-q", "cmd/simkron/testdata/small.toml", "--out", ""}, status: exitUsage,
			stderr: "simkron run: --out '': an empty folder name"},
		{item: 22, name: "compare --out ''",
			args: []string{"compare", "-q", "configs/udp-ne2000.toml", "--out", ""}, status: exitUsage,
			stderr: "simkron compare: --out '': an empty folder name"},
		{item: 22, name: "sweep --out ''",
			args: append(append([]string(nil), sweep23...), "--out", ""), status: exitUsage,
			stderr: "simkron sweep: --out '': an empty folder name"},
		{item: 22, name: "merge --out ''",
			files: shard(fx.points[0], fx.points[1]),
			args:  []string{"merge", "-q", "{dir}/s", "--out", ""}, status: exitUsage,
			stderr: "simkron merge: --out '': an empty folder name"},
	}
	runHostile(t, runCases)
}

// sweepFixture is a sweep of udp-ne2000 over workload.udp.messages=2,3
// as simkron writes it, with a point of another sweep and a plain run's
// result.
type sweepFixture struct {
	manifest, merged string
	points           [2]string
	foreign, plain   string
}

func newSweepFixture(t *testing.T, bin, root string) *sweepFixture {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("simkron %v: %v\n%s", args, err, b)
		}
	}
	run("sweep", "-q", "configs/udp-ne2000.toml", "--set", "workload.udp.messages=2,3", "--out", filepath.Join(dir, "a"))
	run("sweep", "-q", "configs/udp-ne2000.toml", "--set", "workload.udp.messages=2,4", "--out", filepath.Join(dir, "b"))
	run("run", "-q", "configs/udp-ne2000.toml", "--set", "workload.udp.messages=3", "--out", filepath.Join(dir, "r"))
	fx := &sweepFixture{
		manifest: readText(t, filepath.Join(dir, "a", "sweep.json")),
		merged:   readText(t, filepath.Join(dir, "a", "result.json")),
		foreign:  readText(t, filepath.Join(dir, "b", "points", "000000.json")),
		plain:    readText(t, filepath.Join(dir, "r", "result.json")),
	}
	for i := range fx.points {
		fx.points[i] = readText(t, filepath.Join(dir, "a", "points", pointName(i)))
	}
	return fx
}

// checkJobScript checks the job script at path line by line: the lines
// it always has, each on its own (nothing injected), bash reads it
// (bash -n), and sbatch reads its log directive as out's folder.
func checkJobScript(t *testing.T, path, out string) {
	t.Helper()
	text := readText(t, path)
	if b, err := exec.Command("bash", "-n", path).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, b)
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	want := []string{"#!/bin/bash", "# ", "# ", "# ", "#SBATCH --job-name=simkron-sweep", "#SBATCH --array=0-1",
		"#SBATCH --ntasks=1", "#SBATCH --cpus-per-task=1", "#SBATCH --output=", "set -euo pipefail", "exec "}
	if len(lines) != len(want) {
		t.Fatalf("the job script has %d lines, want %d:\n%s", len(lines), len(want), text)
	}
	for i, l := range lines {
		if !strings.HasPrefix(l, want[i]) || (!strings.HasPrefix(want[i], "#") && strings.HasPrefix(l, "#")) {
			t.Errorf("line %d is %q, want one starting %q", i+1, l, want[i])
		}
	}
	args := sbatchArgs(strings.TrimPrefix(lines[8], "#SBATCH"))
	if want := "--output=" + strings.ReplaceAll(out, "%", "%%") + "/slurm-%A_%a.out"; len(args) != 1 || args[0] != want {
		t.Errorf("sbatch reads the log directive as %q, want %q", args, want)
	}
}

// sbatchArgs splits an #SBATCH directive's text as sbatch does (Slurm's
// src/sbatch/opt.c, _get_argument): words at white space, a backslash
// escapes the next byte, quotes group, an unescaped # starts a comment.
func sbatchArgs(line string) []string {
	var out []string
	var cur []byte
	in, quote, esc, comment := false, byte(0), false, false
	for i := 0; i < len(line) && !comment; i++ {
		c := line[i]
		switch {
		case esc:
			cur, esc, in = append(cur, c), false, true
		case c == '\\':
			esc, in = true, true
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur = append(cur, c)
			}
		case c == '"' || c == '\'':
			quote, in = c, true
		case c == '#':
			comment = true
		case c == ' ' || c == '\t':
			if in {
				out, cur, in = append(out, string(cur)), nil, false
			}
		default:
			cur, in = append(cur, c), true
		}
	}
	if in {
		out = append(out, string(cur))
	}
	return out
}

// runScripts runs each job script the pattern finds as task 0, from dir.
func runScripts(t *testing.T, dir, pattern string) {
	t.Helper()
	scripts, _ := filepath.Glob(pattern)
	for _, s := range scripts {
		cmd := exec.Command("bash", s)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "SLURM_ARRAY_TASK_ID=0")
		cmd.Run()
	}
}

// noPWNED checks that no injected command made its file.
func noPWNED(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "PWNED")); err == nil {
			t.Errorf("an injected command ran: %s", filepath.Join(d, "PWNED"))
			os.Remove(filepath.Join(d, "PWNED"))
		}
	}
}

// noneWritten checks that the case's folder is empty.
func noneWritten(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		t.Errorf("wrote %q", e.Name())
	}
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func pointName(i int) string { return fmt.Sprintf("%06d.json", i) }

// seq is n values from first, separated by commas.
func seq(first, n int) string {
	var b bytes.Buffer
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(first + i))
	}
	return b.String()
}
