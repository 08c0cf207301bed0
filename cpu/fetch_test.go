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

// i486Caches is configs/machines/i486dx33.toml's hierarchy: 8 KiB unified
// write-through L1 with 16 B lines, 128 KiB direct-mapped write-back L2.
func i486Caches() memory.HierarchyParams {
	return memory.HierarchyParams{
		L1:         &memory.CacheParams{Size: 8 * sim.KiB, Line: 16, Assoc: 4, HitLatency: 1, WritePolicy: memory.WriteThrough},
		L2:         &memory.CacheParams{Size: 128 * sim.KiB, Line: 16, Assoc: 1, HitLatency: 5, WritePolicy: memory.WriteBack, WriteAllocate: true},
		MemLatency: 12, MemWriteLatency: 4,
	}
}

// fetchRig is a bare core at 100 MHz with CPI 1 (an instruction is one
// cycle) on the hierarchy hp, with an idle context to end in.
func fetchRig(t testing.TB, hp memory.HierarchyParams) (*sim.Scheduler, *cpu.CPU) {
	t.Helper()
	k := sim.NewScheduler(1)
	c, err := cpu.New(k, "h.cpu0", cpuParams(), fetchSystem(t, k, hp))
	if err != nil {
		t.Fatal(err)
	}
	idle := c.NewContext("idle", cpu.KindIdle, func(*cpu.Context) {
		for {
			c.Halt()
		}
	})
	c.OnContextEnd = func(*cpu.Context) { c.Switch(idle) }
	return k, c
}

func cpuParams() cpu.Params {
	p := cpu.DefaultParams()
	p.Clock = 100 * sim.MHz
	p.CPI = 1
	return p
}

// fetchSystem builds a memory system on hp with an uncached region in the
// middle of the kernel text and another starting mid-line.
func fetchSystem(t testing.TB, k *sim.Scheduler, hp memory.HierarchyParams) *memory.System {
	t.Helper()
	h, err := memory.NewHierarchy(hp)
	if err != nil {
		t.Fatal(err)
	}
	sys := memory.NewSystem(k, "h", memory.NewPhys(1*sim.MiB), h)
	if err := sys.AddUncached(0x14000, 0x200, 6); err != nil {
		t.Fatal(err)
	}
	if err := sys.AddUncached(0x16008, 0x40, 9); err != nil {
		t.Fatal(err)
	}
	return sys
}

// randomText defines n functions in a text segment starting at base (not
// line-aligned, so functions start mid-line): code of 0 to 1 KiB (0 means
// the default of 4 bytes an instruction), 0 to 400 instructions, so that
// some functions run less than their code and some fit in a word.
func randomText(rng *rand.Rand, base memory.Addr, n int) []*cpu.Symbol {
	tab := cpu.NewSymbolTable(base, nil)
	syms := make([]*cpu.Symbol, n)
	for i := range syms {
		syms[i] = tab.Define(cpu.Def{
			Name:         fmt.Sprintf("f%d", i),
			Layer:        cpu.LayerIP,
			Instructions: int64(rng.IntN(400)),
			CodeBytes:    int64(rng.IntN(1024)),
		})
	}
	return syms
}

// Entering a function charges exactly the stall of fetching its code line
// by line through Reference, as CPU.fetch did before System.FetchLines,
// and leaves the caches exactly as that does, with data traffic between
// calls, uncached regions in the text and functions starting mid-line.
func TestEnterFetchMatchesPerLine(t *testing.T) {
	for name, hp := range map[string]memory.HierarchyParams{
		"i486dx33": i486Caches(),
		"r4000": {
			L1I:        &memory.CacheParams{Size: 32 * sim.KiB, Line: 32, Assoc: 2, HitLatency: 1, WritePolicy: memory.WriteBack, WriteAllocate: true},
			L1D:        &memory.CacheParams{Size: 32 * sim.KiB, Line: 32, Assoc: 2, HitLatency: 1, WritePolicy: memory.WriteBack, WriteAllocate: true},
			L2:         &memory.CacheParams{Size: 1 * sim.MiB, Line: 128, Assoc: 2, HitLatency: 10, WritePolicy: memory.WriteBack, WriteAllocate: true},
			MemLatency: 100, MemWriteLatency: 100,
		},
		"tiny-write-back": {
			L1:         &memory.CacheParams{Size: 1 * sim.KiB, Line: 32, Assoc: 2, HitLatency: 2, WritePolicy: memory.WriteBack, WriteAllocate: true},
			MemLatency: 10, MemWriteLatency: 3,
		},
	} {
		t.Run(name, func(t *testing.T) {
			k, c := fetchRig(t, hp)
			twin := fetchSystem(t, sim.NewScheduler(1), hp)
			rng := rand.New(rand.NewPCG(5, 6))
			syms := randomText(rng, 0x10006, 120)
			hit := c.System().Cache.L1I().Params().HitLatency
			line := memory.Addr(c.System().Cache.L1I().Params().Line)
			x := c.NewContext("t", cpu.KindThread, func(*cpu.Context) {
				for step := range 5000 {
					if rng.IntN(3) == 0 { // data between calls
						a := memory.Addr(0x10000 + rng.IntN(0x20000)&^3)
						kind := memory.AccessKind(rng.IntN(2))
						c.Charge(c.System().Reference(a, kind))
						twin.Reference(a, kind)
					}
					s := syms[rng.IntN(len(syms))]
					// The loop CPU.fetch ran before FetchLines.
					end := s.Addr + memory.Addr(min(s.CodeBytes, 4*max(s.Instructions, 1)))
					var want int64
					for a := s.Addr &^ (line - 1); a < end; a += line {
						want += twin.Reference(a, memory.Fetch) - hit
					}
					c0 := c.Cycles()
					c.Enter(s)
					got := c.Cycles() - c0 - s.Instructions
					c.Exit(s)
					if got != want {
						t.Fatalf("step %d: entering %s (%#x, %d bytes, %d instructions) stalls %d cycles, per line %d",
							step, s.Name, uint64(s.Addr), s.CodeBytes, s.Instructions, got, want)
					}
					if d := cachesDiff(twin, c.System()); d != "" {
						t.Fatalf("step %d: entering %s: %s", step, s.Name, d)
					}
				}
			})
			c.Start(x)
			k.Run()
			if c.System().Stats().UncachedRefs == 0 {
				t.Error("weak test: no uncached fetches")
			}
		})
	}
}

func cachesDiff(want, got *memory.System) string {
	if d := cmp.Diff(want.Stats(), got.Stats()); d != "" {
		return "system stats: " + d
	}
	for i, wc := range want.Cache.Caches() {
		if d := cmp.Diff(wc.Stats(), got.Cache.Caches()[i].Stats()); d != "" {
			return wc.Name() + ": " + d
		}
	}
	if w, g := want.Cache.MemReads(), got.Cache.MemReads(); w != g {
		return fmt.Sprintf("MemReads %d, want %d", g, w)
	}
	if w, g := want.Cache.MemWrites(), got.Cache.MemWrites(); w != g {
		return fmt.Sprintf("MemWrites %d, want %d", g, w)
	}
	return ""
}

// BenchmarkEnterFetch measures entering and leaving one function on the
// 486's caches: a 12 KiB kernel text of functions of 64 B to 1 KiB called
// in a fixed random order that favours some, so that the code both hits
// and misses in the 8 KiB L1, as in the TCP and UDP workloads.
func BenchmarkEnterFetch(b *testing.B) {
	k, c := fetchRig(b, i486Caches())
	rng := rand.New(rand.NewPCG(1, 2))
	tab := cpu.NewSymbolTable(0x20000, nil)
	var syms []*cpu.Symbol
	for i := 0; i < 1000 && tab.TextEnd() < 0x20000+12*1024; i++ {
		size := int64(64 + rng.IntN(960))
		syms = append(syms, tab.Define(cpu.Def{
			Name: fmt.Sprintf("f%d", i), Layer: cpu.LayerIP, Instructions: size / 4, CodeBytes: size,
		}))
	}
	order := make([]*cpu.Symbol, 4096)
	for i := range order {
		order[i] = syms[min(rng.IntN(len(syms)), rng.IntN(len(syms)))]
	}
	x := c.NewContext("t", cpu.KindThread, func(*cpu.Context) {
		i := 0
		for b.Loop() {
			s := order[i%len(order)]
			c.Enter(s)
			c.Exit(s)
			i++
		}
	})
	c.Start(x)
	k.Run()
	st := c.System().Cache.L1I().Stats()
	b.ReportMetric(float64(st.FetchHits+st.FetchMisses)/float64(b.N), "lines/op")
	b.ReportMetric(float64(st.FetchMisses)/float64(st.FetchHits+st.FetchMisses), "miss-rate")
}
