package cpu_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/cpu"
	"simkron/sim"
)

// Trace.Charged counts every busy cycle once, each batch while the
// function it names is the innermost one a listener following Enter,
// Exit and Interrupt knows active: threads that switch, an idle loop
// that halts, interrupts with and without a symbol around their entry
// and exit, a nested interrupt, and inherit functions called from
// handlers. The batches agree with the core's own counts: by layer
// (LayerCycles), by symbol (SymbolCycles) and in all (cycles less idle).
func TestChargedCountsEveryBusyCycle(t *testing.T) {
	for _, withIRQSymbol := range []bool{false, true} {
		name := "no irq symbol"
		if withIRQSymbol {
			name = "irq symbol"
		}
		t.Run(name, func(t *testing.T) {
			r := newRig(t)
			c := r.c
			syms := cpu.NewSymbolTable(0x1000, nil)
			send := syms.Define(cpu.Def{Name: "udp_sendmsg", Layer: cpu.LayerUDP, Instructions: 40})
			ip := syms.Define(cpu.Def{Name: "ip_output", Layer: cpu.LayerIP, Instructions: 30})
			copyFn := syms.Define(cpu.Def{Name: "bcopy", Layer: cpu.LayerInherit, Instructions: 7})
			isr := syms.Define(cpu.Def{Name: "ei_interrupt", Layer: cpu.LayerDEV, Instructions: 25})
			tick := syms.Define(cpu.Def{Name: "do_timer", Layer: cpu.LayerKERN, Instructions: 9})
			if withIRQSymbol {
				c.IRQSymbol = syms.Define(cpu.Def{Name: "do_IRQ", Layer: cpu.LayerKERN, Instructions: 1})
			}
			nic, _ := c.Line(5, true)
			timer, _ := c.Line(0, true)
			c.SetHandler(5, "nic", func() {
				c.Call(isr, func() {
					c.Call(copyFn, func() {
						c.Charge(700)
						c.Sync() // the timer's line preempts here
					})
				})
				c.Charge(11) // inside the interrupt, in no handler function
			})
			c.SetHandler(0, "timer", func() { c.Call(tick, func() { c.Charge(3) }) })

			// The listener: a stack per context, cut at each interrupt.
			stacks := map[*cpu.Context][]*cpu.Symbol{}
			var irq [][]*cpu.Symbol
			top := func() *[]*cpu.Symbol {
				if len(irq) > 0 {
					return &irq[len(irq)-1]
				}
				s := stacks[c.Current()]
				stacks[c.Current()] = s
				return &s
			}
			set := func(s []*cpu.Symbol) {
				if len(irq) > 0 {
					irq[len(irq)-1] = s
				} else {
					stacks[c.Current()] = s
				}
			}
			c.Trace.Enter.Connect(func(s *cpu.Symbol) { set(append(*top(), s)) })
			c.Trace.Exit.Connect(func(s *cpu.Symbol) {
				st := *top()
				if len(st) == 0 || st[len(st)-1] != s {
					t.Fatalf("exit of %v with %v active", s, st)
				}
				set(st[:len(st)-1])
			})
			c.Trace.Interrupt.Connect(func(e cpu.Interrupt) {
				if e.Entry {
					irq = append(irq, nil)
				} else {
					irq = irq[:len(irq)-1]
				}
			})
			var total int64
			layers := map[cpu.Layer]int64{}
			bySym := map[*cpu.Symbol]int64{}
			wrong := 0
			c.Trace.Charged.Connect(func(e cpu.Charged) {
				total += e.Cycles
				layers[e.Layer] += e.Cycles
				bySym[e.Symbol] += e.Cycles
				var inner *cpu.Symbol
				if st := *top(); len(st) > 0 {
					inner = st[len(st)-1]
				}
				// Cycles charged in an interrupt outside its handler's
				// functions count to the interrupted function (the core's
				// stack is one); the listener's stack there is empty.
				if inner != e.Symbol && !(len(irq) > 0 && inner == nil) {
					wrong++
					if wrong < 5 {
						t.Errorf("%d cycles counted to %v while %v is innermost", e.Cycles, e.Symbol, inner)
					}
				}
				if e.Cycles <= 0 {
					t.Errorf("a batch of %d cycles", e.Cycles)
				}
			})

			var sender, receiver *cpu.Context
			sender = c.NewContext("sender", cpu.KindThread, func(*cpu.Context) {
				for i := range 20 {
					c.Call(send, func() {
						c.Charge(100)
						c.Call(ip, func() {
							c.Call(copyFn, func() { c.Charge(int64(50 + 10*i)) })
							c.Sync()
						})
					})
					c.Charge(13) // between calls: no function
					if i%3 == 0 {
						c.Switch(receiver)
					}
					if i%5 == 0 {
						c.Halt()
					}
				}
			})
			receiver = c.NewContext("receiver", cpu.KindThread, func(*cpu.Context) {
				for {
					c.Call(copyFn, func() { c.Charge(40) })
					c.Switch(sender)
				}
			})
			for i := range 40 {
				at := sim.Time(1+25*i) * sim.Microsecond
				r.k.Schedule(sim.NewEvent("nic", nic.Pulse), at)
				if i%4 == 0 {
					r.k.Schedule(sim.NewEvent("timer", timer.Pulse), at+2*sim.Microsecond)
				}
			}
			c.Start(sender)
			r.k.RunUntil(sim.Millisecond)

			st := c.Stats()
			if st.Interrupts < 20 {
				t.Fatalf("only %d interrupts: the scenario exercises nothing", st.Interrupts)
			}
			if busy := st.Cycles - st.IdleCycles; total != busy || st.IdleCycles == 0 {
				t.Errorf("batches sum to %d cycles; the core was busy %d (%d cycles, %d idle)", total, busy, st.Cycles, st.IdleCycles)
			}
			want := map[cpu.Layer]int64{}
			for _, l := range c.LayerCycles() {
				if l.Cycles != 0 {
					want[l.Layer] = l.Cycles
				}
			}
			if diff := cmp.Diff(want, layers); diff != "" {
				t.Errorf("batches by layer differ from LayerCycles (-core +batches):\n%s", diff)
			}
			by, none := c.SymbolCycles()
			wantSym := map[*cpu.Symbol]int64{}
			if none != 0 {
				wantSym[nil] = none
			}
			for _, s := range []*cpu.Symbol{send, ip, copyFn, isr, tick, c.IRQSymbol} {
				if s != nil && by[s.Index()] != 0 {
					wantSym[s] = by[s.Index()]
				}
			}
			if diff := cmp.Diff(wantSym, bySym); diff != "" {
				t.Errorf("batches by symbol differ from SymbolCycles (-core +batches):\n%s", diff)
			}
			c.Shutdown()
		})
	}
}

// BenchmarkChargedUnlistened is a call (Enter, Charge, Exit) on a core
// nobody listens to for Charged: what the source's guard, one length
// test per count, adds to every call.
func BenchmarkChargedUnlistened(b *testing.B) {
	b.ReportAllocs()
	r := newRig(b)
	syms := cpu.NewSymbolTable(0x1000, nil)
	f := syms.Define(cpu.Def{Name: "f", Layer: cpu.LayerIP, Instructions: 10})
	var loops int
	x := r.c.NewContext("work", cpu.KindThread, func(*cpu.Context) {
		for b.Loop() {
			r.c.Enter(f)
			r.c.Charge(5)
			r.c.Exit(f)
			loops++
		}
		r.c.Halt()
	})
	r.c.Start(x)
	r.k.Run()
	if loops == 0 {
		b.Fatal("nothing ran")
	}
}
