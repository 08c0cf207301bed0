package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

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
Every point is loaded and checked before anything runs.

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
	jobs := fs.Int("j", runtime.NumCPU(), "points run at once")
	shardText := fs.String("shard", "", "run only slice `i/n` of the grid (points whose index is i modulo n), for a cluster's job array")
	resume := fs.Bool("resume", false, "skip points whose result DIR holds already")
	var seed seedFlag
	fs.Var(&seed, "seed", "master seed (default: the experiment's)")
	out := fs.String("out", "", "`DIR` for the grid's description, the points' results and the merged result (required)")
	slurm := fs.Int("slurm", 0, "do not run: write DIR/sweep.sbatch, a Slurm job array of `N` tasks, one shard each, and say how to merge")
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
	if *out == "" {
		return bad("--out DIR is required: the points' results go there")
	}
	if *jobs < 1 {
		return bad("-j %d: at least one point must run at a time", *jobs)
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
			return bad("%v", err)
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
	if *slurm < 0 || *slurm > 100000 {
		return bad("--slurm %d: want 1 to 100000 tasks", *slurm)
	}
	plan, err := sweep.NewPlan(g, seed.v)
	if err != nil {
		fmt.Fprintf(e.stderr, "%v\n", err)
		return exitUsage
	}
	if err := prepareOut(*out); err != nil {
		return bad("--out %v", err)
	}
	if *slurm > 0 {
		return writeSlurm(e, plan, sets, *gridFile, *out, *slurm)
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
	failed, err := plan.Run(*out, sweep.Options{Workers: *jobs, Shard: shard, Resume: *resume, Progress: progress})
	if e.stderrTTY {
		fmt.Fprintf(e.stderr, "\r%70s\r", "")
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "simkron sweep: %v\n", err)
		return exitUsage
	}
	e.log.Debugf("sweep of %d points in %v", len(plan.All), time.Since(start))
	for _, f := range failed {
		fmt.Fprintf(e.stderr, "simkron sweep: %v\n", f)
	}
	if shard.N > 1 {
		fmt.Fprintf(e.stdout, "shard %d/%d: its points are in %s; merge every shard with: simkron merge DIR... --out DIR\n", shard.I, shard.N, *out)
	} else if st := merge(e, []string{*out}, *out, *quiet); st != exitOK {
		return st
	}
	if len(failed) > 0 {
		return exitFailed
	}
	return exitOK
}

// writeSlurm writes the job array that runs the plan's shards, one task
// each, and says how to submit and merge it.
func writeSlurm(e *env, plan *sweep.Plan, sets []string, gridFile, out string, n int) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(e.stderr, "simkron sweep: %v\n", err)
		return exitFailed
	}
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	dir := abs(out)
	cmd := []string{shellQuote(exe), "sweep", shellQuote(abs(plan.Grid.Config)), "-q", "-j", "1",
		"--seed", strconv.FormatUint(plan.Master, 10)}
	for _, s := range sets {
		cmd = append(cmd, "--set", shellQuote(s))
	}
	if gridFile != "" {
		cmd = append(cmd, "--grid", shellQuote(abs(gridFile)))
	}
	cmd = append(cmd, "--shard", fmt.Sprintf("${SLURM_ARRAY_TASK_ID}/%d", n), "--out", shellQuote(dir)+"/shard-${SLURM_ARRAY_TASK_ID}")
	script := fmt.Sprintf(`#!/bin/bash
# A simkron sweep of %s: %d points in %d shards, one per task of this
# job array. Submit with: sbatch %s/sweep.sbatch
# then, when every task has ended: simkron merge %s/shard-* --out %s/all
#SBATCH --job-name=simkron-sweep
#SBATCH --array=0-%d
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=1
#SBATCH --output=%s/slurm-%%A_%%a.out
set -euo pipefail
exec %s
`, plan.Grid.Config, len(plan.All), n, dir, dir, dir, n-1, dir, strings.Join(cmd, " "))
	path := filepath.Join(out, "sweep.sbatch")
	if err := writeFileAtomic(path, []byte(script)); err != nil {
		fmt.Fprintf(e.stderr, "simkron sweep: %v\n", err)
		return exitFailed
	}
	if err := os.Chmod(path, 0o755); err != nil {
		fmt.Fprintf(e.stderr, "simkron sweep: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(e.stdout, "wrote %s: %d points in %d shards\nsubmit: sbatch %s\nmerge:  simkron merge %s/shard-* --out %s/all\n",
		path, len(plan.All), n, path, out, out)
	return exitOK
}

// shellQuote quotes s for bash.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?[](){};&|<>#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func cmdMerge(e *env, args []string) int {
	fs := newFlags(e, "merge", "DIR...", `Merge the points of a sweep's shards (the --out folders of
"simkron sweep --shard i/n" runs, in any order) into OUT/result.json and
OUT/summary.txt: the same bytes as the sweep run whole on one machine.
The folders must hold shards of one grid and together every point.`)
	out := fs.String("out", "", "`DIR` for the merged result (required)")
	quiet := fs.Bool("q", false, "do not print the merged summary")
	rest, stop, st := parseFlags(e, fs, args)
	if stop {
		return st
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
