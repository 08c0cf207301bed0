package sim_test

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/sim"
)

func draw(r *rand.Rand, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = r.Uint64()
	}
	return out
}

func TestStreamSameSeedSameName(t *testing.T) {
	for _, name := range []string{"", "nic0", "hostA.cpu0.jitter"} {
		a := draw(sim.NewScheduler(42).Stream(name), 200)
		b := draw(sim.NewScheduler(42).Stream(name), 200)
		if diff := cmp.Diff(a, b); diff != "" {
			t.Errorf("Stream(%q) with one seed differs between kernels (-a +b):\n%s", name, diff)
		}
		// Two calls on one kernel give the same sequence, too.
		k := sim.NewScheduler(42)
		c, d := k.Stream(name), k.Stream(name)
		if diff := cmp.Diff(draw(c, 50), draw(d, 50)); diff != "" {
			t.Errorf("two Stream(%q) calls on one kernel differ:\n%s", name, diff)
		}
	}
}

func TestStreamDifferentNamesAndSeeds(t *testing.T) {
	names := []string{"a", "b", "nic0", "nic1", "hostA.nic0", "hostB.nic0", "disk"}
	seen := map[uint64]string{}
	k := sim.NewScheduler(7)
	for _, n := range names {
		first := k.Stream(n).Uint64()
		if other, dup := seen[first]; dup {
			t.Errorf("streams %q and %q start with the same value %#x", n, other, first)
		}
		seen[first] = n
	}
	a := draw(sim.NewScheduler(1).Stream("nic0"), 20)
	b := draw(sim.NewScheduler(2).Stream("nic0"), 20)
	if cmp.Equal(a, b) {
		t.Error("different master seeds gave the same stream")
	}
	if sim.NewScheduler(99).Seed() != 99 {
		t.Error("Seed() does not return the master seed")
	}
}

// TestStreamIndependence checks that creating and drawing from extra
// streams does not shift the values of an existing one.
func TestStreamIndependence(t *testing.T) {
	alone := draw(sim.NewScheduler(5).Stream("cpu0"), 100)

	k := sim.NewScheduler(5)
	extra := k.Stream("nic0")
	extra.Uint64()
	cpu := k.Stream("cpu0")
	got := make([]uint64, 0, 100)
	for i := range 100 {
		got = append(got, cpu.Uint64())
		// Interleave draws from streams created along the way.
		extra.Uint64()
		if i%10 == 0 {
			k.Stream("late" + string(rune('a'+i/10))).Uint64()
		}
	}
	if diff := cmp.Diff(alone, got); diff != "" {
		t.Errorf("adding streams changed cpu0's sequence (-alone +with others):\n%s", diff)
	}
}
