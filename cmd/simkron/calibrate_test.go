package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// withoutFunctional returns a shipped machine file without its
// [functional] section (and the comment above it).
func withoutFunctional(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "configs", "machines", name))
	if err != nil {
		t.Fatal(err)
	}
	text, _, ok := strings.Cut(string(b), "\n# Functional detail's costs")
	if !ok {
		t.Fatalf("%s has no [functional] section", name)
	}
	return text + "\n"
}

// simkron calibrate prints one [functional] section per machine file, in
// the hosts' order, the same every time; a machine file given the section
// runs in functional detail, and without it functional detail is refused
// with a pointer to simkron calibrate.
func TestCalibrate(t *testing.T) {
	dir := t.TempDir()
	for _, m := range []string{"i486dx33.toml", "r4000.toml"} {
		if err := os.WriteFile(filepath.Join(dir, m), []byte(withoutFunctional(t, m)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	small, err := os.ReadFile("testdata/small.toml")
	if err != nil {
		t.Fatal(err)
	}
	exp := strings.ReplaceAll(string(small), "../../../configs/machines/", "")
	path := filepath.Join(dir, "small.toml")
	if err := os.WriteFile(path, []byte(exp), 0o644); err != nil {
		t.Fatal(err)
	}

	st, _, stderr := simkron(t, "run", "-q", "--set", "experiment.detail=functional", path)
	if st != exitUsage || !strings.Contains(stderr, "i486dx33.toml (host pc486) has no [functional] section: run `simkron calibrate") {
		t.Errorf("functional without costs: status %d, stderr:\n%s", st, stderr)
	}

	st, out, stderr := simkron(t, "calibrate", path)
	if st != exitOK {
		t.Fatalf("calibrate: status %d: %s", st, stderr)
	}
	if _, again, _ := simkron(t, "calibrate", path); again != out {
		t.Errorf("calibrate twice differs:\n%s\n---\n%s", out, again)
	}
	sections := strings.Split(out, "\n\n")
	if len(sections) != 2 || !strings.HasPrefix(sections[0], "# i486dx33.toml") || !strings.HasPrefix(sections[1], "# r4000.toml") {
		t.Fatalf("want the i486dx33 and r4000 sections in host order, got:\n%s", out)
	}
	for i, m := range []string{"i486dx33.toml", "r4000.toml"} {
		if !strings.Contains(sections[i], `experiment "small"`) || !strings.Contains(sections[i], "[functional]\nread  = ") {
			t.Errorf("section %d:\n%s", i, sections[i])
		}
		f, err := os.OpenFile(filepath.Join(dir, m), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("\n" + sections[i])
		f.Close()
	}
	st, out, stderr = simkron(t, "run", "--set", "experiment.detail=functional", path)
	if st != exitOK || !strings.Contains(out, "detail: functional") {
		t.Errorf("functional run: status %d, stderr %s, summary:\n%s", st, stderr, out)
	}

	if st, out, _ := simkron(t, "calibrate", "--help"); st != exitOK || !strings.Contains(out, "[functional]") || !strings.Contains(out, "-set") {
		t.Errorf("calibrate --help: status %d:\n%s", st, out)
	}
	if st, _, _ := simkron(t, "calibrate"); st != exitUsage {
		t.Errorf("calibrate without CONFIG: status %d, want %d", st, exitUsage)
	}
	st, out, _ = simkron(t, "params")
	if st != exitOK || !strings.Contains(out, "experiment.detail") || !strings.Contains(out, "functional.copy") {
		t.Errorf("params lacks experiment.detail or functional.copy")
	}
}
