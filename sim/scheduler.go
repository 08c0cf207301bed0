package sim

import (
	"fmt"
	"math/bits"

	"simkron/trace"
)

// A queue entry keeps the ordering key next to the pointer so that sifting
// compares without dereferencing events.
type entry struct {
	when Time
	key  uint64 // priority (biased) in the top 8 bits, sequence below
	ev   *Event
}

func (a *entry) less(b *entry) bool { return lessBit(a, b) != 0 }

// lessBit is 1 if a orders before b and 0 otherwise. It compares (when, key)
// as one 128-bit number (the sign bit of when flipped so that the unsigned
// comparison matches the signed one) with no branches, which matters in the
// sift loops where the outcome is unpredictable.
func lessBit(a, b *entry) uint64 {
	_, borrow := bits.Sub64(a.key, b.key, 0)
	_, borrow = bits.Sub64(uint64(a.when)^(1<<63), uint64(b.when)^(1<<63), borrow)
	return borrow
}

const seqBits = 56

// Scheduler is the event scheduler of one simulation. It is not safe for use by
// more than one goroutine.
//
// The queue is a 4-ary min-heap ordered by (time, priority, sequence).
type Scheduler struct {
	now     Time
	seq     uint64
	heap    []entry
	fired   uint64
	stopped bool
	seed    uint64
	// curWhen and curPrio are the time and priority of the event fired
	// last (Current).
	curWhen Time
	curPrio Priority
	// horizon is how far AdvanceTo may move the clock (SetHorizon).
	horizon Time
	// Firing is the kernel's trace source: it fires every event just
	// before the event's function runs, the clock at the event's time
	// (Event.When). A listener must not schedule or cancel events.
	Firing trace.Source[*Event]
	// run is what the running Run* call goes on while; nested runs
	// (RunNested) consult it as the call itself does.
	run runState
	// depth counts the nested runs active; unwind is the depth of the one
	// whose wait ended while a deeper one ran (0: none), which every run
	// above it must hand back to.
	depth  int
	unwind int
}

// runState is a Run* call's condition: RunWhile's cond, else an event
// count and a time limit.
type runState struct {
	active bool
	cond   func() bool
	left   uint64
	limit  Time
}

// NewScheduler returns a kernel at time 0 whose random streams derive from
// seed.
func NewScheduler(seed uint64) *Scheduler {
	return &Scheduler{seed: seed, heap: make([]entry, 0, 64), horizon: Never}
}

// Now returns the current simulated time.
func (k *Scheduler) Now() Time { return k.now }

// Seed returns the master seed.
func (k *Scheduler) Seed() uint64 { return k.seed }

// Fired returns how many events have fired so far.
func (k *Scheduler) Fired() uint64 { return k.fired }

// Pending returns how many events are scheduled.
func (k *Scheduler) Pending() int { return len(k.heap) }

// Current returns the time and priority of the event fired last (the one
// firing, from inside its function), which may lie before Now when a
// component moved the clock on (AdvanceTo); before any event, 0 and
// PriorityDefault.
func (k *Scheduler) Current() (Time, Priority) { return k.curWhen, k.curPrio }

// Head returns the time and priority of the earliest scheduled event, and
// false when none is.
func (k *Scheduler) Head() (Time, Priority, bool) {
	if len(k.heap) == 0 {
		return Never, PriorityDefault, false
	}
	e := k.heap[0].ev
	return e.when, e.prio, true
}

// Schedule arranges for e to fire at time at (>= Now). An event that is
// already scheduled is moved.
func (k *Scheduler) Schedule(e *Event, at Time) {
	if at < k.now {
		panic(fmt.Sprintf("sim: event %s scheduled at %v, before now %v", e.name, at, k.now))
	}
	k.seq++
	key := uint64(uint8(int16(e.prio)+128))<<seqBits | (k.seq & (1<<seqBits - 1))
	e.when = at
	if e.index >= 0 {
		i := e.index
		k.heap[i].when, k.heap[i].key = at, key
		if !k.up(i) {
			k.down(i)
		}
		return
	}
	k.heap = append(k.heap, entry{when: at, key: key, ev: e})
	h := k.heap
	i := len(h) - 1
	e.index = i
	if i > 4 {
		k.up(i)
		return
	}
	// A child of the root (a few events pending, the usual case): one
	// comparison.
	if i > 0 && lessBit(&h[i], &h[0]) != 0 {
		h[0], h[i] = h[i], h[0]
		h[0].ev.index, h[i].ev.index = 0, i
	}
}

// ScheduleKeyed arranges for e, an event of priority PriorityWire, to fire
// at time at (>= Now), ordered among the wire events due at the same
// instant by key (below 2^56, lower first) instead of by when it was
// scheduled. Something that arrives from another host through a link
// (with its arrival time, known at least a link's lookahead in advance)
// is scheduled so: its place among the receiving host's events is then
// the same whether both hosts share one scheduler or each has its own
// and the arrival is handed over later (package machine's linked
// parts). Keys must differ among the wire events due at one instant.
func (k *Scheduler) ScheduleKeyed(e *Event, at Time, key uint64) {
	if e.prio != PriorityWire || key >= 1<<seqBits {
		panic(fmt.Sprintf("sim: keyed event %s of priority %d with key %#x", e.name, e.prio, key))
	}
	k.Schedule(e, at)
	i := e.index
	k.heap[i].key = uint64(uint8(int16(PriorityWire)+128))<<seqBits | key
	if !k.up(i) {
		k.down(i)
	}
}

// ScheduleAfter arranges for e to fire d after now.
func (k *Scheduler) ScheduleAfter(e *Event, d Time) { k.Schedule(e, k.now+d) }

// Cancel removes e from the queue; cancelling an idle event does nothing.
func (k *Scheduler) Cancel(e *Event) {
	i := e.index
	if i < 0 {
		return
	}
	last := len(k.heap) - 1
	if i != last {
		k.heap[i] = k.heap[last]
		k.heap[i].ev.index = i
	}
	k.heap[last] = entry{}
	k.heap = k.heap[:last]
	e.index = -1
	if i != last {
		if !k.up(i) {
			k.down(i)
		}
	}
}

// Next returns the time of the earliest scheduled event, or Never.
func (k *Scheduler) Next() Time {
	if len(k.heap) == 0 {
		return Never
	}
	return k.heap[0].when
}

// AdvanceTo moves the clock forward to t without firing anything. It is
// allowed only when no event is due at or before t, and t is within the
// horizon (SetHorizon): this is how a CPU that ran ahead of the clock
// synchronises cheaply when nothing intervened. It reports whether the
// clock was moved.
func (k *Scheduler) AdvanceTo(t Time) bool {
	if t < k.now {
		panic(advanceBack{to: t, now: k.now})
	}
	if h := k.heap; len(h) > 0 && h[0].when <= t || t > k.horizon {
		return false
	}
	k.now = t
	return true
}

// SetHorizon makes AdvanceTo refuse to move the clock past t, as if an
// event were due just after it: whoever asked then waits for the clock
// through an event of its own, which the running Run* call fires when it
// may. A simulation split among schedulers keeps a part from running
// ahead, inside one event, where another may end the run. Never, the
// default, refuses nothing.
func (k *Scheduler) SetHorizon(t Time) { k.horizon = t }

// EndAt moves the clock forward to t, or to the earliest scheduled event
// if that is sooner, without firing anything, where a simulation split
// among several schedulers stopped: one scheduler's clock would stand
// there for every component, events due at that instant still waiting.
// An earlier t leaves the clock where it is.
func (k *Scheduler) EndAt(t Time) {
	k.now = max(k.now, min(t, k.Next()))
}

// advanceBack is AdvanceTo's panic: an error value, formatted only when
// printed, so that AdvanceTo is small enough to inline into the CPU's Sync.
type advanceBack struct{ to, now Time }

func (e advanceBack) Error() string {
	return fmt.Sprintf("sim: AdvanceTo(%v) before now %v", e.to, e.now)
}

// Stop makes the running Run* call return after the current event.
func (k *Scheduler) Stop() { k.stopped = true }

// Step fires the earliest event. It returns false if the queue is empty.
func (k *Scheduler) Step() bool {
	if len(k.heap) == 0 {
		return false
	}
	e := k.pop()
	k.now = e.when
	k.curWhen, k.curPrio = e.when, e.prio
	k.fired++
	if k.Firing.Listened() {
		k.Firing.Fire(e)
	}
	e.fn()
	return true
}

// Run fires events until the queue is empty or Stop is called.
func (k *Scheduler) Run() { k.RunUntil(Never) }

// RunUntil fires every event due at or before limit, unless Stop is called
// first; then, if it was not stopped, the clock stands at limit (or stays
// where it is when limit is Never).
func (k *Scheduler) RunUntil(limit Time) {
	k.runLoop(runState{active: true, left: ^uint64(0), limit: limit})
	if !k.stopped && limit != Never && k.now < limit {
		k.now = limit
	}
}

// RunEvents fires at most n events and returns how many fired.
func (k *Scheduler) RunEvents(n uint64) uint64 { return k.RunEventsUntil(n, Never) }

// RunEventsUntil fires at most n events, each due at or before limit, and
// returns how many fired; the clock stays at the last one.
func (k *Scheduler) RunEventsUntil(n uint64, limit Time) uint64 {
	start := k.fired
	k.runLoop(runState{active: true, left: n, limit: limit})
	return k.fired - start
}

// RunWhile fires events while cond returns true; cond is checked before
// each event.
func (k *Scheduler) RunWhile(cond func() bool) {
	k.runLoop(runState{active: true, cond: cond})
}

func (k *Scheduler) runLoop(r runState) {
	k.stopped = false
	outer := k.run
	k.run = r
	for k.more() && k.Step() {
	}
	k.run = outer
}

// more reports whether the running Run* call goes on to the next event.
func (k *Scheduler) more() bool {
	r := &k.run
	switch {
	case k.stopped:
		return false
	case r.cond != nil:
		return r.cond()
	case r.left == 0:
		return false
	}
	r.left--
	return len(k.heap) > 0 && k.heap[0].when <= r.limit
}

// Nest is one nested run's state (RunNested).
type Nest struct {
	depth int
	done  bool
}

// RunNested fires events from inside an event's handler, on behalf of the
// running Run* call and exactly as it would: a simulated core whose
// software waits runs the event loop on its own stack instead of handing
// back to the handler that resumed it and being resumed again, which
// saves two coroutine switches a wait; the events and their order are the
// same. It returns true once Release(n) was called (the wait ended), false
// at once outside a Run* call, and false when the caller must hand back
// after all: the Run* call would stop, or the wait of a nested run beneath
// this one has ended (that one runs next).
func (k *Scheduler) RunNested(n *Nest) bool {
	if !k.run.active {
		return false
	}
	k.depth++
	n.depth, n.done = k.depth, false
	for !n.done && k.unwind == 0 && k.more() && k.Step() {
	}
	k.depth--
	if !n.done {
		return false
	}
	if k.unwind == n.depth {
		k.unwind = 0
	}
	return true
}

// Release ends the wait of the nested run n: it returns true after the
// event that calls Release, and every nested run above it hands back.
func (k *Scheduler) Release(n *Nest) {
	n.done = true
	if k.unwind == 0 || n.depth < k.unwind {
		k.unwind = n.depth
	}
}

func (k *Scheduler) pop() *Event {
	h := k.heap
	e := h[0].ev
	last := len(h) - 1
	x := h[last]
	h[last] = entry{}
	h = h[:last]
	k.heap = h
	e.index = -1
	switch {
	case last == 0:
	case last <= 5:
		// What is left fits in the root and its four children (the usual
		// case: a few events pending): the smallest becomes the root and
		// the old last entry takes its place.
		m, least := last, &x // last: x's
		for j := 1; j < last; j++ {
			if lessBit(&h[j], least) != 0 {
				m, least = j, &h[j]
			}
		}
		if m < last {
			h[0], h[m] = h[m], x
			h[0].ev.index, x.ev.index = 0, m
		} else {
			h[0] = x
			x.ev.index = 0
		}
	default:
		// The old last entry almost always belongs near the bottom, so
		// walk the hole down to a leaf along the smallest children and
		// sift x up from there (Floyd): one comparison per level instead
		// of two.
		k.siftUp(k.descend(0), x)
	}
	return e
}

// up sifts entry i towards the root and reports whether it moved.
func (k *Scheduler) up(i int) bool {
	j := k.siftUp(i, k.heap[i])
	return j != i
}

// siftUp places x at hole i or above it, moving larger parents down, and
// returns where x ended up.
func (k *Scheduler) siftUp(i int, x entry) int {
	h := k.heap
	for i > 0 {
		p := (i - 1) / 4
		if lessBit(&x, &h[p]) == 0 {
			break
		}
		h[i] = h[p]
		h[i].ev.index = i
		i = p
	}
	h[i] = x
	x.ev.index = i
	return i
}

// minChild returns the index of the smallest of the children of i, or -1 if
// i is a leaf.
func minChild(h []entry, i int) int {
	c := 4*i + 1
	if c+3 < len(h) {
		// All four children exist: a branch-free tournament.
		q := (*[4]entry)(h[c : c+4])
		a := lessBit(&q[1], &q[0])     // 0 or 1
		b := 2 + lessBit(&q[3], &q[2]) // 2 or 3
		mask := -lessBit(&q[b], &q[a])
		return c + int(a^((a^b)&mask))
	}
	if c >= len(h) {
		return -1
	}
	m := c
	for j := c + 1; j < len(h); j++ {
		if h[j].less(&h[m]) {
			m = j
		}
	}
	return m
}

// descend moves the hole at i down to a leaf, pulling the smallest child
// up at each level, and returns the leaf's index.
func (k *Scheduler) descend(i int) int {
	h := k.heap
	for {
		m := minChild(h, i)
		if m < 0 {
			return i
		}
		h[i] = h[m]
		h[i].ev.index = i
		i = m
	}
}

// down sifts entry i towards the leaves.
func (k *Scheduler) down(i int) {
	h := k.heap
	x := h[i]
	for {
		m := minChild(h, i)
		if m < 0 || lessBit(&h[m], &x) == 0 {
			break
		}
		h[i] = h[m]
		h[i].ev.index = i
		i = m
	}
	h[i] = x
	x.ev.index = i
}
