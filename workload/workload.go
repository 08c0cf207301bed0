// Package workload is the plug-in interface of simkron's workloads: what
// runs on the simulated machines of an experiment and what it reports. A
// workload is a Type registered under a name; an experiment chooses one
// with `[workload] type = "NAME"` and configures it in `[workload.NAME]`.
// The machine package builds the hosts, decodes the section strictly into
// the type's Params, calls New with the built experiment, starts the
// workload, runs the simulation and asks for the Result; it names no
// workload. Results are the workload's own JSON sections plus figures in
// the report's generic shapes (package report/shape), so the report draws
// any workload without knowing it.
//
// # Writing a workload
//
// A workload package declares its Params (a struct with toml, help, unit
// and bound tags, see package config), registers a Type in an init
// function and implements Workload:
//
//	func init() {
//		workload.Register(workload.Type{
//			Name:   "echo",
//			Help:   "what it measures, in one line",
//			Params: func() any { p := DefaultParams(); return &p },
//			Hosts:  func(p any) []workload.HostRef { ... },
//			New:    func(env workload.Env, p any) (workload.Workload, error) { ... },
//		})
//	}
//
// New finds its hosts with env.Host and their parts with Find and FindAll
// (the host's kernel, protocol families and network cards, looked up by
// type, as ns-3 aggregates objects on a node), defines its functions'
// symbols so that [costs] may name them, and prepares its programs; Start
// spawns them; Result is called once the simulation has stopped.
//
// The package imports only sim, trace and report/shape: it knows no host, kernel
// or device type. Workloads name the component types they need
// themselves, and a host offers whatever it was built with.
package workload

import (
	"fmt"
	"sort"
	"strings"

	"simkron/report/shape"
	"simkron/sim"
)

// Type is one kind of workload.
type Type struct {
	// Name is the value of [workload] type and the section's key:
	// lower-case letters, digits and '-'.
	Name string
	// Help says in one line what the workload measures.
	Help string
	// Params returns a pointer to the type's default parameters, into
	// which [workload.NAME] is decoded (strictly: unknown keys, wrong
	// types and bounds are reported with file, line and key).
	Params func() any
	// Hosts, when set, returns the hosts the decoded parameters name,
	// with the key that names each, so that a name no [[host]] has is
	// reported at its line before anything is built.
	Hosts func(params any) []HostRef
	// Reads, when set, returns the other workloads whose sections
	// ([workload.NAME]) the decoded parameters make this one read (a
	// comparison's protocols). A section that neither runs nor is read is
	// an error at its line: settings there would be silently ignored.
	Reads func(params any) []string
	// New prepares the workload on a built experiment; params is this
	// type's decoded section.
	New func(env Env, params any) (Workload, error)
	// Groups, when set, returns the hosts whose programs share state
	// while the simulation runs, as groups of names among hosts (the
	// experiment's, in order); a host in no group shares nothing. From
	// the moment Start returns until Result is called, the programs of
	// different groups, and whatever of the workload each touches, must
	// share nothing: a run may then simulate hosts that no network joins
	// apart, each island on its own event scheduler and goroutine,
	// concurrently (package machine). Such a workload reads time from its
	// hosts' components, never from Env.Scheduler, and is not an Ender.
	// Without Groups, all the experiment's hosts are one group.
	Groups func(params any, hosts []string) [][]string
}

// HostRef is a host a workload's parameters name: the key (relative to
// the workload's section) and the name written there.
type HostRef struct {
	Key  string
	Name string
	// Peer, when set, is the key of another HostRef of the same
	// parameters that this host exchanges messages with (the server's
	// names the client): the two must be different hosts.
	Peer string
	// Route says that the messages with Peer are IPv4 packets: when both
	// hosts have an address, each must lie on the other's subnet, as the
	// simulated stack has no router. (A host without an address is the
	// workload's to report.)
	Route bool
}

// Workload is one workload prepared on a built experiment.
type Workload interface {
	// Start spawns the workload's programs, before the simulation runs.
	Start()
	// Result returns what the workload measured, once the simulation has
	// stopped (at the workload's end, or at the experiment's stop_at).
	// A non-nil error is a failure of the simulated programs that makes
	// the run fail; a result is still written.
	Result() (Result, error)
}

// Ender is a Workload whose programs can be over while some of them
// still wait: a server waiting for a client that gave up connecting. A
// run ends when every host's threads have ended; once Ended reports
// true, it ends when a host's last thread ends, the others' waiting
// threads unwound, and no later workload (Workloads' then) starts. A
// workload reports Ended only after a failure, which its Result's
// Incomplete then states: a run that goes as it should ends as before.
type Ender interface {
	Workload
	Ended() bool
}

// Server is a Workload whose programs serve until something ends the
// run: the echo servers of a session with real hosts (a bridge), ended by
// their duration or by a signal (Ctrl-C). A server runs alone (not in a
// sequence of workloads). Its programs never end by themselves; the run
// stops at Until (or the experiment's stop_at, or a signal, whichever
// comes first) and unwinds them.
type Server interface {
	Workload
	// Until is the simulated time at which serving is over (its
	// duration), or sim.Never to serve until stopped.
	Until() sim.Time
	// Stopped is told, before Result, how a run that did not end by
	// stop_at ended, at simulated time at: at Until (by is ""), or
	// interrupted (by names what did: "SIGINT"). It reports whether that
	// is the workload's proper end, which makes the run complete.
	Stopped(by string, at sim.Time) bool
}

// Result is what a workload measured.
type Result struct {
	// Sections are the workload's own results, each stored in
	// result.json under its name (a JSON object key); usually one, named
	// after the workload.
	Sections []Section
	// Figures are what the report draws: tables, breakdowns, charts.
	Figures shape.Figures
	// Incomplete, when set, says why the workload did not finish as it
	// should; the run is then reported incomplete.
	Incomplete string
}

// Section is one named part of a workload's result; Value is encoded as
// JSON.
type Section struct {
	Name  string
	Value any
}

// Env is a built experiment as a workload sees it.
type Env interface {
	// Scheduler is the event scheduler that drives every host, or nil
	// when the run simulates its hosts in islands, each on its own (a
	// workload with Groups: each host's components hold its island's).
	Scheduler() *sim.Scheduler
	// Hosts returns the hosts in the experiment's order.
	Hosts() []Host
	// Host returns the host called name; the error says there is none.
	Host(name string) (Host, error)
	// Params returns the decoded [workload.NAME] section of any
	// registered workload (its defaults when the file has none), for a
	// workload that runs another's programs too.
	Params(name string) any
}

// Host is one built host: its name and the components it was built
// with, in a fixed order (its kernel, then its protocol families, then
// its network cards in machine order). Workloads find the ones they need
// by type with Find and FindAll.
type Host interface {
	Name() string
	Components() []any
}

// Find returns the first component of h that is a T (a concrete type, or
// an interface the component implements).
func Find[T any](h Host) (T, bool) {
	for _, c := range h.Components() {
		if v, ok := c.(T); ok {
			return v, true
		}
	}
	var zero T
	return zero, false
}

// FindAll returns every component of h that is a T, in order.
func FindAll[T any](h Host) []T {
	var out []T
	for _, c := range h.Components() {
		if v, ok := c.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

var registry = map[string]*Type{}

// Register adds a workload type. It panics on a name that is taken or
// malformed, or a Type without Params or New: those are
// simulator bugs, found when the program starts.
func Register(t Type) {
	if err := checkName(t.Name); err != nil {
		panic("workload: " + err.Error())
	}
	if _, dup := registry[t.Name]; dup {
		panic(fmt.Sprintf("workload: %q registered twice", t.Name))
	}
	if t.Params == nil || t.New == nil {
		panic(fmt.Sprintf("workload: %q needs Params and New", t.Name))
	}
	registry[t.Name] = &t
}

func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("empty name")
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return fmt.Errorf("name %q may hold only lower-case letters, digits, '-' and '_'", name)
		}
	}
	return nil
}

// Lookup returns the workload type called name.
func Lookup(name string) (*Type, bool) {
	t, ok := registry[name]
	return t, ok
}

// Types returns the registered types, sorted by name.
func Types() []*Type {
	out := make([]*Type, 0, len(registry))
	for _, t := range registry {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Names returns the registered names, sorted.
func Names() []string {
	var out []string
	for _, t := range Types() {
		out = append(out, t.Name)
	}
	return out
}

// List returns the registered names for messages: "mac, ping, udp".
func List() string {
	if len(registry) == 0 {
		return "none registered"
	}
	return strings.Join(Names(), ", ")
}
