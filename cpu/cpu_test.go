package cpu_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
)

// rig is a bare core at 100 MHz (10 ns a cycle) with a 16 KiB memory
// and one L1, no kernel: the tests drive contexts directly.
type rig struct {
	k    *sim.Scheduler
	c    *cpu.CPU
	sys  *memory.System
	idle *cpu.Context
}

func newRig(t testing.TB) *rig {
	t.Helper()
	return newRigOn(t, sim.NewScheduler(1))
}

// newRigOn is newRig on the kernel k, which other cores may share.
func newRigOn(t testing.TB, k *sim.Scheduler) *rig {
	t.Helper()
	l1 := &memory.CacheParams{Size: 4 * sim.KiB, Line: 16, Assoc: 2, HitLatency: 1, WritePolicy: memory.WriteBack, WriteAllocate: true}
	h, err := memory.NewHierarchy(memory.HierarchyParams{L1: l1, MemLatency: 10, MemWriteLatency: 2})
	if err != nil {
		t.Fatal(err)
	}
	sys := memory.NewSystem(k, "h", memory.NewPhys(64*sim.KiB), h)
	p := cpu.DefaultParams()
	p.Clock = 100 * sim.MHz
	p.CPI = 1
	p.IRQEntryCycles = 80
	p.IRQExitCycles = 40
	p.SwitchCycles = 300
	c, err := cpu.New(k, "h.cpu0", p, sys)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{k: k, c: c, sys: sys}
	r.idle = c.NewContext("idle", cpu.KindIdle, func(*cpu.Context) {
		for {
			c.Halt()
		}
	})
	c.OnContextEnd = func(*cpu.Context) { c.Switch(r.idle) }
	return r
}

const cycle = 10 * sim.Nanosecond

// An interrupt that arrives during charged work runs at its arrival time
// and delays the work's completion by exactly the handler's cycles.
func TestInterruptDelaysChargedWork(t *testing.T) {
	r := newRig(t)
	line, err := r.c.Line(3, true)
	if err != nil {
		t.Fatal(err)
	}
	var handlerStart int64
	var handlerAt sim.Time
	r.c.SetHandler(3, "dev", func() {
		handlerStart = r.c.Cycles()
		handlerAt = r.k.Now()
		r.c.Charge(500)
	})
	var done sim.Time
	x := r.c.NewContext("work", cpu.KindThread, func(*cpu.Context) {
		r.c.Charge(10000) // 100us of work, charged lazily
		r.c.Sync()
		done = r.k.Now()
	})
	pulse := sim.NewEvent("pulse", line.Pulse)
	r.k.Schedule(pulse, 30*sim.Microsecond+5) // between two cycle boundaries
	r.c.Start(x)
	r.k.Run()

	// Recognised at the next cycle boundary after 30us+5ps: cycle 3001.
	if want := int64(3001 + 80); handlerStart != want {
		t.Errorf("handler started at cycle %d, want %d (entry cost charged from the boundary)", handlerStart, want)
	}
	if handlerAt != 30*sim.Microsecond+5 {
		t.Errorf("handler ran at %v, want the arrival time", handlerAt)
	}
	if want := 100*sim.Microsecond + (80+500+40)*cycle; done != want {
		t.Errorf("work completed at %v, want %v", done, want)
	}
	if got := r.c.Stats().Interrupts; got != 1 {
		t.Errorf("interrupts = %d, want 1", got)
	}
}

// A masked request waits until interrupts are enabled again, then runs at
// the enabling instant.
func TestMaskedInterruptWaitsForEnable(t *testing.T) {
	r := newRig(t)
	line, _ := r.c.Line(5, false)
	var at sim.Time
	r.c.SetHandler(5, "dev", func() {
		at = r.c.LocalTime()
		line.Set(false)
	})
	x := r.c.NewContext("work", cpu.KindThread, func(*cpu.Context) {
		was := r.c.DisableInterrupts()
		r.c.Charge(1000)
		r.c.Sync()
		r.c.RestoreInterrupts(was)
	})
	r.k.Schedule(sim.NewEvent("raise", func() { line.Set(true) }), 2*sim.Microsecond)
	r.c.Start(x)
	r.k.Run()
	if want := 10*sim.Microsecond + 80*cycle; at != want {
		t.Errorf("handler body ran at %v, want %v (after the entry cost at the enabling instant)", at, want)
	}
}

// A higher-priority line preempts a running handler; a lower one waits for
// it to finish.
func TestInterruptPriorities(t *testing.T) {
	r := newRig(t)
	hi, _ := r.c.Line(1, true)
	lo, _ := r.c.Line(6, true)
	mid, _ := r.c.Line(4, true)
	var order []string
	r.c.SetHandler(4, "mid", func() {
		order = append(order, "mid-start")
		r.c.Charge(1000)
		r.c.Sync() // lets the others arrive while mid runs
		order = append(order, "mid-end")
	})
	r.c.SetHandler(1, "hi", func() { order = append(order, "hi") })
	r.c.SetHandler(6, "lo", func() { order = append(order, "lo") })
	r.k.Schedule(sim.NewEvent("mid", mid.Pulse), 1*sim.Microsecond)
	r.k.Schedule(sim.NewEvent("lo", lo.Pulse), 2*sim.Microsecond)
	r.k.Schedule(sim.NewEvent("hi", hi.Pulse), 3*sim.Microsecond)
	r.c.Start(r.idle)
	r.k.RunUntil(sim.Millisecond)
	want := []string{"mid-start", "hi", "mid-end", "lo"}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("handler order (-want +got):\n%s", diff)
	}
}

// Contexts switch with the configured cost and a halted core wakes on an
// interrupt at its arrival time; idle cycles are counted.
func TestSwitchAndHalt(t *testing.T) {
	r := newRig(t)
	line, _ := r.c.Line(2, true)
	var a, b *cpu.Context
	var woke sim.Time
	blocked := false
	r.c.SetHandler(2, "wake", func() {
		if blocked {
			blocked = false
			woke = r.c.LocalTime()
		}
	})
	b = r.c.NewContext("b", cpu.KindThread, func(*cpu.Context) {
		r.c.Charge(100)
		r.c.Switch(a)
	})
	a = r.c.NewContext("a", cpu.KindThread, func(*cpu.Context) {
		r.c.Switch(b) // 300 cycles, then b charges 100 and switches back: 300 more
		r.c.Sync()
		if got, want := r.k.Now(), 700*cycle; got != want {
			t.Errorf("back in a at %v, want %v", got, want)
		}
		blocked = true
		r.c.Switch(r.idle)
	})
	r.k.Schedule(sim.NewEvent("irq", line.Pulse), 50*sim.Microsecond)
	r.c.Start(a)
	r.k.Run()
	if want := 50*sim.Microsecond + 80*cycle; woke != want {
		t.Errorf("handler ran at %v, want %v", woke, want)
	}
	st := r.c.Stats()
	if st.Switches != 3 {
		t.Errorf("switches = %d, want 3", st.Switches)
	}
	// Idle from the switch to idle (1000 cycles: 700 + 300) until 5000.
	if st.IdleCycles != 4000 {
		t.Errorf("idle cycles = %d, want 4000", st.IdleCycles)
	}
}

// An unhandled level interrupt is a guest error, not a hang or a panic.
func TestSpuriousInterruptMasksLine(t *testing.T) {
	r := newRig(t)
	line, _ := r.c.Line(7, false)
	r.k.Schedule(sim.NewEvent("irq", func() { line.Set(true) }), sim.Microsecond)
	r.c.Start(r.idle)
	r.k.RunUntil(sim.Millisecond)
	if r.sys.Guest.Count() != 1 || r.c.Stats().Spurious != 1 {
		t.Errorf("guest errors %d, spurious %d; want 1 and 1", r.sys.Guest.Count(), r.c.Stats().Spurious)
	}
}

// The CPI is applied in fixed point without losing fractions.
func TestExecFixedPointCPI(t *testing.T) {
	r := newRig(t)
	p := r.c.Params()
	p.CPI = 1.25
	c, _ := cpu.New(r.k, "x", p, r.sys)
	for range 4 {
		c.Exec(1) // 1.25 cycles each: 1, 1, 1, 2
	}
	if c.Cycles() != 5 {
		t.Errorf("4 instructions at CPI 1.25 = %d cycles, want 5", c.Cycles())
	}
}

// Entering a symbol charges its instructions and the stall of fetching its
// code; the second call hits in the I-cache.
func TestSymbolFetchAndAttribution(t *testing.T) {
	r := newRig(t)
	tab := cpu.NewSymbolTable(0x1000, map[string]int64{"f": 20})
	f := tab.Define(cpu.Def{Name: "f", Layer: cpu.LayerIP, Instructions: 10, CodeBytes: 64})
	if got := tab.UnusedOverrides(); len(got) != 0 {
		t.Errorf("unused overrides %v", got)
	}
	var first, second int64
	x := r.c.NewContext("t", cpu.KindThread, func(*cpu.Context) {
		c0 := r.c.Cycles()
		r.c.Call(f, func() {})
		first = r.c.Cycles() - c0
		c0 = r.c.Cycles()
		r.c.Call(f, func() {})
		second = r.c.Cycles() - c0
	})
	r.c.Start(x)
	r.k.Run()
	// 4 lines of 16 bytes: each miss costs 10 (memory) - 1 (hit) = 9.
	if first != 20+4*9 || second != 20 {
		t.Errorf("first call %d cycles, second %d; want %d and 20", first, second, 20+4*9)
	}
	by, _ := r.c.SymbolCycles()
	if by[f.Index()] != first+second {
		t.Errorf("self cycles of f = %d, want %d", by[f.Index()], first+second)
	}
}

// Every charged cycle lands in exactly one layer: a symbol's own layer, or
// its caller's for a symbol of LayerInherit, or the "no layer" bucket.
func TestLayerAttributionSumsExactly(t *testing.T) {
	r := newRig(t)
	tab := cpu.NewSymbolTable(0x2000, nil)
	ip := tab.Define(cpu.Def{Name: "ip_output", Layer: cpu.LayerIP, Instructions: 30, CodeBytes: 64})
	udp := tab.Define(cpu.Def{Name: "udp_sendmsg", Layer: cpu.LayerUDP, Instructions: 40, CodeBytes: 64})
	copyFn := tab.Define(cpu.Def{Name: "bcopy", Layer: cpu.LayerInherit, Instructions: 100, CodeBytes: 32})
	line, _ := r.c.Line(2, true)
	dev := tab.Define(cpu.Def{Name: "dev_intr", Layer: cpu.LayerDEV, Instructions: 25, CodeBytes: 32})
	r.c.SetHandler(2, "dev", func() { r.c.Call(dev, func() {}) })
	x := r.c.NewContext("t", cpu.KindThread, func(*cpu.Context) {
		r.c.Charge(7) // no symbol
		r.c.Call(udp, func() {
			r.c.Call(copyFn, func() {}) // counts as UDP
			r.c.Call(ip, func() {
				r.c.Call(copyFn, func() {}) // counts as IP
				r.c.Sync()                  // the interrupt arrives here
			})
		})
	})
	r.k.Schedule(sim.NewEvent("irq", line.Pulse), 0)
	r.c.Start(x)
	r.k.Run()
	got := map[cpu.Layer]int64{}
	var sum int64
	for _, l := range r.c.LayerCycles() {
		got[l.Layer] = l.Cycles
		sum += l.Cycles
	}
	if sum != r.c.Cycles()-r.c.Stats().IdleCycles {
		t.Errorf("layers sum to %d, busy cycles are %d", sum, r.c.Cycles()-r.c.Stats().IdleCycles)
	}
	// Fetch stalls: 64-byte functions are 4 lines (9 cycles a miss), 32-byte
	// ones 2; bcopy misses only on its first call.
	want := map[cpu.Layer]int64{
		cpu.LayerInherit: 7 + 80 + 40 + 300, // no symbol: interrupt entry/exit, the final switch
		cpu.LayerUDP:     40 + 36 + 100 + 18,
		cpu.LayerIP:      30 + 36 + 100,
		cpu.LayerDEV:     25 + 18,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cycles by layer (-want +got):\n%s", diff)
	}
}

// Charged cycles are attributed when who is charged changes, not at each
// Charge: every reading, an interrupt's entry and exit, a switch, the
// start, turning attribution off and on, and enabling the self-cycles
// table must each settle what was charged before them to the context,
// symbol and layer that ran then.
func TestAttributionSettlesAtEveryBoundary(t *testing.T) {
	r := newRig(t)
	tab := cpu.NewSymbolTable(0x2000, nil)
	udp := tab.Define(cpu.Def{Name: "udp_sendmsg", Layer: cpu.LayerUDP, Instructions: 1, CodeBytes: 4})
	line, _ := r.c.Line(2, true)
	var a, b *cpu.Context
	var inHandler int64
	r.c.SetHandler(2, "dev", func() {
		inHandler = a.Cycles() // the interrupted context's, settled at entry
		r.c.Charge(13)         // no symbol: the handler's, not a's
	})
	sum := func(ls []cpu.LayerCycles) (n int64) {
		for _, l := range ls {
			n += l.Cycles
		}
		return n
	}
	a = r.c.NewContext("a", cpu.KindThread, func(x *cpu.Context) {
		r.c.Charge(5)
		if got := sum(x.LayerCycles()); got != 5 {
			t.Errorf("a's layers sum to %d straight after charging 5", got)
		}
		r.c.Charge(1)
		if got := x.Cycles(); got != 6 {
			t.Errorf("a read its cycles as %d straight after charging 6", got)
		}
		r.c.Charge(1)
		if got := sum(r.c.LayerCycles()); got != 2+7 {
			t.Errorf("the core's layers sum to %d straight after charging 2+7", got)
		}
		r.c.Charge(3)
		r.c.Sync() // the interrupt is taken here
		r.c.Call(udp, func() {
			by, _ := r.c.SymbolCycles()
			before := by[udp.Index()]
			r.c.Charge(7)
			if by, _ := r.c.SymbolCycles(); by[udp.Index()]-before != 7 {
				t.Errorf("udp_sendmsg's self cycles grew by %d straight after charging 7", by[udp.Index()]-before)
			}
			r.c.Charge(2)
			r.c.EnableSelfCycles() // what was charged before is not in the table
			r.c.Charge(4)
			if got := r.c.SelfCycles(); len(got) != 1 || got[0].Symbol != udp || got[0].Cycles != 4 {
				t.Errorf("self cycles straight after charging 4 with the table on: %+v", got)
			}
		})
		r.c.Switch(b) // 300 cycles, a's
	})
	b = r.c.NewContext("b", cpu.KindThread, func(*cpu.Context) {
		r.c.Charge(9)
		r.c.SetAttribution(false)
		r.c.Charge(4) // b's, in no layer
		r.c.SetAttribution(true)
		r.c.Switch(r.idle) // 300 cycles, b's
	})
	r.k.Schedule(sim.NewEvent("irq", line.Pulse), 0)
	r.c.Charge(2) // before the start: no context's
	r.c.Start(a)
	r.k.Run()
	if inHandler != 10 {
		t.Errorf("a's cycles read in the handler = %d, want 10", inHandler)
	}
	by, _ := r.c.SymbolCycles()
	udpCycles := by[udp.Index()] // its instruction, fetch and 7+2+4 charged
	if want := 10 + udpCycles + 300; a.Cycles() != want || sum(a.LayerCycles()) != want {
		t.Errorf("a: %d cycles, layers %d; want %d (its own work only)", a.Cycles(), sum(a.LayerCycles()), want)
	}
	if b.Cycles() != 9+4+300 || sum(b.LayerCycles()) != 9+300 {
		t.Errorf("b: %d cycles, layers %d; want %d and %d", b.Cycles(), sum(b.LayerCycles()), 9+4+300, 9+300)
	}
	busy := r.c.Cycles() - r.c.Stats().IdleCycles
	if want := 2 + a.Cycles() + b.Cycles() + 80 + 13 + 40; busy != want || sum(r.c.LayerCycles()) != want-4 {
		t.Errorf("busy cycles %d, the core's layers %d; want %d and %d", busy, sum(r.c.LayerCycles()), want, want-4)
	}
}

// A context switched to from a thread runs from that thread's stack
// (drive) while its wait, a switch back across the threads and a halt
// go on to the event side as before: the times, the order and the
// counters are those of contexts each resumed from the event side.
func TestSwitchChainWaitsAndComesBack(t *testing.T) {
	r := newRig(t)
	var a, b *cpu.Context
	var log []string
	note := func(what string) { log = append(log, fmt.Sprintf("%s@%d", what, r.c.Cycles())) }
	ev := sim.NewEvent("ev", func() { log = append(log, fmt.Sprintf("ev@%d", r.k.Now()/cycle)) })
	r.k.Schedule(ev, 1000*cycle)
	a = r.c.NewContext("a", cpu.KindThread, func(*cpu.Context) {
		r.c.Charge(100)
		r.c.Switch(b) // 300 cycles: b runs from a's stack at 400
		note("a2")
		r.c.Switch(r.idle) // the idle loop halts: nothing is left to run
	})
	b = r.c.NewContext("b", cpu.KindThread, func(*cpu.Context) {
		note("b1")
		r.c.Charge(1000)
		r.c.Sync() // ev is due at 1000: b waits until 1400
		note("b2")
		r.c.Switch(a) // 300 cycles: a, waiting beneath b's wait, resumes at 1700
	})
	r.c.Start(a)
	// The run stops while b waits, so that its wait goes on through a's
	// stack to here; the next run resumes b from here.
	r.k.RunUntil(1200 * cycle)
	if got, want := strings.Join(log, " "), "b1@400 ev@1000"; got != want {
		t.Fatalf("first run: %s, want %s", got, want)
	}
	r.k.Run()
	if got, want := strings.Join(log, " "), "b1@400 ev@1000 b2@1400 a2@1700"; got != want {
		t.Errorf("order %s, want %s", got, want)
	}
	st := r.c.Stats()
	if st.Switches != 3 || st.SyncsSlow != 1 || st.WaitsNested != 0 || !r.c.Halted() {
		t.Errorf("switches %d, slow syncs %d, nested waits %d, halted %v; want 3, 1, 0, true", st.Switches, st.SyncsSlow, st.WaitsNested, r.c.Halted())
	}
	r.c.Shutdown()
}

// A panic in a context resumed from another's stack reaches whoever ran
// the events, naming the context it was raised in.
func TestPanicInDrivenContext(t *testing.T) {
	r := newRig(t)
	b := r.c.NewContext("b", cpu.KindThread, func(*cpu.Context) { panic("boom") })
	a := r.c.NewContext("a", cpu.KindThread, func(*cpu.Context) { r.c.Switch(b) })
	r.c.Start(a)
	var got any
	func() {
		defer func() { got = recover() }()
		r.k.Run()
	}()
	if p, ok := got.(*cpu.Panic); !ok || p.Context != "b" || p.Value != "boom" {
		t.Errorf("recovered %#v, want the panic of context b", got)
	}
	r.c.Shutdown()
}
