package cpu_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
)

// A core whose software waits runs the event loop on its own stack
// (sim.Scheduler.RunNested) instead of handing back to the event side: the
// same events must fire in the same order at the same times, and every
// counter must come out the same, as when it hands back every time. Two
// cores on one kernel ping-pong through interrupts, with device noise,
// masking, context switches and halts; the run with nesting is compared
// with a run stepped by hand, where nothing can nest.
func TestNestedRunsChangeNothing(t *testing.T) {
	run := func(nested bool) (trace []string, stats []cpu.Stats) {
		k := sim.NewScheduler(7)
		k.Firing.Connect(func(e *sim.Event) { trace = append(trace, fmt.Sprintf("%v %s", e.When(), e.Name())) })
		rng := rand.New(rand.NewPCG(7, 9))
		var cores [2]*cpu.CPU
		var lines [2]*cpu.IRQLine
		var kicks [2]*sim.Event
		for i := range cores {
			l1 := &memory.CacheParams{Size: 4 * sim.KiB, Line: 16, Assoc: 2, HitLatency: 1, WritePolicy: memory.WriteBack, WriteAllocate: true}
			h, err := memory.NewHierarchy(memory.HierarchyParams{L1: l1, MemLatency: 10, MemWriteLatency: 2})
			if err != nil {
				t.Fatal(err)
			}
			sys := memory.NewSystem(k, fmt.Sprint("h", i), memory.NewPhys(64*sim.KiB), h)
			p := cpu.DefaultParams()
			p.Clock = sim.Frequency(100+10*i) * sim.MHz
			c, err := cpu.New(k, fmt.Sprintf("h%d.cpu0", i), p, sys)
			if err != nil {
				t.Fatal(err)
			}
			cores[i] = c
			lines[i], _ = c.Line(3, true)
			kicks[i] = sim.NewEvent(fmt.Sprintf("kick%d", i), lines[i].Pulse)
		}
		for i, c := range cores {
			c := c
			other := 1 - i
			ready, blocked := false, false
			var thread, idle *cpu.Context
			c.SetHandler(3, "nic", func() {
				c.Charge(int64(50 + rng.IntN(200)))
				if blocked {
					blocked, ready = false, true
				}
			})
			idle = c.NewContext("idle", cpu.KindIdle, func(*cpu.Context) {
				for {
					c.HaltUnless(func() bool { return ready })
					if ready {
						ready = false
						c.Switch(thread)
					}
				}
			})
			thread = c.NewContext("thread", cpu.KindThread, func(*cpu.Context) {
				for round := 0; ; round++ {
					for range 1 + rng.IntN(4) {
						c.Charge(int64(rng.IntN(3000)))
						if rng.IntN(3) == 0 {
							was := c.DisableInterrupts()
							c.Charge(int64(rng.IntN(500)))
							c.RestoreInterrupts(was)
						}
						c.Sync()
					}
					// "Send": the other core is interrupted a little later.
					k.Schedule(kicks[other], k.Now()+sim.Time(1+rng.IntN(20))*sim.Microsecond)
					blocked = true
					c.Switch(idle)
				}
			})
			if i == 0 {
				c.Start(thread)
			} else {
				c.Start(idle)
			}
		}
		var noise *sim.Event
		noise = sim.NewEvent("noise", func() {
			lines[rng.IntN(2)].Pulse()
			k.Schedule(noise, k.Now()+sim.Time(1+rng.IntN(50))*sim.Microsecond)
		})
		k.Schedule(noise, 3*sim.Microsecond)
		limit := 20 * sim.Millisecond
		if nested {
			k.RunUntil(limit)
		} else {
			for k.Next() <= limit && k.Step() {
			}
		}
		for _, c := range cores {
			stats = append(stats, c.Stats())
			c.Shutdown()
		}
		return trace, stats
	}
	flatTrace, flatStats := run(false)
	nestTrace, nestStats := run(true)
	if len(flatTrace) < 1000 {
		t.Fatalf("only %d events: the scenario does not exercise anything", len(flatTrace))
	}
	if diff := cmp.Diff(flatTrace, nestTrace); diff != "" {
		t.Errorf("event trace differs with nesting (-without +with):\n%s", diff)
	}
	for i := range flatStats {
		if flatStats[i].WaitsNested != 0 || nestStats[i].WaitsNested == 0 {
			t.Errorf("core %d: nested waits %d by hand, %d in RunUntil; want 0 and some", i, flatStats[i].WaitsNested, nestStats[i].WaitsNested)
		}
		flatStats[i].WaitsNested, nestStats[i].WaitsNested = 0, 0
	}
	if diff := cmp.Diff(flatStats, nestStats); diff != "" {
		t.Errorf("core counters differ with nesting (-without +with):\n%s", diff)
	}
}
