package cpu_test

import (
	"testing"

	"simkron/cpu"
	"simkron/sim"
)

// An idle loop that charged some work and then halts takes an interrupt
// that arrived during that work on its way in; if the handler made work
// ready, HaltUnless returns at once, while Halt sleeps on until the next
// interrupt.
func TestHaltUnlessSeesWorkMadeReady(t *testing.T) {
	for _, unless := range []bool{false, true} {
		r := newRig(t)
		line, _ := r.c.Line(2, true)
		ready := false
		r.c.SetHandler(2, "wake", func() { ready = true })
		var back sim.Time
		loop := r.c.NewContext("loop", cpu.KindIdle, func(*cpu.Context) {
			r.c.Charge(100) // the loop's own work, lazily charged
			if unless {
				r.c.HaltUnless(func() bool { return ready })
			} else {
				r.c.Halt()
			}
			r.c.Sync()
			back = r.k.Now()
			for {
				r.c.Halt()
			}
		})
		// The first interrupt arrives inside the charged work; the next
		// one a millisecond later.
		r.k.Schedule(sim.NewEvent("irq", line.Pulse), 50*cycle)
		r.k.Schedule(sim.NewEvent("irq2", line.Pulse), sim.Millisecond)
		r.c.Start(loop)
		r.k.Run()
		// The handler's 120 cycles (entry, exit) delay the 100 of work.
		want := 220 * cycle
		if !unless {
			want = sim.Millisecond + 120*cycle
		}
		if back != want {
			t.Errorf("unless %v: back from the halt at %v, want %v", unless, back, want)
		}
	}
}
