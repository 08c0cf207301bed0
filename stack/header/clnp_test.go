package header_test

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"simkron/stack/header"
)

func llcFieldsOf(h header.LLC) header.LLCFields {
	return header.LLCFields{DSAP: h.DSAP(), SSAP: h.SSAP(), Control: h.Control()}
}

func TestLLCRoundTrip(t *testing.T) {
	tests := []struct {
		f        header.LLCFields
		cmd      uint8
		pf, resp bool
	}{
		{header.LLCFields{DSAP: 0xFE, SSAP: 0xFE, Control: header.LLCControlUI}, header.LLCControlUI, false, false},
		{header.LLCFields{DSAP: 0xFE, SSAP: 0xFF, Control: 0xBF}, header.LLCControlXID, true, true},
		{header.LLCFields{DSAP: 0x42, SSAP: 0x42, Control: 0xE3}, header.LLCControlTEST, false, false},
	}
	for _, tc := range tests {
		b := make([]byte, header.LLCHeaderLen+2)
		h := header.LLC(b)
		h.Encode(&tc.f)
		if !h.IsValid() {
			t.Fatalf("%+v: encoded header not valid", tc.f)
		}
		if d := cmp.Diff(tc.f, llcFieldsOf(h)); d != "" {
			t.Errorf("round trip (-want +got):\n%s", d)
		}
		if h.Command() != tc.cmd || h.PollFinal() != tc.pf || h.IsResponse() != tc.resp || len(h.Payload()) != 2 {
			t.Errorf("%+v: command %#x P/F %v response %v payload %d", tc.f, h.Command(), h.PollFinal(), h.IsResponse(), len(h.Payload()))
		}
	}
}

func TestLLCIsValid(t *testing.T) {
	for _, tc := range []struct {
		b    []byte
		want bool
	}{
		{[]byte{0xFE, 0xFE, 0x03}, true},
		{[]byte{0xFE, 0xFE}, false},
		{[]byte{0xFE, 0xFE, 0x00, 0x00}, false}, // I-format: type 2
		{[]byte{0xFE, 0xFE, 0x01, 0x00}, false}, // S-format: type 2
	} {
		if got := header.LLC(tc.b).IsValid(); got != tc.want {
			t.Errorf("IsValid(% x) = %v, want %v", tc.b, got, tc.want)
		}
	}
	if !header.IsLengthField(1500) || header.IsLengthField(0x0800) || header.IsLengthField(1501) {
		t.Error("IsLengthField misreads the 802.3 length/type boundary")
	}
}

// fletcherBrute finds the checksum octets by trying every pair: an
// oracle independent of the closed form.
func fletcherBrute(b []byte, pos int) (byte, byte, bool) {
	c := append([]byte(nil), b...)
	for x := 1; x <= 255; x++ {
		for y := 1; y <= 255; y++ {
			c[pos], c[pos+1] = byte(x), byte(y)
			if header.FletcherValid(c) {
				return byte(x), byte(y), true
			}
		}
	}
	return 0, 0, false
}

func TestFletcherAgainstBruteForce(t *testing.T) {
	inputs := [][]byte{
		make([]byte, 9),
		{0x81, 0x33, 0x01, 0x20, 0x1c, 0x04, 0x00, 0xAA, 0xBB, 0x14, 1, 2, 3, 4, 5},
		bytes.Repeat([]byte{0xFF}, 300),
		bytes.Repeat([]byte{0x01, 0xFE, 0x80}, 97),
	}
	for i, in := range inputs {
		for _, pos := range []int{0, 7, len(in) - 2} {
			x, y := header.FletcherChecksum(in, pos)
			bx, by, ok := fletcherBrute(in, pos)
			if !ok {
				t.Fatalf("input %d pos %d: no checksum makes it valid", i, pos)
			}
			// Where 255 and 0 are both valid residues, the closed form
			// writes 255; the brute force starts at 1 and finds the same.
			if x != bx || y != by {
				t.Errorf("input %d pos %d: checksum %#02x %#02x, brute force %#02x %#02x", i, pos, x, y, bx, by)
			}
			c := append([]byte(nil), in...)
			c[pos], c[pos+1] = x, y
			if !header.FletcherValid(c) {
				t.Errorf("input %d pos %d: checksummed bytes do not verify", i, pos)
			}
		}
	}
}

var (
	nsapA = []byte{0x47, 0x00, 0x05, 0x80, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x21}
	nsapB = []byte{0x47, 0x00, 0x05, 0x80, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x21}
)

func clnpFieldsOf(h header.CLNP) header.CLNPFields {
	f := header.CLNPFields{Type: h.Type(), Flags: h.Flags(), Lifetime: h.Lifetime(), SegmentLength: h.SegmentLength(),
		Checksum: h.Checksum(), Dst: h.Dst(), Src: h.Src(), Options: h.Options()}
	if s, ok := h.Segmentation(); ok {
		f.Seg = s
	}
	return f
}

func TestCLNPRoundTrip(t *testing.T) {
	tests := []header.CLNPFields{
		{Type: header.CLNPTypeDT, Flags: header.CLNPFlagSP | header.CLNPFlagER, Lifetime: 32, Dst: nsapB, Src: nsapA,
			Seg: header.CLNPSegmentation{ID: 7, Offset: 0, Total: 1100}},
		{Type: header.CLNPTypeDT, Flags: header.CLNPFlagSP | header.CLNPFlagMS, Lifetime: 1, Dst: nsapA, Src: nsapB,
			Seg: header.CLNPSegmentation{ID: 0xFFFF, Offset: 1448, Total: 4000}, Options: []byte{header.CLNPOptPadding, 2, 0, 0}},
		{Type: header.CLNPTypeDT, Lifetime: 255, Dst: []byte{0x49, 0x01}, Src: []byte{}},
		{Type: header.CLNPTypeER, Lifetime: 10, Dst: nsapA, Src: nsapB, Options: []byte{header.CLNPOptReasonDiscard, 2, header.CLNPReasonChecksum, 8}},
	}
	for _, f := range tests {
		li := header.CLNPHeaderLen(&f)
		f.SegmentLength = uint16(li + 5)
		b := make([]byte, li+5)
		h := header.CLNP(b)
		h.Encode(&f)
		h.SetChecksum(h.CalculateChecksum())
		f.Checksum = h.Checksum()
		if !h.IsValid(len(b)) {
			t.Fatalf("%+v: encoded header not valid: % x", f, b)
		}
		if !h.IsChecksumValid() || f.Checksum == 0 {
			t.Errorf("%+v: checksum %#04x does not verify", f, f.Checksum)
		}
		if d := cmp.Diff(f, clnpFieldsOf(h), cmpopts.EquateEmpty()); d != "" {
			t.Errorf("round trip (-want +got):\n%s", d)
		}
		if h.HeaderLength() != li || len(h.Payload()) != 5 {
			t.Errorf("header length %d payload %d, want %d and 5", h.HeaderLength(), len(h.Payload()), li)
		}
		b[len(b)-1] ^= 0xFF // data is not covered
		if !h.IsChecksumValid() {
			t.Error("changing the data broke the header checksum")
		}
		b[3] ^= 0x01 // the lifetime is
		if h.IsChecksumValid() {
			t.Error("a changed lifetime still passes the checksum")
		}
	}
}

func TestCLNPOption(t *testing.T) {
	f := header.CLNPFields{Type: header.CLNPTypeER, Dst: nsapA, Src: nsapB,
		Options: []byte{header.CLNPOptPadding, 1, 0, header.CLNPOptReasonDiscard, 2, header.CLNPReasonLifetimeTransit, 3}}
	b := make([]byte, header.CLNPHeaderLen(&f))
	f.SegmentLength = uint16(len(b))
	header.CLNP(b).Encode(&f)
	v, ok := header.CLNP(b).Option(header.CLNPOptReasonDiscard)
	if !ok || !bytes.Equal(v, []byte{header.CLNPReasonLifetimeTransit, 3}) {
		t.Errorf("reason for discard = % x, %v", v, ok)
	}
	if _, ok := header.CLNP(b).Option(header.CLNPOptSecurity); ok {
		t.Error("found an option that is not there")
	}
}

func TestCLNPIsValid(t *testing.T) {
	good := header.CLNPFields{Type: header.CLNPTypeDT, Flags: header.CLNPFlagSP, Lifetime: 20, Dst: nsapB, Src: nsapA}
	li := header.CLNPHeaderLen(&good)
	good.SegmentLength = uint16(li + 10)
	base := make([]byte, li+10)
	header.CLNP(base).Encode(&good)
	mod := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), base...)) }
	tests := []struct {
		name   string
		b      []byte
		pktLen int
		want   bool
	}{
		{"good", base, len(base), true},
		{"inactive subset", []byte{0x00, 1, 2, 3}, 4, false},
		{"short", base[:9], 9, false},
		{"bad version", mod(func(b []byte) []byte { b[2] = 2; return b }), len(base), false},
		{"li past view", base[:li-1], li - 1, false},
		{"li too small", mod(func(b []byte) []byte { b[1] = 10; return b }), len(base), false},
		{"dst too long", mod(func(b []byte) []byte { b[9] = 21; return b }), len(base), false},
		{"src past li", mod(func(b []byte) []byte { b[1] = 9 + 1 + 20 + 5; return b }), len(base), false},
		{"segmentation part cut", mod(func(b []byte) []byte { b[1] = byte(li - 2); return b }), len(base), false},
		{"segment length below li", mod(func(b []byte) []byte { b[5], b[6] = 0, byte(li-1); return b }), len(base), false},
		{"segment length past pkt", base, len(base) - 1, false},
		{"bad option", mod(func(b []byte) []byte { b[1] = byte(li + 2); b[li], b[li+1] = 0xCC, 5; return b }), len(base), false},
		{"good option", mod(func(b []byte) []byte { b[1] = byte(li + 3); b[li], b[li+1], b[li+2] = 0xCC, 1, 0; return b }), len(base), true},
	}
	for _, tc := range tests {
		if got := header.CLNP(tc.b).IsValid(tc.pktLen); got != tc.want {
			t.Errorf("%s: IsValid = %v, want %v", tc.name, got, tc.want)
		}
	}
}
