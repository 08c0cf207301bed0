package machine

import (
	"simkron/annotations"
	"simkron/sim"
)

// AnnotationTarget adapts the built run to the annotation engine: the
// event kernel with whatever listener the run already has (Options.Trace)
// and a read-only view of each host. The adapter lives here, where the
// run is assembled, so that the observer never imports its assembler.
func (r *Run) AnnotationTarget() annotations.Target {
	t := &runTarget{k: r.K, trace: r.K.Trace()}
	for _, h := range r.Hosts {
		v := annotations.HostView{Name: h.Name, CPU: h.CPU, Syms: h.Syms, Sys: h.Sys,
			IRQs: map[string]int{}, Frames: map[string]func(func([]byte)){}, Sends: map[string]func(func([]byte)){}}
		for _, d := range h.Spec.Devices {
			if d.IRQ >= 0 {
				v.IRQs[d.Name] = d.IRQ
			}
		}
		for _, n := range h.NICs {
			v.Frames[n.Name] = n.ObserveReceive
			v.Sends[n.Name] = n.ObserveSend
		}
		for _, a := range h.ATMCards {
			v.Frames[a.Name] = a.ObserveReceive
		}
		t.hosts = append(t.hosts, v)
	}
	return t
}

type runTarget struct {
	k     *sim.Kernel
	trace func(sim.Time, *sim.Event)
	hosts []annotations.HostView
}

var _ annotations.Target = (*runTarget)(nil)

func (t *runTarget) Kernel() *sim.Kernel               { return t.k }
func (t *runTarget) Trace() func(sim.Time, *sim.Event) { return t.trace }
func (t *runTarget) Hosts() []annotations.HostView     { return t.hosts }
