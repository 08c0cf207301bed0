package memory_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/memory"
	"simkron/sim"
)

// fetchConfigs are the hierarchies FetchLines is proved on: the two
// machines of configs/machines, and small ones where fetches and data
// evict each other often, dirty victims are written back, and L1 and L2
// lines differ in size both ways.
func fetchConfigs() map[string]memory.HierarchyParams {
	wb, wt := memory.WriteBack, memory.WriteThrough
	return map[string]memory.HierarchyParams{
		"i486dx33": {
			L1:         cp(8*sim.KiB, 16, 4, 1, wt, false),
			L2:         cp(128*sim.KiB, 16, 1, 5, wb, true),
			MemLatency: 12, MemWriteLatency: 4,
		},
		"r4000": {
			L1I:        cp(32*sim.KiB, 32, 2, 1, wb, true),
			L1D:        cp(32*sim.KiB, 32, 2, 1, wb, true),
			L2:         cp(1*sim.MiB, 128, 2, 10, wb, true),
			MemLatency: 100, MemWriteLatency: 100,
		},
		"small-unified-write-back": {
			L1:         cp(512, 32, 2, 1, wb, true),
			L2:         cp(2*sim.KiB, 16, 1, 6, wb, true),
			MemLatency: 20, MemWriteLatency: 7,
		},
		"small-split-write-through-l2": {
			L1I:        cp(256, 16, 1, 2, wb, true),
			L1D:        cp(256, 16, 2, 1, wt, true),
			L2:         cp(4*sim.KiB, 64, 4, 4, wt, false),
			MemLatency: 30, MemWriteLatency: 3,
		},
		"small-no-l2": {
			L1:         cp(1*sim.KiB, 16, 4, 1, wb, true),
			MemLatency: 9, MemWriteLatency: 2,
		},
	}
}

// fetchTwin is one side of the comparison: a system with its DMA ports.
type fetchTwin struct {
	sys           *memory.System
	coherent, nc  *memory.DMAPort
	fetchLineSize uint64
}

func newFetchTwin(t *testing.T, hp memory.HierarchyParams, uncached bool) *fetchTwin {
	t.Helper()
	h, err := memory.NewHierarchy(hp)
	if err != nil {
		t.Fatal(err)
	}
	sys := memory.NewSystem(sim.NewScheduler(1), "h", memory.NewPhys(1*sim.MiB), h)
	if uncached {
		// Regions on a line boundary, in the middle of a line, one word
		// long, and a run of lines, all within the code and data.
		for _, r := range []struct {
			base memory.Addr
			size uint64
			lat  int64
		}{{0x2000, 0x100, 7}, {0x3008, 4, 11}, {0x4010, 0x30, 3}, {0x7ff0, 0x2010, 9}} {
			if err := sys.AddUncached(r.base, r.size, r.lat); err != nil {
				t.Fatal(err)
			}
		}
	}
	return &fetchTwin{
		sys:           sys,
		coherent:      sys.NewDMAPort("snoop", 1e8, true),
		nc:            sys.NewDMAPort("nc", 1e8, false),
		fetchLineSize: uint64(h.L1I().Params().Line),
	}
}

// perLine is the reference: Reference(line, Fetch) for n lines from the
// one holding a, as CPU.fetch did before FetchLines.
func (x *fetchTwin) perLine(a memory.Addr, n uint64) int64 {
	line := memory.Addr(x.fetchLineSize)
	var cost int64
	for addr := a &^ (line - 1); n > 0; n-- {
		cost += x.sys.Reference(addr, memory.Fetch)
		addr += line
	}
	return cost
}

// diff describes the first difference between the whole observable and
// internal state of two systems, or returns "".
func fetchDiff(want, got *fetchTwin) string {
	ws, gs := want.sys, got.sys
	// Plain comparisons first: cmp.Diff is only for the message.
	if w, g := ws.Stats(), gs.Stats(); w != g {
		return "system stats: " + cmp.Diff(w, g)
	}
	if w, g := ws.Cache.MemReads(), gs.Cache.MemReads(); w != g {
		return fmt.Sprintf("MemReads %d, want %d", g, w)
	}
	if w, g := ws.Cache.MemWrites(), gs.Cache.MemWrites(); w != g {
		return fmt.Sprintf("MemWrites %d, want %d", g, w)
	}
	for i, wc := range ws.Cache.Caches() {
		gc := gs.Cache.Caches()[i]
		if w, g := wc.Stats(), gc.Stats(); w != g {
			return wc.Name() + " stats: " + cmp.Diff(w, g)
		}
		if d := memory.StateDiff(wc, gc); d != "" {
			return d
		}
	}
	if w, g := ws.Guest.Count(), gs.Guest.Count(); w != g {
		return fmt.Sprintf("%d guest errors, want %d", g, w)
	}
	if w, g := ws.Guest.Records(), gs.Guest.Records(); !slices.Equal(w, g) {
		return "guest log: " + cmp.Diff(w, g)
	}
	return ""
}

// FetchLines and FetchLinesMemo (a memo per function, as the CPU keeps
// them) cost, count and leave behind exactly what referencing each line
// with Reference(line, Fetch) does, step after step of random mixed
// traffic: word accesses, ranges, copies, flushes, invalidations, coherent
// and non-coherent DMA (stale lines, reported when fetched), with and
// without uncached regions.
func TestFetchLinesMatchesPerLine(t *testing.T) {
	for name, hp := range fetchConfigs() {
		for _, uncached := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/uncached=%v", name, uncached), func(t *testing.T) {
				fast := newFetchTwin(t, hp, uncached)
				slow := newFetchTwin(t, hp, uncached)
				rng := rand.New(rand.NewPCG(11, uint64(len(name))))
				// Code and data share 64 KiB so that fetches meet data
				// lines (dirty, stale) in unified caches and in L2; half
				// the references go to a hot 2 KiB, which holds an
				// uncached region.
				addr := func() memory.Addr {
					if rng.IntN(2) == 0 {
						return memory.Addr(0x1c00 + rng.IntN(2<<10))
					}
					return memory.Addr(rng.IntN(64 << 10))
				}
				var fetches, fetchedLines int
				var lastA memory.Addr // the last function fetched
				var lastN uint64
				memos := map[[2]uint64]*memory.FetchMemo{}
				// A program's functions, called again and again, with
				// other code and data in between: their memos are
				// checked after fills anywhere have moved their lines.
				type function struct {
					a memory.Addr
					n uint64
				}
				var program [24]function
				for i := range program {
					program[i] = function{addr(), uint64(1 + rng.IntN(40))}
				}
				for step := range 20000 {
					var got, want int64
					op := rng.IntN(100)
					switch {
					case op < 45: // a function's code
						a := addr()
						n := uint64(rng.IntN(40))
						switch rng.IntN(4) {
						case 0: // the last function again
							a, n = lastA, lastN
						case 1, 2:
							f := program[rng.IntN(len(program))]
							a, n = f.a, f.n
						}
						lastA, lastN = a, n
						if rng.IntN(3) == 0 {
							got = fast.sys.FetchLines(a, n)
						} else {
							line := uint64(fast.sys.Cache.L1I().Params().Line)
							a = a &^ memory.Addr(line-1)
							m := memos[[2]uint64{uint64(a), n}]
							if m == nil {
								m = &memory.FetchMemo{}
								memos[[2]uint64{uint64(a), n}] = m
							}
							got = fast.sys.FetchLinesMemo(a, n, m)
						}
						want = slow.perLine(a, n)
						fetches++
						fetchedLines += int(n)
					case op < 65:
						a, k := addr()&^3, memory.AccessKind(rng.IntN(3))
						got, want = fast.sys.Reference(a, k), slow.sys.Reference(a, k)
					case op < 75:
						a, n, k := addr(), uint64(rng.IntN(600)), memory.AccessKind(rng.IntN(3))
						got, want = fast.sys.ReferenceRange(a, n, k), slow.sys.ReferenceRange(a, n, k)
					case op < 82:
						// Aligned or not, any length: the reference is the
						// word loop through Reference.
						d, s, n := addr()&^3, addr()&^3, uint64(rng.IntN(1000))
						if uncached && rng.IntN(3) == 0 {
							// Unaligned (CopyRange, without uncached
							// regions, takes a word that straddles a
							// line in both lines instead).
							d += memory.Addr(rng.IntN(4))
							s += memory.Addr(rng.IntN(4))
						}
						got = fast.sys.ReferenceCopy(d, s, n)
						for off := memory.Addr(0); off < memory.Addr(n); off += 4 {
							want += slow.sys.Reference(s+off, memory.Read)
							want += slow.sys.Reference(d+off, memory.Write)
						}
					case op < 90: // non-coherent DMA: cached lines go stale
						a, b := addr(), make([]byte, 1+rng.IntN(300))
						if rng.IntN(2) == 0 { // over code just fetched
							a = lastA + memory.Addr(rng.IntN(64))
						}
						_, e1 := fast.nc.Write(a, b)
						_, e2 := slow.nc.Write(a, b)
						if e1 != nil || e2 != nil {
							t.Fatal(e1, e2)
						}
					case op < 93:
						a, b := addr(), make([]byte, 1+rng.IntN(300))
						_, e1 := fast.coherent.Write(a, b)
						_, e2 := slow.coherent.Write(a, b)
						if e1 != nil || e2 != nil {
							t.Fatal(e1, e2)
						}
					case op < 95:
						a, b := addr(), make([]byte, 1+rng.IntN(300))
						_, e1 := fast.nc.Read(a, b)
						_, e2 := slow.nc.Read(a, b)
						if e1 != nil || e2 != nil {
							t.Fatal(e1, e2)
						}
					case op < 98:
						a, n := addr(), uint64(rng.IntN(2000))
						got, want = fast.sys.Cache.Flush(a, n), slow.sys.Cache.Flush(a, n)
					default:
						a, n := addr(), uint64(rng.IntN(2000))
						got, want = fast.sys.Cache.Invalidate(a, n), slow.sys.Cache.Invalidate(a, n)
					}
					if got != want {
						t.Fatalf("step %d (op %d): cost %d, per line %d", step, op, got, want)
					}
					if d := fetchDiff(slow, fast); d != "" {
						t.Fatalf("step %d (op %d): %s", step, op, d)
					}
				}
				s := fast.sys.Cache.L1I().Stats()
				if s.FetchMisses == 0 || s.FetchHits == 0 || s.StaleReads == 0 || fast.sys.Guest.Count() == 0 {
					t.Errorf("weak test: L1I %+v, %d guest errors", s, fast.sys.Guest.Count())
				}
				if uncached && fast.sys.Stats().UncachedRefs == 0 {
					t.Error("weak test: no uncached references")
				}
				t.Logf("%d fetches of %d lines; L1I %+v", fetches, fetchedLines, s)
			})
		}
	}
}

// At the top of the address space the line addresses wrap to zero, as the
// per-line sum's do, with and without an uncached region there.
func TestFetchLinesWraps(t *testing.T) {
	hp := fetchConfigs()["small-unified-write-back"]
	for _, uncached := range []bool{false, true} {
		fast := newFetchTwin(t, hp, false)
		slow := newFetchTwin(t, hp, false)
		if uncached {
			for _, x := range []*fetchTwin{fast, slow} {
				if err := x.sys.AddUncached(^memory.Addr(0)-0x3f, 0x20, 5); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, a := range []memory.Addr{^memory.Addr(0) - 0x50, ^memory.Addr(0) - 3, 0} {
			for _, n := range []uint64{0, 1, 2, 5, 9} {
				if got, want := fast.sys.FetchLines(a, n), slow.perLine(a, n); got != want {
					t.Fatalf("uncached=%v FetchLines(%#x, %d) = %d, per line %d", uncached, uint64(a), n, got, want)
				}
				if d := fetchDiff(slow, fast); d != "" {
					t.Fatalf("uncached=%v FetchLines(%#x, %d): %s", uncached, uint64(a), n, d)
				}
			}
		}
	}
}

// benchFetch fetches the functions of a 12 KiB kernel text (64 B to 1 KiB
// each) in a fixed random order on the 486's caches, where about a quarter
// of the lines miss; perLine selects the line-by-line reference.
func benchFetch(b *testing.B, perLine bool) {
	hp := fetchConfigs()["i486dx33"]
	h, err := memory.NewHierarchy(hp)
	if err != nil {
		b.Fatal(err)
	}
	sys := memory.NewSystem(sim.NewScheduler(1), "h", memory.NewPhys(1*sim.MiB), h)
	rng := rand.New(rand.NewPCG(1, 2))
	type fn struct {
		a memory.Addr
		n uint64
	}
	var fns []fn
	for a := memory.Addr(0x10000); a < 0x13000; {
		n := uint64(4 + rng.IntN(60))
		fns = append(fns, fn{a, n})
		a += memory.Addr(16 * n)
	}
	order := make([]int, 4096)
	for i := range order {
		// Hot functions are called more often: a skewed pick.
		order[i] = min(rng.IntN(len(fns)), rng.IntN(len(fns)))
	}
	var lines uint64
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		f := fns[order[i%len(order)]]
		if perLine {
			for k := range f.n {
				sys.Reference(f.a+memory.Addr(16*k), memory.Fetch)
			}
		} else {
			sys.FetchLines(f.a, f.n)
		}
		lines += f.n
	}
	b.ReportMetric(float64(lines)/float64(b.N), "lines/op")
	s := h.L1I().Stats()
	b.ReportMetric(float64(s.FetchMisses)/float64(s.FetchHits+s.FetchMisses), "miss-rate")
}

// BenchmarkFetchLines measures one function's code fetch.
func BenchmarkFetchLines(b *testing.B) {
	b.Run("FetchLines", func(b *testing.B) { benchFetch(b, false) })
	b.Run("per-line", func(b *testing.B) { benchFetch(b, true) })
}
