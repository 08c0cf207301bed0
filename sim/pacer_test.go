package sim_test

import (
	"testing"
	"time"

	"simkron/sim"
)

// paced runs k under p until limit (or stop), as a bridged run does.
func paced(p *sim.Pacer, limit sim.Time, budget uint64) {
	for p.Step(limit, budget) {
	}
}

// wallSim is the wall-clock time since start as simulated time.
func wallSim(start time.Time) sim.Time {
	return sim.Time(time.Since(start).Nanoseconds()) * sim.Nanosecond
}

// No event fires before its instant on the wall clock, and the run takes
// as long as the simulated time it covers.
func TestPacerNeverAhead(t *testing.T) {
	k := sim.NewScheduler(1)
	p := sim.NewPacer(k, 8)
	var start time.Time
	type fire struct{ at, wall sim.Time }
	var fires []fire
	for i := range 10 {
		e := sim.NewEvent("tick", func() { fires = append(fires, fire{k.Now(), wallSim(start)}) })
		k.Schedule(e, sim.Time(i)*3*sim.Millisecond+sim.Time(i)*7*sim.Microsecond)
	}
	start = time.Now()
	p.Start()
	paced(p, 40*sim.Millisecond, 1<<16)
	if len(fires) != 10 {
		t.Fatalf("%d events fired, want 10", len(fires))
	}
	for _, f := range fires {
		if f.wall < f.at {
			t.Errorf("event at %v fired %v after the start: ahead of the wall clock", f.at, f.wall)
		}
	}
	if w := wallSim(start); w < 40*sim.Millisecond {
		t.Errorf("the run up to 40ms took %v of wall-clock time", w)
	}
	if st := p.Stats(); st.Waits == 0 {
		t.Errorf("the pacer never waited: %+v", st)
	}
}

// A simulation slower than the wall clock falls behind; the lag and the
// time spent behind are measured.
func TestPacerBehind(t *testing.T) {
	k := sim.NewScheduler(1)
	p := sim.NewPacer(k, 8)
	// 20 events a millisecond apart, each taking 4 ms of the host's time:
	// the last fires at least 20*4 - 19 = 61 ms after its instant.
	for i := range 20 {
		e := sim.NewEvent("slow", func() { time.Sleep(4 * time.Millisecond) })
		k.Schedule(e, sim.Time(i)*sim.Millisecond)
	}
	paced(p, 25*sim.Millisecond, 1)
	st := p.Stats()
	if st.MaxLag < 50*sim.Millisecond {
		t.Errorf("max lag %v, want at least 50ms (20 events of 4ms, 1ms apart)", st.MaxLag)
	}
	if st.Behind < 30*sim.Millisecond {
		t.Errorf("behind for %v, want at least 30ms", st.Behind)
	}
}

// An arrival while the simulation keeps up is stamped with its arrival
// instant: the clock advances to it, not to the next event.
func TestPacerArrivalStamped(t *testing.T) {
	k := sim.NewScheduler(1)
	p := sim.NewPacer(k, 8)
	later := sim.NewEvent("later", func() {})
	k.Schedule(later, 10*sim.Second)
	var stamp, wallThen sim.Time
	start := time.Now()
	p.Start()
	done := make(chan struct{})
	go func() {
		time.Sleep(20 * time.Millisecond)
		if !p.Post(sim.Arrival{At: time.Now(), Deliver: func() {
			stamp, wallThen = k.Now(), wallSim(start)
			close(done)
		}}) {
			t.Error("Post refused the only arrival")
		}
	}()
	stop := make(chan struct{})
	p.SetStop(stop)
	go func() { <-done; close(stop) }()
	paced(p, 20*sim.Second, 1<<16)
	if stamp < 20*sim.Millisecond || stamp > wallThen {
		t.Errorf("arrival stamped %v; it came 20ms after the start and was delivered at %v", stamp, wallThen)
	}
	if later.When() != 10*sim.Second || !later.Scheduled() {
		t.Errorf("the event due at 10s moved or fired: %v", later)
	}
	if st := p.Stats(); st.Delivered != 1 || st.BehindArrivals != 0 {
		t.Errorf("stats %+v: want 1 delivered, none behind", st)
	}
}

// An arrival while the simulation is behind is stamped at the simulated
// time then, and counted.
func TestPacerArrivalWhileBehind(t *testing.T) {
	k := sim.NewScheduler(1)
	p := sim.NewPacer(k, 8)
	var stamp sim.Time = -1
	slow := sim.NewEvent("slow", func() {
		// The host takes 30 ms over this event; 10 ms into it (the event
		// at 2ms already 8 ms overdue) the arrival comes.
		time.Sleep(10 * time.Millisecond)
		p.Post(sim.Arrival{At: time.Now(), Deliver: func() { stamp = k.Now() }})
		time.Sleep(20 * time.Millisecond)
	})
	k.Schedule(slow, sim.Millisecond)
	k.Schedule(sim.NewEvent("next", func() {}), 2*sim.Millisecond)
	paced(p, 40*sim.Millisecond, 1)
	if stamp != sim.Millisecond {
		t.Errorf("arrival stamped %v, want 1ms (the simulated time when it was delivered, far behind)", stamp)
	}
	if st := p.Stats(); st.BehindArrivals != 1 || st.MaxInboxWait < 15*sim.Millisecond {
		t.Errorf("stats %+v: want 1 arrival behind, waiting about 20ms", st)
	}
}

// An arrival that comes before the next event is due is stamped at its
// instant even when it is delivered late (the host was busy with the
// event before): no event runs out of order.
func TestPacerArrivalBeforeOverdue(t *testing.T) {
	k := sim.NewScheduler(1)
	p := sim.NewPacer(k, 8)
	var stamp, arrived sim.Time
	var start time.Time
	slow := sim.NewEvent("slow", func() {
		arrived = wallSim(start)
		p.Post(sim.Arrival{At: time.Now(), Deliver: func() { stamp = k.Now() }})
		time.Sleep(20 * time.Millisecond)
	})
	k.Schedule(slow, sim.Millisecond)
	k.Schedule(sim.NewEvent("next", func() {}), 5*sim.Millisecond)
	p.Start()
	start = time.Now() // after the pacer's own start: its stamps are no earlier

	paced(p, 30*sim.Millisecond, 1)
	if stamp < arrived || stamp >= 5*sim.Millisecond {
		t.Errorf("arrival stamped %v; it came %v after the start, before the event at 5ms", stamp, arrived)
	}
	if st := p.Stats(); st.BehindArrivals != 0 {
		t.Errorf("stats %+v: want no arrival behind", st)
	}
}

// An event that moves the clock on by itself (a core's lazy charging,
// AdvanceTo) past an arrival's instant makes the arrival come at the
// clock's time, not before it.
func TestPacerArrivalAfterClockMoved(t *testing.T) {
	k := sim.NewScheduler(1)
	p := sim.NewPacer(k, 8)
	lazy := sim.NewEvent("lazy", func() { k.AdvanceTo(k.Now() + 10*sim.Millisecond) })
	k.Schedule(lazy, sim.Millisecond)
	var stamp sim.Time
	p.Start()
	// Due 0.2 ms after the event: it runs first, and the clock is at
	// 11 ms when the arrival is delivered.
	p.Post(sim.Arrival{At: time.Now().Add(1200 * time.Microsecond), Deliver: func() { stamp = k.Now() }})
	paced(p, 15*sim.Millisecond, 1<<16)
	if stamp != 11*sim.Millisecond {
		t.Errorf("arrival stamped %v, want 11ms (the clock after the event)", stamp)
	}
}

// A full inbox refuses arrivals rather than block.
func TestPacerInboxFull(t *testing.T) {
	p := sim.NewPacer(sim.NewScheduler(1), 2)
	var got []bool
	for range 3 {
		got = append(got, p.Post(sim.Arrival{At: time.Now(), Deliver: func() {}}))
	}
	if !got[0] || !got[1] || got[2] {
		t.Errorf("Post results %v, want [true true false]", got)
	}
}

// Closing the stop channel ends a wait at once.
func TestPacerStop(t *testing.T) {
	k := sim.NewScheduler(1)
	p := sim.NewPacer(k, 2)
	k.Schedule(sim.NewEvent("far", func() {}), 10*sim.Second)
	stop := make(chan struct{})
	p.SetStop(stop)
	time.AfterFunc(20*time.Millisecond, func() { close(stop) })
	start := time.Now()
	paced(p, 20*sim.Second, 1<<16)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the run went on %v after the stop", d)
	}
	if k.Fired() != 0 {
		t.Errorf("%d events fired", k.Fired())
	}
}

// With nothing to do, a paced run still lasts until its limit on the wall
// clock (a frame may yet come).
func TestPacerIdleUntilLimit(t *testing.T) {
	k := sim.NewScheduler(1)
	p := sim.NewPacer(k, 2)
	start := time.Now()
	paced(p, 30*sim.Millisecond, 1<<16)
	if w := wallSim(start); w < 30*sim.Millisecond {
		t.Errorf("an idle run to 30ms ended after %v", w)
	}
}
