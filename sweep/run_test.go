package sweep

import (
	"os"
	"path/filepath"
	"testing"

	"simkron/machine"
	_ "simkron/stack/apps" // the workloads
)

// Points whose runs are in islands share the sweep's threads: two
// workers on one thread, each point's two islands taking it in turn,
// write what one worker with threads of its own writes, byte for byte.
func TestRunSharesCores(t *testing.T) {
	g := Grid{Config: "../configs/top-lower.toml", Axes: []Axis{
		{Key: "workload.top.messages", Values: []string{"10", "20"}},
		{Key: "workload.top.sizes", Values: []string{"[128]"}},
	}}
	pl, err := NewPlan(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	shared, own := t.TempDir(), t.TempDir()
	for _, run := range []struct {
		dir string
		opt Options
	}{
		{shared, Options{Workers: 2, Cores: machine.NewCores(1)}},
		{own, Options{Workers: 1}},
	} {
		failed, err := pl.Run(run.dir, run.opt)
		if err != nil || len(failed) > 0 {
			t.Fatalf("%+v: %v %v", run.opt, err, failed)
		}
	}
	for i := range pl.Points {
		a, err := os.ReadFile(pointFile(shared, i))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(pointFile(own, i))
		if err != nil {
			t.Fatal(err)
		}
		if string(a) != string(b) {
			t.Errorf("point %d differs", i)
		}
	}
	if _, err := os.Stat(filepath.Join(shared, "sweep.json")); err != nil {
		t.Error(err)
	}
}
