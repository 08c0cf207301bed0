package cpu_test

import (
	"testing"

	"simkron/cpu"
	"simkron/sim"
)

// BenchmarkInterruptRoundTrip measures the host cost of one switch between
// simulated contexts: a thread waiting in Sync is interrupted, the handler
// runs on its stack, and the thread resumes (thread → interrupt → thread).
func BenchmarkInterruptRoundTrip(b *testing.B) {
	r := newRig(b)
	line, _ := r.c.Line(3, true)
	r.c.SetHandler(3, "dev", func() { r.c.Charge(10) })
	pulse := sim.NewEvent("pulse", line.Pulse)
	x := r.c.NewContext("t", cpu.KindThread, func(*cpu.Context) {
		for {
			r.c.Charge(1000)
			r.k.Schedule(pulse, r.k.Now()+5*cycle)
			r.c.Sync()
		}
	})
	r.c.Start(x)
	r.k.RunEvents(100)
	b.ReportAllocs()
	b.ResetTimer()
	before := r.c.Stats().Interrupts
	for r.c.Stats().Interrupts-before < uint64(b.N) {
		r.k.Step()
	}
	b.StopTimer()
	r.c.Shutdown()
}

// BenchmarkSwitch measures a context switch between two threads.
func BenchmarkSwitch(b *testing.B) {
	r := newRig(b)
	var a, c *cpu.Context
	n := 0
	ping := func(other **cpu.Context) func(*cpu.Context) {
		return func(*cpu.Context) {
			for n < b.N {
				n++
				r.c.Switch(*other)
			}
			r.c.Switch(r.idle)
		}
	}
	a = r.c.NewContext("a", cpu.KindThread, ping(&c))
	c = r.c.NewContext("c", cpu.KindThread, ping(&a))
	r.c.Start(a)
	b.ReportAllocs()
	b.ResetTimer()
	r.k.RunEvents(1)
	b.StopTimer()
	if n < b.N {
		b.Fatalf("%d switches, want %d", n, b.N)
	}
	r.c.Shutdown()
}

// BenchmarkHandover measures the host cost of one hand-over between two
// cores on one kernel whose work interleaves in simulated time, as two
// hosts' interrupt handlers do when they run at the same instants: each
// thread charges 10 cycles and syncs, 5 cycles out of step with the
// other, so every Sync finds the other core's resume due first and runs
// it (two coroutine switches and two events). An op is one Sync.
func BenchmarkHandover(b *testing.B) {
	k := sim.NewScheduler(1)
	var cores [2]*cpu.CPU
	syncs := 0
	for i := range cores {
		c := newRigOn(b, k).c
		cores[i] = c
		c.Charge(int64(5 * i))
		c.Start(c.NewContext("t", cpu.KindThread, func(*cpu.Context) {
			for {
				syncs++
				c.Charge(10)
				c.Sync()
			}
		}))
	}
	k.RunEvents(100)
	b.ReportAllocs()
	b.ResetTimer()
	start := syncs
	for syncs-start < b.N {
		k.RunEvents(1)
	}
	b.StopTimer()
	var slow uint64
	for _, c := range cores {
		slow += c.Stats().SyncsSlow
		c.Shutdown()
	}
	if slow < uint64(syncs)*9/10 {
		b.Fatalf("%d of %d syncs were slow: the cores did not hand over at every sync", slow, syncs)
	}
}
