// Package kernelhost is the part that runs a host on the simulated
// BSD/Linux-style kernel (stack/kernel: threads, system calls, softirqs,
// timers, buffers): the default host environment, configured by a
// machine file's [kernel]. It boots the kernel before the host's devices,
// gives their drivers the kernel's device layer (stack/netdev) when the
// first card asks for it, and starts an init thread that initialises the
// drivers before any program runs. It also registers the timer device
// with its kernel driver (timer.go).
package kernelhost

import (
	"fmt"

	"simkron/machine/part"
	"simkron/report"
	"simkron/stack/kernel"
	"simkron/stack/netdev"
	"simkron/stats"
)

// Name is the environment's name, as drivers register for it.
const Name = "kernel"

func init() {
	part.RegisterEnvironment(part.Environment{
		Name: Name,
		Section: part.Section{Key: "kernel", Help: "the simulated kernel (stack/kernel), the environment of every host whose machine file selects no other",
			Defaults: func() any { p := kernel.DefaultParams(); return &p }},
		Default:  true,
		Lacks:    "a host on the simulated kernel has no TOP run-time",
		NotRun:   "runs the simulated kernel",
		NoDriver: func(device string) string { return fmt.Sprintf("the simulated kernel has no driver for a %s", device) },
		Check:    check,
		Boot:     boot,
		Counters: []stats.Group{{Name: "kernel", Value: kernel.Stats{}}, {Name: "netdev", Value: netdev.Stats{}}},
	})
}

// check places the kernel's heap as Boot will, or further (its text at
// boot is at most kernel.MaxBootText): a machine it accepts boots.
func check(m *part.Machine) []part.Problem {
	p := part.SectionOf[kernel.Params](m, "kernel")
	if m.Memory.KernelText >= uint64(m.Memory.Size) {
		return nil // the machine's own check says so
	}
	l, err := kernel.PlaceHeap(m.Memory.KernelText+uint64(kernel.MaxBootText), *p, uint64(m.Memory.Size))
	if err == nil {
		return nil
	}
	return []part.Problem{part.Problemf([]string{"kernel", "heap_size"}, "%v of heap after the kernel at 0x%x needs %d bytes of memory; memory.size is %v",
		p.HeapSize, m.Memory.KernelText, l.HeapEnd, m.Memory.Size)}
}

// env is a host's booted kernel.
type env struct {
	h *part.Host
	k *kernel.Kernel
}

func boot(h *part.Host) (part.Env, error) {
	k, err := kernel.Boot(h.Name, h.CPU, h.Syms, *part.SectionOf[kernel.Params](h.Spec, "kernel"))
	if err != nil {
		return nil, err
	}
	h.AddEnv(k)
	h.AddCounters("kernel", func() any { return k.Stats() })
	return &env{h: h, k: k}, nil
}

// Start spawns the init thread, which runs the drivers' initialisation
// routines before any program.
func (e *env) Start() error {
	e.k.Spawn("init", func(*kernel.Thread) {
		for _, f := range e.h.Inits() {
			f()
		}
	})
	return nil
}

func (e *env) OnIdle(fn func()) { e.k.OnAllDone = fn }
func (e *env) Busy() bool       { return e.k.Threads() > 0 }

// Report gives the host's result the kernel's counters.
func (e *env) Report(r *report.HostResult) {
	ks := e.k.Stats()
	_, peak := e.k.Allocator().InUse()
	r.Kernel = report.Kernel{Syscalls: ks.Syscalls, Ticks: ks.Ticks, TimersFired: ks.TimersFired,
		SoftirqRuns: ks.SoftirqRuns, Schedules: ks.Schedules, HeapPeak: peak}
}

// Kernel returns host h's kernel, or nil when h runs another
// environment.
func Kernel(h *part.Host) *kernel.Kernel {
	if e, ok := h.Env.(*env); ok {
		return e.k
	}
	return nil
}

// NetStack returns host h's device layer (stack/netdev), making it, a
// component of the host's environment, when the first card's driver asks
// for it: a host without cards defines none of its functions.
func NetStack(h *part.Host) *netdev.Stack {
	if ns, ok := part.Find[*netdev.Stack](h); ok {
		return ns
	}
	ns := netdev.New(Kernel(h))
	h.AddEnv(ns)
	h.AddCounters("netdev", func() any { return ns.Stats() })
	return ns
}
