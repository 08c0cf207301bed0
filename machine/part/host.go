package part

import (
	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
	"simkron/stats"
)

// Host is one assembled machine: the hardware the assembler made, its
// environment, and the components its parts added. Parts build it in
// the assembler's order (see the package doc); workloads see it through
// its components, found by type (Find, FindAll), as ns-3 aggregates
// objects on a node.
type Host struct {
	Name     string
	Spec     *Machine
	HostSpec *HostSpec
	Sched    *sim.Scheduler
	Sys      *memory.System
	CPU      *cpu.CPU
	Syms     *cpu.SymbolTable
	Buses    map[string]*memory.Bus
	// Devices are the device instances in the order of the machine file.
	Devices []Device
	// Env is the host's booted environment; EnvName its part's name.
	Env     Env
	EnvName string
	// networks are the run's networks, by technology, that the host's
	// cards plug into.
	networks map[string]Network
	// inits are the drivers' initialisation routines, run in order by the
	// environment before any program.
	inits []func()
	// Components by kind: the environment's, the families', and the
	// cards' by technology.
	env, fam []any
	cards    map[string][]any
	// counters are the environment's and families' stats structs, read
	// when the result is taken (AddCounters).
	counters []counterGroup
}

type counterGroup struct {
	name string
	read func() any
}

// NewHost returns a host called name of machine spec, bound by hs, on
// the run's networks (by technology); the assembler fills in its
// hardware.
func NewHost(name string, spec *Machine, hs *HostSpec, networks map[string]Network) *Host {
	return &Host{Name: name, Spec: spec, HostSpec: hs, Buses: map[string]*memory.Bus{}, networks: networks, cards: map[string][]any{}}
}

// Network returns the run's network of technology tech, or nil when the
// experiment has none.
func (h *Host) Network(tech string) Network { return h.networks[tech] }

// AddInit adds fn to the routines the host's environment runs before any
// program (a driver's initialisation of its card), after those added
// before it.
func (h *Host) AddInit(fn func()) { h.inits = append(h.inits, fn) }

// Inits returns the routines AddInit added, in order.
func (h *Host) Inits() []func() { return h.inits }

// AddEnv adds components of the host's environment (its kernel, its
// device layer, its station).
func (h *Host) AddEnv(c ...any) { h.env = append(h.env, c...) }

// AddFamily adds components of a protocol family.
func (h *Host) AddFamily(c ...any) { h.fam = append(h.fam, c...) }

// AddCard adds a card of technology tech (and whatever of it workloads
// may look for by type, such as its driver), after the cards added
// before it.
func (h *Host) AddCard(tech string, c ...any) { h.cards[tech] = append(h.cards[tech], c...) }

// Cards returns the components AddCard added for technology tech.
func (h *Host) Cards(tech string) []any { return h.cards[tech] }

// AddCounters adds a component's counters to the host's result, under
// name ("kernel", "iso.tp4"): read returns its stats struct (package
// stats) when the result is taken, or nil when the component is absent.
// The devices' counters are their own (Device.Counters).
func (h *Host) AddCounters(name string, read func() any) {
	h.counters = append(h.counters, counterGroup{name, read})
}

// Counters returns the counters AddCounters added, read now, in the
// order they were added.
func (h *Host) Counters() []stats.Group {
	out := make([]stats.Group, len(h.counters))
	for i, g := range h.counters {
		out[i] = stats.Group{Name: g.name, Value: g.read()}
	}
	return out
}

// Components returns every component of the host in a fixed order: the
// environment's, then the protocol families' (in the families' order),
// then the cards, technology by technology, each in machine order.
func (h *Host) Components() []any {
	out := append(append([]any(nil), h.env...), h.fam...)
	for _, t := range technologies {
		out = append(out, h.cards[t.Name]...)
	}
	return out
}

// Find returns the first component of h that is a T (a concrete type, or
// an interface the component implements).
func Find[T any](h *Host) (T, bool) {
	for _, c := range h.Components() {
		if v, ok := c.(T); ok {
			return v, true
		}
	}
	var zero T
	return zero, false
}

// FindAll returns every component of h that is a T, in order.
func FindAll[T any](h *Host) []T {
	var out []T
	for _, c := range h.Components() {
		if v, ok := c.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

// Device is a built device with its counters for reports.
type Device interface {
	memory.Device
	Counted
}

// Counted is a component with counters: its stats structs (package
// stats), each under a name relative to the component ("card",
// "driver"), read now.
type Counted interface {
	Counters() []stats.Group
}
