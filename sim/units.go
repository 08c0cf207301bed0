package sim

import (
	"fmt"
	"math/big"
	"strings"
)

// Size is an amount of memory in bytes. In configuration files it is
// written with a unit: "64B", "8KiB", "1MiB", "4GiB" (binary prefixes) or
// "1kB", "1MB" (decimal ones).
type Size uint64

// Units of size.
const (
	Byte Size = 1
	KiB       = 1024 * Byte
	MiB       = 1024 * KiB
	GiB       = 1024 * MiB
)

// String renders s in the largest binary unit that divides it.
func (s Size) String() string {
	switch {
	case s >= GiB && s%GiB == 0:
		return fmt.Sprintf("%dGiB", s/GiB)
	case s >= MiB && s%MiB == 0:
		return fmt.Sprintf("%dMiB", s/MiB)
	case s >= KiB && s%KiB == 0:
		return fmt.Sprintf("%dKiB", s/KiB)
	}
	return fmt.Sprintf("%dB", uint64(s))
}

// BitRate is a data rate in bits per second, written "10Mbps", "100Mbps",
// "64kbps", "1Gbps".
type BitRate int64

// Units of bit rate.
const (
	Bps  BitRate = 1
	Kbps         = 1000 * Bps
	Mbps         = 1000 * Kbps
	Gbps         = 1000 * Mbps
)

// String renders r in the largest exact unit.
func (r BitRate) String() string {
	switch {
	case r >= Gbps && r%Gbps == 0:
		return fmt.Sprintf("%dGbps", r/Gbps)
	case r >= Mbps && r%Mbps == 0:
		return fmt.Sprintf("%dMbps", r/Mbps)
	case r >= Kbps && r%Kbps == 0:
		return fmt.Sprintf("%dkbps", r/Kbps)
	}
	return fmt.Sprintf("%dbps", int64(r))
}

// ByteTime returns the time to serialise n bytes at r, rounded up to a
// picosecond.
func (r BitRate) ByteTime(n int) Time {
	bits := int64(n) * 8
	num := bits * int64(Second)
	if bits != 0 && num/bits != int64(Second) { // overflow: use big arithmetic
		q := new(big.Int).Mul(big.NewInt(bits), big.NewInt(int64(Second)))
		q.Add(q, big.NewInt(int64(r)-1))
		q.Quo(q, big.NewInt(int64(r)))
		return Time(q.Int64())
	}
	return Time((num + int64(r) - 1) / int64(r))
}

type unit struct {
	suffix string
	scale  int64
}

// Longest suffixes first so that "ms" is not read as "s".
var (
	timeUnits = []unit{{"ps", 1}, {"ns", int64(Nanosecond)}, {"us", int64(Microsecond)}, {"µs", int64(Microsecond)}, {"ms", int64(Millisecond)}, {"s", int64(Second)}}
	freqUnits = []unit{{"GHz", int64(GHz)}, {"MHz", int64(MHz)}, {"kHz", int64(KHz)}, {"KHz", int64(KHz)}, {"Hz", 1}}
	sizeUnits = []unit{{"GiB", int64(GiB)}, {"MiB", int64(MiB)}, {"KiB", int64(KiB)}, {"GB", 1e9}, {"MB", 1e6}, {"kB", 1e3}, {"KB", 1e3}, {"B", 1}}
	rateUnits = []unit{{"Gbps", int64(Gbps)}, {"Mbps", int64(Mbps)}, {"kbps", int64(Kbps)}, {"Kbps", int64(Kbps)}, {"bps", 1}}
)

// parseQuantity reads "<decimal><unit>" exactly: the decimal may have a
// fraction, but the result must be a whole number of base units.
func parseQuantity(s, what string, units []unit) (int64, error) {
	t := strings.TrimSpace(s)
	var u *unit
	for i := range units {
		if strings.HasSuffix(t, units[i].suffix) && (u == nil || len(units[i].suffix) > len(u.suffix)) {
			u = &units[i]
		}
	}
	if u == nil {
		names := make([]string, len(units))
		for i, x := range units {
			names[i] = x.suffix
		}
		return 0, fmt.Errorf("%s %q needs a unit (one of %s)", what, s, strings.Join(names, ", "))
	}
	num := strings.TrimSpace(strings.TrimSuffix(t, u.suffix))
	r, ok := new(big.Rat).SetString(num)
	// big.Rat also reads fractions, exponents, base prefixes (0x, 0b, 0o)
	// and digit separators: accept only signs, digits and a point.
	if !ok || num == "" || strings.TrimLeft(num, "+-.0123456789") != "" {
		return 0, fmt.Errorf("%s %q: %q is not a decimal number", what, s, num)
	}
	if r.Sign() < 0 {
		return 0, fmt.Errorf("%s %q must not be negative", what, s)
	}
	r.Mul(r, new(big.Rat).SetInt64(u.scale))
	if !r.IsInt() {
		return 0, fmt.Errorf("%s %q is not a whole number of %s", what, s, units[len(units)-1].suffix)
	}
	if !r.Num().IsInt64() {
		return 0, fmt.Errorf("%s %q is too large", what, s)
	}
	return r.Num().Int64(), nil
}

// ParseTime reads a duration such as "100ns", "1.5us", "200ms", "2s".
func ParseTime(s string) (Time, error) {
	v, err := parseQuantity(s, "duration", timeUnits)
	return Time(v), err
}

// ParseFrequency reads a frequency such as "33MHz" or "100Hz".
func ParseFrequency(s string) (Frequency, error) {
	v, err := parseQuantity(s, "frequency", freqUnits)
	return Frequency(v), err
}

// ParseSize reads a size such as "8KiB", "64B" or "1MiB".
func ParseSize(s string) (Size, error) {
	v, err := parseQuantity(s, "size", sizeUnits)
	return Size(v), err
}

// ParseBitRate reads a rate such as "10Mbps".
func ParseBitRate(s string) (BitRate, error) {
	v, err := parseQuantity(s, "bit rate", rateUnits)
	return BitRate(v), err
}

// UnmarshalText lets configuration decoders read a Time from a string.
func (t *Time) UnmarshalText(b []byte) error {
	v, err := ParseTime(string(b))
	if err == nil {
		*t = v
	}
	return err
}

// MarshalText writes t in the form ParseTime reads.
func (t Time) MarshalText() ([]byte, error) { return []byte(exactTime(t)), nil }

// exactTime renders t exactly, in the largest unit that divides it.
func exactTime(t Time) string {
	for _, u := range []unit{{"s", int64(Second)}, {"ms", int64(Millisecond)}, {"us", int64(Microsecond)}, {"ns", int64(Nanosecond)}} {
		if t != 0 && int64(t)%u.scale == 0 {
			return fmt.Sprintf("%d%s", int64(t)/u.scale, u.suffix)
		}
	}
	return fmt.Sprintf("%dps", int64(t))
}

// UnmarshalText lets configuration decoders read a Frequency.
func (f *Frequency) UnmarshalText(b []byte) error {
	v, err := ParseFrequency(string(b))
	if err == nil {
		*f = v
	}
	return err
}

// MarshalText writes f in the form ParseFrequency reads.
func (f Frequency) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// UnmarshalText lets configuration decoders read a Size.
func (s *Size) UnmarshalText(b []byte) error {
	v, err := ParseSize(string(b))
	if err == nil {
		*s = v
	}
	return err
}

// MarshalText writes s in the form ParseSize reads.
func (s Size) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText lets configuration decoders read a BitRate.
func (r *BitRate) UnmarshalText(b []byte) error {
	v, err := ParseBitRate(string(b))
	if err == nil {
		*r = v
	}
	return err
}

// MarshalText writes r in the form ParseBitRate reads.
func (r BitRate) MarshalText() ([]byte, error) { return []byte(r.String()), nil }
