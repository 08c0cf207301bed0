package sim_test

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"simkron/sim"
)

// exactCycleTime is floor(n * 1e12 / hz) in big arithmetic.
func exactCycleTime(n int64, hz sim.Frequency) *big.Int {
	q := new(big.Int).Mul(big.NewInt(n), big.NewInt(int64(sim.Second)))
	return q.Quo(q, big.NewInt(int64(hz)))
}

func TestClock33MHz(t *testing.T) {
	c := sim.NewClock(33 * sim.MHz)
	if c.Frequency() != 33*sim.MHz {
		t.Errorf("Frequency = %v", c.Frequency())
	}
	for _, tc := range []struct {
		n    int64
		want sim.Time
	}{
		{0, 0},
		{1, 30303}, // 30303.03ps, rounded down
		{2, 60606},
		{3, 90909},
		{33, 1 * sim.Microsecond},
		{100, 3030303},
		{33_000_000, sim.Second},
		{1_000_000_000_000, 30_303_030_303_030_303}, // 1e12 cycles
	} {
		if got := c.Time(tc.n); got != tc.want {
			t.Errorf("Time(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
	for _, tc := range []struct {
		t    sim.Time
		want int64
	}{
		{0, 0},
		{1, 1},     // rounds up
		{30303, 1}, // just before the exact boundary 30303.03
		{30304, 2}, // just after it
		{60606, 2}, // 60606.06
		{60607, 3}, // just after cycle 2's start
		{sim.Microsecond, 33},
		{sim.Microsecond + 1, 34},
		{sim.Second, 33_000_000},
		{sim.Second - 1, 33_000_000},
		{sim.Second + 1, 33_000_001},
	} {
		if got := c.Cycle(tc.t); got != tc.want {
			t.Errorf("Cycle(%d) = %d, want %d", tc.t, got, tc.want)
		}
	}
}

func TestClockRoundTrip(t *testing.T) {
	freqs := []sim.Frequency{1, 3, 7 * sim.Hz, 32768, 3_579_545, 33 * sim.MHz, 66_666_667, 100 * sim.MHz, 2_400_000_001, 3 * sim.GHz, 1_000_000_000_000}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, f := range freqs {
		c := sim.NewClock(f)
		// Largest cycle count whose start still fits in a Time.
		maxN := new(big.Int).Mul(big.NewInt(math.MaxInt64), big.NewInt(int64(f)))
		maxN.Quo(maxN, big.NewInt(int64(sim.Second)))
		limit := int64(math.MaxInt64)
		if maxN.IsInt64() {
			limit = maxN.Int64()
		}
		ns := []int64{0, 1, 2, 3, 999, 1000, 1001, 33_000_000, 1_000_000_000_000, limit - 1, limit}
		for range 2000 {
			ns = append(ns, rng.Int64N(limit))
			ns = append(ns, rng.Int64N(1_000_000))
		}
		for _, n := range ns {
			if n > limit || n < 0 {
				continue
			}
			tn := c.Time(n)
			if want := exactCycleTime(n, f); !want.IsInt64() || want.Int64() != int64(tn) {
				t.Fatalf("%v: Time(%d) = %d, want %v", f, n, tn, want)
			}
			if got := c.Cycle(tn); got != n {
				t.Fatalf("%v: Cycle(Time(%d)) = %d", f, n, got)
			}
			// Every instant after cycle n's start up to cycle n+1's
			// start is recognised at cycle n+1.
			if n < limit {
				next := c.Time(n + 1)
				if tn < next {
					if got := c.Cycle(tn + 1); got != n+1 {
						t.Fatalf("%v: Cycle(Time(%d)+1) = %d, want %d", f, n, got, n+1)
					}
				}
				if got := c.Cycle(next); got != n+1 {
					t.Fatalf("%v: Cycle(Time(%d)) = %d", f, n+1, got)
				}
			}
		}
	}
}

// TestClockTimeSaturates checks that cycle counts whose start is beyond
// the last representable Time give Never rather than a wrapped value.
func TestClockTimeSaturates(t *testing.T) {
	for _, f := range []sim.Frequency{1, 33 * sim.MHz, sim.GHz, 3 * sim.GHz} {
		c := sim.NewClock(f)
		prev := sim.Time(0)
		for _, n := range []int64{1e12, 1e14, 3e14, 3.04e14, 4e14, 6e14, 6.1e14, 1e15, 1e17, 1e18, math.MaxInt64} {
			got := c.Time(n)
			if got < prev {
				t.Errorf("%v: Time(%d) = %d, less than an earlier cycle's %d", f, n, got, prev)
			}
			want := exactCycleTime(n, f)
			if want.IsInt64() && got != sim.Time(want.Int64()) {
				t.Errorf("%v: Time(%d) = %d, want %v", f, n, got, want)
			}
			if !want.IsInt64() && got != sim.Never {
				t.Errorf("%v: Time(%d) = %d, want Never (overflow)", f, n, got)
			}
			prev = got
		}
	}
}

func TestClockCycles(t *testing.T) {
	c := sim.NewClock(33 * sim.MHz)
	for _, tc := range []struct {
		d    sim.Time
		want int64
	}{
		{0, 0},
		{1, 1},
		{30 * sim.Nanosecond, 1},
		{100 * sim.Nanosecond, 4}, // 3.3 cycles
		{sim.Microsecond, 33},
		{10 * sim.Millisecond, 330_000},
	} {
		if got := c.Cycles(tc.d); got != tc.want {
			t.Errorf("Cycles(%v) = %d, want %d", tc.d, got, tc.want)
		}
	}
	g := sim.NewClock(sim.GHz)
	if got := g.Cycles(1500 * sim.Picosecond); got != 2 {
		t.Errorf("1GHz Cycles(1.5ns) = %d, want 2", got)
	}
}

func TestNewClockRejectsNonPositive(t *testing.T) {
	mustPanic(t, "NewClock(0)", func() { sim.NewClock(0) })
	mustPanic(t, "NewClock(-1)", func() { sim.NewClock(-1) })
}

func TestPeriod(t *testing.T) {
	for _, tc := range []struct {
		f    sim.Frequency
		want sim.Time
	}{
		{33 * sim.MHz, 30303},
		{100 * sim.MHz, 10 * sim.Nanosecond},
		{sim.GHz, sim.Nanosecond},
		{sim.Hz, sim.Second},
	} {
		if got := tc.f.Period(); got != tc.want {
			t.Errorf("%v.Period() = %d, want %d", tc.f, got, tc.want)
		}
	}
}

func TestTimeString(t *testing.T) {
	for _, tc := range []struct {
		t    sim.Time
		want string
	}{
		{0, "0ps"},
		{1, "1ps"},
		{999, "999ps"},
		{sim.Nanosecond, "1ns"},
		{33 * sim.Nanosecond, "33ns"},
		{1500, "1.5ns"},
		{1500 * sim.Nanosecond, "1.5us"},
		{1234 * sim.Nanosecond, "1.234us"},
		{200 * sim.Millisecond, "200ms"},
		{2 * sim.Second, "2s"},
		{-1500, "-1.5ns"},
		{sim.Never, "never"},
	} {
		if got := tc.t.String(); got != tc.want {
			t.Errorf("Time(%d).String() = %q, want %q", int64(tc.t), got, tc.want)
		}
	}
	if got := (1500 * sim.Millisecond).Seconds(); got != 1.5 {
		t.Errorf("Seconds() = %v", got)
	}
}

func TestFrequencyString(t *testing.T) {
	for _, tc := range []struct {
		f    sim.Frequency
		want string
	}{
		{33 * sim.MHz, "33MHz"},
		{8_250_000, "8.25MHz"},
		{3_579_545, "3579545Hz"}, // at most three decimals in a unit
		{1500 * sim.MHz, "1.5GHz"},
		{2 * sim.GHz, "2GHz"},
		{32 * sim.KHz, "32kHz"},
		{32768, "32768Hz"},
		{100, "100Hz"},
	} {
		if got := tc.f.String(); got != tc.want {
			t.Errorf("Frequency(%d).String() = %q, want %q", int64(tc.f), got, tc.want)
		}
	}
}
