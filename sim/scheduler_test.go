package sim_test

import (
	cmpstd "cmp"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/sim"
)

// firing is one entry of a recorded fire log.
type firing struct {
	Name string
	At   sim.Time
}

// recorder hands out events that log their name and the firing time.
type recorder struct {
	k   *sim.Scheduler
	log []firing
	evs map[string]*sim.Event
}

func newRecorder() *recorder {
	return &recorder{k: sim.NewScheduler(1), evs: map[string]*sim.Event{}}
}

// ev returns the event called name, creating it with prio (and an optional
// extra action run after logging) on first use.
func (r *recorder) ev(name string, prio sim.Priority, then ...func()) *sim.Event {
	if e, ok := r.evs[name]; ok {
		return e
	}
	e := sim.NewEventPriority(name, prio, func() {
		r.log = append(r.log, firing{name, r.k.Now()})
		for _, f := range then {
			f()
		}
	})
	r.evs[name] = e
	return e
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s did not panic", what)
		}
	}()
	f()
}

func TestEventOrdering(t *testing.T) {
	const (
		dev  = sim.PriorityDevice
		def  = sim.PriorityDefault
		late = sim.PriorityLate
	)
	tests := []struct {
		name  string
		setup func(r *recorder)
		want  []firing
	}{
		{
			name: "time order",
			setup: func(r *recorder) {
				r.k.Schedule(r.ev("a", def), 30)
				r.k.Schedule(r.ev("b", def), 10)
				r.k.Schedule(r.ev("c", def), 20)
				r.k.Schedule(r.ev("d", def), 0)
			},
			want: []firing{{"d", 0}, {"b", 10}, {"c", 20}, {"a", 30}},
		},
		{
			name: "same time: priority order",
			setup: func(r *recorder) {
				r.k.Schedule(r.ev("late", late), 10)
				r.k.Schedule(r.ev("default", def), 10)
				r.k.Schedule(r.ev("device", dev), 10)
			},
			want: []firing{{"device", 10}, {"default", 10}, {"late", 10}},
		},
		{
			name: "extreme priorities",
			setup: func(r *recorder) {
				r.k.Schedule(r.ev("max", sim.Priority(127)), 5)
				r.k.Schedule(r.ev("default", def), 5)
				r.k.Schedule(r.ev("min", sim.Priority(-128)), 5)
			},
			want: []firing{{"min", 5}, {"default", 5}, {"max", 5}},
		},
		{
			name: "time beats priority",
			setup: func(r *recorder) {
				r.k.Schedule(r.ev("device", dev), 11)
				r.k.Schedule(r.ev("late", late), 10)
			},
			want: []firing{{"late", 10}, {"device", 11}},
		},
		{
			name: "same time and priority: scheduling order",
			setup: func(r *recorder) {
				for _, n := range []string{"x", "y", "z", "w", "v", "u"} {
					r.k.Schedule(r.ev(n, def), 7)
				}
			},
			want: []firing{{"x", 7}, {"y", 7}, {"z", 7}, {"w", 7}, {"v", 7}, {"u", 7}},
		},
		{
			name: "reschedule at same time gets a new sequence",
			setup: func(r *recorder) {
				r.k.Schedule(r.ev("a", def), 10)
				r.k.Schedule(r.ev("b", def), 10)
				r.k.Schedule(r.ev("c", def), 10)
				r.k.Schedule(r.ev("a", def), 10)
			},
			want: []firing{{"b", 10}, {"c", 10}, {"a", 10}},
		},
		{
			name: "reschedule earlier",
			setup: func(r *recorder) {
				r.k.Schedule(r.ev("a", def), 50)
				r.k.Schedule(r.ev("b", def), 20)
				r.k.Schedule(r.ev("a", def), 5)
			},
			want: []firing{{"a", 5}, {"b", 20}},
		},
		{
			name: "reschedule later",
			setup: func(r *recorder) {
				r.k.Schedule(r.ev("a", def), 5)
				r.k.Schedule(r.ev("b", def), 20)
				r.k.Schedule(r.ev("c", def), 30)
				r.k.Schedule(r.ev("a", def), 25)
			},
			want: []firing{{"b", 20}, {"a", 25}, {"c", 30}},
		},
		{
			name: "reschedule keeps priority",
			setup: func(r *recorder) {
				r.k.Schedule(r.ev("dev", dev), 40)
				r.k.Schedule(r.ev("def", def), 10)
				r.k.Schedule(r.ev("dev", dev), 10)
			},
			want: []firing{{"dev", 10}, {"def", 10}},
		},
		{
			name: "cancel scheduled",
			setup: func(r *recorder) {
				r.k.Schedule(r.ev("a", def), 10)
				r.k.Schedule(r.ev("b", def), 20)
				r.k.Schedule(r.ev("c", def), 30)
				r.k.Cancel(r.ev("b", def))
			},
			want: []firing{{"a", 10}, {"c", 30}},
		},
		{
			name: "cancel head and last",
			setup: func(r *recorder) {
				for i, n := range []string{"a", "b", "c", "d", "e", "f", "g"} {
					r.k.Schedule(r.ev(n, def), sim.Time(i))
				}
				r.k.Cancel(r.ev("a", def))
				r.k.Cancel(r.ev("g", def))
			},
			want: []firing{{"b", 1}, {"c", 2}, {"d", 3}, {"e", 4}, {"f", 5}},
		},
		{
			name: "cancel idle and twice",
			setup: func(r *recorder) {
				r.k.Cancel(r.ev("idle", def))
				r.k.Schedule(r.ev("a", def), 10)
				r.k.Cancel(r.ev("a", def))
				r.k.Cancel(r.ev("a", def))
				r.k.Schedule(r.ev("b", def), 20)
			},
			want: []firing{{"b", 20}},
		},
		{
			name: "cancel then schedule again",
			setup: func(r *recorder) {
				r.k.Schedule(r.ev("a", def), 10)
				r.k.Schedule(r.ev("b", def), 10)
				r.k.Cancel(r.ev("a", def))
				r.k.Schedule(r.ev("a", def), 10)
			},
			want: []firing{{"b", 10}, {"a", 10}},
		},
		{
			name: "cancel from a callback at the same instant",
			setup: func(r *recorder) {
				r.k.Schedule(r.ev("a", def, func() { r.k.Cancel(r.evs["b"]) }), 10)
				r.k.Schedule(r.ev("b", def), 10)
				r.k.Schedule(r.ev("c", def), 10)
			},
			want: []firing{{"a", 10}, {"c", 10}},
		},
		{
			name: "cancel a lower-priority event from a device callback",
			setup: func(r *recorder) {
				r.k.Schedule(r.ev("cpu", def), 10)
				r.k.Schedule(r.ev("dev", dev, func() { r.k.Cancel(r.evs["cpu"]) }), 10)
			},
			want: []firing{{"dev", 10}},
		},
		{
			name: "cancel self from own callback is harmless",
			setup: func(r *recorder) {
				r.k.Schedule(r.ev("a", def, func() { r.k.Cancel(r.evs["a"]) }), 10)
				r.k.Schedule(r.ev("b", def), 11)
			},
			want: []firing{{"a", 10}, {"b", 11}},
		},
		{
			name: "schedule at now from a callback runs after the current event",
			setup: func(r *recorder) {
				r.k.Schedule(r.ev("a", def, func() { r.k.Schedule(r.ev("n", late), r.k.Now()) }), 10)
				r.k.Schedule(r.ev("b", def), 10)
				r.k.Schedule(r.ev("c", def), 11)
			},
			want: []firing{{"a", 10}, {"b", 10}, {"n", 10}, {"c", 11}},
		},
		{
			name: "device scheduled at now from a callback overtakes default",
			setup: func(r *recorder) {
				r.k.Schedule(r.ev("a", def, func() { r.k.Schedule(r.ev("d", dev), r.k.Now()) }), 10)
				r.k.Schedule(r.ev("b", def), 10)
			},
			want: []firing{{"a", 10}, {"d", 10}, {"b", 10}},
		},
		{
			name: "self rescheduling event",
			setup: func(r *recorder) {
				n := 0
				r.ev("tick", def, func() {
					if n++; n < 4 {
						r.k.ScheduleAfter(r.evs["tick"], 100)
					}
				})
				r.k.Schedule(r.evs["tick"], 0)
				r.k.Schedule(r.ev("mid", def), 150)
			},
			want: []firing{{"tick", 0}, {"tick", 100}, {"mid", 150}, {"tick", 200}, {"tick", 300}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRecorder()
			tt.setup(r)
			r.k.Run()
			if diff := cmp.Diff(tt.want, r.log); diff != "" {
				t.Errorf("fire order (-want +got):\n%s", diff)
			}
			if p := r.k.Pending(); p != 0 {
				t.Errorf("Pending after Run = %d, want 0", p)
			}
			if f := r.k.Fired(); f != uint64(len(tt.want)) {
				t.Errorf("Fired = %d, want %d", f, len(tt.want))
			}
			for name, e := range r.evs {
				if e.Scheduled() {
					t.Errorf("event %s still scheduled after Run", name)
				}
			}
		})
	}
}

func TestScheduleInThePastPanics(t *testing.T) {
	r := newRecorder()
	r.k.RunUntil(100)
	mustPanic(t, "Schedule(50) at now 100", func() { r.k.Schedule(r.ev("a", 0), 50) })
	mustPanic(t, "ScheduleAfter(-1)", func() { r.k.ScheduleAfter(r.ev("a", 0), -1) })
	if r.ev("a", 0).Scheduled() {
		t.Error("event scheduled despite panic")
	}
	r.k.Schedule(r.ev("a", 0), 100) // exactly now is fine
	mustPanic(t, "moving a scheduled event into the past", func() { r.k.Schedule(r.ev("a", 0), 99) })
	if got := r.ev("a", 0).When(); got != 100 {
		t.Errorf("When after failed move = %v, want 100", got)
	}
	r.k.Run()
	if diff := cmp.Diff([]firing{{"a", 100}}, r.log); diff != "" {
		t.Errorf("fire log (-want +got):\n%s", diff)
	}
}

func TestRunUntil(t *testing.T) {
	r := newRecorder()
	for _, at := range []sim.Time{10, 20, 30} {
		r.k.Schedule(r.ev(at.String(), 0), at)
	}
	r.k.RunUntil(20)
	if diff := cmp.Diff([]firing{{"10ps", 10}, {"20ps", 20}}, r.log); diff != "" {
		t.Errorf("RunUntil(20) fired (-want +got):\n%s", diff)
	}
	if r.k.Now() != 20 || r.k.Pending() != 1 {
		t.Errorf("after RunUntil(20): Now=%v Pending=%d, want 20ps 1", r.k.Now(), r.k.Pending())
	}
	r.k.RunUntil(25)
	if r.k.Now() != 25 || len(r.log) != 2 {
		t.Errorf("after RunUntil(25): Now=%v fired=%d, want 25ps 2", r.k.Now(), len(r.log))
	}
	r.k.RunUntil(29)
	if r.k.Now() != 29 || len(r.log) != 2 {
		t.Errorf("after RunUntil(29): Now=%v fired=%d, want 29ps 2", r.k.Now(), len(r.log))
	}
	r.k.RunUntil(1000)
	if r.k.Now() != 1000 || len(r.log) != 3 || r.log[2].At != 30 {
		t.Errorf("after RunUntil(1000): Now=%v log=%v", r.k.Now(), r.log)
	}
	// A limit in the past does not move the clock backwards.
	r.k.RunUntil(500)
	if r.k.Now() != 1000 {
		t.Errorf("RunUntil(500) moved Now to %v", r.k.Now())
	}
	// Run (limit Never) leaves the clock at the last event.
	r.k.Schedule(r.ev("last", 0), 2000)
	r.k.Run()
	if r.k.Now() != 2000 {
		t.Errorf("after Run: Now=%v, want 2ns", r.k.Now())
	}
	r.k.Run() // empty queue: nothing happens
	if r.k.Now() != 2000 {
		t.Errorf("Run on empty queue moved Now to %v", r.k.Now())
	}
}

func TestRunUntilEmptyQueue(t *testing.T) {
	k := sim.NewScheduler(0)
	k.RunUntil(5 * sim.Microsecond)
	if k.Now() != 5*sim.Microsecond {
		t.Errorf("Now = %v, want 5us", k.Now())
	}
}

func TestRunEvents(t *testing.T) {
	r := newRecorder()
	for i := range 5 {
		r.k.Schedule(r.ev(string(rune('a'+i)), 0), sim.Time(i*10))
	}
	if n := r.k.RunEvents(0); n != 0 || r.k.Fired() != 0 {
		t.Errorf("RunEvents(0) = %d, Fired %d", n, r.k.Fired())
	}
	if n := r.k.RunEvents(3); n != 3 {
		t.Errorf("RunEvents(3) = %d", n)
	}
	if r.k.Fired() != 3 || r.k.Pending() != 2 || r.k.Now() != 20 {
		t.Errorf("after RunEvents(3): Fired=%d Pending=%d Now=%v", r.k.Fired(), r.k.Pending(), r.k.Now())
	}
	if n := r.k.RunEvents(10); n != 2 {
		t.Errorf("RunEvents(10) with 2 pending = %d", n)
	}
	if n := r.k.RunEvents(10); n != 0 {
		t.Errorf("RunEvents(10) on empty queue = %d", n)
	}
	want := []firing{{"a", 0}, {"b", 10}, {"c", 20}, {"d", 30}, {"e", 40}}
	if diff := cmp.Diff(want, r.log); diff != "" {
		t.Errorf("fire log (-want +got):\n%s", diff)
	}
}

func TestRunEventsUntil(t *testing.T) {
	r := newRecorder()
	for i := range 5 {
		r.k.Schedule(r.ev(string(rune('a'+i)), 0), sim.Time(i*10))
	}
	for _, tc := range []struct {
		n     uint64
		limit sim.Time
		fired uint64
		now   sim.Time
	}{
		{2, 100, 2, 10}, // the count ends it
		{9, 25, 1, 20},  // the limit ends it; the clock stays at the last event
		{9, 20, 0, 20},
		{1, 30, 1, 30}, // an event due at the limit fires
		{9, sim.Never, 1, 40},
		{9, sim.Never, 0, 40}, // empty
	} {
		if got := r.k.RunEventsUntil(tc.n, tc.limit); got != tc.fired || r.k.Now() != tc.now {
			t.Errorf("RunEventsUntil(%d, %v) = %d at %v, want %d at %v", tc.n, tc.limit, got, r.k.Now(), tc.fired, tc.now)
		}
	}
	if len(r.log) != 5 {
		t.Errorf("fired %v", r.log)
	}
}

func TestStop(t *testing.T) {
	r := newRecorder()
	r.k.Schedule(r.ev("a", 0), 10)
	r.k.Schedule(r.ev("b", 0, r.k.Stop), 20)
	r.k.Schedule(r.ev("c", 0), 20)
	r.k.Schedule(r.ev("d", 0), 30)

	r.k.RunUntil(100)
	if diff := cmp.Diff([]firing{{"a", 10}, {"b", 20}}, r.log); diff != "" {
		t.Errorf("fired before Stop (-want +got):\n%s", diff)
	}
	if r.k.Now() != 20 {
		t.Errorf("a stopped RunUntil moved Now to %v, want 20ps", r.k.Now())
	}
	// Stop before a run is forgotten: the next run starts afresh.
	r.k.Run()
	if diff := cmp.Diff([]firing{{"a", 10}, {"b", 20}, {"c", 20}, {"d", 30}}, r.log); diff != "" {
		t.Errorf("after resuming (-want +got):\n%s", diff)
	}

	// Stop inside RunEvents and RunWhile.
	r = newRecorder()
	r.k.Schedule(r.ev("a", 0, r.k.Stop), 1)
	r.k.Schedule(r.ev("b", 0), 2)
	if n := r.k.RunEvents(5); n != 1 {
		t.Errorf("RunEvents with Stop in the first event = %d, want 1", n)
	}
	r.k.Schedule(r.ev("a", 0), 3)
	r.k.RunWhile(func() bool { return true })
	if diff := cmp.Diff([]firing{{"a", 1}, {"b", 2}, {"a", 3}}, r.log); diff != "" {
		t.Errorf("fire log (-want +got):\n%s", diff)
	}
	r.k.Schedule(r.ev("a", 0), 5)
	r.k.Schedule(r.ev("b", 0), 6)
	r.k.RunWhile(func() bool { return true })
	if r.k.Fired() != 4 || r.k.Pending() != 1 {
		t.Errorf("RunWhile with Stop: Fired=%d Pending=%d, want 4 1", r.k.Fired(), r.k.Pending())
	}
}

func TestRunWhile(t *testing.T) {
	r := newRecorder()
	for i := range 10 {
		r.k.Schedule(r.ev(string(rune('a'+i)), 0), sim.Time(i))
	}
	calls := 0
	r.k.RunWhile(func() bool { calls++; return r.k.Now() < 4 })
	// Events at 0..4 fire: the condition is checked before each one.
	if r.k.Fired() != 5 || r.k.Now() != 4 || calls != 6 {
		t.Errorf("RunWhile(Now<4): Fired=%d Now=%v calls=%d, want 5 4ps 6", r.k.Fired(), r.k.Now(), calls)
	}
	r.k.RunWhile(func() bool { return false })
	if r.k.Fired() != 5 {
		t.Errorf("RunWhile(false) fired events")
	}
	r.k.RunWhile(func() bool { return true })
	if r.k.Fired() != 10 || r.k.Pending() != 0 {
		t.Errorf("RunWhile(true): Fired=%d Pending=%d", r.k.Fired(), r.k.Pending())
	}
}

func TestAdvanceTo(t *testing.T) {
	k := sim.NewScheduler(0)
	if !k.AdvanceTo(1000) || k.Now() != 1000 {
		t.Fatalf("AdvanceTo on an empty queue: Now=%v", k.Now())
	}
	if !k.AdvanceTo(1000) {
		t.Error("AdvanceTo(Now) refused on an empty queue")
	}
	fired := false
	e := sim.NewEvent("e", func() { fired = true })
	k.Schedule(e, 2000)
	for _, tc := range []struct {
		to   sim.Time
		ok   bool
		want sim.Time
	}{
		{1500, true, 1500},
		{1999, true, 1999},
		{2000, false, 1999}, // an event is due at the target
		{3000, false, 1999}, // an event is due before the target
		{sim.Never, false, 1999},
	} {
		if got := k.AdvanceTo(tc.to); got != tc.ok || k.Now() != tc.want {
			t.Errorf("AdvanceTo(%v) = %v, Now=%v; want %v, Now=%v", tc.to, got, k.Now(), tc.ok, tc.want)
		}
	}
	if fired || k.Fired() != 0 {
		t.Error("AdvanceTo fired an event")
	}
	mustPanic(t, "AdvanceTo into the past", func() { k.AdvanceTo(10) })
	k.Cancel(e)
	if !k.AdvanceTo(5000) || k.Now() != 5000 {
		t.Errorf("AdvanceTo after Cancel: Now=%v", k.Now())
	}
}

// AdvanceTo refuses to pass the horizon as it refuses to pass an event
// due; EndAt moves the clock to a stop, or to the next event if sooner,
// and never back.
func TestHorizonAndEndAt(t *testing.T) {
	k := sim.NewScheduler(0)
	k.SetHorizon(100)
	for _, tc := range []struct {
		to   sim.Time
		ok   bool
		want sim.Time
	}{
		{50, true, 50},
		{100, true, 100},
		{101, false, 100},
	} {
		if got := k.AdvanceTo(tc.to); got != tc.ok || k.Now() != tc.want {
			t.Errorf("horizon 100: AdvanceTo(%v) = %v, Now=%v; want %v, Now=%v", tc.to, got, k.Now(), tc.ok, tc.want)
		}
	}
	k.SetHorizon(sim.Never)
	if !k.AdvanceTo(500) {
		t.Error("AdvanceTo refused with no horizon")
	}
	k.Schedule(sim.NewEvent("e", func() {}), 700)
	for _, tc := range []struct{ end, want sim.Time }{
		{600, 600},
		{400, 600}, // never back
		{900, 700}, // not past the event due
	} {
		if k.EndAt(tc.end); k.Now() != tc.want {
			t.Errorf("EndAt(%v): Now=%v, want %v", tc.end, k.Now(), tc.want)
		}
	}
	if k.Fired() != 0 || k.Pending() != 1 {
		t.Errorf("EndAt fired or dropped an event: Fired=%d Pending=%d", k.Fired(), k.Pending())
	}
}

func TestCountsAndNext(t *testing.T) {
	k := sim.NewScheduler(0)
	if k.Next() != sim.Never || k.Pending() != 0 || k.Fired() != 0 || k.Now() != 0 {
		t.Fatalf("fresh kernel: Next=%v Pending=%d Fired=%d Now=%v", k.Next(), k.Pending(), k.Fired(), k.Now())
	}
	if k.Step() {
		t.Error("Step on an empty queue returned true")
	}
	evs := make([]*sim.Event, 100)
	for i := range evs {
		evs[i] = sim.NewEvent("e", func() {})
		k.Schedule(evs[i], sim.Time(1000-i))
	}
	if k.Pending() != 100 || k.Next() != 901 {
		t.Errorf("Pending=%d Next=%v, want 100 901ps", k.Pending(), k.Next())
	}
	k.Schedule(evs[0], 1000) // move: no new entry
	if k.Pending() != 100 {
		t.Errorf("rescheduling changed Pending to %d", k.Pending())
	}
	for i := range 10 {
		k.Cancel(evs[i*10])
	}
	if k.Pending() != 90 {
		t.Errorf("Pending after 10 cancels = %d", k.Pending())
	}
	for i := 1; i <= 90; i++ {
		if !k.Step() {
			t.Fatalf("Step %d returned false", i)
		}
		if k.Fired() != uint64(i) || k.Pending() != 90-i {
			t.Fatalf("after %d steps: Fired=%d Pending=%d", i, k.Fired(), k.Pending())
		}
	}
	if k.Next() != sim.Never {
		t.Errorf("Next on drained queue = %v", k.Next())
	}
}

// Head names the earliest event's time and priority before it fires;
// Current names the firing one's, inside its function and after, even
// once a component has moved the clock on.
func TestHeadAndCurrent(t *testing.T) {
	k := sim.NewScheduler(0)
	if at, p, ok := k.Head(); ok || at != sim.Never || p != sim.PriorityDefault {
		t.Errorf("empty Head = %v %v %v", at, p, ok)
	}
	if at, p := k.Current(); at != 0 || p != sim.PriorityDefault {
		t.Errorf("Current before any event = %v %v", at, p)
	}
	type seen struct {
		HeadAt, CurAt sim.Time
		HeadP, CurP   sim.Priority
	}
	var got []seen
	record := func() {
		var s seen
		s.CurAt, s.CurP = k.Current()
		s.HeadAt, s.HeadP, _ = k.Head()
		got = append(got, s)
	}
	late := sim.NewEventPriority("late", sim.PriorityLate, func() { record(); k.AdvanceTo(40) })
	dev := sim.NewEventPriority("dev", sim.PriorityDevice, record)
	k.Schedule(late, 10)
	k.Schedule(dev, 10)
	k.Schedule(sim.NewEvent("last", record), 50)
	if at, p, _ := k.Head(); at != 10 || p != sim.PriorityDevice {
		t.Errorf("Head = %v %v, want the device event's 10ps %v", at, p, sim.PriorityDevice)
	}
	k.Step()
	k.Step()
	if at, p := k.Current(); at != 10 || p != sim.PriorityLate || k.Now() != 40 {
		t.Errorf("after the late event moved the clock: Current %v %v, Now %v", at, p, k.Now())
	}
	k.Step()
	want := []seen{
		{HeadAt: 10, HeadP: sim.PriorityLate, CurAt: 10, CurP: sim.PriorityDevice},
		{HeadAt: 50, HeadP: sim.PriorityDefault, CurAt: 10, CurP: sim.PriorityLate},
		{HeadAt: sim.Never, HeadP: sim.PriorityDefault, CurAt: 50, CurP: sim.PriorityDefault},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("seen from inside the events (-want +got):\n%s", diff)
	}
}

func TestEventAccessors(t *testing.T) {
	k := sim.NewScheduler(0)
	e := sim.NewEvent("host.nic0.txdone", func() {})
	if e.Name() != "host.nic0.txdone" || e.Scheduled() || e.String() != "host.nic0.txdone(idle)" {
		t.Errorf("idle event: Name=%q Scheduled=%v String=%q", e.Name(), e.Scheduled(), e.String())
	}
	k.ScheduleAfter(e, 1500*sim.Nanosecond)
	if !e.Scheduled() || e.When() != 1500*sim.Nanosecond || e.String() != "host.nic0.txdone@1.5us" {
		t.Errorf("scheduled event: Scheduled=%v When=%v String=%q", e.Scheduled(), e.When(), e.String())
	}
	k.Step()
	if e.Scheduled() {
		t.Error("event still scheduled after firing")
	}
}

func TestEventScheduledDuringOwnCallback(t *testing.T) {
	k := sim.NewScheduler(0)
	var e *sim.Event
	var sawScheduled []bool
	e = sim.NewEvent("e", func() {
		sawScheduled = append(sawScheduled, e.Scheduled())
		if k.Now() < 30 {
			k.ScheduleAfter(e, 10)
		}
	})
	k.Schedule(e, 10)
	k.Run()
	if diff := cmp.Diff([]bool{false, false, false}, sawScheduled); diff != "" {
		t.Errorf("Scheduled() inside own callback (-want +got):\n%s", diff)
	}
}

func TestFiring(t *testing.T) {
	r := newRecorder()
	var traced, second []firing
	r.k.Firing.Connect(func(ev *sim.Event) {
		// The trace runs before the event's callback, the clock at the
		// event's time.
		if len(r.log) != len(traced) {
			t.Errorf("trace for %s ran after its callback", ev.Name())
		}
		if r.k.Now() != ev.When() {
			t.Errorf("trace for %s at %v, the clock at %v", ev.Name(), ev.When(), r.k.Now())
		}
		traced = append(traced, firing{ev.Name(), ev.When()})
	})
	r.k.Schedule(r.ev("a", 0), 5)
	r.k.Step()
	// A second listener sees the events from when it connects, after the
	// first.
	r.k.Firing.Connect(func(ev *sim.Event) {
		if len(traced) != len(r.log)+1 {
			t.Errorf("second listener for %s ran before the first", ev.Name())
		}
		second = append(second, firing{ev.Name(), ev.When()})
	})
	r.k.Schedule(r.ev("b", 0), 7)
	r.k.Step()
	if diff := cmp.Diff(r.log, traced); diff != "" {
		t.Errorf("trace vs fire log (-fired +traced):\n%s", diff)
	}
	if diff := cmp.Diff(r.log[1:], second); diff != "" {
		t.Errorf("second listener vs fire log (-fired +traced):\n%s", diff)
	}
}

// triple is the ordering key a model of the kernel assigns to an event.
type triple struct {
	When sim.Time
	Prio sim.Priority
	Seq  uint64
	ID   int
}

func tripleLess(a, b triple) int {
	switch {
	case a.When != b.When:
		return cmpstd.Compare(a.When, b.When)
	case a.Prio != b.Prio:
		return cmpstd.Compare(a.Prio, b.Prio)
	}
	return cmpstd.Compare(a.Seq, b.Seq)
}

// model mirrors the kernel's documented ordering with a plain map: each
// Schedule takes the next sequence number.
type model struct {
	seq     uint64
	pending map[int]triple
}

// TestRandomOrderProperty schedules, cancels and reschedules thousands of
// events with a seeded RNG, then checks that the kernel fires exactly the
// surviving events in sorted (time, priority, sequence) order.
func TestRandomOrderProperty(t *testing.T) {
	for seed := range uint64(8) {
		rng := rand.New(rand.NewPCG(seed, 99))
		k := sim.NewScheduler(seed)
		const nev = 3000
		prios := []sim.Priority{sim.PriorityDevice, sim.PriorityDefault, sim.PriorityLate, -128, 127}
		var fired []int
		evs := make([]*sim.Event, nev)
		prioOf := make([]sim.Priority, nev)
		for i := range evs {
			id := i
			prioOf[i] = prios[rng.IntN(len(prios))]
			evs[i] = sim.NewEventPriority("e", prioOf[i], func() { fired = append(fired, id) })
		}
		m := model{pending: map[int]triple{}}
		// Narrow time range so many events tie on time (and priority).
		for range 20000 {
			id := rng.IntN(nev)
			switch op := rng.IntN(10); {
			case op < 7: // schedule or reschedule
				at := sim.Time(rng.IntN(200))
				k.Schedule(evs[id], at)
				m.seq++
				m.pending[id] = triple{at, prioOf[id], m.seq, id}
			default:
				k.Cancel(evs[id])
				delete(m.pending, id)
			}
		}
		if k.Pending() != len(m.pending) {
			t.Fatalf("seed %d: Pending=%d, model has %d", seed, k.Pending(), len(m.pending))
		}
		want := make([]triple, 0, len(m.pending))
		for _, tr := range m.pending {
			want = append(want, tr)
		}
		slices.SortFunc(want, tripleLess)
		wantIDs := make([]int, len(want))
		for i, tr := range want {
			wantIDs[i] = tr.ID
			if !evs[tr.ID].Scheduled() || evs[tr.ID].When() != tr.When {
				t.Fatalf("seed %d: event %d Scheduled=%v When=%v, model %v", seed, tr.ID, evs[tr.ID].Scheduled(), evs[tr.ID].When(), tr.When)
			}
		}
		k.Run()
		if diff := cmp.Diff(wantIDs, fired); diff != "" {
			t.Fatalf("seed %d: fire order differs from sorted survivors (-want +got):\n%s", seed, diff)
		}
	}
}

// TestRandomInterleavedProperty mixes scheduling, cancelling and firing,
// including operations from inside callbacks, and checks every fired event
// against the model's minimum.
func TestRandomInterleavedProperty(t *testing.T) {
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 7))
		k := sim.NewScheduler(seed)
		const nev = 500
		m := model{pending: map[int]triple{}}
		evs := make([]*sim.Event, nev)
		prioOf := make([]sim.Priority, nev)
		var failed bool
		schedule := func(id int, at sim.Time) {
			k.Schedule(evs[id], at)
			m.seq++
			m.pending[id] = triple{at, prioOf[id], m.seq, id}
		}
		cancel := func(id int) {
			k.Cancel(evs[id])
			delete(m.pending, id)
		}
		// mutate does a few random operations at or after Now.
		mutate := func(n int) {
			for range n {
				id := rng.IntN(nev)
				if rng.IntN(4) == 0 {
					cancel(id)
				} else {
					schedule(id, k.Now()+sim.Time(rng.IntN(50)))
				}
			}
		}
		for i := range evs {
			id := i
			prioOf[i] = sim.Priority(rng.IntN(3)-1) * 10
			evs[i] = sim.NewEventPriority("e", prioOf[i], func() {
				if failed {
					return
				}
				// The model's minimum must be this event.
				var best triple
				first := true
				for _, tr := range m.pending {
					if first || tripleLess(tr, best) < 0 {
						best, first = tr, false
					}
				}
				if first || best.ID != id || best.When != k.Now() {
					t.Errorf("seed %d: fired event %d at %v, model expected %+v", seed, id, k.Now(), best)
					failed = true
					return
				}
				delete(m.pending, id)
				mutate(rng.IntN(3))
			})
		}
		for round := 0; round < 2000 && !failed; round++ {
			mutate(rng.IntN(5))
			k.RunEvents(uint64(rng.IntN(4)))
			if k.Pending() != len(m.pending) {
				t.Fatalf("seed %d round %d: Pending=%d, model %d", seed, round, k.Pending(), len(m.pending))
			}
		}
		k.Run()
		if !failed && len(m.pending) != 0 {
			t.Errorf("seed %d: model still has %d events after Run", seed, len(m.pending))
		}
	}
}

// TestSmallQueueProperty keeps a handful of events pending, as a
// simulation of two hosts does, and checks every event fired against the
// model's minimum: the queue's path for a root with only leaves below it.
func TestSmallQueueProperty(t *testing.T) {
	for seed := range uint64(8) {
		rng := rand.New(rand.NewPCG(seed, 11))
		k := sim.NewScheduler(seed)
		const nev = 12
		m := model{pending: map[int]triple{}}
		evs := make([]*sim.Event, nev)
		prioOf := make([]sim.Priority, nev)
		fired := -1
		for i := range evs {
			id := i
			prioOf[i] = sim.Priority(rng.IntN(3)-1) * 10
			evs[i] = sim.NewEventPriority("e", prioOf[i], func() { fired = id })
		}
		for step := range 50000 {
			switch size := len(m.pending); {
			case size < 1+rng.IntN(9):
				id := rng.IntN(nev)
				at := k.Now() + sim.Time(rng.IntN(8))
				k.Schedule(evs[id], at)
				m.seq++
				m.pending[id] = triple{at, prioOf[id], m.seq, id}
			case rng.IntN(5) == 0:
				id := rng.IntN(nev)
				k.Cancel(evs[id])
				delete(m.pending, id)
			default:
				var best triple
				for _, tr := range m.pending {
					if best.Seq == 0 || tripleLess(tr, best) < 0 {
						best = tr
					}
				}
				fired = -1
				k.RunEvents(1)
				if fired != best.ID || k.Now() != best.When {
					t.Fatalf("seed %d step %d: fired %d at %v, model expected %+v", seed, step, fired, k.Now(), best)
				}
				delete(m.pending, best.ID)
			}
			if k.Pending() != len(m.pending) {
				t.Fatalf("seed %d step %d: Pending=%d, model %d", seed, step, k.Pending(), len(m.pending))
			}
		}
	}
}

// TestDeterminism runs the same randomised workload twice and checks the
// traces are identical.
func TestDeterminism(t *testing.T) {
	run := func() string {
		k := sim.NewScheduler(123)
		rng := k.Stream("workload")
		var b strings.Builder
		k.Firing.Connect(func(ev *sim.Event) { b.WriteString(ev.String() + " " + ev.When().String() + "\n") })
		evs := make([]*sim.Event, 50)
		for i := range evs {
			evs[i] = sim.NewEvent(string(rune('A'+i)), func() {
				k.ScheduleAfter(evs[rng.IntN(len(evs))], sim.Time(rng.IntN(3))*sim.Nanosecond)
			})
			k.Schedule(evs[i], 0)
		}
		k.RunEvents(5000)
		return b.String()
	}
	a, b := run(), run()
	if a != b {
		t.Error("two identical runs produced different traces")
	}
}

// delayTable is a cheap precomputed pseudo-random delay source.
func delayTable(n int) []sim.Time {
	rng := rand.New(rand.NewPCG(1, 2))
	d := make([]sim.Time, n)
	for i := range d {
		d[i] = sim.Time(1+rng.IntN(2000)) * sim.Nanosecond
	}
	return d
}

// BenchmarkScheduleFire1000Pending keeps 1000 events pending; each firing
// event reschedules itself a pseudo-random delay ahead. One op is one
// fire+reschedule.
func BenchmarkScheduleFire1000Pending(b *testing.B) { benchScheduleFire(b, 1000) }

// BenchmarkScheduleFire4Pending is the common case of a simulation of two
// hosts: three to five events pending.
func BenchmarkScheduleFire4Pending(b *testing.B) { benchScheduleFire(b, 4) }

func benchScheduleFire(b *testing.B, pending int) {
	delays := delayTable(4096)
	const mask = 4096 - 1
	k := sim.NewScheduler(1)
	var di int
	for i := range pending {
		var e *sim.Event
		e = sim.NewEvent("e", func() {
			di++
			k.Schedule(e, k.Now()+delays[di&mask])
		})
		k.Schedule(e, delays[i&mask])
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		k.Step()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	if k.Pending() != pending {
		b.Fatalf("Pending = %d, want %d", k.Pending(), pending)
	}
}

// BenchmarkScheduleCancel schedules one event into a queue of 1000 pending
// events and cancels it again.
func BenchmarkScheduleCancel(b *testing.B) {
	const pending = 1000
	delays := delayTable(4096)
	const mask = 4096 - 1
	k := sim.NewScheduler(1)
	for i := range pending {
		k.Schedule(sim.NewEvent("bg", func() {}), delays[i&mask])
	}
	e := sim.NewEvent("e", func() {})
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		k.Schedule(e, delays[i&mask])
		k.Cancel(e)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// BenchmarkReschedule moves one already-scheduled event among 1000 pending
// ones, as a device does when a deadline changes.
func BenchmarkReschedule(b *testing.B) {
	const pending = 1000
	delays := delayTable(4096)
	const mask = 4096 - 1
	k := sim.NewScheduler(1)
	for i := range pending {
		k.Schedule(sim.NewEvent("bg", func() {}), delays[i&mask])
	}
	e := sim.NewEvent("e", func() {})
	k.Schedule(e, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		k.Schedule(e, delays[i&mask])
	}
}

// A handler that runs the event loop itself (RunNested) sees the events
// the outer run would have fired, in its order, until the event that
// releases it; a nested run beneath a released one hands back at once,
// and one whose outer run would stop returns false.
func TestRunNested(t *testing.T) {
	r := newRecorder()
	var outer, inner sim.Nest
	var got []string
	note := func(s string) func() { return func() { got = append(got, s) } }
	r.k.Schedule(r.ev("a", 0, func() {
		if r.k.RunNested(&outer) {
			got = append(got, "a released")
		}
	}), 10)
	r.k.Schedule(r.ev("b", 0, func() {
		got = append(got, "b nests")
		if !r.k.RunNested(&inner) {
			got = append(got, "b hands back")
		}
	}), 20)
	r.k.Schedule(r.ev("c", 0, func() { r.k.Release(&outer) }), 30)
	r.k.Schedule(r.ev("d", 0, note("d")), 40)
	if r.k.RunNested(&outer) {
		t.Error("RunNested outside a Run* call ran")
	}
	r.k.RunUntil(35)
	want := []string{"b nests", "b hands back", "a released"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("nesting (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]firing{{"a", 10}, {"b", 20}, {"c", 30}}, r.log); diff != "" {
		t.Errorf("fire log (-want +got):\n%s", diff)
	}
	if r.k.Now() != 35 || r.k.Pending() != 1 {
		t.Errorf("after RunUntil(35): Now %v, pending %d; want 35ps and 1", r.k.Now(), r.k.Pending())
	}

	// The outer run's own condition bounds a nested run: RunEvents' count
	// includes the events a nested run fired, and Stop ends both.
	r = newRecorder()
	released := false
	r.k.Schedule(r.ev("a", 0, func() { released = r.k.RunNested(&outer) }), 1)
	for i, n := range []string{"b", "c", "d"} {
		r.k.Schedule(r.ev(n, 0), sim.Time(2+i))
	}
	if n := r.k.RunEvents(3); n != 3 || released {
		t.Errorf("RunEvents(3) with a nested run = %d (released %v), want 3 and false", n, released)
	}
	r.k.Schedule(r.ev("a", 0), 10)
	r.k.Schedule(r.ev("s", 0, r.k.Stop), 11)
	r.k.RunWhile(func() bool { return true })
	if diff := cmp.Diff([]firing{{"a", 1}, {"b", 2}, {"c", 3}, {"d", 4}, {"a", 10}, {"s", 11}}, r.log); diff != "" {
		t.Errorf("fire log (-want +got):\n%s", diff)
	}
}

// Wire events at one instant fire in the order of their keys, whenever
// they were scheduled, and before the instant's other events.
func TestScheduleKeyed(t *testing.T) {
	k := sim.NewScheduler(1)
	var got []string
	add := func(name string) func() { return func() { got = append(got, name) } }
	dev := sim.NewEventPriority("dev", sim.PriorityDevice, add("dev"))
	k.Schedule(dev, 10)
	late := sim.NewEventPriority("w3", sim.PriorityWire, add("w3"))
	early := sim.NewEventPriority("w1", sim.PriorityWire, add("w1"))
	mid := sim.NewEventPriority("w2", sim.PriorityWire, add("w2"))
	k.ScheduleKeyed(late, 10, 3)
	k.ScheduleKeyed(mid, 10, 2)
	k.ScheduleKeyed(early, 10, 1)
	before := sim.NewEventPriority("w9", sim.PriorityWire, add("w9 at 9"))
	k.ScheduleKeyed(before, 9, 9)
	k.Run()
	if want := "w9 at 9 w1 w2 w3 dev"; strings.Join(got, " ") != want {
		t.Fatalf("fired %q, want %q", strings.Join(got, " "), want)
	}
	for _, bad := range []func(){
		func() { k.ScheduleKeyed(sim.NewEvent("plain", func() {}), 20, 1) },
		func() { k.ScheduleKeyed(sim.NewEventPriority("w", sim.PriorityWire, func() {}), 20, 1<<56) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			bad()
		}()
	}
}
