package machine

import (
	"fmt"
	"sync/atomic"
	"time"

	"simkron/machine/part"
	"simkron/sim"
)

// Linked islands. Hosts joined only by elements that let them run apart
// (part.Join.Lookahead: a switch, whose full-duplex links take at least
// the smallest frame's time, the propagation delay and the switch's
// latency to carry anything from one host to another, and whose traffic
// is known when a frame starts) are islands of their own when the
// experiment asks ([experiment] linked) and their workload lets them
// (workload.Type.Groups), each host on its own clock, scheduler and
// goroutine. It is asked for, not automatic: on the shipped transfers it
// is no faster than one scheduler (docs/speed.md says why). Each island holds its own instance of such an
// element (part.Splitter), and what one instance hands another (a frame
// that will reach the switch) goes through the run as a message with its
// time (part.Message), never sooner than the element's lookahead after
// it was sent.
//
// The islands that links join, directly or through one another, form a
// group that advances in windows under conservative synchronisation with
// the least lookahead L of its links. In a window each island fires its
// events before its own end, and no core runs ahead past it
// (sim.Scheduler.SetHorizon): L after the earliest moment another island
// could act in the window, at its next event or, woken by a message sent
// in the window, L after the sender's next event. So nothing another
// island sends during the window is due inside it, nor anything sent in
// answer to what this one sends. At the window's end the islands meet:
// the messages are delivered, each scheduled among its receiver's events
// by its sender and the sender's count (sim.Scheduler.ScheduleKeyed: the
// same place it takes when every host shares one scheduler), and the
// next window is found. Where the windows fall depends on the simulated
// events alone, never on the threads or their timing: a run is the same
// at any -j and GOMAXPROCS.
//
// What the islands simulate is what one scheduler would, with the
// differences islands already have (island.go): a core catches up
// without a hand-over when nothing of its own island is due, and only
// the simulator's own counts differ (events, and the cores' syncs_fast,
// syncs_slow and waits_nested: a core that would run past a window's end
// waits for the clock through an event of its own). The run's end is
// found as for independent islands; an island that waits at a window's
// end has published where it stands first.
//
// Simplified: a group advances at the pace of its slowest island in
// every window, and a window is never longer than the least lookahead of
// all the group's links, however far apart its hosts' traffic is.

// group is the islands that links join, while the run executes.
type group struct {
	members []*island
	look    sim.Time
	// arrived counts the members at the window's end; the last to arrive
	// begins the next window (advance) while the others wait.
	arrived atomic.Int32
	// gen counts the windows begun; done says the group has nothing left
	// before the stop time.
	gen  atomic.Uint64
	done atomic.Bool
	// heads and acts are advance's: each member's next event, and the
	// earliest it could act in the window.
	heads, acts []sim.Time
	// holding counts the members that hold a thread of the pool.
	holding atomic.Int32
	// windows counts the windows begun, written by advance only (under
	// the lock, every member waiting) and read after the run.
	windows uint64
}

// Linked returns how many of the run's islands are linked islands.
func (r *Run) Linked() int {
	n := 0
	for _, is := range r.islands {
		if is.grp != nil {
			n++
		}
	}
	return n
}

// LinkedWindows returns how many windows the run's linked islands began,
// every group's together (0 when none is linked): where the windows fall
// depends on the simulated events alone, so this is the same at any -j.
// The events per window say how much each island can simulate before it
// waits for the others (docs/speed.md).
func (r *Run) LinkedWindows() uint64 {
	var n uint64
	seen := map[*group]bool{}
	for _, is := range r.islands {
		if g := is.grp; g != nil && !seen[g] {
			seen[g] = true
			n += g.windows
		}
	}
	return n
}

// outMsg is a message an island's instance of a network posted to
// another island's.
type outMsg struct {
	to   int
	tech string
	m    part.Message
}

// link splits each of lay's links among the instances of its islands and
// puts the islands it joins in groups.
func (r *Run) link(exp *Experiment, lay layout) error {
	if len(lay.links) == 0 {
		return nil
	}
	of := make([]int, len(exp.Hosts))
	for k, hs := range lay.islands {
		for _, h := range hs {
			of[h] = k
		}
	}
	partOf := func(h int) int { return of[h] }
	for _, l := range lay.links {
		for _, k := range l.islands {
			is := r.islands[k]
			sp, ok := is.net.Of(l.tech).(part.Splitter)
			if !ok {
				return fmt.Errorf("machine: the %s network cannot split %q", l.tech, l.element)
			}
			if err := sp.Split(l.element, exp.Hosts, partOf, k, is.post(l.tech)); err != nil {
				return err
			}
		}
		// The groups: union of the link's islands.
		var g *group
		for _, k := range l.islands {
			if o := r.islands[k].grp; o != nil && o != g {
				if g == nil {
					g = o
					continue
				}
				for _, m := range o.members {
					m.grp = g
					g.members = append(g.members, m)
				}
				g.look = min(g.look, o.look)
			}
		}
		if g == nil {
			g = &group{look: l.lookahead}
		}
		g.look = min(g.look, l.lookahead)
		for _, k := range l.islands {
			if is := r.islands[k]; is.grp == nil {
				is.grp = g
				g.members = append(g.members, is)
			}
		}
	}
	for _, is := range r.islands {
		if is.grp != nil {
			is.st.held = &is.grp.holding
		}
	}
	return nil
}

// post returns how island is's instance of tech's network hands a
// message to another island's: through is's outbox, delivered at the
// window's end.
func (is *island) post(tech string) func(int, part.Message) {
	return func(to int, m part.Message) {
		if end := is.run.islands[to].end; m.At < end {
			panic(fmt.Sprintf("machine: %s %s: a message due at %v posted at %v, inside the window of its receiver that ends at %v (lookahead %v)",
				tech, m.Element, m.At, is.sched.Now(), end, is.grp.look))
		}
		is.outbox = append(is.outbox, outMsg{to: to, tech: tech, m: m})
	}
}

// open is how far a busy island's cores may run ahead of its events: to
// its window's end when it is linked.
func (is *island) open() sim.Time {
	if is.grp != nil {
		return is.end - 1
	}
	return sim.Never
}

// startGroups begins the first window of each group, before the run.
func (x *islandRun) startGroups() {
	for _, is := range x.r.islands {
		if g := is.grp; g != nil && g.gen.Load() == 0 {
			x.advance(g)
		}
	}
}

// advance delivers what the members of g posted during the window that
// ended and begins the next, each member's window ending where another
// could first reach it (not past the stop time); or finds the group
// done. Every member waits meanwhile (or the run has not started).
func (x *islandRun) advance(g *group) {
	for _, m := range g.members {
		for i, o := range m.outbox {
			x.r.islands[o.to].net.Of(o.tech).(part.Splitter).Deliver(o.m)
			m.outbox[i] = outMsg{}
		}
		m.outbox = m.outbox[:0]
	}
	// Each member's window ends the lookahead after the earliest moment
	// another could act in it: at its own head, or woken by a message
	// one of the others sends in the window, no sooner than a lookahead
	// after that one's head (delivered at the window's end, it wakes
	// its receiver, whose answer comes a lookahead later still).
	heads, acts := g.heads[:0], g.acts[:0]
	first := sim.Never
	for _, m := range g.members {
		h, _, _ := m.sched.Head() // Never when none
		heads = append(heads, h)
		first = min(first, h)
	}
	for j := range heads {
		acts = append(acts, heads[j])
		for k, h := range heads {
			if k != j {
				acts[j] = min(acts[j], sat(h, g.look))
			}
		}
	}
	g.heads, g.acts = heads, acts
	if first > x.stop {
		g.done.Store(true)
		g.gen.Add(1)
		return
	}
	// Where each member stands now that its messages are in.
	for i, m := range g.members {
		s := &m.st
		h, prio, _ := m.sched.Head()
		others := sim.Never
		for j, t := range acts {
			if j != i {
				others = min(others, t)
			}
		}
		m.end = min(sat(others, g.look), x.stop+1)
		s.frontier.Store(int64(h))
		if s.busy {
			m.sched.SetHorizon(m.open())
		} else if !s.ended && s.cand == nil {
			s.next = pos{when: h, prio: prio, island: m.index}
		}
	}
	g.windows++
	g.gen.Add(1)
}

// sat returns t+d, or Never when t is Never.
func sat(t, d sim.Time) sim.Time {
	if t >= sim.Never-d {
		return sim.Never
	}
	return t + d
}

// spinFor is how long an island that waits at a window's end looks
// whether the window has begun before it gives its thread back, when
// every island of its group holds a thread (none waits for one, held by
// another island or another run of a sweep): a window's work takes a few
// microseconds of host time, and being woken many times that.
const spinFor = 200 * time.Microsecond

// barrier is island is's wait at its window's end: it publishes where it
// stands, and the last to arrive begins the next window. It reports
// whether the island goes on.
//
// A busy island arrives without the lock when none waits on it; the last
// to arrive begins the next window under the lock while the others, each
// on a thread of its own, spin until it has, or, once they have spun long
// enough (or have no thread to spin on), wait on the lock.
func (x *islandRun) barrier(is *island) bool {
	if x.quit.Load() {
		// The run is over (a nested run of the island's, handing back,
		// asks again on the way out): nothing to meet for.
		return false
	}
	g := is.grp
	s := &is.st
	gen := g.gen.Load()
	h, prio, ok := is.sched.Head()
	if !ok {
		h = sim.Never
	}
	s.frontier.Store(int64(h))
	n := int32(len(g.members))
	last := false
	if s.busy {
		// Arriving needs no lock unless an island waits on it (an island
		// that starts waiting counts itself first, then looks; this
		// arrives first, then looks for waiters).
		last = g.arrived.Add(1) == n
		if x.waiters.Load() > 0 {
			x.locked(x.decide)
		}
	} else {
		x.locked(func() {
			if s.cand == nil {
				s.next = pos{when: h, prio: prio, island: is.index}
			}
			last = g.arrived.Add(1) == n
			x.decide()
		})
	}
	if last {
		// Under the lock: an island that waits leaves when the window
		// begins, or, the run over, once the lock is free, never while
		// its scheduler is read here.
		g.arrived.Store(0)
		x.locked(func() {
			if x.final == nil && x.failed == nil {
				// (Once the run is over, an island that waits may be
				// leaving: its scheduler is not to be read.)
				x.advance(g)
				x.decide()
			}
		})
		return !g.done.Load() && !x.quit.Load()
	}
	if g.holding.Load() == n {
		// Every member holds a thread: the last is on its way.
		start := time.Now()
		for i := 1; g.gen.Load() == gen && !x.quit.Load(); i++ {
			if i%256 == 0 && time.Since(start) > spinFor {
				break
			}
		}
	}
	if g.gen.Load() == gen && !x.await(s, func() bool { return g.gen.Load() != gen }) {
		return false
	}
	return !g.done.Load() && !x.quit.Load()
}

// locked runs f under the lock and wakes every island that waits.
func (x *islandRun) locked(f func()) {
	x.mu.Lock()
	defer x.mu.Unlock()
	f()
	x.cv.Broadcast()
}

// othersWait reports whether every island of is's group but is waits at
// the window's end (false when it has no group).
func (x *islandRun) othersWait(is *island) bool {
	g := is.grp
	return g != nil && g.arrived.Load() == int32(len(g.members)-1)
}
