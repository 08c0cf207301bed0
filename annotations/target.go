package annotations

import (
	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
	"simkron/trace"
)

// Target is what the engine needs of a run: the event scheduler and a
// read-only view of each host. The machine package's Run provides one
// (Run.AnnotationTarget); tests and other drivers can implement it
// directly.
type Target interface {
	// Scheduler returns the event scheduler that drives every host.
	Scheduler() *sim.Scheduler
	// Hosts returns the hosts in the experiment's order. The first host's
	// CPU clock times `cycle` annotations.
	Hosts() []HostView
}

// HostView is one host as annotations see it. The engine only reads
// through it and connects to its trace sources (the core's, the cards').
type HostView struct {
	Name string
	CPU  *cpu.CPU
	Syms *cpu.SymbolTable
	Sys  *memory.System
	// IRQs maps each device that has an interrupt line to that line
	// ("nic0" -> 3), for `device NAME irq` annotations.
	IRQs map[string]int
	// Frames maps each network card ("nic0") to its trace source of the
	// frames reaching it (card.Card's Received).
	Frames map[string]*trace.Source[[]byte]
	// Sends maps each card that offers it to its trace source of the
	// frames it puts on the wire (card.Sender's Sent).
	Sends map[string]*trace.Source[[]byte]
}
