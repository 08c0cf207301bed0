//go:build hostilehooks

// This file is built only with -tags hostilehooks, by the hostile suite:
// it adds a workload that fails in the ways a simulator bug would, so
// that the run's last line of defence can be tested on the real binary.
// A release build has no such workload.

package main

import (
	"fmt"
	"math"

	"simkron/sim"
	"simkron/stack/kernel"
	"simkron/workload"
)

type hookParams struct {
	Fail string `toml:"fail" help:"how to fail: event (a panic in an event), thread (in a simulated thread), result (in Result), non-finite (a NaN in the result), unencodable (a section JSON cannot hold)"`
}

type hook struct {
	p    hookParams
	k    *sim.Scheduler
	ks   []*kernel.Kernel
	done int
}

func init() {
	workload.Register(workload.Type{
		Name:   "hostile-hook",
		Help:   "test only: fails as a simulator bug would",
		Params: func() any { return &hookParams{Fail: "event"} },
		New: func(env workload.Env, params any) (workload.Workload, error) {
			w := &hook{p: *params.(*hookParams), k: env.Scheduler()}
			for _, h := range env.Hosts() {
				k, ok := workload.Find[*kernel.Kernel](h)
				if !ok {
					return nil, fmt.Errorf("host %q has no kernel", h.Name())
				}
				w.ks = append(w.ks, k)
			}
			return w, nil
		},
	})
}

func (w *hook) Start() {
	k := w.ks[0]
	k.Spawn("hook", func(t *kernel.Thread) {
		buf := k.Kmalloc(4096)
		k.Bcopy(buf+2048, buf, 2048)
		w.done++
		switch w.p.Fail {
		case "thread":
			var xs []int
			w.done += xs[w.done] // out of range: the runtime's panic
		case "event":
			w.k.Schedule(sim.NewEvent("hook", func() { panic("hook: a model's invariant broken") }), w.k.Now()+sim.Microsecond)
			k.Bcopy(buf+2048, buf, 2048)
		}
	})
}

func (w *hook) Result() (workload.Result, error) {
	var v any = map[string]any{"copies": w.done}
	switch w.p.Fail {
	case "result":
		panic("hook: Result broke")
	case "non-finite":
		v = map[string]any{"copies": w.done, "mean": math.NaN()}
	case "unencodable":
		v = map[string]any{"copies": w.done, "f": func() {}}
	}
	return workload.Result{Sections: []workload.Section{{Name: "hook", Value: v}}}, nil
}
