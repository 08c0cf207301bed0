// Package sim is the event scheduler of simkron: simulated time, the event
// queue and deterministic random streams. It imports only the standard
// library.
//
// Simulated time is an integer count of picoseconds (Time). Events run in
// (time, priority, sequence) order, where the sequence is the order in which
// they were scheduled, so the same inputs always give the same order. One
// Kernel drives one simulation on one goroutine.
package sim

import (
	"fmt"
	"math/bits"
)

// Time is simulated time in picoseconds. It is never floating point.
type Time int64

// Units of simulated time.
const (
	Picosecond  Time = 1
	Nanosecond       = 1000 * Picosecond
	Microsecond      = 1000 * Nanosecond
	Millisecond      = 1000 * Microsecond
	Second           = 1000 * Millisecond
)

// Never is a time after every other time; an event never fires at it.
const Never Time = 1<<63 - 1

// String renders t with the largest unit that keeps it exact to three
// decimals, e.g. "1.5us", "33ns", "2s".
func (t Time) String() string {
	if t == Never {
		return "never"
	}
	sign := ""
	v := int64(t)
	if v < 0 {
		sign, v = "-", -v
	}
	units := []struct {
		name string
		size int64
	}{{"s", int64(Second)}, {"ms", int64(Millisecond)}, {"us", int64(Microsecond)}, {"ns", int64(Nanosecond)}}
	for _, u := range units {
		if v >= u.size {
			whole, frac := v/u.size, v%u.size
			if frac == 0 {
				return fmt.Sprintf("%s%d%s", sign, whole, u.name)
			}
			// Three decimals, trailing zeros trimmed.
			milli := frac * 1000 / u.size
			s := fmt.Sprintf("%s%d.%03d", sign, whole, milli)
			for s[len(s)-1] == '0' {
				s = s[:len(s)-1]
			}
			if s[len(s)-1] == '.' {
				s = s[:len(s)-1]
			}
			return s + u.name
		}
	}
	return fmt.Sprintf("%s%dps", sign, v)
}

// Seconds returns t in seconds as a float, for reports only.
func (t Time) Seconds() float64 { return float64(t) / float64(Second) }

// Frequency is a clock rate in hertz.
type Frequency int64

// Units of frequency.
const (
	Hz  Frequency = 1
	KHz           = 1000 * Hz
	MHz           = 1000 * KHz
	GHz           = 1000 * MHz
)

// String renders f in the largest exact unit ("33MHz", "8.25MHz").
func (f Frequency) String() string {
	switch {
	case f >= GHz && f%MHz == 0:
		return trimFrac(int64(f), int64(GHz)) + "GHz"
	case f >= MHz && f%KHz == 0:
		return trimFrac(int64(f), int64(MHz)) + "MHz"
	case f >= KHz && f%KHz == 0:
		return trimFrac(int64(f), int64(KHz)) + "kHz"
	}
	return fmt.Sprintf("%dHz", int64(f))
}

func trimFrac(v, unit int64) string {
	if v%unit == 0 {
		return fmt.Sprintf("%d", v/unit)
	}
	s := fmt.Sprintf("%d.%06d", v/unit, (v%unit)*1000000/unit)
	for s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	return s
}

// Period returns the length of one cycle, rounded down to a picosecond.
// Use Clock for exact conversions of many cycles.
func (f Frequency) Period() Time { return Time(int64(Second) / int64(f)) }

// Clock converts between cycle counts and time for one frequency without
// accumulating rounding error: cycle n starts at floor(n * 1e12 / hz) ps.
type Clock struct {
	hz uint64
}

// NewClock returns the clock of frequency f, which must be positive.
func NewClock(f Frequency) Clock {
	if f <= 0 {
		panic(fmt.Sprintf("sim: clock frequency %d must be positive", f))
	}
	return Clock{hz: uint64(f)}
}

// Frequency returns the clock's rate.
func (c Clock) Frequency() Frequency { return Frequency(c.hz) }

// Time returns the start time of cycle n (n >= 0), rounded down.
func (c Clock) Time(n int64) Time {
	hi, lo := bits.Mul64(uint64(n), uint64(Second))
	if hi >= c.hz {
		return Never
	}
	q, _ := bits.Div64(hi, lo, c.hz)
	if q > uint64(Never) {
		return Never
	}
	return Time(q)
}

// Cycle returns the first cycle that starts at or after t (t >= 0): the
// cycle boundary at which an event at t is recognised.
func (c Clock) Cycle(t Time) int64 {
	hi, lo := bits.Mul64(uint64(t), c.hz)
	if hi == 0 {
		// The span of a bus access or a latency, as a rule: a division
		// by a constant, which compiles to a multiplication.
		q := lo / uint64(Second)
		if lo != q*uint64(Second) {
			q++
		}
		return int64(q)
	}
	q, r := bits.Div64(hi, lo, uint64(Second))
	if r != 0 {
		q++
	}
	return int64(q)
}

// Cycles returns how many whole cycles fit in d, rounded up; used to turn a
// device or bus latency into CPU stall cycles.
func (c Clock) Cycles(d Time) int64 { return c.Cycle(d) }
