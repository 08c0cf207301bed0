package machine_test

import (
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
