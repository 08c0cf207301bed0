package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"simkron/cpu"
	"simkron/report/shape"
	"simkron/stack/kernel"
	"simkron/workload"
)

// copycost is a workload defined here alone, in a test file: on every
// host a program copies buffers of each size with the kernel's bcopy, and
// the simulator reports the cycles each copy took. Neither machine nor
// report knows it; it reaches them through package workload only.
type copycostParams struct {
	Sizes  []int `toml:"sizes" min:"4" max:"65536" help:"bytes copied, one copy each"`
	Passes int   `toml:"passes" min:"1" max:"100" help:"copies per size; the last is reported"`
}

type copycostRow struct {
	Host   string `json:"host"`
	Size   int    `json:"size"`
	Cycles int64  `json:"cycles"`
}

type copycost struct {
	p    copycostParams
	ks   []*kernel.Kernel
	rows []copycostRow
}

var defCopycost = cpu.Def{Name: "copycost_main", Layer: cpu.LayerAPPL, Instructions: 20, CodeBytes: 128, Why: "loop over the sizes"}

func init() {
	workload.Register(workload.Type{
		Name:   "copycost",
		Help:   "test only: bcopy cycles per buffer size on every host",
		Params: func() any { return &copycostParams{Sizes: []int{64, 1024}, Passes: 2} },
		New: func(env workload.Env, params any) (workload.Workload, error) {
			w := &copycost{p: *params.(*copycostParams)}
			for _, h := range env.Hosts() {
				k, ok := workload.Find[*kernel.Kernel](h)
				if !ok {
					return nil, fmt.Errorf("host %q has no kernel", h.Name())
				}
				k.Symbols().Define(defCopycost)
				w.ks = append(w.ks, k)
			}
			return w, nil
		},
	})
}

func (w *copycost) Start() {
	for _, k := range w.ks {
		k.Spawn("copycost", func(t *kernel.Thread) {
			c := k.CPU()
			main, _ := k.Symbols().Lookup(defCopycost.Name)
			c.Enter(main)
			defer c.Exit(main)
			buf := k.Kmalloc(2 * 65536)
			for _, n := range w.p.Sizes {
				var cycles int64
				for range w.p.Passes {
					x := c.Current()
					before := x.Cycles()
					k.Bcopy(buf+65536, buf, n)
					cycles = x.Cycles() - before
				}
				w.rows = append(w.rows, copycostRow{Host: k.Name(), Size: n, Cycles: cycles})
			}
		})
	}
}

func (w *copycost) Result() (workload.Result, error) {
	t := shape.Table{Title: "copycost: bcopy per size", Columns: []shape.Column{{Name: "host"}, {Name: "size", Unit: "B"}, {Name: "copy", Unit: "cycles"}}}
	line := shape.Line{Label: "bcopy", Marks: true}
	for _, r := range w.rows {
		t.Rows = append(t.Rows, []string{r.Host, fmt.Sprint(r.Size), fmt.Sprint(r.Cycles)})
		line.Points = append(line.Points, shape.XY{X: float64(r.Size), Y: float64(r.Cycles)})
	}
	chart := shape.Chart{Name: "copycost", Caption: "Cycles of one bcopy against its size.",
		Plots: []shape.Plot{{Title: "bcopy cycles against size", XLabel: "bytes", YLabel: "cycles", XLog: true, Lines: []shape.Line{line}}}}
	return workload.Result{
		Sections: []workload.Section{{Name: "copycost", Value: w.rows}},
		Figures:  shape.Figures{Tables: []shape.Table{t}, Charts: []shape.Chart{chart}},
	}, nil
}

// A workload defined in a test file runs from a TOML config, its section
// is decoded strictly and listed by simkron params, and the HTML report
// shows its table and its chart.
func TestWorkloadPlugsIn(t *testing.T) {
	dir := t.TempDir()
	st, stdout, stderr := simkron(t, "run", "--out", dir, "testdata/plugin.toml")
	if st != exitOK {
		t.Fatalf("run exited %d: %s", st, stderr)
	}
	if !strings.Contains(stdout, "copycost: bcopy per size") || !strings.Contains(stdout, "size B  copy cycles") {
		t.Errorf("the summary lacks the workload's table:\n%s", stdout)
	}
	res := readResult(t, filepath.Join(dir, "result.json"))
	var rows []copycostRow
	if err := res.Section("copycost", &rows); err != nil || len(rows) != 4 {
		t.Fatalf("section: %v %v", rows, err)
	}
	for i := 1; i < len(rows); i++ {
		if rows[i].Cycles <= rows[i-1].Cycles {
			t.Errorf("a copy of %d bytes took %d cycles, one of %d took %d", rows[i].Size, rows[i].Cycles, rows[i-1].Size, rows[i-1].Cycles)
		}
	}
	html := filepath.Join(dir, "report.html")
	if st, _, stderr := simkron(t, "report", "--format", "html", "--output", html, filepath.Join(dir, "result.json")); st != exitOK {
		t.Fatalf("report exited %d: %s", st, stderr)
	}
	b, _ := os.ReadFile(html)
	page := string(b)
	for _, want := range []string{`<figure id="chart-copycost"`, "<figcaption>Cycles of one bcopy against its size.",
		"<h3>copycost: bcopy per size</h3>", "<th>copy cycles</th>", "<td>4096</td>", ">bcopy cycles against size</text>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the HTML report lacks %q", want)
		}
	}
	if st, stdout, _ := simkron(t, "report", "--format", "svg", "--chart", "copycost", filepath.Join(dir, "result.json")); st != exitOK || !strings.Contains(stdout, "<svg") {
		t.Errorf("report --chart copycost exited %d", st)
	}
	if _, stdout, _ := simkron(t, "params"); !strings.Contains(stdout, "workload.copycost.passes") {
		t.Error("simkron params does not list the workload's parameters")
	}
	if _, stdout, _ := simkron(t, "run", "--help"); !strings.Contains(stdout, "copycost  test only") {
		t.Error("simkron run --help does not list the workload")
	}
	// Its section is decoded strictly, with the file and line.
	cfg, _ := os.ReadFile("testdata/plugin.toml")
	bad := filepath.Join(t.TempDir(), "bad.toml")
	os.WriteFile(bad, []byte(strings.Replace(strings.ReplaceAll(string(cfg), "../../../configs", mustAbs(t, "../../configs")),
		"sizes = [64", "pases = 3\nsizes = [2", 1)), 0o644)
	st, _, stderr = simkron(t, "run", bad)
	for _, want := range []string{bad + ":18: workload.copycost.pases: unknown key (did you mean \"passes\"?)", bad + ":19: workload.copycost.sizes[0]: 2 is below the minimum 4"} {
		if st != exitUsage || !strings.Contains(stderr, want) {
			t.Errorf("bad section: exit %d, stderr %q; want 2 and %q", st, stderr, want)
		}
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
