package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func script(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "a.tcl")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A script given with --annotate runs with the experiment: its buckets
// and output land in the summary and the result.
func TestRunAnnotate(t *testing.T) {
	dir := t.TempDir()
	st, out, stderr := simkron(t, "run", "--out", dir, "--annotate", "../../configs/annotations/ip_output.tcl", "../../configs/ping-ne2000.toml")
	if st != exitOK {
		t.Fatalf("exit %d: %s", st, stderr)
	}
	// The script by its path relative to the experiment file, as results
	// hold paths.
	for _, want := range []string{"annotations: annotations/ip_output.tcl", "ip_output", "pcA: ", "NE2000 interrupts"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	res := readResult(t, filepath.Join(dir, "result.json"))
	if res.Annotations == nil || len(res.Annotations.Buckets) != 1 || res.Annotations.Buckets[0].Count == 0 {
		t.Errorf("result annotations: %+v", res.Annotations)
	}
}

// The delayed-ACK example script on the ttcp stall: the receiver's timer
// sends its ACKs on the 200 ms ticks of 4.4BSD's fast timer.
func TestRunAnnotateDelack(t *testing.T) {
	dir := t.TempDir()
	st, out, stderr := simkron(t, "run", "-q", "--out", dir, "--annotate", "../../configs/annotations/delack.tcl", "../../configs/ttcp-stall.toml")
	if st != exitOK {
		t.Fatalf("exit %d: %s", st, stderr)
	}
	res := readResult(t, filepath.Join(dir, "result.json"))
	if res.Annotations == nil || !strings.Contains(res.Annotations.Output, "rs6000: the delayed-ACK timer ran") {
		t.Fatalf("annotations: %+v\n%s", res.Annotations, out)
	}
	found := false
	for _, b := range res.Annotations.Buckets {
		if b.Name == "rs6000 delack gap ms" {
			found = true
			if b.Count < 300 || b.P50 < 199.9 || b.P50 > 200.1 {
				t.Errorf("delayed-ACK gaps: %+v, want their median at 200 ms", b)
			}
		}
	}
	if !found {
		t.Errorf("no delack gap bucket in %+v", res.Annotations.Buckets)
	}
}

// A script that fails while the run goes on stops it: the results so far
// are written, marked incomplete with the file, line and Tcl error.
func TestRunAnnotateBodyError(t *testing.T) {
	dir := t.TempDir()
	p := script(t, "annotation set pc ip_output:START {\n  set x [expr {1 / 0}]\n}\n")
	st, _, stderr := simkron(t, "run", "-q", "--out", dir, "--annotate", p, "../../configs/ping-ne2000.toml")
	if st != exitFailed {
		t.Errorf("exit %d, want %d", st, exitFailed)
	}
	res := readResult(t, filepath.Join(dir, "result.json"))
	if res.Complete || !strings.Contains(res.Incomplete, "a.tcl:2") || !strings.Contains(res.Incomplete, "divide by zero") {
		t.Errorf("complete %v, reason %q; want incomplete at a.tcl:2 with the Tcl error", res.Complete, res.Incomplete)
	}
	if !strings.Contains(stderr, "a.tcl:2") {
		t.Errorf("stderr does not name the script line:\n%s", stderr)
	}
}

// A script that does not load is a usage error: nothing runs or is written.
func TestRunAnnotateLoadError(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	p := script(t, "# comment\nannotation set pc no_such_function:START { }\n")
	st, _, stderr := simkron(t, "run", "--out", dir, "--annotate", p, "../../configs/ping-ne2000.toml")
	if st != exitUsage || !strings.Contains(stderr, "a.tcl:2") {
		t.Errorf("exit %d, stderr %q; want %d naming a.tcl:2", st, stderr, exitUsage)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Error("output written for a script that does not load")
	}
	p = script(t, "exec ls\n")
	if st, _, stderr := simkron(t, "run", "--annotate", p, "../../configs/ping-ne2000.toml"); st != exitUsage || !strings.Contains(stderr, "exec") {
		t.Errorf("exec in a script: exit %d, stderr %q", st, stderr)
	}
}
