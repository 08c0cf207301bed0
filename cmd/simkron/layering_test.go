package main

import (
	"os/exec"
	"strings"
	"testing"
)

// layerRules are docs/design.md's arrows that must never appear: for each
// package and those below it, the module packages it must not depend on,
// directly or not ("P/..." is P and every package below it), or the only
// ones it may. Tests may import more.
var layerRules = []struct {
	pkg       string
	forbidden []string
	only      []string // when set, the only module packages allowed
}{
	// Trace sources are below everything that fires them.
	{pkg: "simkron/trace", only: []string{}},
	{pkg: "simkron/sim", only: []string{"simkron/trace"}},
	{pkg: "simkron/memory", only: []string{"simkron/sim", "simkron/trace"}},
	{pkg: "simkron/cpu", only: []string{"simkron/sim", "simkron/memory", "simkron/trace"}},
	// The cards' capabilities: what workloads and parts name a card by.
	{pkg: "simkron/card", only: []string{"simkron/sim", "simkron/trace"}},
	{pkg: "simkron/config", only: []string{"simkron/sim", "simkron/internal/infile", "simkron/trace"}},
	{pkg: "simkron/internal/infile", only: []string{}},
	{pkg: "simkron/stack/header", only: []string{}},
	{pkg: "simkron/report/shape", only: []string{}},
	{pkg: "simkron/workload", only: []string{"simkron/sim", "simkron/config", "simkron/report/shape", "simkron/trace"}},
	// The report draws any workload: it knows none.
	{pkg: "simkron/report", forbidden: []string{"simkron/stack/...", "simkron/machine", "simkron/workload", "simkron/annotations"}},
	// The observer sits below the assembler it observes.
	{pkg: "simkron/annotations", forbidden: []string{"simkron/machine", "simkron/cmd/...", "simkron/stack/...", "simkron/workload", "simkron/report/..."}},
	// Hardware never imports software.
	{pkg: "simkron/devices", forbidden: []string{"simkron/stack/...", "simkron/machine", "simkron/workload", "simkron/report/...", "simkron/annotations"}},
	{pkg: "simkron/ethersim", forbidden: []string{"simkron/stack/...", "simkron/machine", "simkron/devices/...", "simkron/cpu", "simkron/memory"}},
	// Software reaches devices through registers; it never draws reports.
	{pkg: "simkron/stack", forbidden: []string{"simkron/machine", "simkron/report", "simkron/annotations", "simkron/cmd/...", "simkron/ethersim/..."}},
	// machine runs any workload without naming one.
	{pkg: "simkron/machine", forbidden: []string{"simkron/stack/apps/...", "simkron/cmd/..."}},
}

func TestLayering(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}:{{join .Deps \" \"}}", "simkron/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, _ := strings.Cut(line, ":")
		for _, r := range layerRules {
			if pkg != r.pkg && !strings.HasPrefix(pkg, r.pkg+"/") {
				continue
			}
			checked[r.pkg] = true
			for _, d := range strings.Fields(deps) {
				if d != "simkron" && !strings.HasPrefix(d, "simkron/") {
					continue
				}
				bad := false
				for _, f := range r.forbidden {
					tree, ok := strings.CutSuffix(f, "/...")
					bad = bad || d == f || ok && (d == tree || strings.HasPrefix(d, tree+"/"))
				}
				if r.only != nil {
					bad = true
					for _, o := range r.only {
						bad = bad && d != o
					}
				}
				if bad {
					t.Errorf("%s depends on %s (rule for %s)", pkg, d, r.pkg)
				}
			}
		}
	}
	for _, r := range layerRules {
		if !checked[r.pkg] {
			t.Errorf("no package %s to check", r.pkg)
		}
	}
}
