package annotations

import (
	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
)

// Target is what the engine needs of a run: the event kernel with the
// listener already on it, and a read-only view of each host. The machine
// package's Run provides one (Run.AnnotationTarget); tests and other
// drivers can implement it directly.
type Target interface {
	// Kernel returns the event kernel that drives every host.
	Kernel() *sim.Kernel
	// Trace returns the kernel's event listener installed before the
	// engine (nil when there is none). The engine replaces the kernel's
	// single listener slot with its own, which calls this one first.
	Trace() func(t sim.Time, ev *sim.Event)
	// Hosts returns the hosts in the experiment's order. The first host's
	// CPU clock times `cycle` annotations.
	Hosts() []HostView
}

// HostView is one host as annotations see it. The engine only reads
// through it, except for the listener slots it chains into (CPU hooks,
// frame observers).
type HostView struct {
	Name string
	CPU  *cpu.CPU
	Syms *cpu.SymbolTable
	Sys  *memory.System
	// IRQs maps each device that has an interrupt line to that line
	// ("nic0" -> 3), for `device NAME irq` annotations.
	IRQs map[string]int
	// Frames maps each network card ("nic0") to a function that adds an
	// observer of the frames reaching the card, after any observer already
	// there. The observer only looks at the frame.
	Frames map[string]func(fn func(frame []byte))
	// Sends is the same for the frames each card puts on the wire.
	Sends map[string]func(fn func(frame []byte))
}
