package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"simkron/machine"
	"simkron/report"
	"simkron/sweep"
)

func cmdSweep(e *env, args []string) int {
	fs := newFlags(e, "sweep", "CONFIG", `Run the experiment in CONFIG over a grid of values of its keys: every
combination of the --set values (and of a --grid file's axes), each a
whole run with its own seed derived from the master seed and its values.
A key is a dotted path of the experiment ("host.inet.mtu" for every host,
"host[1].inet.mtu" for the second, "workload.udp.sizes") or, after
"machine.", of every host's machine file ("machine.cache.l2.size").
Values are TOML ("[1024]", "true", "\"x\""); units need no quotes (10Mbps).
A grid has at most `+strconv.Itoa(sweep.MaxPoints)+` points, sweeps each key once (not both
"host.inet.mtu" and "host[1].inet.mtu") and each value once; every point
is loaded and checked before anything runs.

A point that fails does not stop the others: its result is written as far
as it got, marked incomplete, the merged result says which points did not
complete, and the exit status is 1.

DIR/sweep.json describes the grid, DIR/points/NNNNNN.json holds each
point's result.json; unless --shard runs one slice of the grid, the points
are merged into DIR/result.json (and DIR/summary.txt), whose tables and
charts have the swept keys as an axis: "simkron report" renders it. The
merged result is the same bytes whatever -j, however the points were
sharded (simkron merge), in whatever order they ended.

  simkron sweep configs/udp-r4000.toml --set 'host.inet.mtu=576,1500,4352' --out out/mtu
  simkron sweep CONFIG --grid grid.toml --shard 3/16 --out out/s3
  simkron sweep CONFIG --grid grid.toml --slurm 16 --out out/study   # writes out/study/sweep.sbatch`)
	var sets listFlag
	fs.Var(&sets, "set", "swept key and values, `KEY=V1,V2,...` (repeatable: the grid is the product)")
	gridFile := fs.String("grid", "", "a grid `FILE` of [[axis]] tables (key, values), after the --set axes")
	jobs := fs.Int("j", runtime.NumCPU(), "points run at once, and threads their simulations share (a point whose run is in several islands uses up to one each; together never more than -j)")
	shardText := fs.String("shard", "", "run only slice `i/n` of the grid (points whose index is i modulo n), for a cluster's job array")
	resume := fs.Bool("resume", false, "skip points whose complete result DIR holds already (a point whose file is missing, damaged, another's or incomplete runs again)")
	var seed seedFlag
	fs.Var(&seed, "seed", "master seed (default: the experiment's)")
	out := fs.String("out", "", "`DIR` for the grid's description, the points' results and the merged result (required)")
	slurm := fs.Int("slurm", 0, "do not run: write DIR/sweep.sbatch, a Slurm job array of `N` tasks, one shard each, and say how to merge (simkron installed, not run by \"go run\"; no control character in the paths and values it names, no backslash in DIR)")
	quiet := fs.Bool("q", false, "do not print the merged summary")
	rest, stop, st := parseFlags(e, fs, args)
	if stop {
		return st
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(e.stderr, "simkron sweep: "+format+"\n", a...)
		return exitUsage
	}
	if len(rest) != 1 {
		return bad("want exactly one CONFIG, got %d arguments", len(rest))
	}
	switch emptyFlag(fs, "out", "grid", "shard") {
	case "out":
		return bad("--out '': an empty folder name; the points' results go to --out DIR")
	case "grid":
		return bad("--grid '': an empty file name (leave --grid out for the --set axes alone)")
	case "shard":
		return bad("--shard '': an empty slice (leave --shard out to run every point)")
	}
	if *out == "" {
		return bad("--out DIR is required: the points' results go there")
	}
	if *jobs < 1 {
		return bad("-j %d: at least one point must run at a time", *jobs)
	}
	if *slurm < 0 || *slurm > 100000 {
		return bad("--slurm %d: want 1 to 100000 tasks", *slurm)
	}
	if *slurm > 0 && *shardText != "" {
		return bad("--slurm writes a job array whose tasks run a shard each: give no --shard with it")
	}
	g := sweep.Grid{Config: rest[0]}
	for _, s := range sets {
		a, err := sweep.ParseSet(s)
		if err != nil {
			return bad("%v", err)
		}
		g.Axes = append(g.Axes, a)
	}
	if *gridFile != "" {
		axes, err := sweep.LoadGridFile(*gridFile)
		if err != nil {
			fmt.Fprintf(e.stderr, "%v\n", err)
			return exitUsage
		}
		g.Axes = append(g.Axes, axes...)
	}
	var shard sweep.Shard
	if *shardText != "" {
		var err error
		if shard, err = sweep.ParseShard(*shardText); err != nil {
			return bad("%v", err)
		}
	}
	if err := g.Check(); err != nil {
		return bad("%v", err)
	}
	var job *slurmJob
	if *slurm > 0 {
		var err error
		if job, err = newSlurmJob(g, sets, *gridFile, *out, *slurm); err != nil {
			return bad("%v", err)
		}
	}
	plan, err := sweep.NewPlan(g, seed.v)
	if err != nil {
		fmt.Fprintf(e.stderr, "%v\n", err)
		return exitUsage
	}
	if err := prepareOut(*out); err != nil {
		return bad("--out %v", err)
	}
	if job != nil {
		return job.write(e, plan)
	}
	start := time.Now()
	var progress func(done, running, total int)
	if e.stderrTTY {
		progress = func(done, running, total int) {
			eta := ""
			if done > 0 {
				left := time.Duration(float64(time.Since(start)) / float64(done) * float64(total-done))
				eta = ", about " + left.Round(time.Second).String() + " left"
			}
			fmt.Fprintf(e.stderr, "\rsweep: %d of %d points done, %d running%s   ", done, total, running, eta)
		}
	}
	noteFn := func(msg string) { fmt.Fprintf(e.stderr, "simkron sweep: %s\n", msg) }
	failed, err := plan.Run(*out, sweep.Options{Workers: *jobs, Cores: machine.NewCores(*jobs), Shard: shard, Resume: *resume, Progress: progress, Note: noteFn})
	if e.stderrTTY {
		fmt.Fprintf(e.stderr, "\r%70s\r", "")
	}
	if err != nil {
		// Nothing ran: the folder holds another sweep or cannot be written.
		fmt.Fprintf(e.stderr, "simkron sweep: %v\n", err)
		return exitUsage
	}
	e.log.Debugf("sweep of %d points in %v", plan.Points, time.Since(start))
	for _, f := range failed {
		fmt.Fprintf(e.stderr, "simkron sweep: %v\n", f)
	}
	if shard.N > 1 {
		fmt.Fprintf(e.stdout, "shard %d/%d: its points are in %s; merge every shard with: simkron merge DIR... --out DIR\n", shard.I, shard.N, *out)
	} else if st := merge(e, []string{*out}, *out, *quiet); st != exitOK {
		// The points ran: a merge that fails now is a failure of the run.
		return exitFailed
	}
	if len(failed) > 0 {
		fmt.Fprintf(e.stderr, "simkron sweep: %d of %d points failed; the others ran, and every point's result is in %s\n",
			len(failed), plan.Points, filepath.Join(*out, "points"))
		return exitFailed
	}
	return exitOK
}

// slurmJob is the job array a sweep --slurm writes: one task a shard.
//
// The job script embeds paths and --set values the user gave. Each is
// quoted for where it goes, so that none can end a line or a word early:
// in bash's words (and in the comments, so that their commands can be
// copied) with single quotes; in the #SBATCH directive with sbatch's own
// escapes (see sbatchQuote). A control character is refused outright,
// before anything is written: sbatch and bash read the script line by
// line, and a newline in a comment or a directive cannot be quoted (it
// would end the line, and what follows would run); no cluster path needs
// one. A backslash is refused in --out, which the directive names: Slurm
// takes a file name with a backslash literally and drops the backslash,
// so that the tasks' logs would all go to one wrongly named file.
type slurmJob struct {
	exe, config, grid, dir string
	sets                   []string
	out                    string // as the user gave it, for messages
	tasks                  int
}

// newSlurmJob checks what the job script for grid g would embed.
func newSlurmJob(g sweep.Grid, sets []string, gridFile, out string, tasks int) (*slurmJob, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("--slurm: the job script must name this simkron, and its path is unknown: %v", err)
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	if goRunBuilt(exe, goCache()) {
		return nil, fmt.Errorf("--slurm: this simkron is a binary \"go run\" built (%s), which the job script would name and the cluster's nodes do not have (Go deletes it, too): install simkron with \"go install ./cmd/simkron\" (or \"go build -o DIR/simkron ./cmd/simkron\" into a folder the nodes share) and run that one", exe)
	}
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	j := &slurmJob{exe: exe, config: abs(g.Config), dir: abs(out), sets: sets, out: out, tasks: tasks}
	if gridFile != "" {
		j.grid = abs(gridFile)
	}
	check := []struct{ what, value string }{{"--out", out}, {"CONFIG", g.Config}, {"--grid", gridFile}, {"this simkron's path", exe}}
	for _, s := range sets {
		check = append(check, struct{ what, value string }{"--set", s})
	}
	for _, c := range check {
		if i := strings.IndexFunc(c.value, isControl); i >= 0 {
			return nil, fmt.Errorf("%s %q: a control character (%q) in what the job script would embed: sbatch and bash read it line by line, and no quoting carries a line break through a comment or a directive; use a name without one",
				c.what, c.value, c.value[i:i+1])
		}
	}
	if strings.Contains(j.dir, `\`) {
		return nil, fmt.Errorf("--out %q: a backslash in the folder the job's logs go to, which Slurm's --output cannot name (it would drop the backslash and take the name literally); use a name without one", out)
	}
	return j, nil
}

// goRunBuilt says whether exe, this program's path, is a binary that
// "go run" (or "go test") built: in a go-build temporary folder
// ($TMPDIR/go-buildNNN/...) or in the Go build cache, cache.
func goRunBuilt(exe, cache string) bool {
	for _, part := range strings.Split(filepath.ToSlash(exe), "/") {
		if n, ok := strings.CutPrefix(part, "go-build"); ok && n != "" && strings.Trim(n, "0123456789") == "" {
			return true
		}
	}
	if cache == "" {
		return false
	}
	if real, err := filepath.EvalSymlinks(cache); err == nil {
		cache = real
	}
	rel, err := filepath.Rel(cache, exe)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// goCache is the Go build cache's folder as the go command finds it:
// $GOCACHE, else go-build in the user's cache folder.
func goCache() string {
	if c := os.Getenv("GOCACHE"); c != "" && c != "off" && filepath.IsAbs(c) {
		return c
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "go-build")
	}
	return ""
}

// invocation is how a user runs the program at exe from a shell: its
// name when that is what the PATH finds, else its path, quoted.
func invocation(exe string) string {
	name := filepath.Base(exe)
	if found, err := exec.LookPath(name); err == nil {
		a, errA := os.Stat(found)
		b, errB := os.Stat(exe)
		if errA == nil && errB == nil && os.SameFile(a, b) {
			return shellQuote(name)
		}
	}
	return shellQuote(exe)
}

// isControl says whether r is an ASCII control character (C0 or DEL).
func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// write writes DIR/sweep.sbatch, the job array that runs the plan's
// shards, one task each, and says how to submit and merge it.
func (j *slurmJob) write(e *env, plan *sweep.Plan) int {
	dir := shellQuote(j.dir)
	cmd := []string{shellQuote(j.exe), "sweep", shellQuote(j.config), "-q", "-j", "1",
		"--seed", strconv.FormatUint(plan.Master, 10)}
	for _, s := range j.sets {
		cmd = append(cmd, "--set", shellQuote(s))
	}
	if j.grid != "" {
		cmd = append(cmd, "--grid", shellQuote(j.grid))
	}
	cmd = append(cmd, "--shard", fmt.Sprintf("${SLURM_ARRAY_TASK_ID}/%d", j.tasks), "--out", dir+"/shard-${SLURM_ARRAY_TASK_ID}")
	script := fmt.Sprintf(`#!/bin/bash
# A simkron sweep of %s: %d points in %d shards, one per task of this
# job array. Submit with: sbatch %s/sweep.sbatch
# then, when every task has ended: %s merge %s/shard-* --out %s/all
#SBATCH --job-name=simkron-sweep
#SBATCH --array=0-%d
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=1
#SBATCH --output=%s
set -euo pipefail
exec %s
`, shellQuote(plan.Grid.Config), plan.Points, j.tasks, dir, shellQuote(j.exe), dir, dir, j.tasks-1,
		sbatchQuote(strings.ReplaceAll(j.dir, "%", "%%")+"/slurm-%A_%a.out"), strings.Join(cmd, " "))
	path := filepath.Join(j.out, "sweep.sbatch")
	if err := writeFileAtomic(path, []byte(script)); err != nil {
		fmt.Fprintf(e.stderr, "simkron sweep: %v\n", err)
		return exitFailed
	}
	if err := os.Chmod(path, 0o755); err != nil {
		fmt.Fprintf(e.stderr, "simkron sweep: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(e.stdout, "wrote %s: %d points in %d shards\nsubmit: sbatch %s\nmerge:  %s merge %s/shard-* --out %s/all\n",
		path, plan.Points, j.tasks, shellQuote(path), invocation(j.exe), shellQuote(j.out), shellQuote(j.out))
	return exitOK
}

// shellQuote quotes s as one word for bash: as it is when it holds only
// plainBytes (none of which bash reads specially), in single quotes
// otherwise, where every byte but the quote itself stands for itself (a
// quote in s ends the quotes, is escaped, and opens them again).
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, plainBytes) == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// plainBytes are the bytes shellQuote and sbatchQuote leave as they are.
const plainBytes = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._+,:=@-"

// sbatchQuote writes s for the value of an #SBATCH directive. sbatch
// splits a directive at white space and reads quotes, a backslash (which
// escapes the next byte) and # (a comment) itself (Slurm's
// src/sbatch/opt.c); s goes in double quotes, which keep its blanks in
// one word (an escaped blank outside quotes still ends the word in Slurm
// 22.05), with a backslash before every byte but plainBytes' (a # ends
// the directive even in quotes in older Slurms). s holds no control
// character: a newline would end the directive whatever its escape.
func sbatchQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(plainBytes, s[i]) < 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
	return b.String()
}

func cmdMerge(e *env, args []string) int {
	fs := newFlags(e, "merge", "DIR...", `Merge the points of a sweep's shards (the --out folders of
"simkron sweep --shard i/n" runs, in any order) into OUT/result.json and
OUT/summary.txt: the same bytes as the sweep run whole on one machine.
The folders must hold shards of one grid and together every point; each
point's file must be that point's result of that grid (a damaged file,
another point's, another sweep's or a plain run's result is refused).`)
	out := fs.String("out", "", "`DIR` for the merged result (required)")
	quiet := fs.Bool("q", false, "do not print the merged summary")
	rest, stop, st := parseFlags(e, fs, args)
	if stop {
		return st
	}
	if emptyFlag(fs, "out") != "" {
		fmt.Fprintf(e.stderr, "simkron merge: --out '': an empty folder name; the merged result goes to --out DIR\n")
		return exitUsage
	}
	if len(rest) == 0 || *out == "" {
		fmt.Fprintf(e.stderr, "simkron merge: want one or more DIR and --out DIR\n")
		return exitUsage
	}
	return merge(e, rest, *out, *quiet)
}

// merge reads the sweep folders dirs and writes the merged result to out.
func merge(e *env, dirs []string, out string, quiet bool) int {
	m, results, err := sweep.ReadPoints(dirs)
	if err != nil {
		fmt.Fprintf(e.stderr, "simkron merge: %v\n", err)
		return exitUsage
	}
	if err := prepareOut(out); err != nil {
		fmt.Fprintf(e.stderr, "simkron merge: --out %v\n", err)
		return exitUsage
	}
	res := sweep.Merge(m, results)
	var summary bytes.Buffer
	if err := report.WriteSummary(&summary, res); err != nil {
		fmt.Fprintf(e.stderr, "simkron merge: %v\n", err)
		return exitFailed
	}
	if err := writeResults(out, res, summary.Bytes(), nil); err != nil {
		fmt.Fprintf(e.stderr, "simkron merge: %v\n", err)
		return exitFailed
	}
	if !quiet {
		e.stdout.Write(summary.Bytes())
	}
	return exitOK
}
