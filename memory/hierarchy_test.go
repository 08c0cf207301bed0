package memory_test

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/memory"
	"simkron/sim"
)

// cp is a compact CacheParams constructor for tests.
func cp(size, line sim.Size, assoc int, hit int64, wp memory.WritePolicy, alloc bool) *memory.CacheParams {
	return &memory.CacheParams{Size: size, Line: line, Assoc: assoc, HitLatency: hit, WritePolicy: wp, WriteAllocate: alloc}
}

func newHierarchy(t testing.TB, p memory.HierarchyParams) *memory.Hierarchy {
	t.Helper()
	h, err := memory.NewHierarchy(p)
	if err != nil {
		t.Fatalf("NewHierarchy: %v", err)
	}
	return h
}

type ref struct {
	a    memory.Addr
	kind memory.AccessKind
}

func rd(a memory.Addr) ref { return ref{a, memory.Read} }
func wr(a memory.Addr) ref { return ref{a, memory.Write} }
func fe(a memory.Addr) ref { return ref{a, memory.Fetch} }

// result is everything a sequence of references is checked against.
type result struct {
	Cycles    []int64
	L1I, L1D  memory.CacheStats
	L2        memory.CacheStats
	MemReads  uint64
	MemWrites uint64
}

func run(h *memory.Hierarchy, refs []ref) result {
	var r result
	for _, x := range refs {
		r.Cycles = append(r.Cycles, h.Access(x.a, x.kind))
	}
	r.L1I, r.L1D = h.L1I().Stats(), h.L1D().Stats()
	if h.L2() != nil {
		r.L2 = h.L2().Stats()
	}
	r.MemReads, r.MemWrites = h.MemReads(), h.MemWrites()
	return r
}

func TestHierarchyAccess(t *testing.T) {
	wb, wt := memory.WriteBack, memory.WriteThrough
	dm256 := cp(256, 16, 1, 1, wb, true)
	tests := []struct {
		name string
		p    memory.HierarchyParams
		refs []ref
		want result
	}{{
		// Two addresses one cache size apart share the one line of their
		// set: every reference misses.
		name: "direct-mapped ping-pong",
		p:    memory.HierarchyParams{L1: dm256, MemLatency: 20},
		refs: []ref{rd(0), rd(256), rd(0), rd(256), rd(0), rd(256)},
		want: result{
			Cycles: []int64{20, 20, 20, 20, 20, 20},
			L1I:    memory.CacheStats{ReadMisses: 6}, L1D: memory.CacheStats{ReadMisses: 6},
			MemReads: 6,
		},
	}, {
		// 2 sets × 2 ways of 16 B: 0, 32, 64 all map to set 0. A B A C
		// evicts B (least recently used), so A still hits and B misses.
		name: "2-way LRU",
		p:    memory.HierarchyParams{L1: cp(64, 16, 2, 1, wb, true), MemLatency: 20},
		refs: []ref{rd(0), rd(32), rd(0), rd(64), rd(0), rd(32), rd(64)},
		want: result{
			// B returns to {A, C} and evicts C (used before A's last
			// use); then C evicts A (used before B).
			Cycles:   []int64{20, 20, 1, 20, 1, 20, 20},
			L1I:      memory.CacheStats{ReadHits: 2, ReadMisses: 5},
			L1D:      memory.CacheStats{ReadHits: 2, ReadMisses: 5},
			MemReads: 5,
		},
	}, {
		// A dirty victim is written back; a clean one is not.
		name: "write-back traffic",
		p:    memory.HierarchyParams{L1: cp(64, 16, 1, 1, wb, true), MemLatency: 20, MemWriteLatency: 5},
		refs: []ref{wr(0), rd(64), rd(128), wr(4), rd(8)},
		want: result{
			Cycles:   []int64{20, 20, 20, 20, 1},
			L1I:      memory.CacheStats{ReadHits: 1, ReadMisses: 2, WriteMisses: 2, Writebacks: 1},
			L1D:      memory.CacheStats{ReadHits: 1, ReadMisses: 2, WriteMisses: 2, Writebacks: 1},
			MemReads: 4, MemWrites: 1,
		},
	}, {
		// Write-through, no write-allocate: store misses go to memory and
		// do not allocate; store hits cost the hit plus the memory write.
		name: "write-through no-allocate",
		p:    memory.HierarchyParams{L1: cp(256, 16, 1, 1, wt, false), MemLatency: 20, MemWriteLatency: 5},
		refs: []ref{wr(0), wr(4), rd(0), wr(0), rd(4)},
		want: result{
			Cycles:   []int64{5, 5, 20, 6, 1},
			L1I:      memory.CacheStats{WriteMisses: 2, ReadMisses: 1, WriteHits: 1, ReadHits: 1},
			L1D:      memory.CacheStats{WriteMisses: 2, ReadMisses: 1, WriteHits: 1, ReadHits: 1},
			MemReads: 1, MemWrites: 3,
		},
	}, {
		name: "unified L1 shares code and data",
		p:    memory.HierarchyParams{L1: dm256, MemLatency: 20},
		refs: []ref{fe(0), rd(4), fe(8)},
		want: result{
			Cycles:   []int64{20, 1, 1},
			L1I:      memory.CacheStats{FetchMisses: 1, ReadHits: 1, FetchHits: 1},
			L1D:      memory.CacheStats{FetchMisses: 1, ReadHits: 1, FetchHits: 1},
			MemReads: 1,
		},
	}, {
		name: "split L1 keeps code and data apart",
		p:    memory.HierarchyParams{L1I: dm256, L1D: dm256, MemLatency: 20},
		refs: []ref{fe(0), rd(4), fe(8)},
		want: result{
			Cycles:   []int64{20, 20, 1},
			L1I:      memory.CacheStats{FetchMisses: 1, FetchHits: 1},
			L1D:      memory.CacheStats{ReadMisses: 1},
			MemReads: 2,
		},
	}, {
		// L1D: 4 direct-mapped 16 B lines; L2: 32 B lines, hit 10.
		//   rd 0    L1 miss, L2 miss  -> 50
		//   rd 0    L1 hit            -> 1
		//   rd 64   conflicts with 0 in L1; L2 miss -> 50
		//   rd 0    L1 miss, L2 hit   -> 10
		//   rd 16   L1 miss (other L1 line), L2 hit (line 0..31) -> 10
		//   fe 100  L1I miss, L2 miss -> 50
		name: "L2 serves L1 misses",
		p: memory.HierarchyParams{
			L1I: cp(64, 16, 1, 1, wb, true), L1D: cp(64, 16, 1, 1, wb, true),
			L2: cp(1024, 32, 2, 10, wb, true), MemLatency: 50, MemWriteLatency: 8,
		},
		refs: []ref{rd(0), rd(0), rd(64), rd(0), rd(16), fe(100)},
		want: result{
			Cycles:   []int64{50, 1, 50, 10, 10, 50},
			L1I:      memory.CacheStats{FetchMisses: 1},
			L1D:      memory.CacheStats{ReadHits: 1, ReadMisses: 4},
			L2:       memory.CacheStats{ReadHits: 2, ReadMisses: 2, FetchMisses: 1},
			MemReads: 3,
		},
	}, {
		// Write-through L1 over a write-back L2: a store hit costs the L1
		// hit plus an L2 write hit; a store miss without allocation is an
		// L2 write (miss there with allocation: fill from memory).
		name: "write-through L1 over write-back L2",
		p: memory.HierarchyParams{
			L1: cp(64, 16, 1, 1, wt, false), L2: cp(1024, 32, 2, 10, wb, true),
			MemLatency: 50, MemWriteLatency: 8,
		},
		refs: []ref{wr(0), rd(0), wr(4), wr(200)},
		want: result{
			Cycles:   []int64{50, 10, 11, 50},
			L1I:      memory.CacheStats{WriteMisses: 2, ReadMisses: 1, WriteHits: 1},
			L1D:      memory.CacheStats{WriteMisses: 2, ReadMisses: 1, WriteHits: 1},
			L2:       memory.CacheStats{WriteMisses: 2, ReadHits: 1, WriteHits: 1},
			MemReads: 2,
		},
	}, {
		// A dirty L1 victim lands in L2 (which holds the line) at no cost
		// and without a memory write; L2's own dirty victim goes to memory.
		name: "dirty L1 victim into L2",
		p: memory.HierarchyParams{
			L1: cp(64, 16, 1, 1, wb, true), L2: cp(128, 16, 1, 10, wb, true),
			MemLatency: 50, MemWriteLatency: 8,
		},
		//   wr 0    L1 miss, L2 miss, fill both; L1 line dirty    -> 50
		//   rd 64   L1 evicts dirty 0 into L2 (L2 line 0 dirty)   -> 50
		//   rd 128  L1 evicts clean 64; L2 evicts dirty 0 -> mem  -> 50
		refs: []ref{wr(0), rd(64), rd(128)},
		want: result{
			Cycles:   []int64{50, 50, 50},
			L1I:      memory.CacheStats{WriteMisses: 1, ReadMisses: 2, Writebacks: 1},
			L1D:      memory.CacheStats{WriteMisses: 1, ReadMisses: 2, Writebacks: 1},
			L2:       memory.CacheStats{ReadMisses: 3, Writebacks: 1},
			MemReads: 3, MemWrites: 1,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := run(newHierarchy(t, tt.p), tt.refs)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("stats mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHierarchyUnifiedPointers(t *testing.T) {
	p := cp(256, 16, 1, 1, memory.WriteBack, true)
	u := newHierarchy(t, memory.HierarchyParams{L1: p, MemLatency: 1})
	if u.L1I() != u.L1D() || u.L2() != nil {
		t.Errorf("unified: L1I %p L1D %p L2 %p; want L1I == L1D, L2 nil", u.L1I(), u.L1D(), u.L2())
	}
	s := newHierarchy(t, memory.HierarchyParams{L1I: p, L1D: p, L2: cp(1024, 16, 1, 1, memory.WriteBack, true)})
	if s.L1I() == s.L1D() || s.L2() == nil {
		t.Errorf("split: L1I == L1D or L2 nil")
	}
	if got, want := s.L1I().Name()+","+s.L1D().Name()+","+s.L2().Name(), "l1i,l1d,l2"; got != want {
		t.Errorf("names = %q, want %q", got, want)
	}
}

func TestLRUEvictionOrder(t *testing.T) {
	// A B A C: C must evict B, the least recently used.
	h := newHierarchy(t, memory.HierarchyParams{L1: cp(64, 16, 2, 1, memory.WriteBack, true), MemLatency: 20})
	for _, a := range []memory.Addr{0, 32, 0, 64} {
		h.Access(a, memory.Read)
	}
	for _, c := range []struct {
		a    memory.Addr
		want bool
	}{{0, true}, {32, false}, {64, true}} {
		if got, _ := h.L1D().Probe(c.a); got != c.want {
			t.Errorf("Probe(%#x) present = %v, want %v", c.a, got, c.want)
		}
	}
}

func TestFlushInvalidate(t *testing.T) {
	// L1D 256 B, 16 B lines, hit 2; memory write 7.
	params := memory.HierarchyParams{L1: cp(256, 16, 1, 2, memory.WriteBack, true), MemLatency: 20, MemWriteLatency: 7}
	setup := func() *memory.Hierarchy {
		h := newHierarchy(t, params)
		h.Access(0, memory.Write)
		h.Access(16, memory.Write)
		h.Access(32, memory.Read)
		h.ResetStats()
		return h
	}

	h := setup()
	if !h.DirtyIn(0, 64) || h.DirtyIn(32, 16) {
		t.Errorf("DirtyIn: want dirty in [0,64), clean in [32,48)")
	}
	// 4 lines looked up (8 cycles) + 2 dirty lines written (14 cycles).
	if got := h.Flush(0, 64); got != 22 {
		t.Errorf("Flush cycles = %d, want 22", got)
	}
	want := memory.CacheStats{Writebacks: 2, Invalidations: 3}
	if diff := cmp.Diff(want, h.L1D().Stats()); diff != "" {
		t.Errorf("after Flush (-want +got):\n%s", diff)
	}
	if h.MemWrites() != 2 || h.DirtyIn(0, 64) {
		t.Errorf("after Flush: MemWrites %d (want 2), DirtyIn %v (want false)", h.MemWrites(), h.DirtyIn(0, 64))
	}
	if got := h.Access(0, memory.Read); got != 20 {
		t.Errorf("read after Flush = %d cycles, want a miss (20)", got)
	}

	h = setup()
	// Unaligned range touching lines 0 and 1 only.
	if got := h.Invalidate(4, 20); got != 4 {
		t.Errorf("Invalidate cycles = %d, want 4", got)
	}
	want = memory.CacheStats{Invalidations: 2}
	if diff := cmp.Diff(want, h.L1D().Stats()); diff != "" {
		t.Errorf("after Invalidate (-want +got):\n%s", diff)
	}
	if h.MemWrites() != 0 || h.DirtyIn(0, 256) {
		t.Errorf("Invalidate wrote back or left dirty lines")
	}
	if p, _ := h.L1D().Probe(32); !p {
		t.Errorf("Invalidate dropped a line outside its range")
	}

	// A range larger than the cache takes the whole-store path.
	h = setup()
	if got := h.Flush(0, 1<<20); got != (1<<20)/16*2+14 {
		t.Errorf("large Flush cycles = %d, want %d", got, (1<<20)/16*2+14)
	}
	if got := h.L1D().Stats().Invalidations; got != 3 {
		t.Errorf("large Flush invalidations = %d, want 3", got)
	}
}

func TestFlushThroughL2(t *testing.T) {
	// A dirty L1 line goes into L2 (which holds it) and L2 writes it once.
	h := newHierarchy(t, memory.HierarchyParams{
		L1: cp(64, 16, 1, 1, memory.WriteBack, true), L2: cp(256, 32, 1, 5, memory.WriteBack, true),
		MemLatency: 50, MemWriteLatency: 7,
	})
	h.Access(0, memory.Write)
	h.Access(16, memory.Write)
	// L1: 2 lines × 1 + L2: 1 line × 5 + one memory write of 7.
	if got := h.Flush(0, 32); got != 2+5+7 {
		t.Errorf("Flush = %d cycles, want 14", got)
	}
	if h.MemWrites() != 1 {
		t.Errorf("MemWrites = %d, want 1", h.MemWrites())
	}
}

func TestStaleRead(t *testing.T) {
	h := newHierarchy(t, memory.HierarchyParams{
		L1: cp(64, 16, 1, 1, memory.WriteBack, true), L2: cp(256, 16, 1, 5, memory.WriteBack, true),
		MemLatency: 50,
	})
	var stale []memory.Addr
	h.OnStale = func(a memory.Addr) { stale = append(stale, a) }
	h.Access(0, memory.Read)
	h.Access(64, memory.Read) // evicts 0 from L1, L2 keeps it
	h.Access(16, memory.Read)
	h.MarkStale(0, 32)
	h.Access(20, memory.Read) // L1 hit on stale line 16
	h.Access(24, memory.Read) // reported once only
	h.Access(4, memory.Read)  // L1 miss, L2 hit on stale line 0
	h.Access(8, memory.Read)
	if diff := cmp.Diff([]memory.Addr{20, 4}, stale); diff != "" {
		t.Errorf("OnStale calls (-want +got):\n%s", diff)
	}
	if got := [2]uint64{h.L1D().Stats().StaleReads, h.L2().Stats().StaleReads}; got != [2]uint64{1, 1} {
		t.Errorf("StaleReads L1, L2 = %v, want [1 1]", got)
	}
}

func TestHierarchyParamsValidate(t *testing.T) {
	good := cp(256, 16, 1, 1, memory.WriteBack, true)
	bad := cp(256, 24, 1, 1, memory.WriteBack, true)
	tests := []struct {
		name string
		p    memory.HierarchyParams
		want string
	}{
		{"ok unified", memory.HierarchyParams{L1: good}, ""},
		{"ok split", memory.HierarchyParams{L1I: good, L1D: good, L2: good}, ""},
		{"none", memory.HierarchyParams{}, "l1: set either l1 (unified) or both l1i and l1d"},
		{"half split", memory.HierarchyParams{L1I: good}, "l1: set either l1 (unified) or both l1i and l1d"},
		{"both", memory.HierarchyParams{L1: good, L1D: good}, "l1: a unified l1 excludes l1i and l1d"},
		{"bad l1d", memory.HierarchyParams{L1I: good, L1D: bad}, "l1d.line: 24B is not a power of two"},
		{"bad l2", memory.HierarchyParams{L1: good, L2: bad}, "l2.line: 24B is not a power of two"},
		{"latency", memory.HierarchyParams{L1: good, MemLatency: -1}, "mem_latency: -1 must be between 0 and 100000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if err := tt.p.Validate(); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Validate() = %q, want %q", got, tt.want)
			}
			if _, err := memory.NewHierarchy(tt.p); (err == nil) != (tt.want == "") {
				t.Errorf("NewHierarchy error = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestCacheParamsValidate(t *testing.T) {
	ok := memory.CacheParams{Size: 8 * sim.KiB, Line: 32, Assoc: 2, HitLatency: 1}
	tests := []struct {
		name string
		edit func(p *memory.CacheParams)
		want string
	}{
		{"ok", func(p *memory.CacheParams) {}, ""},
		{"3-way", func(p *memory.CacheParams) { p.Size, p.Assoc = 12*sim.KiB, 3 }, ""},
		{"line not pow2", func(p *memory.CacheParams) { p.Line = 24 }, "line: 24B is not a power of two"},
		{"line small", func(p *memory.CacheParams) { p.Line = 2 }, "line: 2B must be between 4B and 1MiB"},
		{"assoc 0", func(p *memory.CacheParams) { p.Assoc = 0 }, "assoc: 0 must be between 1 and 64"},
		{"assoc 65", func(p *memory.CacheParams) { p.Assoc = 65 }, "assoc: 65 must be between 1 and 64"},
		{"size 0", func(p *memory.CacheParams) { p.Size = 0 }, "size: must not be zero"},
		{"size not pow2", func(p *memory.CacheParams) { p.Size = 24 * sim.KiB }, "size: 24KiB is not a power of two"},
		{"size < line×assoc", func(p *memory.CacheParams) { p.Size = 32 }, "size: 32B is not a multiple of line (32B) × assoc (2)"},
		{"3-way sets", func(p *memory.CacheParams) { p.Size, p.Assoc = 9*sim.KiB, 3 },
			"size: 9KiB with 32B lines and 3 ways gives 96 sets, not a power of two"},
		{"hit latency", func(p *memory.CacheParams) { p.HitLatency = 1001 }, "hit_latency: 1001 must be between 0 and 1000"},
		{"write policy", func(p *memory.CacheParams) { p.WritePolicy = 7 }, "write_policy: invalid value 7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := ok
			tt.edit(&p)
			got := ""
			if err := p.Validate(); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Validate() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestWritePolicyText(t *testing.T) {
	for _, w := range []memory.WritePolicy{memory.WriteBack, memory.WriteThrough} {
		b, err := w.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var got memory.WritePolicy
		if err := got.UnmarshalText(b); err != nil || got != w {
			t.Errorf("round trip of %v via %q = %v, %v", w, b, got, err)
		}
	}
	var w memory.WritePolicy
	if err := w.UnmarshalText([]byte("writeback")); err == nil {
		t.Errorf("UnmarshalText(writeback) succeeded")
	}
}

func TestCacheStatsDerived(t *testing.T) {
	s := memory.CacheStats{ReadHits: 5, ReadMisses: 1, WriteHits: 2, WriteMisses: 1, FetchHits: 0, FetchMisses: 1}
	if s.Accesses() != 10 || s.Misses() != 3 || s.MissRate() != 0.3 {
		t.Errorf("Accesses %d Misses %d MissRate %v; want 10 3 0.3", s.Accesses(), s.Misses(), s.MissRate())
	}
	if (memory.CacheStats{}).MissRate() != 0 {
		t.Errorf("MissRate of nothing != 0")
	}
}

// hierarchies used by the AccessRange property test: every write policy,
// allocation choice, unified and split, with and without L2, L2 lines
// smaller and larger than L1's, and the 486's arrangement.
func rangeConfigs() map[string]memory.HierarchyParams {
	wb, wt := memory.WriteBack, memory.WriteThrough
	return map[string]memory.HierarchyParams{
		"wb-alloc unified":      {L1: cp(256, 16, 2, 1, wb, true), MemLatency: 30, MemWriteLatency: 6},
		"wb-noalloc split":      {L1I: cp(128, 16, 1, 1, wb, false), L1D: cp(256, 32, 2, 2, wb, false), MemLatency: 30, MemWriteLatency: 6},
		"wt-noalloc + L2":       {L1: cp(256, 16, 2, 1, wt, false), L2: cp(1024, 32, 4, 9, wb, true), MemLatency: 30, MemWriteLatency: 6},
		"wt-alloc + wt L2":      {L1: cp(128, 32, 1, 1, wt, true), L2: cp(512, 16, 2, 9, wt, false), MemLatency: 30, MemWriteLatency: 6},
		"wb split + L2 big":     {L1I: cp(128, 16, 2, 1, wb, true), L1D: cp(128, 16, 2, 1, wb, true), L2: cp(512, 64, 2, 7, wb, true), MemLatency: 40, MemWriteLatency: 9},
		"wb 3-way + L2 3way":    {L1: cp(192, 16, 3, 1, wb, true), L2: cp(768, 16, 3, 7, wb, false), MemLatency: 40, MemWriteLatency: 9},
		"486: wt 4-way + dm L2": {L1: cp(256, 16, 4, 1, wt, false), L2: cp(1024, 16, 1, 5, wb, true), MemLatency: 12, MemWriteLatency: 4},
		"486, L1 lines longer":  {L1: cp(256, 32, 4, 1, wt, false), L2: cp(1024, 16, 1, 5, wb, true), MemLatency: 12, MemWriteLatency: 4},
		"486, L2 lines longer":  {L1: cp(256, 16, 4, 1, wt, false), L2: cp(1024, 32, 1, 5, wb, true), MemLatency: 12, MemWriteLatency: 4},
	}
}

func snapshot(h *memory.Hierarchy) result {
	r := result{L1I: h.L1I().Stats(), L1D: h.L1D().Stats(), MemReads: h.MemReads(), MemWrites: h.MemWrites()}
	if h.L2() != nil {
		r.L2 = h.L2().Stats()
	}
	return r
}

// TestAccessRangeMatchesAccess checks that AccessRange gives exactly the
// cycles and counters of one Access per word, over random streams that also
// mark lines stale and flush.
func TestAccessRangeMatchesAccess(t *testing.T) {
	for name, p := range rangeConfigs() {
		t.Run(name, func(t *testing.T) {
			fast, slow := newHierarchy(t, p), newHierarchy(t, p)
			var fastStale, slowStale []memory.Addr
			fast.OnStale = func(a memory.Addr) { fastStale = append(fastStale, a) }
			slow.OnStale = func(a memory.Addr) { slowStale = append(slowStale, a) }
			rng := rand.New(rand.NewPCG(1, 2))
			var fastCycles, slowCycles int64
			for step := range 3000 {
				a := memory.Addr(rng.IntN(2048))
				n := uint64(rng.IntN(200))
				if rng.IntN(10) == 0 {
					a = memory.Addr(^uint64(0) - uint64(rng.IntN(64))) // near the top: no wrap
				}
				kind := memory.AccessKind(rng.IntN(3))
				switch rng.IntN(20) {
				case 0:
					fast.MarkStale(a, n)
					slow.MarkStale(a, n)
					continue
				case 1:
					fastCycles += fast.Flush(a, n)
					slowCycles += slow.Flush(a, n)
					continue
				}
				fastCycles += fast.AccessRange(a, n, kind)
				if n > 0 {
					last := (uint64(a) + n - 1) &^ 3
					if last < uint64(a)&^3 {
						last = ^uint64(3)
					}
					for w := uint64(a) &^ 3; ; w += 4 {
						slowCycles += slow.Access(memory.Addr(w), kind)
						if w == last {
							break
						}
					}
				}
				if fastCycles != slowCycles {
					t.Fatalf("step %d: AccessRange(%#x, %d, %v): cycles %d, per word %d", step, a, n, kind, fastCycles, slowCycles)
				}
				if diff := cmp.Diff(snapshot(slow), snapshot(fast)); diff != "" {
					t.Fatalf("step %d: AccessRange(%#x, %d, %v) (-per word +range):\n%s", step, a, n, kind, diff)
				}
				for i, c := range fast.Caches() {
					if d := memory.StateDiff(slow.Caches()[i], c); d != "" {
						t.Fatalf("step %d: AccessRange(%#x, %d, %v): %s", step, a, n, kind, d)
					}
				}
			}
			if diff := cmp.Diff(slowStale, fastStale); diff != "" {
				t.Errorf("stale reports (-per word +range):\n%s", diff)
			}
			if len(slowStale) == 0 {
				t.Errorf("test never exercised stale reads")
			}
		})
	}
}
