package testtool_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"simkron/internal/testtool"
)

// recorder is a testing.TB that records how a helper ended the test:
// Skipf and Fatalf stop the helper as the real ones stop the test.
type recorder struct {
	testing.TB
	ended string // "skip", "fatal" or ""
	msg   string
	logs  []string
}

type stop struct{}

func (r *recorder) Helper()                   {}
func (r *recorder) Logf(f string, a ...any)   { r.logs = append(r.logs, f) }
func (r *recorder) Skipf(f string, a ...any)  { r.ended, r.msg = "skip", f; panic(stop{}) }
func (r *recorder) Fatalf(f string, a ...any) { r.ended, r.msg = "fatal", f; panic(stop{}) }
func (r *recorder) call(f func(testing.TB)) (self *recorder) {
	self = r
	defer func() {
		if v := recover(); v != nil {
			if _, ok := v.(stop); !ok {
				panic(v)
			}
		}
	}()
	f(r)
	return r
}

// A PATH holding one program, "present"; "absent" is nowhere.
func fakePath(t *testing.T) string {
	dir := t.TempDir()
	p := filepath.Join(dir, "present")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	return p
}

func TestNeedAndHave(t *testing.T) {
	present := fakePath(t)
	t.Setenv(testtool.LogEnv, "") // the fake tools are no tool CI uses
	for _, tc := range []struct {
		ci, tool  string
		need      string // how Need ends: "", "skip" or "fatal"
		have      string // how Have ends
		haveFound bool
	}{
		{ci: "", tool: "present", need: "", have: "", haveFound: true},
		{ci: "true", tool: "present", need: "", have: "", haveFound: true},
		{ci: "", tool: "absent", need: "skip", have: "", haveFound: false},
		{ci: "false", tool: "absent", need: "skip", have: "", haveFound: false},
		{ci: "true", tool: "absent", need: "fatal", have: "fatal"},
	} {
		t.Setenv("CI", tc.ci)
		var got string
		r := (&recorder{TB: t}).call(func(tb testing.TB) { got = testtool.Need(tb, tc.tool) })
		if r.ended != tc.need {
			t.Errorf("CI=%q Need(%s) ended %q, want %q", tc.ci, tc.tool, r.ended, tc.need)
		}
		if tc.need == "" && got != present {
			t.Errorf("CI=%q Need(%s) = %q, want %q", tc.ci, tc.tool, got, present)
		}
		var ok bool
		r = (&recorder{TB: t}).call(func(tb testing.TB) { _, ok = testtool.Have(tb, tc.tool) })
		if r.ended != tc.have || r.ended == "" && ok != tc.haveFound {
			t.Errorf("CI=%q Have(%s) ended %q found %v, want %q %v", tc.ci, tc.tool, r.ended, ok, tc.have, tc.haveFound)
		}
		if r.ended == "" && !ok && len(r.logs) == 0 {
			t.Errorf("CI=%q Have(%s): a check that did not run is not logged", tc.ci, tc.tool)
		}
	}
}

func TestNeedSlurm(t *testing.T) {
	dir := filepath.Dir(fakePath(t))
	t.Setenv(testtool.LogEnv, "") // the fake sbatch is not the cluster's
	if err := os.WriteFile(filepath.Join(dir, "sbatch"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ ci, slurm, want string }{
		{"", "", "skip"},
		{"", "1", ""},
		{"true", "", "fatal"},
		{"true", "0", "fatal"},
		{"true", "1", ""},
	} {
		t.Setenv("CI", tc.ci)
		t.Setenv(testtool.SlurmEnv, tc.slurm)
		r := (&recorder{TB: t}).call(func(tb testing.TB) { testtool.NeedSlurm(tb) })
		if r.ended != tc.want {
			t.Errorf("CI=%q %s=%q: NeedSlurm ended %q (%s), want %q", tc.ci, testtool.SlurmEnv, tc.slurm, r.ended, r.msg, tc.want)
		}
		if r.ended == "fatal" && !strings.Contains(r.msg, "CI=true") {
			t.Errorf("the failure does not say why: %q", r.msg)
		}
	}
}

// Each use of a tool is recorded in the file SIMKRON_TOOL_LOG names, with
// the test's name; a tool not found is not.
func TestLog(t *testing.T) {
	present := fakePath(t)
	log := filepath.Join(t.TempDir(), "tools.log")
	t.Setenv(testtool.LogEnv, log)
	t.Setenv("CI", "")
	(&recorder{TB: t}).call(func(tb testing.TB) { testtool.Need(tb, "present") })
	(&recorder{TB: t}).call(func(tb testing.TB) { testtool.Have(tb, "absent") })
	(&recorder{TB: t}).call(func(tb testing.TB) { testtool.Have(tb, "present") })
	got, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	line := t.Name() + " present " + present + "\n"
	if want := line + line; string(got) != want {
		t.Errorf("log:\n%s\nwant:\n%s", got, want)
	}
}
