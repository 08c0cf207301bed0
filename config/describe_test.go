package config_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/config"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

func TestDescribe(t *testing.T) {
	var b strings.Builder
	if err := config.Describe(&b, "cpu", defaultParams()); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "describe.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), b.String()); diff != "" {
		t.Errorf("Describe (-want +got):\n%s", diff)
	}
}

func TestParams(t *testing.T) {
	p := defaultParams()
	got := config.Params("", &p)[:2]
	want := []config.Param{
		{Key: "trace", Type: "boolean", Default: "false", Help: "log every event"},
		{Key: "clock", Type: "frequency", Default: "33MHz", Min: "1MHz", Max: "1GHz", Help: "CPU clock rate"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Params (-want +got):\n%s", diff)
	}
}
