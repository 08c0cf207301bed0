// Package testtool is the one place where a test asks for something
// outside Go that it needs: a program (tshark to dissect a capture,
// chromium to open the HTML report, bzip2 to check a CRC) or the Slurm
// cluster the sweep's job-array test submits to.
//
// Where the tool is missing a test is skipped (Need) or goes without the
// check (Have), and says so; under CI=true it fails instead: .ci/run
// installs every tool and starts the cluster, so that a check that did
// not run there is a fault, not a skip that Go's test cache would keep.
//
// Layer: none; used by tests only.
package testtool

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// CI says whether the tests run under CI (CI=true), where every tool
// must be there.
func CI() bool { return os.Getenv("CI") == "true" }

// install says how to get each tool the tests use, for the messages.
var install = map[string]string{
	"tshark":   "apt-get install tshark",
	"chromium": "apt-get install chromium",
	"bzip2":    "apt-get install bzip2",
	"ip":       "apt-get install iproute2",
	"ping":     "apt-get install iputils-ping",
}

// Need returns the path of the program tool on the PATH. Without it the
// test is skipped, or under CI=true fails.
func Need(t testing.TB, tool string) string {
	t.Helper()
	path, ok := look(t, tool)
	if !ok {
		t.Skipf("%s is not on the PATH: skipped (%s; under CI=true this fails)", tool, how(tool))
	}
	return path
}

// Have returns the path of the program tool on the PATH and true, for a
// check that is one part of a test. Without it the test logs that the
// check did not run and goes on (ok false), or under CI=true fails.
func Have(t testing.TB, tool string) (path string, ok bool) {
	t.Helper()
	path, ok = look(t, tool)
	if !ok {
		t.Logf("%s is not on the PATH: this check did not run (%s; under CI=true this fails)", tool, how(tool))
	}
	return path, ok
}

// look finds tool, failing the test under CI=true when it is missing.
func look(t testing.TB, tool string) (string, bool) {
	t.Helper()
	path, err := exec.LookPath(tool)
	if err != nil {
		if CI() {
			t.Fatalf("%s is not on the PATH with CI=true: .ci/run installs it, and under CI a check that needs it must run (%s)", tool, how(tool))
		}
		return "", false
	}
	record(t, tool, path)
	return path, true
}

// LogEnv names a file to which every use of a tool is appended, one line
// "TEST TOOL PATH": .ci/run prints it, to show that the tests that need
// a tool ran (not skipped, not a cached result).
const LogEnv = "SIMKRON_TOOL_LOG"

// record appends the use of tool to the file LogEnv names, if any.
func record(t testing.TB, tool, path string) {
	t.Helper()
	name := os.Getenv(LogEnv)
	if name == "" {
		return
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatalf("%s: %v", LogEnv, err)
	}
	defer f.Close()
	// One write of one short line: lines of tests running in parallel
	// (several packages at once) do not interleave.
	if _, err := fmt.Fprintf(f, "%s %s %s\n", t.Name(), tool, path); err != nil {
		t.Fatalf("%s: %v", LogEnv, err)
	}
}

func how(tool string) string {
	if s, ok := install[tool]; ok {
		return s
	}
	return "install " + tool
}

// SlurmEnv is the variable that says a Slurm cluster is there to submit
// to (.ci/run sets it after .ci/slurm start).
const SlurmEnv = "SIMKRON_SLURM"

// NeedSlurm skips the test unless SIMKRON_SLURM=1 says that a Slurm
// cluster is running (sbatch and squeue reach it); under CI=true a
// missing cluster fails the test.
func NeedSlurm(t testing.TB) {
	t.Helper()
	if os.Getenv(SlurmEnv) == "1" {
		Need(t, "sbatch")
		return
	}
	const how = "run .ci/slurm install && .ci/slurm start as root, then " + SlurmEnv + "=1"
	if CI() {
		t.Fatalf("no Slurm cluster with CI=true (%s is not 1): .ci/run starts one, and under CI the job-array test must run (%s)", SlurmEnv, how)
	}
	t.Skipf("no Slurm cluster: skipped (%s; under CI=true this fails)", how)
}
