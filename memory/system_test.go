package memory_test

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/memory"
	"simkron/sim"
)

// newSystem returns a 1 MiB host with an 8 KiB write-back L1D (16 B lines,
// hit 1), a 64 KiB L2 (hit 10) and memory latency 50, at time 5us.
func newSystem(t testing.TB) (*memory.System, *sim.Scheduler) {
	t.Helper()
	k := sim.NewScheduler(1)
	k.AdvanceTo(5 * sim.Microsecond)
	h := newHierarchy(t, memory.HierarchyParams{
		L1I: cp(8*sim.KiB, 16, 2, 1, memory.WriteBack, true),
		L1D: cp(8*sim.KiB, 16, 2, 1, memory.WriteBack, true),
		L2:  cp(64*sim.KiB, 32, 4, 10, memory.WriteBack, true), MemLatency: 50, MemWriteLatency: 8,
	})
	return memory.NewSystem(k, "hostA", memory.NewPhys(1*sim.MiB), h), k
}

func guestMsgs(s *memory.System) []string {
	var out []string
	for _, r := range s.Guest.Records() {
		out = append(out, r.Component+": "+r.Msg)
	}
	return out
}

func TestDMACoherentWrite(t *testing.T) {
	s, _ := newSystem(t)
	port := s.NewDMAPort("nic0", 10_000_000, true)
	s.Reference(0x1000, memory.Read)
	data := bytes.Repeat([]byte{0xab}, 1000)
	d, err := port.Write(0x1000, data)
	if err != nil {
		t.Fatal(err)
	}
	if d != 100*sim.Microsecond {
		t.Errorf("duration = %v, want 100us", d)
	}
	// The snoop dropped the line everywhere: the next read goes to memory.
	if got := s.Reference(0x1000, memory.Read); got != 50 {
		t.Errorf("read after coherent DMA = %d cycles, want 50 (miss)", got)
	}
	if s.Guest.Count() != 0 {
		t.Errorf("guest errors: %q", guestMsgs(s))
	}
	if s.Phys.Uint32(0x1000) != 0xabababab {
		t.Errorf("DMA did not move the bytes")
	}
	want := memory.DMAStats{Writes: 1, BytesWritten: 1000}
	if diff := cmp.Diff(want, port.Stats()); diff != "" {
		t.Errorf("DMA stats (-want +got):\n%s", diff)
	}
}

func TestDMANonCoherentWrite(t *testing.T) {
	tests := []struct {
		name       string
		invalidate bool
		wantCycles int64
		wantMsgs   []string
	}{{
		name:       "stale read reported",
		wantCycles: 1, // the stale line hits
		wantMsgs: []string{"hostA.cache: CPU read of 0x1004 returned stale data: DMA wrote the line while it was cached " +
			"(non-coherent DMA; flush/invalidate before reading)"},
	}, {
		name:       "invalidate first",
		invalidate: true,
		wantCycles: 50,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := newSystem(t)
			port := s.NewDMAPort("nic0", 10_000_000, false)
			s.Reference(0x1000, memory.Read)
			if _, err := port.Write(0x1000, make([]byte, 64)); err != nil {
				t.Fatal(err)
			}
			if tt.invalidate {
				// 4 L1 lines + 2 L2 lines looked up.
				if got := s.Cache.Invalidate(0x1000, 64); got != 4*1+2*10 {
					t.Errorf("Invalidate = %d cycles, want 24", got)
				}
			}
			if got := s.Reference(0x1004, memory.Read); got != tt.wantCycles {
				t.Errorf("read = %d cycles, want %d", got, tt.wantCycles)
			}
			s.Reference(0x1008, memory.Read) // reported once per DMA
			if diff := cmp.Diff(tt.wantMsgs, guestMsgs(s)); diff != "" {
				t.Errorf("guest errors (-want +got):\n%s", diff)
			}
			if len(tt.wantMsgs) > 0 && s.Guest.Records()[0].Time != 5*sim.Microsecond {
				t.Errorf("report time = %v, want 5us", s.Guest.Records()[0].Time)
			}
		})
	}
}

func TestDMANonCoherentRead(t *testing.T) {
	for _, flush := range []bool{false, true} {
		s, _ := newSystem(t)
		port := s.NewDMAPort("nic0", 1_000_000_000, false)
		s.Phys.PutUint32(0x2000, 0x12345678)
		s.Reference(0x2000, memory.Write)
		if flush {
			// 2 L1D lines (1 dirty, written to L2) + 1 L2 line (dirty, to memory).
			if got := s.Cache.Flush(0x2000, 32); got != 2*1+10+8 {
				t.Errorf("Flush = %d cycles, want 20", got)
			}
		}
		dst := make([]byte, 32)
		d, err := port.Read(0x2000, dst)
		if err != nil || d != 32*sim.Nanosecond {
			t.Errorf("Read = %v, %v; want 32ns", d, err)
		}
		if dst[0] != 0x78 {
			t.Errorf("DMA read data %#x, want 0x78", dst[0])
		}
		var want []string
		if !flush {
			want = []string{"hostA.dma.nic0: DMA read of unflushed dirty line in [0x2000, 0x2020): the CPU's latest " +
				"writes are still in the cache (non-coherent DMA; flush before starting the device)"}
		}
		if diff := cmp.Diff(want, guestMsgs(s)); diff != "" {
			t.Errorf("flush %v: guest errors (-want +got):\n%s", flush, diff)
		}
	}
}

func TestDMAOutOfRange(t *testing.T) {
	s, _ := newSystem(t)
	port := s.NewDMAPort("nic0", 1_000_000, true)
	if _, err := port.Write(1*1024*1024-2, make([]byte, 4)); err == nil {
		t.Errorf("Write past the end succeeded")
	}
	if _, err := port.Read(1*1024*1024, make([]byte, 1)); err == nil {
		t.Errorf("Read past the end succeeded")
	}
	want := []string{
		"hostA.dma.nic0: DMA write of 4 bytes at 0xffffe exceeds physical memory of 1MiB",
		"hostA.dma.nic0: DMA read of 1 bytes at 0x100000 exceeds physical memory of 1MiB",
	}
	if diff := cmp.Diff(want, guestMsgs(s)); diff != "" {
		t.Errorf("guest errors (-want +got):\n%s", diff)
	}
	if got := port.Stats(); got != (memory.DMAStats{Errors: 2}) {
		t.Errorf("stats = %+v", got)
	}
	if s.Phys.PagesTouched() != 0 {
		t.Errorf("refused DMA touched memory")
	}
}

func TestDMADuration(t *testing.T) {
	s, _ := newSystem(t)
	p := s.NewDMAPort("x", 3, true) // 3 bytes per second
	for _, c := range []struct {
		n    int
		want sim.Time
	}{{0, 0}, {3, sim.Second}, {1, 333_333_333_334}, {1 << 40, sim.Never}} {
		if got := p.Duration(c.n); got != c.want {
			t.Errorf("Duration(%d) = %v, want %v", c.n, got, c.want)
		}
	}
}

func TestUncached(t *testing.T) {
	s, _ := newSystem(t)
	if err := s.AddUncached(0xa0000, 0x20000, 30); err != nil {
		t.Fatal(err)
	}
	if err := s.AddUncached(0xc0002, 6, 7); err != nil { // unaligned ends
		t.Fatal(err)
	}
	for _, c := range []struct {
		base memory.Addr
		size uint64
		want string
	}{
		{0xbfff0, 0x20, "memory: hostA: uncached region [0xbfff0, 0xc0010) overlaps [0xa0000, 0xc0000)"},
		{0xc0000, 4, "memory: hostA: uncached region [0xc0000, 0xc0004) overlaps [0xc0002, 0xc0008)"},
		{0x100, 0, "memory: hostA: uncached region at 0x100 has zero size"},
	} {
		err := s.AddUncached(c.base, c.size, 1)
		if err == nil || err.Error() != c.want {
			t.Errorf("AddUncached(%#x, %#x) = %v, want %q", c.base, c.size, err, c.want)
		}
	}
	if got := s.Reference(0xa0000, memory.Write); got != 30 {
		t.Errorf("uncached reference = %d, want 30", got)
	}
	if got := s.Reference(0x9fffc, memory.Read); got != 50 {
		t.Errorf("cached reference below = %d, want 50", got)
	}
	if s.Cache.L1D().Stats().Accesses() != 1 {
		t.Errorf("uncached reference reached the cache")
	}

	// ReferenceRange equals Reference per word across region edges.
	twin, _ := newSystem(t)
	_ = twin.AddUncached(0xa0000, 0x20000, 30)
	_ = twin.AddUncached(0xc0002, 6, 7)
	s.ResetStats()
	twin.Reference(0xa0000, memory.Write)
	twin.Reference(0x9fffc, memory.Read)
	twin.ResetStats()
	rng := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		a := memory.Addr(0x9ff00 + rng.IntN(0x200))
		if rng.IntN(2) == 0 {
			a = memory.Addr(0xbff00 + rng.IntN(0x200))
		}
		n := uint64(rng.IntN(600))
		kind := memory.AccessKind(rng.IntN(3))
		got := s.ReferenceRange(a, n, kind)
		var want int64
		if n > 0 {
			for w := a &^ 3; w <= (a+memory.Addr(n)-1)&^3; w += 4 {
				want += twin.Reference(w, kind)
			}
		}
		if got != want {
			t.Fatalf("ReferenceRange(%#x, %d, %v) = %d, per word %d", a, n, kind, got, want)
		}
	}
	if diff := cmp.Diff(snapshot(twin.Cache), snapshot(s.Cache)); diff != "" {
		t.Errorf("cache stats (-per word +range):\n%s", diff)
	}
	if diff := cmp.Diff(twin.Stats(), s.Stats()); diff != "" || s.Stats().UncachedRefs == 0 {
		t.Errorf("uncached stats (-per word +range):\n%s", diff)
	}
}

func TestGuestErrorNames(t *testing.T) {
	s, _ := newSystem(t)
	s.Guest.Report(0, "hostA.nic0", "x")
	if got := s.Guest.Records()[0].String(); !strings.HasPrefix(got, "0ps hostA.nic0") {
		t.Errorf("String = %q", got)
	}
}
