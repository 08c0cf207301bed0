package header_test

import (
	"math/rand/v2"
	"testing"

	"simkron/stack/header"
)

// The transport checksum checked against ISO 8073's own rule (RFC 905,
// 6.17 and annex B), written out here octet by octet as the annex
// states it, with nothing of this package's Fletcher code:
//
//	B.3 generating: set the checksum octets to zero; C0 = C1 = 0; for
//	    each octet i = 1..L: C0 += a_i, then C1 += C0 (modulo 255);
//	    X = −C1 + (L−n)·C0, Y = C1 − (L−n+1)·C0; X and Y go in octets
//	    n and n+1 (n: the position of the first checksum octet).
//	B.4 checking: the same sums over the whole TPDU as received; the
//	    checksum holds iff both C0 and C1 are zero (modulo 255, where
//	    one's complement arithmetic takes 255 for zero).

// annexSums are B.3.3 / B.4.2: each octet added to C0, then C0 to C1,
// reduced modulo 255 at every step.
func annexSums(tpdu []byte) (c0, c1 int) {
	for _, a := range tpdu {
		c0 = (c0 + int(a)) % 255
		c1 = (c1 + c0) % 255
	}
	return c0, c1
}

// annexGenerate is B.3 for the checksum octets at 1-based position n.
func annexGenerate(tpdu []byte, n int) (x, y byte) {
	b := append([]byte(nil), tpdu...)
	b[n-1], b[n] = 0, 0 // B.3.1
	c0, c1 := annexSums(b)
	l := len(b)
	mod := func(v int) byte { return byte(((v % 255) + 255) % 255) }
	return mod(-c1 + (l-n)*c0), mod(c1 - (l-n+1)*c0)
}

// annexValid is B.4.3.
func annexValid(tpdu []byte) bool {
	c0, c1 := annexSums(tpdu)
	return c0 == 0 && c1 == 0
}

// A worked example of the annex's rule, by hand, for the AK
//
//	08 61 01 01 05 C3 02 X Y    (LI 8, AK with CDT 1, DST-REF 0x0101,
//	                             YR-TU-NR 5, checksum parameter)
//
// L = 9, n = 8. The running sums with X = Y = 0, octet by octet:
// C0 = 8, 105, 106, 107, 112, 52, 54, 54, 54 and
// C1 = 8, 113, 219, 71, 183, 235, 34, 88, 142 (each modulo 255), so
// X = −142 + 1·54 = −88 ≡ 167 (0xA7) and Y = 142 − 2·54 = 34 (0x22).
// Check: from C0 = 54, C1 = 34 after octet 7, octet 8 (167) gives
// C0 = 221, C1 = 255 ≡ 0, octet 9 (34) gives C0 = 255 ≡ 0, C1 = 0.
func TestTPDUChecksumWorkedExample(t *testing.T) {
	ak := []byte{0x08, 0x61, 0x01, 0x01, 0x05, 0xC3, 0x02, 0, 0}
	f := header.TPDUFields{Code: header.TPDUCodeAK, CDT: 1, DstRef: 0x0101, Number: 5, Params: []byte{header.TPDUParamChecksum, 2, 0, 0}}
	got := make([]byte, header.TPDUHeaderLen(&f))
	header.TPDU(got).Encode(&f)
	if string(got) != string(ak) {
		t.Fatalf("encoded AK % x, the example's % x", got, ak)
	}
	header.TPDU(got).SetChecksum(false)
	if got[7] != 0xA7 || got[8] != 0x22 {
		t.Errorf("checksum octets %02x %02x, the annex's rule by hand gives a7 22", got[7], got[8])
	}
	if !annexValid(got) {
		t.Errorf("% x fails annex B.4", got)
	}
}

// Against the annex's generation and checking, on TPDUs of every kind
// and length, user data included: the checksum octets this package
// writes pass B.4, and equal B.3's (255 standing for 0, as one's
// complement arithmetic allows).
func TestTPDUChecksumAgainstAnnex(t *testing.T) {
	r := rand.New(rand.NewPCG(8073, 905))
	cksum := []byte{header.TPDUParamChecksum, 2, 0, 0}
	for i := range 2000 {
		var f header.TPDUFields
		switch i % 5 {
		case 0:
			f = header.TPDUFields{Code: header.TPDUCodeDT, DstRef: uint16(r.IntN(65536)), Number: uint32(r.IntN(128)), EOT: r.IntN(2) == 0, Params: cksum}
		case 1:
			f = header.TPDUFields{Code: header.TPDUCodeDT, Extended: true, DstRef: uint16(r.IntN(65536)), Number: r.Uint32() >> 1, Params: cksum}
		case 2:
			f = header.TPDUFields{Code: header.TPDUCodeAK, DstRef: uint16(r.IntN(65536)), Number: uint32(r.IntN(128)), CDT: uint16(r.IntN(16)),
				Params: header.AppendTPDUParam(append([]byte(nil), cksum...), header.TPDUParamSubsequence, byte(r.IntN(256)), byte(r.IntN(256)))}
		case 3:
			f = header.TPDUFields{Code: header.TPDUCodeCR, SrcRef: uint16(1 + r.IntN(65535)), Class: header.TPDUClass4,
				Params: header.AppendTPDUParam(append([]byte(nil), cksum...), header.TPDUParamCalledTSAP, 'r', 'e', 'c', 'p')}
		default:
			f = header.TPDUFields{Code: header.TPDUCodeDR, DstRef: uint16(r.IntN(65536)), SrcRef: uint16(r.IntN(65536)), Reason: 128, Params: cksum}
		}
		hl := header.TPDUHeaderLen(&f)
		data := 0
		if header.TPDUHasData(f.Code) {
			data = r.IntN(2049)
		}
		b := make([]byte, hl+data)
		header.TPDU(b).Encode(&f)
		for k := hl; k < len(b); k++ {
			b[k] = byte(r.IntN(256))
			if i%7 == 0 {
				b[k] = 0xFF
			}
		}
		off, ok := header.TPDU(b).ChecksumOffset(f.Extended)
		if !ok {
			t.Fatalf("TPDU %d (% x): no checksum parameter", i, b[:hl])
		}
		header.TPDU(b).SetChecksum(f.Extended)
		if !annexValid(b) {
			t.Fatalf("TPDU %d, %d octets (% x ...): fails annex B.4", i, len(b), b[:hl])
		}
		wx, wy := annexGenerate(b, off+1)
		same := func(got, want byte) bool { return got == want || got == 255 && want == 0 }
		if !same(b[off], wx) || !same(b[off+1], wy) {
			t.Errorf("TPDU %d: checksum %02x %02x, annex B.3 gives %02x %02x", i, b[off], b[off+1], wx, wy)
		}
		// With an octet changed, the annex and IsChecksumValid agree.
		k := r.IntN(len(b))
		b[k] ^= byte(1 + r.IntN(254))
		if annexValid(b) != header.TPDU(b).IsChecksumValid() {
			t.Errorf("TPDU %d with octet %d changed: annex says %v, IsChecksumValid %v", i, k, annexValid(b), !annexValid(b))
		}
	}
}
