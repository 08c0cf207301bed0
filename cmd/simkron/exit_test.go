package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// One rule for exits: 0 success, 2 bad input (found before anything
// runs, nothing written), 1 a failure during the run. Each case names
// what the user gave.
func TestExitStatuses(t *testing.T) {
	dir := t.TempDir()
	small, _ := os.ReadFile("testdata/small.toml")
	abs := func(text string) string {
		return strings.ReplaceAll(text, "../../../configs", mustAbs(t, "../../configs"))
	}
	put := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := put("good.toml", abs(string(small)))
	badTOML := put("badtoml.toml", "[experiment\nname = 1\n")
	unknown := put("unknown.toml", strings.Replace(abs(string(small)), "seed = 7", "sed = 7", 1))
	aFile := put("afile", "x")
	badScript := put("bad.tcl", "annotation set pc nosuch_fn:START {}\n")
	failing := put("fails.tcl", "annotation set pc kmalloc:START {\n\terror boom\n}\n")
	for _, tc := range []struct {
		what   string
		args   []string
		status int
		stderr string // what stderr must say
	}{
		{"bad TOML", []string{"run", badTOML}, exitUsage, badTOML + ":1: "},
		{"unknown key", []string{"run", unknown}, exitUsage, unknown + `:4: experiment.sed: unknown key (did you mean "seed"?)`},
		{"bad --out (a file)", []string{"run", "--out", aFile, good}, exitUsage, "--out " + aFile + ": is a file, not a folder"},
		{"unwritable --out", []string{"run", "--out", filepath.Join(aFile, "sub"), good}, exitUsage, "--out " + filepath.Join(aFile, "sub") + ": not a directory"},
		{"missing config", []string{"run", filepath.Join(dir, "nosuch.toml")}, exitUsage, filepath.Join(dir, "nosuch.toml") + ": no such file or directory"},
		{"bad script", []string{"run", "--annotate", badScript, good}, exitUsage, badScript + `:1: annotation set pc nosuch_fn:START: no host defines symbol "nosuch_fn"`},
		{"script error at run time", []string{"run", "-q", "--annotate", failing, good}, exitFailed, failing + ":2: annotation pc kmalloc:START: boom"},
		{"--help", []string{"run", "--help"}, exitOK, ""},
		{"bad flag", []string{"run", "--bogus", good}, exitUsage, "simkron run: flag provided but not defined: -bogus"},
		{"missing result", []string{"report", "--format", "html", "testdata/nosuch"}, exitUsage, "testdata/nosuch: no such file"},
	} {
		st, stdout, stderr := simkron(t, tc.args...)
		if st != tc.status || !strings.Contains(stderr, tc.stderr) {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q", tc.what, st, stderr, tc.status, tc.stderr)
		}
		if tc.status == exitUsage && stdout != "" {
			t.Errorf("%s: wrote to stdout: %q", tc.what, stdout)
		}
	}
	if _, err := os.Stat(filepath.Join(aFile, "sub")); err == nil {
		t.Error("an output folder was made")
	}
	// report --output into a place that cannot be written names the
	// path the user typed, before rendering.
	res := writeSweep(t, dir)
	st, _, stderr := simkron(t, "report", "--format", "html", "--output", filepath.Join(aFile, "r.html"), res)
	if want := "--output " + filepath.Join(aFile, "r.html") + ": cannot write there: not a directory"; st != exitUsage || !strings.Contains(stderr, want) || strings.Contains(stderr, ".tmp") {
		t.Errorf("report --output unwritable: exit %d, %q; want 2 and %q", st, stderr, want)
	}
}

// Usage is printed once: on stdout for --help, on stderr after a mistake.
func TestUsageOnce(t *testing.T) {
	for _, cmd := range []string{"run", "validate", "params", "symbols", "devices", "report", "version"} {
		st, stdout, stderr := simkron(t, cmd, "--help")
		if st != exitOK || strings.Count(stdout, "Usage: simkron "+cmd) != 1 || stderr != "" {
			t.Errorf("%s --help: exit %d, stdout %d usages, stderr %q", cmd, st, strings.Count(stdout, "Usage:"), stderr)
		}
		st, stdout, stderr = simkron(t, cmd, "--nosuchflag")
		if st != exitUsage || stdout != "" || strings.Count(stderr, "Usage: simkron "+cmd) != 1 {
			t.Errorf("%s --nosuchflag: exit %d, stdout %q, stderr %q", cmd, st, stdout, stderr)
		}
	}
	st, stdout, _ := simkron(t, "--help")
	for _, want := range []string{"Exit status:", "0  success", "1  a failure during the run", "2  bad input"} {
		if st != exitOK || !strings.Contains(stdout, want) {
			t.Errorf("simkron --help lacks %q", want)
		}
	}
}
