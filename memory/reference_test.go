package memory_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/memory"
	"simkron/sim"
)

// Access (its first-level hit inline) gives exactly what the reference
// model gives, reference after reference: the same cycles, hits, misses,
// write-backs and memory traffic, the same tags, flags and LRU stamps
// (the values, not only their order) and the same stale reports, on
// random sequences of reads, writes and fetches mixed with stale marks,
// flushes, invalidations and snoops, on every arrangement of caches the
// other fast paths are tested on.
func TestAccessMatchesReference(t *testing.T) {
	configs := rangeConfigs()
	for name, hp := range fetchConfigs() {
		configs["fetch "+name] = hp
	}
	for name, hp := range configs {
		t.Run(name, func(t *testing.T) {
			fast, ref := newHierarchy(t, hp), newHierarchy(t, hp)
			var fastStale, refStale []memory.Addr
			fast.OnStale = func(a memory.Addr) { fastStale = append(fastStale, a) }
			ref.OnStale = func(a memory.Addr) { refStale = append(refStale, a) }
			// Addresses over four times the largest cache, so that lines
			// are evicted, and mostly near the last one, so that they hit.
			span := 4 * int(cacheSize(hp))
			rng := rand.New(rand.NewPCG(11, 12))
			a := memory.Addr(0)
			hits := 0
			const steps = 20000
			for step := range steps {
				if rng.IntN(4) == 0 {
					a = memory.Addr(rng.IntN(span))
				} else {
					a = memory.Addr(max(0, int(a)+rng.IntN(64)-24))
				}
				n := uint64(rng.IntN(256))
				var got, want int64
				what := ""
				switch rng.IntN(40) {
				case 0:
					fast.MarkStale(a, n)
					ref.MarkStale(a, n)
					what = fmt.Sprintf("MarkStale(%#x, %d)", a, n)
				case 1:
					got, want = fast.Flush(a, n), ref.Flush(a, n)
					what = fmt.Sprintf("Flush(%#x, %d)", a, n)
				case 2:
					got, want = fast.Invalidate(a, n), ref.Invalidate(a, n)
					what = fmt.Sprintf("Invalidate(%#x, %d)", a, n)
				case 3:
					fast.SnoopInvalidate(a, n)
					ref.SnoopInvalidate(a, n)
					what = fmt.Sprintf("SnoopInvalidate(%#x, %d)", a, n)
				default:
					kind := memory.AccessKind(rng.IntN(3))
					before := fast.L1D().Stats().Accesses() + fast.L1I().Stats().Accesses()
					missesBefore := fast.L1D().Stats().Misses() + fast.L1I().Stats().Misses()
					got, want = fast.Access(a, kind), memory.Reference(ref, a, kind)
					if fast.L1D().Stats().Misses()+fast.L1I().Stats().Misses() == missesBefore &&
						fast.L1D().Stats().Accesses()+fast.L1I().Stats().Accesses() > before {
						hits++
					}
					what = fmt.Sprintf("Access(%#x, %v)", a, kind)
				}
				if got != want {
					t.Fatalf("step %d: %s costs %d, the reference model %d", step, what, got, want)
				}
				if diff := cmp.Diff(snapshot(ref), snapshot(fast)); diff != "" {
					t.Fatalf("step %d: %s (-reference +Access):\n%s", step, what, diff)
				}
				if step%16 != 0 && step != steps-1 {
					continue // the whole tag store, now and then: it is large
				}
				for i, c := range fast.Caches() {
					if d := memory.ExactStateDiff(ref.Caches()[i], c); d != "" {
						t.Fatalf("step %d: %s: %s", step, what, d)
					}
				}
			}
			if diff := cmp.Diff(refStale, fastStale); diff != "" {
				t.Errorf("stale reports (-reference +Access):\n%s", diff)
			}
			if len(refStale) == 0 {
				t.Errorf("test never exercised stale reads")
			}
			if s := snapshot(ref); s.L1D.Misses() == 0 || hits < 1000 || s.L1D.Writebacks+s.MemWrites == 0 {
				t.Errorf("test exercised too little: %d first-level hits, %+v", hits, s)
			}
		})
	}
}

// A fill of a four-way set takes the first way of the smallest stamp
// (an invalid way's stamp is 0): victim4's knockout decides as a scan
// of the ways does, ties included.
func TestVictim4(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 100000 {
		var s [4]uint64
		for w := range s {
			switch rng.IntN(4) {
			case 0:
				s[w] = 0
			case 1:
				s[w] = uint64(rng.IntN(4)) // ties
			default:
				s[w] = rng.Uint64N(1 << 63)
			}
		}
		want := 0
		for w := 1; w < 4; w++ {
			if s[w] < s[want] {
				want = w
			}
		}
		if got := memory.Victim4(s); got != want {
			t.Fatalf("stamps %v: victim4 takes way %d, want %d", s, got, want)
		}
	}
}

// A hierarchy is arranged as the 486's only when all of its conditions
// hold; the arrangement chooses fast paths and never a result.
func TestArrangement(t *testing.T) {
	wb, wt := memory.WriteBack, memory.WriteThrough
	l2 := cp(128*sim.KiB, 16, 1, 5, wb, true)
	for _, tc := range []struct {
		name string
		hp   memory.HierarchyParams
		want memory.Arrangement
	}{
		{"i486dx33", fetchConfigs()["i486dx33"], memory.Arrangement486},
		{"486, L1 lines longer", rangeConfigs()["486, L1 lines longer"], memory.Arrangement486},
		{"r4000", fetchConfigs()["r4000"], memory.ArrangementGeneral},
		{"no L2", memory.HierarchyParams{L1: cp(8*sim.KiB, 16, 4, 1, wt, false)}, memory.ArrangementGeneral},
		{"L1 allocates on a write", memory.HierarchyParams{L1: cp(8*sim.KiB, 16, 4, 1, wt, true), L2: l2}, memory.ArrangementGeneral},
		{"L1 writes back", memory.HierarchyParams{L1: cp(8*sim.KiB, 16, 4, 1, wb, false), L2: l2}, memory.ArrangementGeneral},
		{"L1 two-way", memory.HierarchyParams{L1: cp(8*sim.KiB, 16, 2, 1, wt, false), L2: l2}, memory.ArrangementGeneral},
		{"L2 two-way", memory.HierarchyParams{L1: cp(8*sim.KiB, 16, 4, 1, wt, false), L2: cp(128*sim.KiB, 16, 2, 5, wb, true)}, memory.ArrangementGeneral},
		{"L2 writes through", memory.HierarchyParams{L1: cp(8*sim.KiB, 16, 4, 1, wt, false), L2: cp(128*sim.KiB, 16, 1, 5, wt, true)}, memory.ArrangementGeneral},
	} {
		if got := newHierarchy(t, tc.hp).Arrangement(); got != tc.want {
			t.Errorf("%s: arrangement %v, want %v", tc.name, got, tc.want)
		}
	}
	if s := memory.Arrangement486.String() + " " + memory.ArrangementGeneral.String() + " " + memory.Arrangement(7).String(); s != "486 general Arrangement(7)" {
		t.Errorf("names: %q", s)
	}
}
