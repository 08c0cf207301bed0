package header_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/stack/header"
)

// tpduFieldsOf reads back the fields Encode takes.
func tpduFieldsOf(b header.TPDU, ext bool) header.TPDUFields {
	f := header.TPDUFields{Code: b.Code(), DstRef: b.DstRef(), Params: append([]byte(nil), b.VarPart(ext)...)}
	switch b.Code() {
	case header.TPDUCodeCR, header.TPDUCodeCC:
		f.CDT, f.SrcRef, f.Class = uint16(b.CDT()), b.SrcRef(), b.ClassOption()
	case header.TPDUCodeDR:
		f.SrcRef, f.Reason = b.SrcRef(), b.Reason()
	case header.TPDUCodeDC:
		f.SrcRef = b.SrcRef()
	case header.TPDUCodeER:
		f.Reason = b.RejectCause()
	case header.TPDUCodeDT, header.TPDUCodeED, header.TPDUCodeEA, header.TPDUCodeAK, header.TPDUCodeRJ:
		f.Extended, f.Number = ext, b.Number(ext)
		if c := b.Code(); c == header.TPDUCodeDT || c == header.TPDUCodeED {
			f.EOT = b.EOT()
		}
		if c := b.Code(); c == header.TPDUCodeAK || c == header.TPDUCodeRJ {
			f.CDT = b.Credit(ext)
		}
	}
	if len(f.Params) == 0 {
		f.Params = nil
	}
	return f
}

func cksumParam(rest ...byte) []byte {
	return append([]byte{header.TPDUParamChecksum, 2, 0, 0}, rest...)
}

// Every TPDU type in both formats encodes to the LI the standard gives
// and reads back field for field.
func TestTPDURoundTrip(t *testing.T) {
	tsaps := header.AppendTPDUParam(header.AppendTPDUParam(nil, header.TPDUParamCallingTSAP, 'A', 'B'), header.TPDUParamCalledTSAP, 'C')
	tests := []struct {
		f  header.TPDUFields
		li int
	}{
		{header.TPDUFields{Code: header.TPDUCodeCR, CDT: 8, SrcRef: 0x1234, Class: header.TPDUClass4, Params: tsaps}, 6 + len(tsaps)},
		{header.TPDUFields{Code: header.TPDUCodeCC, CDT: 15, DstRef: 0x1234, SrcRef: 0x0101, Class: header.TPDUClass4 | header.TPDUOptExtended}, 6},
		{header.TPDUFields{Code: header.TPDUCodeDR, DstRef: 7, SrcRef: 9, Reason: header.TPDUReasonNormal, Params: cksumParam()}, 10},
		{header.TPDUFields{Code: header.TPDUCodeDC, DstRef: 7, SrcRef: 9, Params: cksumParam()}, 9},
		{header.TPDUFields{Code: header.TPDUCodeDT, DstRef: 7, Number: 127, EOT: true, Params: cksumParam()}, 8},
		{header.TPDUFields{Code: header.TPDUCodeDT, DstRef: 7, Number: 5}, 4},
		{header.TPDUFields{Code: header.TPDUCodeDT, Extended: true, DstRef: 7, Number: 0x7FFFFFFF, EOT: true, Params: cksumParam()}, 11},
		{header.TPDUFields{Code: header.TPDUCodeED, DstRef: 7, Number: 3, EOT: true}, 4},
		{header.TPDUFields{Code: header.TPDUCodeED, Extended: true, DstRef: 7, Number: 1 << 30, EOT: true, Params: cksumParam()}, 11},
		{header.TPDUFields{Code: header.TPDUCodeAK, DstRef: 7, Number: 99, CDT: 8, Params: cksumParam()}, 8},
		{header.TPDUFields{Code: header.TPDUCodeAK, Extended: true, DstRef: 7, Number: 1<<31 - 1, CDT: 0xFFFF, Params: cksumParam()}, 13},
		{header.TPDUFields{Code: header.TPDUCodeEA, DstRef: 7, Number: 4, Params: cksumParam()}, 8},
		{header.TPDUFields{Code: header.TPDUCodeEA, Extended: true, DstRef: 7, Number: 4}, 7},
		{header.TPDUFields{Code: header.TPDUCodeRJ, Extended: true, DstRef: 7, Number: 4, CDT: 300}, 9},
		{header.TPDUFields{Code: header.TPDUCodeER, DstRef: 7, Reason: header.TPDUCauseType, Params: cksumParam()}, 8},
	}
	for _, tc := range tests {
		n := header.TPDUHeaderLen(&tc.f)
		b := make([]byte, n+3)
		copy(b[n:], "abc")
		h := header.TPDU(b)
		h.Encode(&tc.f)
		if h.LI() != tc.li || n != tc.li+1 {
			t.Errorf("%#x ext=%v: LI %d (header %d), want %d", tc.f.Code, tc.f.Extended, h.LI(), n, tc.li)
		}
		if !h.IsValid(tc.f.Extended) {
			t.Fatalf("%#x ext=%v: encoded TPDU not valid: % x", tc.f.Code, tc.f.Extended, b)
		}
		if d := cmp.Diff(tc.f, tpduFieldsOf(h, tc.f.Extended)); d != "" {
			t.Errorf("%#x ext=%v round trip (-want +got):\n%s", tc.f.Code, tc.f.Extended, d)
		}
		if string(h.Data()) != "abc" {
			t.Errorf("%#x: data %q", tc.f.Code, h.Data())
		}
		if off, ok := h.ChecksumOffset(tc.f.Extended); ok {
			h.SetChecksum(tc.f.Extended)
			if !h.IsChecksumValid() {
				t.Errorf("%#x: checksummed TPDU does not verify", tc.f.Code)
			}
			x, y, _ := fletcherBrute(func() []byte { c := append([]byte(nil), b...); c[off], c[off+1] = 0, 0; return c }(), off)
			if b[off] != x || b[off+1] != y {
				t.Errorf("%#x: checksum %02x %02x, brute force %02x %02x", tc.f.Code, b[off], b[off+1], x, y)
			}
			b[n] ^= 0x40 // a flipped data bit
			if h.IsChecksumValid() {
				t.Errorf("%#x: a flipped data bit still verifies", tc.f.Code)
			}
		}
	}
}

func TestTPDUIsValid(t *testing.T) {
	for _, tc := range []struct {
		b    []byte
		ext  bool
		want bool
	}{
		{[]byte{4, 0xF0, 0, 7, 0x80}, false, true},
		{[]byte{4, 0xF0, 0, 7}, false, false},                   // LI past the end
		{[]byte{4, 0xF0, 0, 7, 0x80}, true, false},              // too short for extended
		{[]byte{3, 0xF0, 0, 7}, false, false},                   // LI below the fixed part
		{[]byte{4, 0x30, 0, 7, 0}, false, false},                // no TPDU has code 3
		{[]byte{7, 0x60, 0, 7, 1, 0xC3, 2, 0}, false, false},    // parameter cut short
		{[]byte{6, 0x60, 0, 7, 1, 0xC3, 0}, false, true},        // an empty parameter
		{[]byte{255, 0xF0, 0, 7, 0}, false, false},              // LI 255 is reserved
		{[]byte{5, 0xC0, 0, 1, 0, 2}, false, true},              // DC
		{[]byte{9, 0x68, 0, 7, 0, 0, 0, 1, 0, 8}, true, true},   // extended AK
		{[]byte{9, 0x68, 0, 7, 0, 0, 0, 1, 0, 8}, false, false}, // as normal: a broken parameter
		{[]byte{1, 0xF0}, false, false},
		{[]byte{0}, false, false},
	} {
		if got := header.TPDU(tc.b).IsValid(tc.ext); got != tc.want {
			t.Errorf("IsValid(% x, ext=%v) = %v, want %v", tc.b, tc.ext, got, tc.want)
		}
	}
	for _, tc := range []struct {
		size int
		code byte
		ok   bool
	}{{128, 7, true}, {1024, 10, true}, {8192, 13, true}, {64, 0, false}, {1000, 0, false}, {16384, 0, false}} {
		if c, ok := header.TPDUSizeCode(tc.size); c != tc.code || ok != tc.ok {
			t.Errorf("TPDUSizeCode(%d) = %d, %v", tc.size, c, ok)
		}
	}
}

// The running sums over any split of the octets equal the sums over the
// whole, across the reduction block, and give the one-shot checksum.
func TestFletcherRunning(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 9, 300, 4095, 4096, 4097, 9000} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.IntN(256))
			if n == 9000 {
				b[i] = 0xFF // the largest sums between reductions
			}
		}
		if n >= 4 {
			b[2], b[3] = 0, 0
		}
		// The reference: one octet at a time, reduced at each step.
		var w0, w1 uint32
		for _, v := range b {
			w0 = (w0 + uint32(v)) % 255
			w1 = (w1 + w0) % 255
		}
		if s0, s1 := header.FletcherSums(b); s0 != w0 || s1 != w1 {
			t.Errorf("%d octets: FletcherSums %d %d, want %d %d", n, s0, s1, w0, w1)
		}
		var f header.Fletcher
		for rest := b; len(rest) > 0; {
			k := min(len(rest), 1+r.IntN(700))
			f.Write(rest[:k])
			rest = rest[k:]
		}
		if c0, c1 := f.Sums(); c0 != w0 || c1 != w1 || f.Len() != n {
			t.Errorf("%d octets: running sums %d %d over %d, whole %d %d", n, c0, c1, f.Len(), w0, w1)
		}
		if n >= 4 {
			x, y := f.Checksum(2)
			wx, wy := header.FletcherChecksum(b, 2)
			if x != wx || y != wy {
				t.Errorf("%d octets: running checksum %02x %02x, one-shot %02x %02x", n, x, y, wx, wy)
			}
			b[2], b[3] = x, y
			var g header.Fletcher
			g.Write(b)
			if !g.Valid() || !header.FletcherValid(b) {
				t.Errorf("%d octets: checksummed octets do not verify", n)
			}
		}
	}
}

func FuzzTPDU(f *testing.F) {
	seed := header.TPDUFields{Code: header.TPDUCodeAK, DstRef: 9, Number: 3, CDT: 8,
		Params: header.AppendTPDUParam(cksumParam(), header.TPDUParamSubsequence, 0, 1)}
	b := make([]byte, header.TPDUHeaderLen(&seed))
	header.TPDU(b).Encode(&seed)
	f.Add(b, false)
	f.Add([]byte{8, 0xF0, 0, 7, 0x80, 0xC3, 2, 0, 0, 'x'}, false)
	f.Add([]byte{13, 0xE8, 0, 0, 1, 2, 0x40, 0xC0, 1, 0x0B, 0xC1, 1, 'A', 0xC2, 0}, true)
	f.Fuzz(func(t *testing.T, data []byte, ext bool) {
		h := header.TPDU(data)
		if !h.IsValid(ext) {
			return
		}
		_, _ = h.Param(ext, header.TPDUParamChecksum)
		_, _ = h.Param(ext, header.TPDUParamFlowControl)
		_ = h.Data()
		_ = h.IsChecksumValid()
		fields := tpduFieldsOf(h, ext)
		if n := header.TPDUHeaderLen(&fields); n != h.HeaderLen() {
			t.Fatalf("fields encode to %d octets, header is %d", n, h.HeaderLen())
		}
		out := make([]byte, h.HeaderLen())
		header.TPDU(out).Encode(&fields)
		// The code octet's low nibble and the bits Encode does not keep
		// (a DT's CDT nibble, an AK's EOT bit) may differ; the rest not.
		want := append([]byte(nil), data[:h.HeaderLen()]...)
		normalise := func(b []byte) {
			c := b[1] & 0xF0
			if !(c == header.TPDUCodeCR || c == header.TPDUCodeCC || !ext && (c == header.TPDUCodeAK || c == header.TPDUCodeRJ)) {
				b[1] &= 0xF0
			}
			if c == header.TPDUCodeAK || c == header.TPDUCodeRJ || c == header.TPDUCodeEA {
				b[4] &= 0x7F
			}
		}
		normalise(want)
		normalise(out)
		if !bytes.Equal(out, want) {
			t.Fatalf("re-encoded % x, parsed % x", out, want)
		}
		if off, ok := h.ChecksumOffset(ext); ok {
			c := append(header.TPDU(nil), data...)
			c.SetChecksum(ext)
			if !c.IsChecksumValid() || off+1 >= len(c) {
				t.Fatalf("recomputed checksum does not verify: % x", c)
			}
		}
	})
}
