package machine_test

import (
	"path/filepath"
	"testing"

	"simkron/machine"
)

func TestLoadQuickstart(t *testing.T) {
	exp, err := machine.LoadExperiment("../configs/quickstart.toml")
	if err != nil {
		t.Fatal(err)
	}
	if len(exp.Hosts) != 2 {
		t.Fatalf("hosts = %d", len(exp.Hosts))
	}
}

// Every experiment under configs/ loads and builds (the ones not run
// whole by a test are at least kept from rotting).
func TestEveryConfigBuilds(t *testing.T) {
	files, err := filepath.Glob("../configs/*.toml")
	if err != nil || len(files) < 9 {
		t.Fatalf("%d configs: %v", len(files), err)
	}
	for _, f := range files {
		exp, err := machine.LoadExperiment(f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		r, err := machine.New(exp, machine.Options{})
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		r.Close()
	}
}
