package osi

import (
	"encoding/hex"
	"fmt"
)

// NSAP is a network service access point address (ISO 8348 annex A) of at
// most 20 octets; its last octet is the selector that picks the transport
// entity (or other NS user) at the addressed system.
type NSAP struct {
	n int
	b [20]byte
}

// MakeNSAP returns the NSAP of the octets a (at most 20, at least 1).
func MakeNSAP(a []byte) (NSAP, error) {
	if len(a) == 0 || len(a) > 20 {
		return NSAP{}, fmt.Errorf("an NSAP address has 1 to 20 octets, not %d", len(a))
	}
	var x NSAP
	x.n = copy(x.b[:], a)
	return x, nil
}

// MustNSAP is MakeNSAP for addresses known to be good (tests, defaults).
func MustNSAP(a []byte) NSAP {
	x, err := MakeNSAP(a)
	if err != nil {
		panic(err)
	}
	return x
}

// Bytes returns the address octets.
func (a NSAP) Bytes() []byte { return append([]byte(nil), a.b[:a.n]...) }

// Len returns the number of octets.
func (a NSAP) Len() int { return a.n }

// IsZero reports whether a is the empty address.
func (a NSAP) IsZero() bool { return a.n == 0 }

// Selector returns the last octet.
func (a NSAP) Selector() byte {
	if a.n == 0 {
		return 0
	}
	return a.b[a.n-1]
}

// WithSelector returns a with its last octet replaced.
func (a NSAP) WithSelector(s byte) NSAP {
	if a.n > 0 {
		a.b[a.n-1] = s
	}
	return a
}

// SameSystem reports whether a and o name the same system: equal but for
// the selector.
func (a NSAP) SameSystem(o NSAP) bool {
	return a.n == o.n && a.n > 0 && string(a.b[:a.n-1]) == string(o.b[:o.n-1])
}

// String renders the address in hex.
func (a NSAP) String() string { return hex.EncodeToString(a.b[:a.n]) }

// ParseNSAP reads an address written in hex ("470005...21").
func ParseNSAP(s string) (NSAP, error) {
	b, err := hex.DecodeString(s)
	if err != nil {
		return NSAP{}, fmt.Errorf("NSAP %q: %v", s, err)
	}
	return MakeNSAP(b)
}

// UnmarshalText reads a hex address from configuration.
func (a *NSAP) UnmarshalText(b []byte) error {
	x, err := ParseNSAP(string(b))
	if err == nil {
		*a = x
	}
	return err
}

// MarshalText writes the address in hex.
func (a NSAP) MarshalText() ([]byte, error) { return []byte(a.String()), nil }
