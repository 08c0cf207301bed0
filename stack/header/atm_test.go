package header_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math/bits"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/internal/testtool"
	"simkron/stack/header"
)

func atmFieldsOf(c header.ATMCell) header.ATMCellFields {
	return header.ATMCellFields{GFC: c.GFC(), VPI: c.VPI(), VCI: c.VCI(), PT: c.PT(), CLP: c.CLP()}
}

func TestATMCellRoundTrip(t *testing.T) {
	tests := []header.ATMCellFields{
		{},
		{VCI: 5},
		{GFC: 0xF, VPI: 0xFF, VCI: 0xFFFF, PT: 7, CLP: true},
		{GFC: 3, VPI: 0x12, VCI: 0x3456, PT: header.ATMPTUserDataEnd},
		{VPI: 1, VCI: 32, PT: header.ATMPTEndToEndOAM, CLP: true},
	}
	for _, want := range tests {
		c := header.ATMCell(make([]byte, header.ATMCellSize))
		c.Encode(&want)
		if d := cmp.Diff(want, atmFieldsOf(c)); d != "" {
			t.Errorf("round trip (-want +got):\n%s", d)
		}
		if !c.IsHECValid() {
			t.Errorf("%+v: encoded HEC %#02x invalid", want, c.HEC())
		}
		w := uint32(want.GFC)<<28 | uint32(want.VPI)<<20 | uint32(want.VCI)<<4 | uint32(want.PT)<<1
		if want.CLP {
			w |= 1
		}
		if c.HeaderWord() != w || header.ATMHeaderWord(&want) != w {
			t.Errorf("%+v: header word %#08x, want %#08x", want, c.HeaderWord(), w)
		}
	}
}

// The HEC of the two header patterns ITU-T I.361 table 4 fixes
// (docs/reference/atm-taxi.md sec. 1): the idle cell 00 00 00 01 has HEC 0x52,
// the unassigned cell (all zeros) 0x55 — the coset alone.
func TestATMHECKnown(t *testing.T) {
	tests := []struct {
		hdr  [4]byte
		want uint8
	}{
		{[4]byte{0, 0, 0, 1}, 0x52},
		{[4]byte{0, 0, 0, 0}, 0x55},
	}
	for _, tt := range tests {
		if got := header.ATMHEC(tt.hdr[:]); got != tt.want {
			t.Errorf("HEC(% x) = %#02x, want %#02x", tt.hdr, got, tt.want)
		}
	}
}

// hecBitwise is the HEC from the definition, bit by bit: the header times
// x^8 divided by x^8 + x^2 + x + 1, remainder XOR 0x55.
func hecBitwise(h []byte) uint8 {
	var r uint16
	for _, c := range h[:4] {
		for i := 7; i >= 0; i-- {
			r = r<<1 | uint16(c>>i&1)
			if r&0x100 != 0 {
				r ^= 0x107
			}
		}
	}
	for range 8 {
		r <<= 1
		if r&0x100 != 0 {
			r ^= 0x107
		}
	}
	return uint8(r) ^ 0x55
}

func TestATMHECMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var h [4]byte
		binary.BigEndian.PutUint32(h[:], rng.Uint32())
		if got, want := header.ATMHEC(h[:]), hecBitwise(h[:]); got != want {
			t.Fatalf("HEC(% x) = %#02x, long division gives %#02x", h, got, want)
		}
	}
}

// Every single-bit error of the 40 header bits is detected, and
// correction mode puts it right; a double-bit error is detected.
func TestATMHECErrors(t *testing.T) {
	c := header.ATMCell(make([]byte, header.ATMCellSize))
	c.Encode(&header.ATMCellFields{VPI: 3, VCI: 0x1234, PT: 1})
	good := append([]byte(nil), c[:header.ATMHeaderLen]...)
	for bit := range 40 {
		bad := header.ATMCell(append([]byte(nil), good...))
		bad[bit/8] ^= 0x80 >> (bit % 8)
		if bad.IsHECValid() {
			t.Fatalf("bit %d flipped: HEC still valid", bit)
		}
		if got, ok := header.ATMHECErrorBit(bad.HECSyndrome()); !ok || got != bit {
			t.Errorf("bit %d flipped: syndrome points at %d (%v)", bit, got, ok)
		}
		if !bad.CorrectHEC() || !bytes.Equal(bad, good) {
			t.Errorf("bit %d flipped: correction gave % x, want % x", bit, bad, good)
		}
		for b2 := bit + 1; b2 < 40; b2++ {
			two := header.ATMCell(append([]byte(nil), good...))
			two[bit/8] ^= 0x80 >> (bit % 8)
			two[b2/8] ^= 0x80 >> (b2 % 8)
			if two.IsHECValid() {
				t.Fatalf("bits %d and %d flipped: HEC still valid", bit, b2)
			}
		}
	}
}

func TestATMPayloadAndFlags(t *testing.T) {
	c := header.ATMCell(make([]byte, header.ATMCellSize+3))
	c.Encode(&header.ATMCellFields{VCI: 40, PT: header.ATMPTUserDataEnd})
	if len(c.Payload()) != header.ATMPayloadLen {
		t.Errorf("payload of %d bytes, want 48", len(c.Payload()))
	}
	if !c.IsLastOfPDU() {
		t.Error("PT 1 is not the last cell of a PDU")
	}
	c.Encode(&header.ATMCellFields{VCI: 40, PT: header.ATMPTEndToEndOAM})
	if c.IsLastOfPDU() {
		t.Error("an OAM cell (PT 5) counts as the end of a PDU")
	}
	if n := len(header.ATMCell(c[:header.ATMHeaderLen]).Payload()); n != 0 {
		t.Errorf("a bare header has a payload of %d bytes", n)
	}
	if header.ATMCell(c[:4]).IsValid() {
		t.Error("four bytes are a valid cell header")
	}
}

func TestAAL5Sizes(t *testing.T) {
	// docs/reference/atm-taxi.md sec. 7: a 40-byte TCP ACK with LLC/SNAP is 2 cells, a
	// 1500-byte datagram with it 32, 9180 bytes with it 192 (pad 20).
	tests := []struct{ payload, cells, pad int }{
		{1, 1, 39}, {40, 1, 0}, {41, 2, 47}, {40 + 8, 2, 40},
		{1500 + 8, 32, 20}, {9180 + 8, 192, 20}, {65535, 1366, 25},
	}
	for _, tt := range tests {
		if c := header.AAL5Cells(tt.payload); c != tt.cells {
			t.Errorf("AAL5Cells(%d) = %d, want %d", tt.payload, c, tt.cells)
		}
		if p := header.AAL5Pad(tt.payload); p != tt.pad {
			t.Errorf("AAL5Pad(%d) = %d, want %d", tt.payload, p, tt.pad)
		}
		if n := header.AAL5PDULen(tt.payload); n != 48*tt.cells || n != tt.payload+tt.pad+8 {
			t.Errorf("AAL5PDULen(%d) = %d", tt.payload, n)
		}
	}
}

func aal5PDU(payload []byte, uu uint8) header.AAL5 {
	p := header.AAL5(make([]byte, header.AAL5PDULen(len(payload))))
	copy(p, payload)
	p.Encode(&header.AAL5Fields{UU: uu, Length: uint16(len(payload))})
	return p
}

func TestAAL5RoundTrip(t *testing.T) {
	for _, n := range []int{1, 39, 40, 41, 88, 1508, 9188} {
		payload := make([]byte, n)
		for i := range payload {
			payload[i] = byte(i*7 + n)
		}
		p := aal5PDU(payload, 0x5A)
		if !p.IsValid() || !p.IsLengthValid() || !p.IsCRCValid() {
			t.Fatalf("%d bytes: valid %v length %v crc %v", n, p.IsValid(), p.IsLengthValid(), p.IsCRCValid())
		}
		if !bytes.Equal(p.Payload(), payload) || p.UU() != 0x5A || p.CPI() != 0 || int(p.Length()) != n {
			t.Errorf("%d bytes: payload/UU/CPI/Length do not round-trip", n)
		}
		// The register run over the whole PDU leaves the residue.
		if r := header.AAL5CRCUpdate(header.AAL5CRCInit, p); r != header.AAL5CRCResidue {
			t.Errorf("%d bytes: residue %#08x, want %#08x", n, r, uint32(header.AAL5CRCResidue))
		}
		// Any single flipped bit is caught.
		for _, bit := range []int{0, 8*n - 1, 8*len(p) - 40, 8*len(p) - 1} {
			bad := header.AAL5(append([]byte(nil), p...))
			bad[bit/8] ^= 1 << (bit % 8)
			if bad.IsCRCValid() {
				t.Errorf("%d bytes: bit %d flipped, CRC still valid", n, bit)
			}
		}
	}
}

func TestAAL5BadLength(t *testing.T) {
	p := aal5PDU(make([]byte, 100), 0) // 3 cells
	set := func(n uint16, cpi uint8) header.AAL5 {
		q := header.AAL5(append([]byte(nil), p...))
		binary.BigEndian.PutUint16(q[len(q)-6:], n)
		q[len(q)-7] = cpi
		return q
	}
	tests := []struct {
		name string
		pdu  header.AAL5
		ok   bool
	}{
		{"as sent", p, true},
		{"abort (length 0)", set(0, 0), false},
		{"one cell too many", set(40, 0), false},
		{"longest for 3 cells", set(136, 0), true},
		{"shortest for 3 cells", set(89, 0), true},
		{"one cell short", set(137, 0), false},
		{"beyond the PDU", set(1000, 0), false},
		{"CPI set", set(100, 1), false},
	}
	for _, tt := range tests {
		if got := tt.pdu.IsLengthValid(); got != tt.ok {
			t.Errorf("%s: IsLengthValid = %v, want %v", tt.name, got, tt.ok)
		}
	}
	if header.AAL5(make([]byte, 47)).IsValid() || header.AAL5(make([]byte, 95)).IsValid() || header.AAL5(nil).IsValid() {
		t.Error("a PDU that is not whole cells is valid")
	}
	// Payload stays inside the PDU whatever the Length says.
	if n := len(set(1000, 0).Payload()); n != len(p)-8 {
		t.Errorf("Payload with Length 1000 of a 144-byte PDU: %d bytes", n)
	}
}

// The AAL5 CRC-32 checked against sources that are not this package:
//
//  1. The CRC-32/BZIP2 check value of the CRC catalogue (the CRC of the
//     ASCII bytes "123456789"): 0xFC891918.
//  2. Three widely published example AAL5 PDUs of 40 payload bytes (UU 0,
//     CPI 0, Length 40): all zeros → CRC 0x864D7F99, all 0xFF →
//     0xC55E457A, the bytes 1..40 → 0xBF671ED0.
//  3. The bzip2 program: every bzip2 block header carries the CRC-32/BZIP2
//     of the block's uncompressed bytes (big-endian, right after the
//     48-bit block magic 0x314159265359), computed by the C of bzlib, not
//     ours. Random messages are compressed with the installed bzip2 and
//     the stored CRC compared.
//  4. Go's hash/crc32 (the reflected IEEE CRC, the same generator):
//     reflecting every input byte and the result turns it into the
//     MSB-first CRC.
func TestAAL5CRCIndependent(t *testing.T) {
	crc := func(p []byte) uint32 { return ^header.AAL5CRCUpdate(header.AAL5CRCInit, p) }
	if got := crc([]byte("123456789")); got != 0xFC891918 {
		t.Errorf("check value %#08x, want 0xFC891918", got)
	}
	ones, seq := make([]byte, 40), make([]byte, 40)
	for i := range ones {
		ones[i], seq[i] = 0xFF, byte(i+1)
	}
	for _, tt := range []struct {
		name    string
		payload []byte
		want    uint32
	}{
		{"zeros", make([]byte, 40), 0x864D7F99},
		{"ones", ones, 0xC55E457A},
		{"1..40", seq, 0xBF671ED0},
	} {
		p := aal5PDU(tt.payload, 0)
		if p.CRC() != tt.want {
			t.Errorf("example PDU %s: CRC %#08x, want %#08x", tt.name, p.CRC(), tt.want)
		}
	}

	rng := rand.New(rand.NewPCG(7, 7))
	msgs := [][]byte{{}, {0}, []byte("a")}
	for _, n := range []int{47, 48, 1000, 9188, 70000} {
		m := make([]byte, n)
		for i := range m {
			m[i] = byte(rng.Uint32())
		}
		msgs = append(msgs, m)
	}
	for _, m := range msgs {
		rev := make([]byte, len(m))
		for i, c := range m {
			rev[i] = bits.Reverse8(c)
		}
		if got, want := crc(m), bits.Reverse32(crc32.ChecksumIEEE(rev)); got != want {
			t.Errorf("%d bytes: %#08x, reflected hash/crc32 gives %#08x", len(m), got, want)
		}
	}

	bz, ok := testtool.Have(t, "bzip2")
	if !ok {
		return
	}
	dir := t.TempDir()
	for i, m := range msgs[1:] {
		f := filepath.Join(dir, "m")
		if err := os.WriteFile(f, m, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bz, "-c", f).Output()
		if err != nil {
			t.Fatalf("bzip2: %v", err)
		}
		magic := []byte{0x31, 0x41, 0x59, 0x26, 0x53, 0x59}
		if len(out) < 14 || string(out[:3]) != "BZh" || !bytes.Equal(out[4:10], magic) {
			t.Fatalf("message %d: bzip2 output does not start with one block header: % x", i, out[:min(len(out), 14)])
		}
		if got, want := crc(m), binary.BigEndian.Uint32(out[10:14]); got != want {
			t.Errorf("message %d (%d bytes): %#08x, bzip2's block CRC %#08x", i, len(m), got, want)
		}
	}
}

func TestRFC2684(t *testing.T) {
	snap := header.RFC2684(make([]byte, 28))
	snap.EncodeSNAP(header.EtherTypeIPv4)
	if want := []byte{0xAA, 0xAA, 0x03, 0, 0, 0, 0x08, 0x00}; !bytes.Equal(snap[:8], want) {
		t.Errorf("SNAP header % x, want % x", snap[:8], want)
	}
	if !snap.IsValid() || !snap.IsSNAP() || snap.IsISO() || snap.HeaderLen() != 8 || len(snap.Payload()) != 20 {
		t.Errorf("SNAP view: valid %v snap %v len %d", snap.IsValid(), snap.IsSNAP(), snap.HeaderLen())
	}
	if et, ok := snap.EtherType(); !ok || et != header.EtherTypeIPv4 {
		t.Errorf("EtherType = %#04x %v", et, ok)
	}
	bridged := header.RFC2684(append([]byte(nil), snap...))
	copy(bridged[3:], []byte{0x00, 0x80, 0xC2, 0x00, 0x07}) // bridged 802.3 without FCS
	if _, ok := bridged.EtherType(); ok || !bridged.IsValid() || bridged.OUI() != [3]byte{0, 0x80, 0xC2} || bridged.PID() != 7 {
		t.Errorf("bridged SNAP read as routed: OUI % x PID %#x", bridged.OUI(), bridged.PID())
	}

	iso := header.RFC2684(make([]byte, 10))
	iso.EncodeISO()
	iso[3] = header.NLPIDCLNP
	if !iso.IsValid() || !iso.IsISO() || iso.HeaderLen() != 3 || iso.Payload()[0] != header.NLPIDCLNP {
		t.Errorf("ISO view: valid %v iso %v len %d", iso.IsValid(), iso.IsISO(), iso.HeaderLen())
	}
	if _, ok := iso.EtherType(); ok {
		t.Error("an ISO PDU has an EtherType")
	}
	for _, bad := range [][]byte{nil, {0xAA, 0xAA, 0x03, 0, 0, 0, 8}, {0xFE, 0xFE, 0x03}, {0xAA, 0xAB, 0x03, 0, 0, 0, 8, 0}, {0xFE, 0xFE, 0x13, 0x81}} {
		if header.RFC2684(bad).IsValid() {
			t.Errorf("% x is a valid LLC header", bad)
		}
	}
}
