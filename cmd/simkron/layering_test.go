package main

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"simkron/machine/part"
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
	// Counters are read from tagged stats structs by reflection alone.
	{pkg: "simkron/stats", only: []string{}},
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
	// The timeline observes, as the annotations do: it may read the
	// models, never assemble them, run a workload's code or draw.
	{pkg: "simkron/timeline", forbidden: []string{"simkron/machine", "simkron/cmd/...", "simkron/stack/...", "simkron/annotations", "simkron/devices/...", "simkron/ethersim/..."}},
	// Hardware never imports software.
	{pkg: "simkron/devices", forbidden: []string{"simkron/stack/...", "simkron/machine", "simkron/workload", "simkron/report/...", "simkron/annotations"}},
	{pkg: "simkron/ethersim", forbidden: []string{"simkron/stack/...", "simkron/machine", "simkron/devices/...", "simkron/cpu", "simkron/memory"}},
	// Software reaches devices through registers; it never draws reports.
	{pkg: "simkron/stack", forbidden: []string{"simkron/machine", "simkron/report", "simkron/annotations", "simkron/cmd/...", "simkron/ethersim/..."}},
	// machine runs any workload without naming one.
	{pkg: "simkron/machine", forbidden: []string{"simkron/stack/apps/...", "simkron/cmd/..."}},
	// The parts' contract knows no part, no technology, no software.
	{pkg: "simkron/machine/part", forbidden: []string{"simkron/machine/parts/...", "simkron/stack/...", "simkron/devices/...", "simkron/ethersim/...", "simkron/workload", "simkron/annotations"}},
	// A part never reaches back into the assembler, a command or a
	// workload.
	{pkg: "simkron/machine/parts", forbidden: []string{"simkron/machine", "simkron/cmd/...", "simkron/stack/apps/...", "simkron/sweep", "simkron/workload"}},
}

// directRules are imports a package must not make itself (its
// dependencies may): machine assembles parts it knows only through the
// list in machine/parts, so it names no device, stack or network
// package.
var directRules = []struct {
	pkg       string
	forbidden []string
}{
	{pkg: "simkron/machine", forbidden: []string{"simkron/stack/...", "simkron/devices/...", "simkron/ethersim/...", "simkron/machine/parts/*"}},
}

// importersOfMachine are the only packages that import simkron/machine,
// besides tests and the test helpers they share (testHelper).
var importersOfMachine = []string{"simkron/cmd/simkron", "simkron/sweep"}

// testHelper says whether pkg is a package only tests may import: its
// last element ends in "test" (internal/machinetest, stack/top/toptest),
// or it is internal/testtool.
func testHelper(pkg string) bool {
	return strings.HasSuffix(pkg, "test") || pkg == "simkron/internal/testtool"
}

// under reports whether pkg matches pattern: "P/..." is P and every
// package below it, "P/*" every package below P but not P.
func under(pkg, pattern string) bool {
	if tree, ok := strings.CutSuffix(pattern, "/*"); ok {
		return strings.HasPrefix(pkg, tree+"/")
	}
	tree, ok := strings.CutSuffix(pattern, "/...")
	return pkg == pattern || ok && (pkg == tree || strings.HasPrefix(pkg, tree+"/"))
}

// TestDirectImports holds directRules, that only cmd/simkron and sweep
// import machine, and that only tests import the test helpers.
func TestDirectImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}:{{join .Imports \" \"}}", "simkron/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imps, _ := strings.Cut(line, ":")
		for _, imp := range strings.Fields(imps) {
			for _, r := range directRules {
				if pkg != r.pkg {
					continue
				}
				for _, f := range r.forbidden {
					if under(imp, f) {
						t.Errorf("%s imports %s (it names no part: they are linked in through machine/parts)", pkg, imp)
					}
				}
			}
			if imp == "simkron/machine" && !slices.Contains(importersOfMachine, pkg) && !testHelper(pkg) {
				t.Errorf("%s imports simkron/machine: only %v do (and tests)", pkg, importersOfMachine)
			}
			if testHelper(imp) && !testHelper(pkg) {
				t.Errorf("%s imports the test helper %s: only tests may", pkg, imp)
			}
		}
	}
}

// TestMachineHasNoFilePerPart holds that machine names no part: none of
// its files is named after a registered technology, environment, family
// or device model (those live in machine/parts/...).
func TestMachineHasNoFilePerPart(t *testing.T) {
	var names []string
	for _, x := range part.Technologies() {
		names = append(names, x.Name)
	}
	for _, x := range part.Environments() {
		names = append(names, x.Name)
	}
	for _, x := range part.Families() {
		names = append(names, x.Name, x.Section.Key)
	}
	for _, x := range part.DeviceTypes() {
		names = append(names, x.Name)
	}
	files, err := filepath.Glob("../../machine/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no machine files: %v", err)
	}
	for _, f := range files {
		base := strings.TrimSuffix(filepath.Base(f), ".go")
		if strings.HasSuffix(base, "_test") {
			continue
		}
		for _, n := range names {
			if strings.Contains(base, n) || strings.HasPrefix(base, "device_") {
				t.Errorf("machine/%s.go is a file of a part (%s): parts live in machine/parts", base, n)
			}
		}
	}
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
					bad = bad || under(d, f)
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
