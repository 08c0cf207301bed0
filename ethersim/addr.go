package ethersim

import (
	"fmt"
	"net/netip"
)

// MAC is a 48-bit IEEE 802 address, in transmission byte order.
type MAC [6]byte

// Broadcast is the all-ones destination address.
var Broadcast = MAC{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// ParseMAC reads six two-digit hexadecimal groups separated by colons,
// "02:00:00:00:00:01"; either case is accepted. Other spellings (dashes,
// Cisco dots, EUI-64) are refused so that configuration files stay uniform.
func ParseMAC(s string) (MAC, error) {
	var m MAC
	if len(s) != 17 {
		return m, fmt.Errorf("MAC address %q: want six hex pairs separated by colons", s)
	}
	for i := range m {
		if i > 0 && s[3*i-1] != ':' {
			return m, fmt.Errorf("MAC address %q: want six hex pairs separated by colons", s)
		}
		hi, ok1 := unhex(s[3*i])
		lo, ok2 := unhex(s[3*i+1])
		if !ok1 || !ok2 {
			return m, fmt.Errorf("MAC address %q: %q is not a hex pair", s, s[3*i:3*i+2])
		}
		m[i] = hi<<4 | lo
	}
	return m, nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// String renders m in lower case, as ParseMAC reads it.
func (m MAC) String() string {
	const digits = "0123456789abcdef"
	var b [17]byte
	for i, x := range m {
		if i > 0 {
			b[3*i-1] = ':'
		}
		b[3*i], b[3*i+1] = digits[x>>4], digits[x&15]
	}
	return string(b[:])
}

// IsBroadcast reports whether m is ff:ff:ff:ff:ff:ff.
func (m MAC) IsBroadcast() bool { return m == Broadcast }

// IsMulticast reports whether m is a group address (the I/G bit, the least
// significant bit of the first byte, is set); broadcast is a multicast.
func (m MAC) IsMulticast() bool { return m[0]&1 != 0 }

// UnmarshalText lets configuration decoders read a MAC.
func (m *MAC) UnmarshalText(b []byte) error {
	v, err := ParseMAC(string(b))
	if err == nil {
		*m = v
	}
	return err
}

// MarshalText writes m in the form ParseMAC reads.
func (m MAC) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// IP4 is an IPv4 address in network byte order.
type IP4 [4]byte

// ParseIP4 reads a dotted-quad IPv4 address, "10.0.0.1". Leading zeros
// (octal in some parsers) and IPv6 forms are refused.
func ParseIP4(s string) (IP4, error) {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is4() {
		return IP4{}, fmt.Errorf("IPv4 address %q: want four decimal numbers 0-255 separated by dots", s)
	}
	return IP4(a.As4()), nil
}

// String renders ip in dotted-quad form.
func (ip IP4) String() string { return netip.AddrFrom4(ip).String() }

// UnmarshalText lets configuration decoders read an IP4.
func (ip *IP4) UnmarshalText(b []byte) error {
	v, err := ParseIP4(string(b))
	if err == nil {
		*ip = v
	}
	return err
}

// MarshalText writes ip in the form ParseIP4 reads.
func (ip IP4) MarshalText() ([]byte, error) { return []byte(ip.String()), nil }
