package sim_test

import (
	"encoding"
	"math"
	"strings"
	"testing"

	"simkron/sim"
)

func TestParseTime(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want sim.Time
	}{
		{"100ns", 100 * sim.Nanosecond},
		{"1.5us", 1500 * sim.Nanosecond},
		{"1.5µs", 1500 * sim.Nanosecond},
		{"200ms", 200 * sim.Millisecond},
		{"2s", 2 * sim.Second},
		{"7ps", 7},
		{"0ps", 0},
		{"0s", 0},
		{" 5ns ", 5 * sim.Nanosecond},
		{"5 ns", 5 * sim.Nanosecond},
		{"0.001ns", 1},
		{".5ns", 500},
		{"010ns", 10 * sim.Nanosecond}, // leading zeros are decimal
		{"9223372036854775807ps", sim.Never},
		{"9223372.036854775807s", sim.Never},
	} {
		got, err := sim.ParseTime(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseTime(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

func TestParseTimeErrors(t *testing.T) {
	for _, tc := range []struct{ in, wantErr string }{
		{"33", "needs a unit"},
		{"", "needs a unit"},
		{"ns", "not a decimal number"},
		{"-1ns", "negative"},
		{"1.5ps", "not a whole number"},
		{"0.0001ns", "not a whole number"},
		{"abcns", "not a decimal number"},
		{"1e3ns", "not a decimal number"},
		{"1E3ns", "not a decimal number"},
		{"1/2ns", "not a decimal number"},
		{"0x10ns", "not a decimal number"},
		{"0b101ns", "not a decimal number"},
		{"0o17ns", "not a decimal number"},
		{"0x1p4ns", "not a decimal number"},
		{"1_000ns", "not a decimal number"},
		{"1..5ns", "not a decimal number"},
		{"9223372036854775808ps", "too large"},
		{"10000000s", "too large"},
		{"10Mbps", "not a decimal number"},
		{"33MHz", "needs a unit"},
	} {
		got, err := sim.ParseTime(tc.in)
		if err == nil {
			t.Errorf("ParseTime(%q) = %d, want an error", tc.in, got)
			continue
		}
		if !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("ParseTime(%q) error %q does not mention %q", tc.in, err, tc.wantErr)
		}
	}
}

func TestParseFrequency(t *testing.T) {
	good := []struct {
		in   string
		want sim.Frequency
	}{
		{"33MHz", 33 * sim.MHz},
		{"8.25MHz", 8_250_000},
		{"3.579545MHz", 3_579_545},
		{"1GHz", sim.GHz},
		{"1.5GHz", 1500 * sim.MHz},
		{"32kHz", 32 * sim.KHz},
		{"32KHz", 32 * sim.KHz},
		{"100Hz", 100},
	}
	for _, tc := range good {
		got, err := sim.ParseFrequency(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseFrequency(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"33", "abcMHz", "-1MHz", "1.5Hz", "1e6Hz", "0x21MHz", "10000000000GHz", "33mhz", "33ns"} {
		if got, err := sim.ParseFrequency(in); err == nil {
			t.Errorf("ParseFrequency(%q) = %d, want an error", in, got)
		}
	}
}

func TestParseSize(t *testing.T) {
	good := []struct {
		in   string
		want sim.Size
	}{
		{"64B", 64},
		{"8KiB", 8 * sim.KiB},
		{"1MiB", sim.MiB},
		{"4GiB", 4 * sim.GiB},
		{"1.5KiB", 1536},
		{"1kB", 1000},
		{"1KB", 1000},
		{"1MB", 1_000_000},
		{"2GB", 2_000_000_000},
		{"0B", 0},
		{"8589934591GiB", 8589934591 * sim.GiB},
	}
	for _, tc := range good {
		got, err := sim.ParseSize(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"64", "-1B", "0.5B", "1.0001KiB", "abcKiB", "1e3B", "8589934592GiB", "99999999999999999999B", "1_024B", "0x40B"} {
		if got, err := sim.ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
		}
	}
}

func TestParseBitRate(t *testing.T) {
	good := []struct {
		in   string
		want sim.BitRate
	}{
		{"10Mbps", 10 * sim.Mbps},
		{"100Mbps", 100 * sim.Mbps},
		{"64kbps", 64 * sim.Kbps},
		{"64Kbps", 64 * sim.Kbps},
		{"1Gbps", sim.Gbps},
		{"2.5Gbps", 2500 * sim.Mbps},
		{"9600bps", 9600},
	}
	for _, tc := range good {
		got, err := sim.ParseBitRate(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseBitRate(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"10", "-10Mbps", "0.5bps", "fastMbps", "1e1Mbps", "10MBps", "10000000000Gbps"} {
		if got, err := sim.ParseBitRate(in); err == nil {
			t.Errorf("ParseBitRate(%q) = %d, want an error", in, got)
		}
	}
}

func TestByteTime(t *testing.T) {
	for _, tc := range []struct {
		r    sim.BitRate
		n    int
		want sim.Time
	}{
		{10 * sim.Mbps, 1, 800 * sim.Nanosecond},
		{10 * sim.Mbps, 0, 0},
		{10 * sim.Mbps, 1500, 1200 * sim.Microsecond},
		{100 * sim.Mbps, 1500, 120 * sim.Microsecond},
		{sim.Gbps, 64, 512 * sim.Nanosecond},
		{3, 1, 2_666_666_666_667},          // 8/3 s, rounded up
		{sim.Gbps, 1 << 30, 8589934592000}, // needs more than 64 bits mid-way
	} {
		if got := tc.r.ByteTime(tc.n); got != tc.want {
			t.Errorf("%v.ByteTime(%d) = %d, want %d", tc.r, tc.n, got, tc.want)
		}
	}
}

func TestUnitStrings(t *testing.T) {
	for _, tc := range []struct {
		v    interface{ String() string }
		want string
	}{
		{sim.Size(64), "64B"},
		{8 * sim.KiB, "8KiB"},
		{sim.MiB, "1MiB"},
		{3 * sim.GiB, "3GiB"},
		{sim.Size(1536), "1536B"},
		{sim.Size(1000), "1000B"},
		{10 * sim.Mbps, "10Mbps"},
		{64 * sim.Kbps, "64kbps"},
		{sim.Gbps, "1Gbps"},
		{sim.BitRate(1500), "1500bps"},
		{2500 * sim.Mbps, "2500Mbps"},
	} {
		if got := tc.v.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

// textValue is a unit type as configuration decoders see it.
type textValue interface {
	encoding.TextMarshaler
	String() string
}

// roundTrip marshals v, unmarshals it into fresh (a pointer to a zero value
// of v's type) and reports the text and the decoded value.
func roundTrip(t *testing.T, v textValue, fresh encoding.TextUnmarshaler) {
	t.Helper()
	text, err := v.MarshalText()
	if err != nil {
		t.Fatalf("MarshalText(%v): %v", v, err)
	}
	if err := fresh.UnmarshalText(text); err != nil {
		t.Fatalf("UnmarshalText(%q) (from %v): %v", text, v, err)
	}
	got := fresh.(interface{ String() string }).String()
	if got != v.String() {
		t.Errorf("%v → %q → %v", v, text, got)
	}
}

func TestTextRoundTrip(t *testing.T) {
	times := []sim.Time{0, 1, 999, 1000, 1001, 30303, 1500 * sim.Nanosecond, 1234567, sim.Second, 3*sim.Second + 1, 1000001, 1_000_000_001, sim.Never, sim.Never - 1}
	for _, v := range times {
		var got sim.Time
		text, _ := v.MarshalText()
		if err := got.UnmarshalText(text); err != nil || got != v {
			t.Errorf("Time %d → %q → %d, %v", int64(v), text, got, err)
		}
	}
	// String is for people: it is exact (and so round-trips) for values
	// that need at most three decimals in their unit.
	for _, v := range []sim.Time{0, 7, 1500, 33 * sim.Nanosecond, 1234 * sim.Nanosecond, 1500 * sim.Microsecond, 2 * sim.Second, 2500 * sim.Millisecond} {
		var got sim.Time
		if err := got.UnmarshalText([]byte(v.String())); err != nil || got != v {
			t.Errorf("Time %d → String %q → %d, %v", int64(v), v.String(), got, err)
		}
	}
	for _, v := range []sim.Frequency{1, 100, 32768, 32 * sim.KHz, 3_579_545, 8_250_000, 33 * sim.MHz, 1500 * sim.MHz, 3 * sim.GHz, 1_000_000_001, math.MaxInt64} {
		var got sim.Frequency
		roundTrip(t, v, &got)
		if got != v {
			t.Errorf("Frequency %d round-tripped to %d", int64(v), int64(got))
		}
	}
	for _, v := range []sim.Size{0, 1, 64, 1000, 1536, 8 * sim.KiB, sim.MiB, 4 * sim.GiB, math.MaxInt64} {
		var got sim.Size
		roundTrip(t, v, &got)
		if got != v {
			t.Errorf("Size %d round-tripped to %d", uint64(v), uint64(got))
		}
	}
	for _, v := range []sim.BitRate{0, 1, 9600, 64 * sim.Kbps, 10 * sim.Mbps, 2500 * sim.Mbps, sim.Gbps, math.MaxInt64} {
		var got sim.BitRate
		roundTrip(t, v, &got)
		if got != v {
			t.Errorf("BitRate %d round-tripped to %d", int64(v), int64(got))
		}
	}
}

func TestUnmarshalTextKeepsValueOnError(t *testing.T) {
	tm := sim.Time(5)
	if err := tm.UnmarshalText([]byte("bogus")); err == nil || tm != 5 {
		t.Errorf("Time.UnmarshalText(bogus) = %v, value %d", err, tm)
	}
	f := sim.Frequency(5)
	if err := f.UnmarshalText([]byte("5")); err == nil || f != 5 {
		t.Errorf("Frequency.UnmarshalText(5) = %v, value %d", err, f)
	}
	s := sim.Size(5)
	if err := s.UnmarshalText([]byte("-5B")); err == nil || s != 5 {
		t.Errorf("Size.UnmarshalText(-5B) = %v, value %d", err, s)
	}
	r := sim.BitRate(5)
	if err := r.UnmarshalText([]byte("5Mbit")); err == nil || r != 5 {
		t.Errorf("BitRate.UnmarshalText(5Mbit) = %v, value %d", err, r)
	}
}

var fuzzSeeds = []string{
	"100ns", "1.5us", "1.5µs", "200ms", "2s", "7ps", "33", "-1ns", "1.5ps", "1e3ns",
	"0x10ns", "1_000ns", "9223372036854775807ps", "9223372036854775808ps", " 5 ns",
	"8KiB", "1MiB", "64B", "1.5KiB", "4GiB", "1kB", "abcB", "", "ns", ".", "+1ns",
}

func FuzzParseTime(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := sim.ParseTime(s)
		if err != nil {
			return
		}
		if v < 0 {
			t.Fatalf("ParseTime(%q) = %d, negative", s, v)
		}
		_ = v.String()
		text, err := v.MarshalText()
		if err != nil {
			t.Fatalf("MarshalText(%d): %v", v, err)
		}
		var back sim.Time
		if err := back.UnmarshalText(text); err != nil || back != v {
			t.Fatalf("ParseTime(%q) = %d → %q → %d, %v", s, v, text, back, err)
		}
	})
}

func FuzzParseSize(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := sim.ParseSize(s)
		if err != nil {
			return
		}
		text, err := v.MarshalText()
		if err != nil {
			t.Fatalf("MarshalText(%d): %v", v, err)
		}
		var back sim.Size
		if err := back.UnmarshalText(text); err != nil || back != v {
			t.Fatalf("ParseSize(%q) = %d → %q → %d, %v", s, v, text, back, err)
		}
	})
}
