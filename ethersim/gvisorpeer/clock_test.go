package gvisorpeer

import (
	"testing"
	"time"

	"simkron/sim"
)

func TestClockFollowsTheSimulation(t *testing.T) {
	k := sim.NewScheduler(1)
	epoch := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewClock(k, epoch, "t")
	var fired []sim.Time
	a := c.AfterFunc(3*time.Millisecond, func() { fired = append(fired, k.Now()) })
	b := c.AfterFunc(time.Millisecond, func() { fired = append(fired, k.Now()) })
	forever := c.AfterFunc(1<<62, func() { t.Error("an infinite timer fired") })
	a.Reset(2 * time.Millisecond)
	k.Run()
	if len(fired) != 2 || fired[0] != sim.Millisecond || fired[1] != 2*sim.Millisecond {
		t.Fatalf("fired at %v, want [1ms 2ms]", fired)
	}
	if got := c.Now(); !got.Equal(epoch.Add(2 * time.Millisecond)) {
		t.Errorf("Now = %v", got)
	}
	if got := c.NowMonotonic().Sub(c.NowMonotonic()); got != 0 {
		t.Errorf("monotonic clock moved without the simulation: %v", got)
	}
	if b.Stop() {
		t.Error("Stop of a fired timer reported true")
	}
	b.Reset(time.Microsecond)
	if !b.Stop() || b.Stop() {
		t.Error("Stop of a pending timer should report true once")
	}
	if !forever.Stop() {
		t.Error("an infinite timer was not pending")
	}
	if k.Pending() != 0 {
		t.Errorf("%d events left", k.Pending())
	}
}
