package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The hostile suite runs what a hostile or careless user would give
// simkron, each case as a separate process of the built binary from the
// project root (so a hang, an abort or a memory blow-up fails the case,
// not the test binary), and asserts the exit status, the first line of
// standard error and what was written. The cases live beside the area
// they harden (hostile_*_test.go); each names the item of the hardening
// issue it reproduces.
//
// With HOSTILE_TABLE=FILE the suite appends one Markdown row per case to
// FILE: item, case, exit status and the first line of the message.

// written is what a case leaves in its output folder.
type written int

const (
	// wroteAny: not checked.
	wroteAny written = iota
	// wroteNothing: the output folder does not exist or is empty.
	wroteNothing
	// wroteIncomplete: result.json marked incomplete, and summary.txt.
	wroteIncomplete
	// wroteComplete: result.json marked complete, and summary.txt.
	wroteComplete
)

// hostileCase is one reproduction.
type hostileCase struct {
	item int    // the item number
	name string // what the user did
	// files are written under the case's folder before the run; "{dir}"
	// in their text is that folder.
	files map[string]string
	// args follow "simkron"; "{dir}" is the case's folder and "{out}" its
	// output folder ({dir}/out, not created).
	args  []string
	env   []string // added to the environment
	stdin string
	// status is the exit status wanted; stderr a text the first line of
	// standard error must contain (empty: not checked).
	status int
	stderr string
	// stderrAny: a text anywhere in standard error.
	stderrAny string
	wrote     written
	// check, when set, looks at what the run left: the case's folder, and
	// its standard output and error.
	check func(t *testing.T, dir, stdout, stderr string)
	// timeout bounds the process (default one minute); memory its address
	// space (default 4 GiB), so that a regression fails rather than takes
	// the machine down. Below about 2 GiB the Go runtime itself fails to
	// start now and then (it reserves address space early): stay above.
	timeout time.Duration
	memory  int64
}

var (
	hostileOnce sync.Once
	hostileBin  string
	hostileErr  error
	hostileRoot string
)

// hostileBinary builds simkron once for the suite.
func hostileBinary(t *testing.T) (bin, root string) {
	t.Helper()
	hostileOnce.Do(func() {
		dir, err := os.MkdirTemp("", "simkron-hostile-")
		if err != nil {
			hostileErr = err
			return
		}
		hostileBin = filepath.Join(dir, "simkron")
		if out, err := exec.Command("go", "build", "-o", hostileBin, ".").CombinedOutput(); err != nil {
			hostileErr = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		hostileRoot, hostileErr = filepath.Abs("../..")
	})
	if hostileErr != nil {
		t.Fatal(hostileErr)
	}
	return hostileBin, hostileRoot
}

// runHostile runs each case as a subtest.
func runHostile(t *testing.T, cases []hostileCase) {
	bin, root := hostileBinary(t)
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%02d-%s", tc.item, tc.name), func(t *testing.T) {
			runHostileCase(t, bin, root, tc)
		})
	}
}

func runHostileCase(t *testing.T, bin, root string, tc hostileCase) {
	dir := t.TempDir()
	expand := func(s string) string {
		s = strings.ReplaceAll(s, "{out}", filepath.Join(dir, "out"))
		return strings.ReplaceAll(s, "{dir}", dir)
	}
	for name, text := range tc.files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(expand(text)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := make([]string, len(tc.args))
	for i, a := range tc.args {
		args[i] = expand(a)
	}
	timeout, memory := tc.timeout, tc.memory
	if timeout == 0 {
		timeout = time.Minute
	}
	if memory == 0 {
		memory = 4 << 30
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	// The address-space limit is set by the shell that execs simkron.
	cmd := exec.CommandContext(ctx, "bash", append([]string{"-c", fmt.Sprintf(`ulimit -v %d && exec "$0" "$@"`, memory>>10), bin}, args...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), tc.env...)
	cmd.Stdin = strings.NewReader(tc.stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	status := 0
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		status = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("simkron %q: %v", args, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("simkron %q: still running after %v; killed", args, timeout)
	}
	first, _, _ := strings.Cut(stderr.String(), "\n")
	hostileRow(tc, status, first)
	if status != tc.status {
		t.Errorf("exit %d, want %d (after %v)\nstderr: %s", status, tc.status, time.Since(start).Round(time.Millisecond), clip(stderr.String()))
	}
	if strings.Contains(stderr.String(), "goroutine ") || strings.Contains(stderr.String(), "panic:") || strings.Contains(stderr.String(), "SIGABRT") {
		t.Errorf("a Go panic or an abort instead of a message:\n%s", clip(stderr.String()))
	}
	if tc.stderr != "" && !strings.Contains(first, expand(tc.stderr)) {
		t.Errorf("first line of stderr %q does not say %q", first, expand(tc.stderr))
	}
	if tc.stderrAny != "" && !strings.Contains(stderr.String(), expand(tc.stderrAny)) {
		t.Errorf("stderr does not say %q:\n%s", expand(tc.stderrAny), clip(stderr.String()))
	}
	checkWritten(t, filepath.Join(dir, "out"), tc.wrote)
	if tc.check != nil {
		tc.check(t, dir, stdout.String(), stderr.String())
	}
}

// checkWritten checks what a run left in its output folder.
func checkWritten(t *testing.T, out string, w written) {
	t.Helper()
	entries, err := os.ReadDir(out)
	switch w {
	case wroteAny:
		return
	case wroteNothing:
		if err == nil && len(entries) > 0 {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("wrote %v into the output folder; want nothing", names)
		}
		return
	}
	data, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Errorf("no result written: %v", err)
		return
	}
	var r struct {
		Complete bool   `json:"complete"`
		Reason   string `json:"incomplete_reason"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Errorf("result.json does not parse: %v", err)
		return
	}
	if want := w == wroteComplete; r.Complete != want {
		t.Errorf("result.json complete = %v (%q); want %v", r.Complete, r.Reason, want)
	}
	if _, err := os.Stat(filepath.Join(out, "summary.txt")); err != nil {
		t.Errorf("no summary written: %v", err)
	}
}

var hostileTableMu sync.Mutex

// hostileRow appends the case's row to $HOSTILE_TABLE, if set.
func hostileRow(tc hostileCase, status int, first string) {
	path := os.Getenv("HOSTILE_TABLE")
	if path == "" {
		return
	}
	hostileTableMu.Lock()
	defer hostileTableMu.Unlock()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	if r := []rune(first); len(r) > 160 {
		first = string(r[:160]) + "…"
	}
	fmt.Fprintf(f, "| %d | %s | %d | %s |\n", tc.item, tc.name, status, strings.ReplaceAll(first, "|", `\|`))
}

func clip(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "…"
	}
	return s
}

// The harness itself: a case that passes today and one of each kind of
// failure it must catch.
func TestHostileHarness(t *testing.T) {
	runHostile(t, []hostileCase{
		{item: 0, name: "bad TOML exits 2 and writes nothing",
			files:  map[string]string{"bad.toml": "[experiment\n"},
			args:   []string{"run", "--out", "{out}", "{dir}/bad.toml"},
			status: exitUsage, stderr: "{dir}/bad.toml:1: ", wrote: wroteNothing},
		{item: 0, name: "a good run exits 0 with its results",
			args:   []string{"run", "-q", "--out", "{out}", "cmd/simkron/testdata/small.toml"},
			status: exitOK, wrote: wroteComplete},
	})
}
