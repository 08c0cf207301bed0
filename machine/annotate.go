package machine

import (
	"simkron/annotations"
	"simkron/card"
	"simkron/sim"
	"simkron/trace"
)

// AnnotationTarget adapts the built run to the annotation engine: the
// event scheduler and a read-only view of each host with its cards' trace
// sources. The adapter lives here, where the run is assembled, so that
// the observer never imports its assembler.
//
// Annotations see every host on one time line: a run they observe is
// built whole (Options.Whole).
func (r *Run) AnnotationTarget() annotations.Target {
	if r.islands != nil {
		panic("machine: annotations on a run in islands (build it with Options.Whole)")
	}
	t := &runTarget{k: r.Sched}
	for _, h := range r.Hosts {
		v := annotations.HostView{Name: h.Name, CPU: h.CPU, Syms: h.Syms, Sys: h.Sys,
			IRQs: map[string]int{}, Frames: map[string]*trace.Source[[]byte]{}, Sends: map[string]*trace.Source[[]byte]{}}
		for _, d := range h.Spec.Devices {
			if d.IRQ >= 0 {
				v.IRQs[d.Name] = d.IRQ
			}
		}
		for _, c := range FindAll[card.Card](h) {
			v.Frames[c.DeviceName()] = c.Received()
			if s, ok := c.(card.Sender); ok {
				v.Sends[c.DeviceName()] = s.Sent()
			}
		}
		t.hosts = append(t.hosts, v)
	}
	return t
}

type runTarget struct {
	k     *sim.Scheduler
	hosts []annotations.HostView
}

var _ annotations.Target = (*runTarget)(nil)

func (t *runTarget) Scheduler() *sim.Scheduler     { return t.k }
func (t *runTarget) Hosts() []annotations.HostView { return t.hosts }
