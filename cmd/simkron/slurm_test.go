package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"simkron/internal/testtool"
)

// TestSweepOnSlurm submits a sweep to a Slurm cluster as a job array, one
// shard a task, waits for it, merges the shards and compares the merged
// result byte for byte with the same sweep run here. It needs a running
// cluster: .ci/run starts one (.ci/slurm start) and sets SIMKRON_SLURM=1;
// without one it is skipped, and under CI=true it fails (testtool).
func TestSweepOnSlurm(t *testing.T) {
	testtool.NeedSlurm(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "simkron")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	run := func(name string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return string(out)
	}
	cfg, err := filepath.Abs("../../configs/udp-r4000.toml")
	if err != nil {
		t.Fatal(err)
	}
	sets := []string{"-q", "--set", "host.inet.mtu=576,1000,1500", "--set", "workload.udp.sizes=[1024],[8192]", "--set", "workload.udp.messages=5"}
	args := append([]string{"sweep", cfg}, sets...)
	// Here the config as a user types it; the job script names its
	// absolute path: the results hold its name alone, and are the same.
	local := filepath.Join(dir, "local")
	run(bin, append(append([]string{"sweep", "../../configs/udp-r4000.toml"}, sets...), "--out", local)...)
	// A folder name with what sbatch's directives, Slurm's file name
	// patterns and bash each read specially: the job script quotes it
	// for each (and none that a glob reads, for the checks below).
	study := filepath.Join(dir, "my study's #1 at 100% $(x)")
	run(bin, append(args, "--slurm", "4", "--out", study)...)
	id := strings.TrimSpace(run("sbatch", "--parsable", filepath.Join(study, "sweep.sbatch")))
	id, _, _ = strings.Cut(id, ";")
	deadline := time.Now().Add(3 * time.Minute)
	for {
		states := strings.Fields(run("squeue", "-h", "-t", "all", "-j", id, "-o", "%T"))
		done := len(states) > 0
		for _, s := range states {
			switch s {
			case "COMPLETED":
			case "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY":
				logs, _ := filepath.Glob(filepath.Join(study, "slurm-*.out"))
				var b bytes.Buffer
				for _, l := range logs {
					c, _ := os.ReadFile(l)
					b.Write(c)
				}
				t.Fatalf("job %s: a task ended %s\n%s", id, s, b.String())
			default:
				done = false
			}
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still running: %v", id, states)
		}
		time.Sleep(time.Second)
	}
	// Trust the files, not only the states: every shard wrote its points,
	// and every task its log in the study's folder.
	shards, _ := filepath.Glob(filepath.Join(study, "shard-*"))
	if len(shards) != 4 {
		t.Fatalf("%d shard folders, want 4", len(shards))
	}
	if logs, _ := filepath.Glob(filepath.Join(study, "slurm-"+id+"_*.out")); len(logs) != 4 {
		t.Errorf("%d task logs in the study's folder, want 4", len(logs))
	}
	all := filepath.Join(study, "all")
	run(bin, append([]string{"merge", "-q", "--out", all}, shards...)...)
	want, _ := os.ReadFile(filepath.Join(local, "result.json"))
	got, err := os.ReadFile(filepath.Join(all, "result.json"))
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("the merged Slurm sweep differs from the local one (%v)", err)
	}
}
