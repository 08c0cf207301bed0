package memory_test

import (
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/memory"
	"simkron/sim"
)

func functionalSystem(t *testing.T) *memory.System {
	t.Helper()
	h, err := memory.NewHierarchy(fetchConfigs()["r4000"])
	if err != nil {
		t.Fatal(err)
	}
	return memory.NewSystem(sim.NewScheduler(1), "h", memory.NewPhys(1*sim.MiB), h)
}

// Full detail counts what it charged for cached references, by kind;
// uncached regions are left out (functional detail charges them exactly).
func TestCalibrationCounts(t *testing.T) {
	s := functionalSystem(t)
	if err := s.AddUncached(0x80000, 0x1000, 7); err != nil {
		t.Fatal(err)
	}
	var want memory.Calibration
	add := func(c *memory.CalibrationCount, units uint64, cycles int64) {
		c.Units += units
		c.Cycles += uint64(cycles)
	}
	add(&want.Read, 1, s.Reference(0x1000, memory.Read))
	s.Reference(0x80010, memory.Write) // uncached
	add(&want.Write, 3, s.ReferenceRange(0x2002, 10, memory.Write))
	add(&want.Copy, 4, s.ReferenceCopy(0x4000, 0x6000, 16))
	add(&want.Fetch, 5, s.FetchLines(0x8000, 5))
	if diff := cmp.Diff(want, s.Calibration()); diff != "" {
		t.Errorf("calibration (-want +got):\n%s", diff)
	}
	p := s.Calibration().Params(1)
	if got, want := p.Fetch, float64(want.Fetch.Cycles)/5-1; got != want {
		t.Errorf("fetch stall %v, want %v", got, want)
	}
}

// Functional detail charges the averages with the fraction carried, keeps
// uncached latencies exact and never touches the caches, even for DMA:
// a system switched to it, and one built in it (NewFunctionalSystem),
// whose caches have no arrays to touch.
func TestFunctionalCosts(t *testing.T) {
	p := memory.FunctionalParams{Read: 1.25, Write: 2.5, Copy: 3.333, Fetch: 0.5}
	for _, built := range []bool{false, true} {
		s := functionalSystem(t)
		if built {
			var err error
			s, err = memory.NewFunctionalSystem(sim.NewScheduler(1), "h", memory.NewPhys(1*sim.MiB), fetchConfigs()["r4000"], p)
			if err != nil {
				t.Fatal(err)
			}
		} else {
			s.SetFunctional(p)
		}
		testFunctionalCosts(t, s)
	}
}

func testFunctionalCosts(t *testing.T, s *memory.System) {
	t.Helper()
	if err := s.AddUncached(0x80000, 0x1000, 7); err != nil {
		t.Fatal(err)
	}
	if s.Detail() != memory.DetailFunctional {
		t.Fatalf("detail %v", s.Detail())
	}
	var got []int64
	for range 4 {
		got = append(got, s.Reference(0x1000, memory.Read))
	}
	got = append(got,
		s.Reference(0x80000, memory.Read),            // uncached: 7
		s.ReferenceRange(0x2000, 16, memory.Write),   // 4 words: 10
		s.ReferenceCopy(0x4000, 0x6000, 12),          // 3 words: 9.999
		s.ReferenceCopy(0x80000, 0x6000, 8),          // store uncached: 2 reads 2.5 (+0.999) + 2 stores 14
		s.FetchLines(0x9000, 2),                      // 2 × (1 + 0.5)
		s.ReferenceRange(0x7fffc, 12, memory.Read),   // 1 cached word, 2 uncached
		s.Flush(0x3000, 64)+s.Invalidate(0x3000, 64), // 2 L1 lines × 1 + 1 L2 line × 10, twice
	)
	want := []int64{1, 1, 1, 2, 7, 10, 9, 3 + 14, 3, 1 + 14, 24}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("costs (-want +got):\n%s", diff)
	}
	port := s.NewDMAPort("nic", 1e6, false)
	if _, err := port.Write(0x1000, make([]byte, 64)); err != nil {
		t.Fatal(err)
	}
	if _, err := port.Read(0x1000, make([]byte, 64)); err != nil {
		t.Fatal(err)
	}
	for _, c := range s.Cache.Caches() {
		if st := c.Stats(); st != (memory.CacheStats{}) {
			t.Errorf("%s touched in functional detail: %+v", c.Name(), st)
		}
	}
	if s.Guest.Count() != 0 || s.Calibration() != (memory.Calibration{}) {
		t.Errorf("%d guest errors, calibration %+v", s.Guest.Count(), s.Calibration())
	}
}

// In functional detail with no uncached region, FetchLinesMemo charges n
// lines at once exactly as n fetches of one line each, the carried fraction
// included, also where the range wraps past the top of the address space.
func TestFunctionalFetchAtOnce(t *testing.T) {
	p := memory.FunctionalParams{Read: 1.3, Fetch: 0.377}
	bulk, single := functionalSystem(t), functionalSystem(t)
	bulk.SetFunctional(p)
	single.SetFunctional(p)
	line := uint64(bulk.Cache.L1I().Params().Line)
	var m memory.FetchMemo
	for i, r := range []struct {
		a memory.Addr
		n uint64
	}{{0x9000, 3}, {0x9004, 1}, {0xa000, 7}, {memory.Addr(^uint64(0) - 2*line + 1), 4}, {0x9000, 0}, {0xb010, 13}} {
		got := bulk.FetchLinesMemo(r.a, r.n, &m) + bulk.Reference(0x1000, memory.Read)
		var want int64
		for k := range r.n {
			want += single.FetchLines(r.a+memory.Addr(k*line), 1)
		}
		want += single.Reference(0x1000, memory.Read)
		if got != want {
			t.Errorf("fetch %d (%d lines at %#x): %d cycles, want %d", i, r.n, uint64(r.a), got, want)
		}
	}
}

func TestDetailText(t *testing.T) {
	for _, d := range []memory.Detail{memory.DetailFull, memory.DetailFunctional} {
		b, err := d.MarshalText()
		var back memory.Detail
		if err != nil || back.UnmarshalText(b) != nil || back != d {
			t.Errorf("%v: %q %v, back %v", d, b, err, back)
		}
	}
	var d memory.Detail
	if err := d.UnmarshalText([]byte("fast")); err == nil {
		t.Error("detail \"fast\" accepted")
	}
}

// A system built in functional detail (NewFunctionalSystem) makes none of
// its caches' arrays, and once switched to full detail (SetFull) it
// charges exactly what a system built in full detail and switched the
// same way charges, its caches starting empty.
func TestFunctionalSystemThenFull(t *testing.T) {
	p := memory.FunctionalParams{Read: 1.25, Write: 2.5, Copy: 3.333, Fetch: 0.5}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	built, err := memory.NewFunctionalSystem(sim.NewScheduler(1), "h", memory.NewPhys(1*sim.MiB), fetchConfigs()["r4000"], p)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	// The R4000's caches' arrays alone take (1024+1024+8192) lines of 17
	// bytes each: 174 KB.
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
		t.Errorf("NewFunctionalSystem allocated %d bytes: the caches' arrays were made", n)
	}
	switched := functionalSystem(t)
	switched.SetFunctional(p)
	var got, want []int64
	for _, s := range []*memory.System{built, switched} {
		s.Reference(0x1000, memory.Read)
		s.SetFull()
		if s.Detail() != memory.DetailFull {
			t.Fatalf("detail %v after SetFull", s.Detail())
		}
	}
	for _, r := range []struct {
		s   *memory.System
		out *[]int64
	}{{built, &got}, {switched, &want}} {
		s := r.s
		*r.out = append(*r.out,
			s.Reference(0x1000, memory.Read), s.Reference(0x1000, memory.Read),
			s.ReferenceRange(0x2000, 256, memory.Write), s.ReferenceCopy(0x4000, 0x2000, 256),
			s.FetchLines(0x9000, 8), s.FetchLines(0x9000, 8), s.Flush(0x2000, 256), s.Invalidate(0x4000, 64))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("costs after SetFull (-switched +built):\n%s", diff)
	}
	for i, c := range built.Cache.Caches() {
		if got, want := c.Stats(), switched.Cache.Caches()[i].Stats(); got != want {
			t.Errorf("%s: stats %+v, want %+v", c.Name(), got, want)
		}
	}
}
