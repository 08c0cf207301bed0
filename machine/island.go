package machine

import (
	"runtime"
	"slices"

	"simkron/machine/part"
	"simkron/memory"
	"simkron/sim"
	"simkron/workload"
)

// Islands. Hosts that no network joins, directly or through one another
// (no shared segment, link or switch), and whose workload's programs
// share nothing while they run (workload.Type.Groups), never affect each
// other; hosts joined only by a switch affect each other only through it,
// a lookahead later (linked islands, linked.go). A run simulates each
// such island on its own event scheduler,
// with its own instance of every network, and, while it executes, on its
// own goroutine, up to as many at once as it has cores (Cores). Every
// host's devices, core and memory hold their island's scheduler alone:
// no model can read another island's clock.
//
// What the islands simulate is what one scheduler would, host by host,
// with one difference: a core that ran ahead of the event clock catches
// up without a hand-over when nothing of its own island is due before it
// (cpu.CPU.Sync), where one scheduler makes it yield whenever any host
// has something due. Only the simulator's own counts of that work
// differ: the result's events and the cores' syncs_fast, syncs_slow and
// waits_nested; every figure of the model is the same (TestIslandsSameAsWhole
// holds it). The run ends as one scheduler's would: when the last host's
// last thread ends, every other island having fired what comes before
// that moment in the run's order, which is each island's own order and,
// across islands, (time, priority, island), the islands in the order of
// their first hosts. An island whose hosts have no thread may be where
// another ends the run, so its cores do not run ahead of its events
// (sim.Scheduler.SetHorizon): a core that would waits for the clock
// through an event of its own, fired only if the run goes on.
//
// The run ends at the instant its last thread ends, whole or in islands:
// no core runs on past it into its idle loop (Run.finish), so where it
// ends does not depend on what other hosts have due then.
//
// Simplified: two islands' events at the same picosecond and priority
// are ordered by island, where one scheduler orders them by when they
// were scheduled. That can change a figure only when the run ends at the
// instant of another host's event.
//
// A run is one island, as before, when it cannot be split: its workload
// declares no groups, or it runs a sequence of workloads (then), or it
// is bridged to real hosts (paced to the wall clock), warms up in
// functional detail (full_detail_from, one switch for every host), lets
// cores run ahead by a sync quantum (an access made early depends on
// every host's pending events), or is observed by annotations or an
// event trace (Options.Whole, Options.Trace: one Tcl interpreter, one
// time line).

// island is one island of a run: its hosts, its scheduler and its
// instance of the networks; st is its state while the run executes.
type island struct {
	index int
	sched *sim.Scheduler
	net   *Network
	hosts []*Host
	st    islandState
	// grp is the group of islands links join it to (linked.go), nil
	// when none does; outbox is what its networks posted to other
	// islands during the window.
	grp    *group
	outbox []outMsg
	// end is the island's current window's end (exclusive), written by
	// the last of its group to arrive at the window's end.
	end sim.Time
	run *Run
}

// Cores are the threads that runs share: each island of a run holds one
// while it simulates, so that runs in parallel (a sweep's) and the
// islands of each together use at most as many as the pool has.
type Cores struct{ slots chan struct{} }

// NewCores returns a pool of n threads (at least one).
func NewCores(n int) *Cores { return &Cores{slots: make(chan struct{}, max(n, 1))} }

// Size returns how many threads the pool has.
func (c *Cores) Size() int { return cap(c.slots) }

func (c *Cores) take()    { c.slots <- struct{}{} }
func (c *Cores) release() { <-c.slots }

// cores returns the pool a run takes its threads from: opt's, or one of
// as many as Go runs at once (GOMAXPROCS).
func (opt Options) cores() *Cores {
	if opt.Cores != nil {
		return opt.Cores
	}
	return NewCores(runtime.GOMAXPROCS(0))
}

// Islands returns how many islands the run simulates its hosts in.
func (r *Run) Islands() int { return max(len(r.islands), 1) }

// Threads returns how many islands of the run may simulate at once with
// the given pool.
func (r *Run) Threads(c *Cores) int { return min(r.Islands(), c.Size()) }

// layout is how a run simulates its hosts: in islands (hosts as indexes
// into the experiment's, each island in the experiment's order and the
// islands in the order of their first hosts); the island of each element
// of each technology's network (owner; an element that joins no host
// belongs to the first; -1 for an element split among islands); and the
// elements split among islands (links).
type layout struct {
	islands [][]int
	owner   func(tech, element string) int
	links   []link
}

// link is an element whose hosts are in several islands, which it lets
// run apart (part.Join.Lookahead): the islands it spans, in order.
type link struct {
	tech, element string
	islands       []int
	lookahead     sim.Time
}

// islandsOf returns how a run of exp simulates its hosts. A run that
// cannot be split is one island.
func islandsOf(exp *Experiment, opt Options) layout {
	n := len(exp.Hosts)
	all := func() layout {
		one := make([]int, n)
		for i := range one {
			one[i] = i
		}
		return layout{islands: [][]int{one}, owner: func(string, string) int { return 0 }}
	}
	wt, ok := workload.Lookup(exp.Workload.Type)
	switch {
	case n < 2 || opt.Whole || opt.Trace != nil || !ok || wt.Groups == nil:
		return all()
	case len(exp.Workload.Then) > 0 || exp.Info.SyncQuantum > 0:
		return all()
	case exp.Info.Detail == memory.DetailFunctional && exp.Info.FullFrom > 0:
		return all()
	}
	// Union-find over the hosts.
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		if parent[i] != i {
			parent[i] = find(parent[i])
		}
		return parent[i]
	}
	join := func(hs []int) {
		for _, h := range hs[min(1, len(hs)):] {
			a, b := find(hs[0]), find(h)
			parent[max(a, b)] = min(a, b)
		}
	}
	// An element's first host, by technology; -1: none.
	first := map[string]map[string]int{}
	techFirst := map[string]int{}
	// The elements that may be split, with their hosts.
	type loose struct {
		link
		hosts []int
	}
	var looses []loose
	for _, t := range part.Technologies() {
		first[t.Name] = map[string]int{}
		techFirst[t.Name] = -1
		if t.Joins == nil {
			var bound []int
			for i := range exp.Hosts {
				if b := exp.Hosts[i].Bindings[t.Name]; b != nil && len(t.Entries(b)) > 0 {
					bound = append(bound, i)
				}
			}
			join(bound)
			if len(bound) > 0 {
				techFirst[t.Name] = bound[0]
			}
			continue
		}
		groups, paced := t.Joins(exp.tables(t), exp.Hosts)
		if paced {
			return all()
		}
		for _, g := range groups {
			if exp.Info.Linked && g.Lookahead > 0 && len(g.Elements) == 1 && len(g.Hosts) > 1 {
				looses = append(looses, loose{link{tech: t.Name, element: g.Elements[0], lookahead: g.Lookahead}, g.Hosts})
			} else {
				join(g.Hosts)
			}
			for _, e := range g.Elements {
				first[t.Name][e] = -1
				if len(g.Hosts) > 0 {
					first[t.Name][e] = g.Hosts[0]
				}
			}
		}
	}
	names := make([]string, n)
	index := map[string]int{}
	for i, h := range exp.Hosts {
		names[i] = h.Name
		index[h.Name] = i
	}
	params := exp.Workload.Params[wt.Name]
	if params == nil {
		params = wt.Params()
	}
	for _, g := range wt.Groups(params, names) {
		var hs []int
		for _, name := range g {
			if i, ok := index[name]; ok {
				hs = append(hs, i)
			}
		}
		join(hs)
	}
	var out layout
	of := make([]int, n) // host -> island
	roots := map[int]int{}
	for i := range exp.Hosts {
		root := find(i)
		k, ok := roots[root]
		if !ok {
			k = len(out.islands)
			roots[root] = k
			out.islands = append(out.islands, nil)
		}
		out.islands[k] = append(out.islands[k], i)
		of[i] = k
	}
	if len(out.islands) == 1 {
		return all()
	}
	split := map[[2]string]bool{}
	for _, l := range looses {
		for _, h := range l.hosts {
			if k := of[h]; !slices.Contains(l.islands, k) {
				l.islands = append(l.islands, k)
			}
		}
		if len(l.islands) > 1 {
			slices.Sort(l.islands)
			out.links = append(out.links, l.link)
			split[[2]string{l.tech, l.element}] = true
		}
	}
	out.owner = func(tech, element string) int {
		if split[[2]string{tech, element}] {
			return -1
		}
		h, ok := first[tech][element]
		if !ok {
			h = techFirst[tech]
		}
		if h < 0 {
			return 0
		}
		return of[h]
	}
	return out
}

// islandOf returns the island of host i among islands.
func islandOf(islands [][]int, i int) int {
	for k, hs := range islands {
		if slices.Contains(hs, i) {
			return k
		}
	}
	return 0
}
