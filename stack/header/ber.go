package header

import (
	"fmt"
	"strconv"
	"strings"
)

// ASN.1 basic encoding rules (ITU-T X.690 clause 8), as far as the
// presentation kernel needs them: identifier octets (class,
// primitive/constructed, tag number in the low or high tag form), the
// definite length in the short or long form, and the contents;
// INTEGER, OBJECT IDENTIFIER, OCTET STRING and BIT STRING values.
//
//	identifier                    length                    contents
//	+--+-+-----+ [+1xxxxxxx ...]  +0nnnnnnn+  or  +1kkkkkkk+ k octets
//	|cl|c| tag |  high tag form   | short  |      | long form        |
//	+--+-+-----+                  +--------+      +------------------+
//
// Encoders write the minimal (DER) forms; the decoder accepts any
// definite length but not the indefinite form (unused by the TOP
// stack's encoders, and refused here rather than guessed at).

// BER classes (the two top bits of the identifier).
const (
	BERUniversal   = 0x00
	BERApplication = 0x40
	BERContext     = 0x80
	BERPrivate     = 0xC0
	BERConstructed = 0x20
)

// Universal tags.
const (
	BERTagBoolean     = 1
	BERTagInteger     = 2
	BERTagBitString   = 3
	BERTagOctetString = 4
	BERTagNull        = 5
	BERTagOID         = 6
	BERTagSequence    = 16
	BERTagSet         = 17
)

// BERTag is an identifier: class, constructed bit and number.
type BERTag struct {
	Class       uint8 // BERUniversal, BERApplication, BERContext, BERPrivate
	Constructed bool
	Number      uint32
}

// Tag returns a tag of class cl, number n; constructed when c.
func Tag(cl uint8, c bool, n uint32) BERTag { return BERTag{Class: cl, Constructed: c, Number: n} }

// BER is a view of one encoded value: identifier, length, contents.
// Call IsValid first.
type BER []byte

// berHeader decodes the identifier and length at the start of b.
func berHeader(b []byte) (t BERTag, hl, cl int, ok bool) {
	if len(b) < 2 {
		return t, 0, 0, false
	}
	t.Class = b[0] & 0xC0
	t.Constructed = b[0]&BERConstructed != 0
	i := 1
	if n := b[0] & 0x1F; n != 0x1F {
		t.Number = uint32(n)
	} else {
		// High tag form: base 128, the top bit on all but the last.
		for {
			if i >= len(b) || i > 5 || i == 1 && b[i] == 0x80 {
				return t, 0, 0, false
			}
			t.Number = t.Number<<7 | uint32(b[i]&0x7F)
			i++
			if b[i-1]&0x80 == 0 {
				break
			}
		}
	}
	if i >= len(b) {
		return t, 0, 0, false
	}
	l := int(b[i])
	i++
	if l&0x80 != 0 {
		k := l & 0x7F
		if k == 0 || k > 3 || i+k > len(b) {
			return t, 0, 0, false // indefinite, or too long for this stack
		}
		l = 0
		for _, v := range b[i : i+k] {
			l = l<<8 | int(v)
		}
		i += k
	}
	return t, i, l, true
}

// IsValid reports whether b starts with a whole encoded value: its
// identifier and definite length parse and its contents lie inside b.
func (b BER) IsValid() bool {
	_, hl, cl, ok := berHeader(b)
	return ok && hl+cl <= len(b)
}

// Tag returns the identifier.
func (b BER) Tag() BERTag { t, _, _, _ := berHeader(b); return t }

// HeaderLen returns the octets of identifier and length.
func (b BER) HeaderLen() int { _, hl, _, _ := berHeader(b); return hl }

// ContentLen returns the length of the contents.
func (b BER) ContentLen() int { _, _, cl, _ := berHeader(b); return cl }

// Len returns the octets of the whole value.
func (b BER) Len() int { _, hl, cl, _ := berHeader(b); return hl + cl }

// Content returns the contents (aliasing b).
func (b BER) Content() []byte { _, hl, cl, _ := berHeader(b); return b[hl : hl+cl] }

// Is reports whether b's identifier is t.
func (b BER) Is(t BERTag) bool { return b.Tag() == t }

// BERElements splits contents into the values they hold; ok is false
// when they are not whole values.
func BERElements(content []byte) (out []BER, ok bool) {
	for len(content) > 0 {
		e := BER(content)
		if !e.IsValid() {
			return nil, false
		}
		out = append(out, e[:e.Len()])
		content = content[e.Len():]
	}
	return out, true
}

// BERHeaderLen returns the octets of an identifier t and a length n.
func BERHeaderLen(t BERTag, n int) int {
	h := 1
	if t.Number >= 0x1F {
		for v := t.Number; v > 0; v >>= 7 {
			h++
		}
	}
	switch {
	case n < 0x80:
		return h + 1
	case n < 0x100:
		return h + 2
	case n < 0x10000:
		return h + 3
	}
	return h + 4
}

// AppendBERHeader appends identifier t and the minimal length n.
func AppendBERHeader(b []byte, t BERTag, n int) []byte {
	id := t.Class
	if t.Constructed {
		id |= BERConstructed
	}
	if t.Number < 0x1F {
		b = append(b, id|byte(t.Number))
	} else {
		b = append(b, id|0x1F)
		var tmp [5]byte
		k := len(tmp)
		for v := t.Number; v > 0; v >>= 7 {
			k--
			tmp[k] = byte(v&0x7F) | 0x80
		}
		tmp[len(tmp)-1] &^= 0x80
		b = append(b, tmp[k:]...)
	}
	switch {
	case n < 0x80:
		return append(b, byte(n))
	case n < 0x100:
		return append(b, 0x81, byte(n))
	case n < 0x10000:
		return append(b, 0x82, byte(n>>8), byte(n))
	}
	return append(b, 0x83, byte(n>>16), byte(n>>8), byte(n))
}

// AppendBER appends a whole value: identifier t, length, and the
// concatenated contents.
func AppendBER(b []byte, t BERTag, contents ...[]byte) []byte {
	n := 0
	for _, c := range contents {
		n += len(c)
	}
	b = AppendBERHeader(b, t, n)
	for _, c := range contents {
		b = append(b, c...)
	}
	return b
}

// BERInteger returns the minimal two's-complement contents of v.
func BERInteger(v int64) []byte {
	var out []byte
	for {
		out = append([]byte{byte(v)}, out...)
		if (v < 0x80 && v >= -0x80) || len(out) == 8 {
			break
		}
		v >>= 8
	}
	return out
}

// ParseBERInteger reads an INTEGER's contents (at most 8 octets,
// minimal).
func ParseBERInteger(c []byte) (int64, bool) {
	if len(c) == 0 || len(c) > 8 || len(c) > 1 && (c[0] == 0 && c[1]&0x80 == 0 || c[0] == 0xFF && c[1]&0x80 != 0) {
		return 0, false
	}
	v := int64(int8(c[0]))
	for _, x := range c[1:] {
		v = v<<8 | int64(x)
	}
	return v, true
}

// OID is an object identifier's arcs.
type OID []uint32

// String writes the dotted form.
func (o OID) String() string {
	var s strings.Builder
	for i, a := range o {
		if i > 0 {
			s.WriteByte('.')
		}
		s.WriteString(strconv.FormatUint(uint64(a), 10))
	}
	return s.String()
}

// Equal reports whether o and p have the same arcs.
func (o OID) Equal(p OID) bool {
	if len(o) != len(p) {
		return false
	}
	for i := range o {
		if o[i] != p[i] {
			return false
		}
	}
	return true
}

// BEROID returns the contents of o (X.690 8.19): the first two arcs in
// one subidentifier, each base 128.
func BEROID(o OID) []byte {
	if len(o) < 2 {
		panic("header: an OID has at least two arcs")
	}
	var out []byte
	sub := func(v uint64) {
		var tmp [10]byte
		k := len(tmp)
		k--
		tmp[k] = byte(v & 0x7F)
		for v >>= 7; v > 0; v >>= 7 {
			k--
			tmp[k] = byte(v&0x7F) | 0x80
		}
		out = append(out, tmp[k:]...)
	}
	sub(uint64(o[0])*40 + uint64(o[1]))
	for _, a := range o[2:] {
		sub(uint64(a))
	}
	return out
}

// ParseBEROID reads an OBJECT IDENTIFIER's contents.
func ParseBEROID(c []byte) (OID, bool) {
	if len(c) == 0 || c[len(c)-1]&0x80 != 0 {
		return nil, false
	}
	var out OID
	var v uint64
	start := true
	for _, x := range c {
		if start && x == 0x80 {
			return nil, false // not minimal
		}
		v = v<<7 | uint64(x&0x7F)
		if v > 0xFFFFFFFF {
			return nil, false
		}
		start = x&0x80 == 0
		if !start {
			continue
		}
		if len(out) == 0 {
			switch {
			case v < 40:
				out = append(out, 0, uint32(v))
			case v < 80:
				out = append(out, 1, uint32(v-40))
			default:
				out = append(out, 2, uint32(v-80))
			}
		} else {
			out = append(out, uint32(v))
		}
		v = 0
	}
	return out, true
}

// ParseOID reads the dotted form ("1.3.6.1.4.1.99999.1"); an OID has at
// least two arcs, the first 0, 1 or 2, the second below 40 unless the
// first is 2.
func ParseOID(s string) (OID, error) {
	parts := strings.Split(s, ".")
	if len(parts) < 2 {
		return nil, fmt.Errorf("OID %q: at least two arcs", s)
	}
	o := make(OID, len(parts))
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("OID %q: arc %q: %v", s, p, err)
		}
		o[i] = uint32(v)
	}
	if o[0] > 2 || o[0] < 2 && o[1] >= 40 {
		return nil, fmt.Errorf("OID %q: no such first arcs", s)
	}
	return o, nil
}

// UnmarshalText reads the dotted form from configuration.
func (o *OID) UnmarshalText(b []byte) error {
	v, err := ParseOID(string(b))
	if err == nil {
		*o = v
	}
	return err
}

// MarshalText writes the dotted form.
func (o OID) MarshalText() ([]byte, error) { return []byte(o.String()), nil }
