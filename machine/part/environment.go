package part

import (
	"fmt"
	"slices"

	"simkron/report"
	"simkron/stats"
)

// Environment is a host environment: the software a host runs its
// programs in (the BSD-style kernel with threads and system calls; the
// TOP study's single-program DOS environment). A machine file chooses it
// with its table; exactly one environment is the default.
type Environment struct {
	Name string
	// Order places it among the environments: a machine whose tables
	// select two runs the first.
	Order int
	// Section is its table of the machine file ([kernel], [top]).
	Section Section
	// Default makes it the environment of a machine whose tables select
	// none.
	Default bool
	// Selected reports whether the decoded table asks for it (nil: only
	// as the default).
	Selected func(params any) bool
	// Lacks says what the environment does not have that a family of
	// another environment needs: "a TOP host has no kernel".
	Lacks string
	// NotRun is said of a machine that does not run it, when an
	// experiment overrides its table for a host: "does not run the TOP
	// environment ([top] enabled in its file)".
	NotRun string
	// NoDriver says why it cannot run a host with a device model it has
	// no driver for (Drives).
	NoDriver func(device string) string
	// Check, when set, finds what a machine file that runs it cannot have
	// (its devices and families are checked against its drivers and
	// Lacks by the assembler).
	Check func(m *Machine) []Problem
	// CheckHost, when set, finds what an experiment cannot ask of its
	// host hosts[i], which runs it; keys are the experiment file's.
	CheckHost func(hosts []HostSpec, i int) []Problem
	// Boot makes the environment on host h, after its core and memory
	// and before its devices, adding its components (Host.AddEnv) and
	// their counters (Host.AddCounters).
	Boot func(h *Host) (Env, error)
	// Counters declares the stats structs its components report, each
	// under its name, as zero values: simkron counters lists them.
	Counters []stats.Group
}

// Env is a host's booted environment.
type Env interface {
	// Start starts it once every device and family of the host is built:
	// the initialisation routines (Host.Inits), then whatever the
	// workload gives it.
	Start() error
	// OnIdle sets fn to run whenever every program given to the host has
	// ended.
	OnIdle(fn func())
	// Busy reports whether a program of the host has not ended.
	Busy() bool
	// Report fills in the environment's part of the host's result.
	Report(r *report.HostResult)
}

// RegisterEnvironment adds a host environment; a name taken twice, a
// second default, or an environment without Boot or a table is a
// simulator bug.
func RegisterEnvironment(e Environment) {
	claim("environment", e.Name)
	if e.Boot == nil || e.Section.Key == "" || e.Section.Defaults == nil {
		panic(fmt.Sprintf("part: environment %q needs Boot and a Section", e.Name))
	}
	if e.Default && defaultEnvironment() != nil {
		panic(fmt.Sprintf("part: environment %q is a second default", e.Name))
	}
	environments = insert(environments, &e, func(e *Environment) (int, string) { return e.Order, e.Name })
}

// Environments returns the environments in their order.
func Environments() []*Environment { return slices.Clone(environments) }

func defaultEnvironment() *Environment {
	for _, e := range environments {
		if e.Default {
			return e
		}
	}
	return nil
}
