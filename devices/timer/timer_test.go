package timer_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/devices/timer"
	"simkron/memory"
	"simkron/sim"
)

// line records the interrupt output.
type line struct {
	on    bool
	rises int
}

func (l *line) Set(on bool) {
	if on && !l.on {
		l.rises++
	}
	l.on = on
}

func newTimer(t *testing.T) (*sim.Scheduler, *timer.Timer, *line, *memory.GuestLog) {
	t.Helper()
	k := sim.NewScheduler(1)
	var l line
	var g memory.GuestLog
	tm, err := timer.New(k, "h.timer0", timer.Params{HZ: 1000, Epoch: 1000}, &l, &g)
	if err != nil {
		t.Fatal(err)
	}
	return k, tm, &l, &g
}

func at(k *sim.Scheduler, t sim.Time, fn func()) { k.Schedule(sim.NewEvent("test", fn), t) }

func TestRegisters(t *testing.T) {
	k, tm, l, g := newTimer(t)
	type read struct {
		When  sim.Time
		Reg   uint64
		Value uint64
	}
	var got []read
	rd := func(reg uint64) func() {
		return func() { got = append(got, read{k.Now(), reg, tm.Read(reg, 4)}) }
	}
	at(k, 0, rd(timer.RegHZ))
	at(k, 0, func() { tm.Write(timer.RegCtrl, 4, timer.BitTick) })
	at(k, 2500*sim.Microsecond, rd(timer.RegTicks))  // two ticks so far
	at(k, 2500*sim.Microsecond, rd(timer.RegStatus)) // TICK pending, never acked
	at(k, 2500*sim.Microsecond, func() { tm.Write(timer.RegStatus, 4, timer.BitTick) })
	at(k, 2600*sim.Microsecond, rd(timer.RegStatus))
	at(k, 3*sim.Second+1, rd(timer.RegRTC)) // epoch + 3 s
	k.RunUntil(2600 * sim.Microsecond)
	if l.rises != 1 {
		t.Errorf("line rises %d", l.rises)
	}
	at(k, 2700*sim.Microsecond, func() { tm.Write(timer.RegCtrl, 4, 0) }) // stop ticking
	k.RunUntil(4 * sim.Second)
	want := []read{
		{0, timer.RegHZ, 1000},
		{2500 * sim.Microsecond, timer.RegTicks, 2},
		{2500 * sim.Microsecond, timer.RegStatus, timer.BitTick},
		{2600 * sim.Microsecond, timer.RegStatus, 0},
		{3*sim.Second + 1, timer.RegRTC, 1003},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reads (-want +got):\n%s", diff)
	}
	if tm.Stats().Ticks != 2 {
		t.Errorf("ticks = %d, want 2 (stopped at 2.7ms)", tm.Stats().Ticks)
	}
	if g.Count() != 0 {
		t.Errorf("guest errors: %v", g.Records())
	}
}

// The line follows STATUS & CTRL: a tick raises it, the acknowledgement
// lowers it, the next tick raises it again.
func TestLineFollowsStatus(t *testing.T) {
	k, tm, l, _ := newTimer(t)
	at(k, 0, func() { tm.Write(timer.RegCtrl, 4, timer.BitTick) })
	var levels []bool
	for i := 1; i <= 3; i++ {
		ti := sim.Time(i) * sim.Millisecond
		at(k, ti+1, func() {
			levels = append(levels, l.on)
			tm.Write(timer.RegStatus, 4, timer.BitTick)
			levels = append(levels, l.on)
		})
	}
	k.RunUntil(3*sim.Millisecond + 2)
	if diff := cmp.Diff([]bool{true, false, true, false, true, false}, levels); diff != "" {
		t.Errorf("line levels (-want +got):\n%s", diff)
	}
}

func TestOneShot(t *testing.T) {
	k, tm, l, _ := newTimer(t)
	var left uint64
	at(k, 0, func() {
		tm.Write(timer.RegCtrl, 4, timer.BitOneShot)
		tm.Write(timer.RegOneShot, 4, 250)
	})
	at(k, 100*sim.Microsecond+1, func() { left = tm.Read(timer.RegOneShot, 4) })
	k.RunUntil(250*sim.Microsecond - 1)
	if l.on {
		t.Error("one-shot fired early")
	}
	k.RunUntil(250 * sim.Microsecond)
	if !l.on || tm.Read(timer.RegStatus, 4) != timer.BitOneShot {
		t.Error("one-shot did not fire at 250us")
	}
	if left != 150 {
		t.Errorf("ONESHOT read %d us left at 100us, want 150", left)
	}
}

func TestGuestErrors(t *testing.T) {
	k, tm, _, g := newTimer(t)
	at(k, 0, func() {
		tm.Write(timer.RegRTC, 4, 5)       // read-only
		tm.Write(0x40, 4, 1)               // undefined
		tm.Read(0x40, 4)                   // undefined
		tm.Write(timer.RegOneShot, 4, 100) // armed while disabled
	})
	k.RunUntil(sim.Millisecond)
	if g.Count() != 4 {
		t.Errorf("guest errors = %d, want 4: %v", g.Count(), g.Records())
	}
}

func TestBadParams(t *testing.T) {
	k := sim.NewScheduler(1)
	if _, err := timer.New(k, "t", timer.Params{HZ: 0}, nil, nil); err == nil {
		t.Error("hz 0 accepted")
	}
	if _, err := timer.New(k, "t", timer.Params{HZ: 7}, nil, nil); err == nil {
		t.Error("hz 7 (not a whole number of picoseconds) accepted")
	}
}
