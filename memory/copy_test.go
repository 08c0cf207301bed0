package memory_test

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/memory"
	"simkron/sim"
)

// CopyRange (word-aligned copies) and CopyWords (any) give exactly the
// cycles and counters of interleaving every load and store word by word,
// on direct-mapped and associative, write-back and write-through
// hierarchies, with both sides read into the caches just before and lines
// non-coherent DMA marked stale.
func TestCopyRangeMatchesInterleavedWords(t *testing.T) {
	wb := memory.WriteBack
	wt := memory.WriteThrough
	hierarchies := map[string]memory.HierarchyParams{
		"486-like": {
			L1:         &memory.CacheParams{Size: 8 * sim.KiB, Line: 16, Assoc: 4, HitLatency: 1, WritePolicy: wt},
			L2:         &memory.CacheParams{Size: 128 * sim.KiB, Line: 16, Assoc: 1, HitLatency: 5, WritePolicy: wb, WriteAllocate: true},
			MemLatency: 12, MemWriteLatency: 4,
		},
		"direct-mapped": {
			L1:         &memory.CacheParams{Size: 1 * sim.KiB, Line: 16, Assoc: 1, HitLatency: 1, WritePolicy: wb, WriteAllocate: true},
			MemLatency: 10, MemWriteLatency: 2,
		},
		"r4000-like": {
			L1I:        &memory.CacheParams{Size: 32 * sim.KiB, Line: 32, Assoc: 2, HitLatency: 1, WritePolicy: wb, WriteAllocate: true},
			L1D:        &memory.CacheParams{Size: 4 * sim.KiB, Line: 32, Assoc: 2, HitLatency: 1, WritePolicy: wb, WriteAllocate: true},
			L2:         &memory.CacheParams{Size: 16 * sim.KiB, Line: 128, Assoc: 1, HitLatency: 10, WritePolicy: wb, WriteAllocate: true},
			MemLatency: 100, MemWriteLatency: 100,
		},
	}
	for name, hp := range hierarchies {
		t.Run(name, func(t *testing.T) {
			fast, _ := memory.NewHierarchy(hp)
			slow, _ := memory.NewHierarchy(hp)
			var fastStale, slowStale []memory.Addr
			fast.OnStale = func(a memory.Addr) { fastStale = append(fastStale, a) }
			slow.OnStale = func(a memory.Addr) { slowStale = append(slowStale, a) }
			rng := rand.New(rand.NewPCG(3, 4))
			for step := range 400 {
				src := memory.Addr(rng.IntN(1<<16)) &^ 3
				dst := memory.Addr(rng.IntN(1<<16)) &^ 3
				if step%5 == 0 { // a conflicting pair one cache size apart
					dst = src + memory.Addr(cacheSize(hp))
				}
				if step%3 == 2 { // both sides were read just before: copies that hit
					for _, h := range []*memory.Hierarchy{fast, slow} {
						h.AccessRange(src, 512, memory.Read)
						h.AccessRange(dst, 512, memory.Read)
					}
				}
				if step%4 == 2 { // DMA wrote under part of the source
					a, n := src+memory.Addr(rng.IntN(256)), uint64(rng.IntN(256))
					fast.MarkStale(a, n)
					slow.MarkStale(a, n)
				}
				n := uint64(rng.IntN(3000)) &^ 3
				var got int64
				if step%2 == 0 {
					got = fast.CopyRange(dst, src, n)
				} else {
					// CopyWords: at the words' own addresses, aligned or not.
					src, dst = src+memory.Addr(rng.IntN(4)), dst+memory.Addr(rng.IntN(4))
					got = fast.CopyWords(dst, src, n/4)
				}
				var want int64
				for off := memory.Addr(0); off < memory.Addr(n); off += 4 {
					want += slow.Access(src+off, memory.Read)
					want += slow.Access(dst+off, memory.Write)
				}
				if got != want {
					t.Fatalf("step %d: copy of %d bytes %#x -> %#x costs %d, word by word %d", step, n, src, dst, got, want)
				}
				sameCaches(t, step, slow, fast, "-word by word +CopyRange")
			}
			sameStale(t, slowStale, fastStale, "-word by word +CopyRange")
		})
	}
}

// sameCaches fails the test at step when got's caches differ from want's
// in any counter or in their replacement state; legend names the sides.
func sameCaches(t *testing.T, step int, want, got *memory.Hierarchy, legend string) {
	t.Helper()
	for i, c := range got.Caches() {
		if diff := cmp.Diff(want.Caches()[i].Stats(), c.Stats()); diff != "" {
			t.Fatalf("step %d: %s counters differ (%s):\n%s", step, c.Name(), legend, diff)
		}
		if d := memory.StateDiff(want.Caches()[i], c); d != "" {
			t.Fatalf("step %d: %s", step, d)
		}
	}
}

// sameStale fails the test when the stale reads got reported differ from
// want's, or when there were none to compare.
func sameStale(t *testing.T, want, got []memory.Addr, legend string) {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stale reports (%s):\n%s", legend, diff)
	}
	if len(want) == 0 {
		t.Errorf("test never exercised stale reads")
	}
}

// cacheSize is the size of the last cache level, a distance at which two
// lines share a set everywhere.
func cacheSize(hp memory.HierarchyParams) sim.Size {
	if hp.L2 != nil {
		return hp.L2.Size
	}
	if hp.L1 != nil {
		return hp.L1.Size
	}
	return hp.L1D.Size
}

// On the 486's caches, CopyRange's own loop (copyThrough) gives exactly
// the general piece loop's cycles, counters, LRU order and stale reports,
// for copies at any byte alignment: each side's lines are then cut into
// two pieces, the second reusing the first's lookup. A first level of four
// sets makes the source's fills evict often; with first-level lines twice
// L2's, an overlapping copy's source fills the line its destination's
// last store missed.
func TestCopyThroughMatchesPieces(t *testing.T) {
	for name, l1 := range map[string]struct {
		size sim.Size
		line sim.Size
	}{"8KiB L1": {8 * sim.KiB, 16}, "256B L1": {256, 16}, "256B L1, 32B lines": {256, 32}} {
		t.Run(name, func(t *testing.T) {
			copiesMatchPieces(t, memory.HierarchyParams{
				L1:         &memory.CacheParams{Size: l1.size, Line: l1.line, Assoc: 4, HitLatency: 1, WritePolicy: memory.WriteThrough},
				L2:         &memory.CacheParams{Size: 4 * sim.KiB, Line: 16, Assoc: 1, HitLatency: 5, WritePolicy: memory.WriteBack, WriteAllocate: true},
				MemLatency: 12, MemWriteLatency: 4,
			}, func(h *memory.Hierarchy) { memory.SetArrangement(h, memory.ArrangementGeneral) }, 5, "-general +copyThrough")
		})
	}
}

// copiesMatchPieces makes random copies, from 0 to 1500 bytes at any byte
// alignment, on two hierarchies of hp, the second made the reference by
// general, and fails the test at the first difference in cycles, counters,
// LRU order or stale reports. Before each copy, both sides are read (the
// destination two times in three), so that most pieces hit; one copy in
// four overlaps, its destination a little ahead; one in seven has lines
// of its source marked stale.
func copiesMatchPieces(t *testing.T, hp memory.HierarchyParams, general func(*memory.Hierarchy), seed uint64, legend string) {
	t.Helper()
	fast, _ := memory.NewHierarchy(hp)
	slow, _ := memory.NewHierarchy(hp)
	general(slow)
	var fastStale, slowStale []memory.Addr
	fast.OnStale = func(a memory.Addr) { fastStale = append(fastStale, a) }
	slow.OnStale = func(a memory.Addr) { slowStale = append(slowStale, a) }
	rng := rand.New(rand.NewPCG(seed, seed+1))
	for step := range 600 {
		src := memory.Addr(rng.IntN(1 << 14))
		dst := memory.Addr(rng.IntN(1 << 14))
		if step%4 == 1 {
			// Overlapping, the destination a little ahead: with
			// first-level lines longer than L2's, the source then fills
			// the line the last piece's store missed.
			dst = src + memory.Addr(1+rng.IntN(40))
		}
		n := uint64(rng.IntN(1500))
		for _, h := range []*memory.Hierarchy{fast, slow} {
			h.AccessRange(src, n, memory.Read)
			if step%3 != 0 {
				h.AccessRange(dst, n, memory.Read)
			}
		}
		if step%7 == 3 {
			a := src + memory.Addr(rng.IntN(64))
			fast.MarkStale(a, 32)
			slow.MarkStale(a, 32)
		}
		got, want := fast.CopyRange(dst, src, n), slow.CopyRange(dst, src, n)
		if got != want {
			t.Fatalf("step %d: copy of %d bytes %#x -> %#x costs %d, the general loop %d", step, n, src, dst, got, want)
		}
		sameCaches(t, step, slow, fast, legend)
	}
	sameStale(t, slowStale, fastStale, legend)
}

// On write-back first levels, CopyRange's loop for runs of hits (copyHits)
// gives exactly the general piece loop's cycles, counters, LRU order and
// stale reports, for copies at any byte alignment, on direct-mapped and
// associative caches, with lines one piece long (taken in pairs) or
// longer.
func TestCopyHitsMatchesPieces(t *testing.T) {
	wb := memory.WriteBack
	for name, hp := range map[string]memory.HierarchyParams{
		"r4000-like": {
			L1I:        &memory.CacheParams{Size: 32 * sim.KiB, Line: 32, Assoc: 2, HitLatency: 1, WritePolicy: wb, WriteAllocate: true},
			L1D:        &memory.CacheParams{Size: 2 * sim.KiB, Line: 32, Assoc: 2, HitLatency: 1, WritePolicy: wb, WriteAllocate: true},
			L2:         &memory.CacheParams{Size: 16 * sim.KiB, Line: 128, Assoc: 1, HitLatency: 10, WritePolicy: wb, WriteAllocate: true},
			MemLatency: 100, MemWriteLatency: 100,
		},
		"direct-mapped": {
			L1:         &memory.CacheParams{Size: 1 * sim.KiB, Line: 16, Assoc: 1, HitLatency: 1, WritePolicy: wb, WriteAllocate: true},
			MemLatency: 10, MemWriteLatency: 2,
		},
		"four-way, L1 lines longer": {
			L1:         &memory.CacheParams{Size: 1 * sim.KiB, Line: 32, Assoc: 4, HitLatency: 1, WritePolicy: wb, WriteAllocate: true},
			L2:         &memory.CacheParams{Size: 8 * sim.KiB, Line: 16, Assoc: 2, HitLatency: 4, WritePolicy: wb, WriteAllocate: true},
			MemLatency: 20, MemWriteLatency: 5,
		},
	} {
		t.Run(name, func(t *testing.T) {
			copiesMatchPieces(t, hp, func(h *memory.Hierarchy) { memory.SetPieces(h, true) }, 8, "-general +copyHits")
		})
	}
}
