package machine

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"simkron/sim"
)

// Executing a run in islands. Each island runs on its own goroutine,
// holding a thread of the pool (Cores) while it simulates. The islands
// share nothing but the one question that spans them: has every host's
// workload ended? One scheduler ends the run after the first event in
// which a host's last thread ends and no host of any island has a thread
// left. The islands answer it conservatively, in the run's order
// (pos):
//
//   - An island whose hosts have threads (busy) runs freely: whatever it
//     passes, it was busy there, so no other island can end the run
//     there. It publishes how far it has come (its frontier, the time of
//     its next event) now and then.
//   - An island whose last thread ends proposes that moment (its clock
//     then: idle) as the end, and goes no further until it is decided,
//     once every other island is known there. It is refuted by an island
//     busy there (one that has passed its time busy, or went idle after
//     it); it is the end when every other island is idle and waits
//     before an event after it.
//   - An idle island fires an event only when nothing can end the run
//     before it: it lies before every undecided candidate, before every
//     busy island's frontier and before every other idle island's next
//     event. Idle islands go in step; they fire little (timer ticks).
//
// None of this waiting changes what an island simulates: an island only
// ever pauses between two of its events, inside the condition its
// scheduler asks before each (sim.Scheduler.RunWhile), so that where it
// pauses, and for how long, is invisible to it. The end found is the
// same whatever the threads and however the islands are timed.

// pos is a place in the run's order: an event's time and priority, and
// across islands the island's index.
type pos struct {
	when   sim.Time
	prio   sim.Priority
	island int
}

// before reports whether a comes before b.
func (a pos) before(b pos) bool {
	switch {
	case a.when != b.when:
		return a.when < b.when
	case a.prio != b.prio:
		return a.prio < b.prio
	}
	return a.island < b.island
}

// beforeAll is the place before every event.
var beforeAll = pos{when: -1}

// afterAll is a priority after every event's at one time.
const afterAll = sim.Priority(math.MaxInt8)

// islandState is an island's part of the shared state, under
// islandRun.mu unless said otherwise.
type islandState struct {
	busy bool
	// since is where the island went idle (idle only; beforeAll when
	// idle from the start).
	since pos
	// cand is its undecided candidate end, if any.
	cand *pos
	// next is, for an idle island, where it waits (or, while it runs an
	// event it was let fire, that event's place): nothing of it comes
	// before.
	next pos
	// ended: it has returned (no event left before the stop time, or the
	// run is over); it does nothing more.
	ended bool
	// frontier is, for a busy island, the time of its next event: all
	// before it has fired. Written by the island alone (atomically),
	// read by the others.
	frontier atomic.Int64
	// holding says the island's goroutine holds a thread of the pool
	// (its own field); held, for a linked island, counts the members of
	// its group that do.
	holding bool
	held    *atomic.Int32
	// count is the events the island fired since it last published its
	// frontier (its own field).
	count int
	// pending says the island made a candidate end in the event it fired
	// last (its own field).
	pending bool
}

// publishEvery is how many events a busy island fires between
// publications of its frontier.
const publishEvery = 1024

// islandRun is the shared state of a run in islands while it executes.
type islandRun struct {
	r     *Run
	stop  sim.Time
	cores *Cores
	mu    sync.Mutex
	cv    *sync.Cond
	// final is the end found (the candidate decided), nil until then;
	// failed is a panic in an island, which stops every island.
	final  *pos
	failed *InternalError
	// waiters counts the islands waiting, so that a busy island takes
	// the lock to publish only when one may be waiting for it; quit is
	// set once the run is over or failed, read by busy islands.
	waiters atomic.Int32
	quit    atomic.Bool
}

func newIslandRun(r *Run, stop sim.Time, c *Cores) *islandRun {
	x := &islandRun{r: r, stop: stop, cores: c}
	x.cv = sync.NewCond(&x.mu)
	for _, is := range r.islands {
		s := &is.st
		s.busy = is.anyBusy()
		s.since = beforeAll
		s.next = beforeAll
		if w, _, ok := is.sched.Head(); ok {
			s.frontier.Store(int64(w))
		} else {
			s.frontier.Store(int64(sim.Never))
		}
	}
	x.startGroups()
	return x
}

// anyBusy reports whether a host of the island has a thread.
func (is *island) anyBusy() bool {
	for _, h := range is.hosts {
		if h.Env.Busy() {
			return true
		}
	}
	return false
}

// execute runs every island to the run's end and reports the end found
// (nil: none, the stop time came first) and a panic of an island.
func (x *islandRun) execute(progress func(now, stop sim.Time)) {
	var wg sync.WaitGroup
	for _, is := range x.r.islands {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x.run(is)
		}()
	}
	if progress == nil {
		wg.Wait()
		return
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			progress(x.reached(), x.stop)
		}
	}
}

// reached is the simulated time every island has reached, for progress
// reports: read without the lock, it need only be about right.
func (x *islandRun) reached() sim.Time {
	least := sim.Never
	for _, is := range x.r.islands {
		least = min(least, sim.Time(is.st.frontier.Load()))
	}
	return least
}

// run is island is's goroutine.
func (x *islandRun) run(is *island) {
	s := &is.st
	x.take(s)
	defer func() {
		if p := recover(); p != nil {
			x.mu.Lock()
			if x.failed == nil {
				x.failed = newInternalError(p, panicStack(p))
			}
			x.quit.Store(true)
			x.mu.Unlock()
		}
		x.mu.Lock()
		s.ended = true
		s.frontier.Store(int64(sim.Never))
		x.decide()
		x.cv.Broadcast()
		x.mu.Unlock()
		if s.holding {
			x.give(s)
		}
	}()
	is.sched.RunWhile(func() bool { return x.more(is) })
}

// take takes a thread of the pool for an island, give gives it back;
// a linked island's group counts its members holding one (held).
func (x *islandRun) take(s *islandState) {
	x.cores.take()
	s.holding = true
	if s.held != nil {
		s.held.Add(1)
	}
}

func (x *islandRun) give(s *islandState) {
	if s.held != nil {
		s.held.Add(-1)
	}
	s.holding = false
	x.cores.release()
}

// more is island is's condition before each of its events: whether it
// fires the next, once it may.
func (x *islandRun) more(is *island) bool {
	s := &is.st
	for {
		if s.pending {
			// The event just fired is a candidate end: wait until it is
			// decided (decide clears it, under the lock), or, linked,
			// until every other island of the group waits at the
			// window's end: the decision may need them to go on.
			if !x.await(s, func() bool { return s.cand == nil || x.othersWait(is) }) {
				return false
			}
			if s.cand != nil {
				if !x.barrier(is) {
					return false
				}
				continue
			}
			s.pending = false
		}
		when, prio, ok := is.sched.Head()
		if is.grp != nil && (!ok || when >= is.end) {
			// The window's end (linked.go).
			if !x.barrier(is) {
				return false
			}
			continue
		}
		if !ok || when > x.stop {
			return false
		}
		if s.busy {
			if s.count++; s.count < publishEvery {
				return true
			}
			s.count = 0
			s.frontier.Store(int64(when))
			if x.quit.Load() {
				return false
			}
			if x.waiters.Load() > 0 {
				x.locked(x.decide)
			}
			return true
		}
		if is.anyBusy() {
			// A thread started in the event just fired: busy from there.
			is.sched.SetHorizon(is.open())
			x.locked(func() {
				s.busy = true
				s.count = 0
				s.frontier.Store(int64(when))
				x.decide()
			})
			return !x.quit.Load()
		}
		e := pos{when: when, prio: prio, island: is.index}
		s.frontier.Store(int64(when))
		x.locked(func() {
			s.next = e
			x.decide()
		})
		safe := false // asked under the lock
		if !x.await(s, func() bool { safe = x.safe(is, e); return safe || x.othersWait(is) }) {
			return false
		}
		if !safe {
			// What keeps it waits at the window's end: it waits there
			// too, and fires the event in a later window.
			if !x.barrier(is) {
				return false
			}
			continue
		}
		// The event may not take the clock past its own time: a core that
		// would run ahead waits for the clock through an event of its own,
		// which comes here first (an island that is idle may be where
		// another ends the run; what it does later is decided then).
		is.sched.SetHorizon(when)
		return true
	}
}

// await waits, under the lock, until ok holds or the run is over; it
// reports whether the island goes on. While it waits the island gives
// its thread back.
func (x *islandRun) await(s *islandState, ok func() bool) bool {
	x.mu.Lock()
	// Counted before ok is first asked: whoever makes ok hold and then
	// finds no waiter has made it hold before this asks.
	x.waiters.Add(1)
	for x.final == nil && x.failed == nil && !ok() {
		if s.holding {
			x.give(s)
		}
		x.cv.Wait()
	}
	x.waiters.Add(-1)
	goOn := x.final == nil && x.failed == nil
	x.mu.Unlock()
	if goOn && !s.holding {
		x.take(s)
	}
	return goOn
}

// safe reports whether idle island is may fire its event at e: nothing
// can end the run before it.
func (x *islandRun) safe(is *island, e pos) bool {
	for _, o := range x.r.islands {
		q := &o.st
		switch {
		case o == is || q.ended:
		case q.cand != nil:
			if !e.before(*q.cand) {
				return false
			}
		case q.busy:
			if e.when >= sim.Time(q.frontier.Load()) {
				return false
			}
		default:
			if !e.before(q.next) {
				return false
			}
		}
	}
	return true
}

// idle is called, in island is's event, when a host's last thread has
// ended: if no host of the island has a thread left, the event is a
// candidate end.
func (x *islandRun) idle(is *island) {
	if is.anyBusy() {
		return
	}
	s := &is.st
	// The thread ended at the clock's time (its core synchronised to
	// end it), in the event fired last or, when the core ran ahead of
	// that event's time, after every event due then.
	c := pos{when: is.sched.Now(), prio: afterAll, island: is.index}
	if when, prio := is.sched.Current(); when == c.when {
		c.prio = prio
	}
	// Where the run may end, it ends at the instant the last thread
	// ended: no core runs on past it (Run.finish) until it is decided
	// that the run goes on; a core that would waits for the clock
	// through an event of its own.
	is.sched.SetHorizon(c.when)
	x.mu.Lock()
	defer x.mu.Unlock()
	if s.cand != nil && *s.cand == c {
		return
	}
	s.pending = true
	if s.busy {
		s.busy = false
		s.since = c
	}
	s.cand = &c
	x.decide()
	x.cv.Broadcast()
}

// decide decides the earliest undecided candidate end, and the next, as
// far as what the islands have published allows. Under the lock.
func (x *islandRun) decide() {
	for x.final == nil {
		var m *island
		for _, o := range x.r.islands {
			if o.st.cand != nil && (m == nil || o.st.cand.before(*m.st.cand)) {
				m = o
			}
		}
		if m == nil {
			return
		}
		c := *m.st.cand
		refuted, known := false, true
		for _, o := range x.r.islands {
			q := &o.st
			switch {
			case o == m:
			case q.busy && (q.ended || c.when < sim.Time(q.frontier.Load())):
				// Busy at c: it passed c's time busy, or ran out of
				// events busy.
				refuted = true
			case q.busy:
				known = false // it has yet to pass c
			case c.before(q.since):
				// It went idle after c: it was busy there.
				refuted = true
			case q.ended:
			case q.cand != nil:
				// Idle since before c, stopped at a later candidate.
			case q.next.before(c) || q.next == beforeAll:
				known = false // it has yet to reach c
			}
		}
		switch {
		case refuted:
			m.st.cand = nil
		case known:
			x.final = &c
			x.quit.Store(true)
			return
		default:
			return
		}
	}
}
