package annotations

import (
	"simkron/machine"
	"simkron/sim"
)

// FromRun adapts a built run to the engine; the engine chains whatever
// event listener the run already has (Options.Trace).
func FromRun(r *machine.Run) Target {
	t := &runTarget{k: r.K, trace: r.K.Trace()}
	for _, h := range r.Hosts {
		v := HostView{Name: h.Name, CPU: h.CPU, Syms: h.Syms, Sys: h.Sys,
			IRQs: map[string]int{}, Frames: map[string]func(func([]byte)){}, Sends: map[string]func(func([]byte)){}}
		for _, d := range h.Spec.Devices {
			if d.IRQ >= 0 {
				v.IRQs[d.Name] = d.IRQ
			}
		}
		for _, n := range h.NICs {
			v.Frames[n.Name] = func(fn func([]byte)) {
				prev := n.OnFrame
				if prev == nil {
					n.OnFrame = fn
					return
				}
				n.OnFrame = func(f []byte) { prev(f); fn(f) }
			}
			v.Sends[n.Name] = func(fn func([]byte)) {
				prev := n.OnSend
				if prev == nil {
					n.OnSend = fn
					return
				}
				n.OnSend = func(f []byte) { prev(f); fn(f) }
			}
		}
		t.hosts = append(t.hosts, v)
	}
	return t
}

type runTarget struct {
	k     *sim.Kernel
	trace func(sim.Time, *sim.Event)
	hosts []HostView
}

var _ Target = (*runTarget)(nil)

func (t *runTarget) Kernel() *sim.Kernel               { return t.k }
func (t *runTarget) Trace() func(sim.Time, *sim.Event) { return t.trace }
func (t *runTarget) Hosts() []HostView                 { return t.hosts }
