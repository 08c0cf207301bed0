package main

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"simkron/machine"
)

// Every shipped config (the TOP study's at the golden test's settings)
// writes the same bytes at -j 1 and -j 8, and one in islands the same
// again with one Go thread (GOMAXPROCS=1): the islands' threads change
// nothing of the result. (The golden test runs each at the default -j.)
func TestIslandsDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every experiment twice or more")
	}
	configs, err := filepath.Glob("../../configs/*.toml")
	if err != nil || len(configs) == 0 {
		t.Fatalf("no configs: %v", err)
	}
	split := 0
	for _, cfg := range configs {
		name := strings.TrimSuffix(filepath.Base(cfg), ".toml")
		if bridged(cfg) {
			continue
		}
		exp, err := machine.LoadExperiment(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r, err := machine.New(exp, machine.Options{NoCapture: true})
		if err != nil {
			t.Fatal(err)
		}
		islands := r.Islands()
		r.Close()
		runAt := func(j string) map[string][]byte {
			dir := t.TempDir()
			args := []string{"run", "-q", "-j", j, "--out", dir, cfg}
			for _, kv := range goldenSets[name] {
				args = append(args, "--set", kv)
			}
			if st, _, stderr := simkron(t, args...); st != exitOK {
				t.Fatalf("%s -j %s exited %d: %s", name, j, st, stderr)
			}
			return readDir(t, dir)
		}
		want := runAt("1")
		type again struct {
			how string
			run func() map[string][]byte
		}
		runs := []again{{"-j 8", func() map[string][]byte { return runAt("8") }}}
		if islands > 1 {
			split++
			runs = append(runs, again{"GOMAXPROCS=1 -j 2", func() map[string][]byte {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
				return runAt("2")
			}})
		}
		for _, a := range runs {
			how, got := a.how, a.run()
			if len(got) != len(want) {
				t.Errorf("%s: %s wrote %d files, -j 1 %d", name, how, len(got), len(want))
			}
			for f, b := range want {
				if string(got[f]) != string(b) {
					t.Errorf("%s: %s differs at %s from -j 1", name, how, f)
				}
			}
		}
	}
	if split == 0 {
		t.Error("no shipped config is in islands: nothing here runs apart")
	}
}
