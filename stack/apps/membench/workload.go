package membench

import (
	"errors"
	"fmt"
	"slices"

	"simkron/report/shape"
	"simkron/sim"
	"simkron/stack/kernel"
	"simkron/workload"
)

func init() {
	workload.Register(workload.Type{
		Name:   "membench",
		Help:   "memory-system micro-benchmark on every host: bcopy and in_cksum cycles per byte and misses per cache level",
		Params: func() any { p := DefaultParams(); return &p },
		New: func(env workload.Env, params any) (workload.Workload, error) {
			p := *params.(*Params)
			var w bench
			for _, h := range env.Hosts() {
				k, ok := workload.Find[*kernel.Kernel](h)
				if !ok {
					return nil, fmt.Errorf("host %q has no kernel", h.Name())
				}
				w = append(w, New(h.Name(), k, p))
			}
			return w, nil
		},
	})
}

// bench is the workload: the program on every host.
type bench []*Program

func (w bench) Start() {
	for _, p := range w {
		p.Start()
	}
}

func (w bench) Result() (workload.Result, error) {
	var rows []Row
	var errs []error
	for _, p := range w {
		rows = append(rows, p.Rows()...)
		errs = append(errs, p.Err())
	}
	return workload.Result{
		Sections: []workload.Section{{Name: "membench", Value: rows}},
		Figures:  shape.Figures{Tables: tables(rows)},
	}, errors.Join(errs...)
}

// tables returns a table per host and routine, in the rows' order.
func tables(rows []Row) []shape.Table {
	type key struct{ host, op string }
	var order []key
	for _, row := range rows {
		if k := (key{row.Host, row.Op}); !slices.Contains(order, k) {
			order = append(order, k)
		}
	}
	var ts []shape.Table
	for _, k := range order {
		t := shape.Table{
			Title: fmt.Sprintf("membench %s on %s (warm passes; misses per pass)", k.op, k.host),
			Columns: []shape.Column{{Name: "size", Doc: "bytes copied or checksummed by one pass"},
				{Name: "cold cycles", Doc: "the first pass's cycles, the caches cold"},
				{Name: "warm cycles", Doc: "the mean cycles of the warm passes after it"},
				{Name: "cycles/byte", Doc: "warm cycles over the size"}},
		}
		first := true
		for _, row := range rows {
			if row.Host != k.host || row.Op != k.op {
				continue
			}
			if first {
				for _, l := range row.Levels {
					t.Columns = append(t.Columns, shape.Column{Name: l.Name + " misses", Doc: "misses in the " + l.Name + " cache per warm pass"})
				}
				first = false
			}
			line := []string{sim.Size(row.Size).String(), fmt.Sprint(row.ColdCycles),
				fmt.Sprintf("%.0f", row.WarmCycles), fmt.Sprintf("%.3f", row.CyclesPerByte)}
			for _, l := range row.Levels {
				line = append(line, fmt.Sprintf("%.1f", l.Misses))
			}
			t.Rows = append(t.Rows, line)
		}
		ts = append(ts, t)
	}
	return ts
}
