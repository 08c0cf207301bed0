package header_test

import (
	"bytes"
	"testing"

	"simkron/stack/header"
)

// Fuzz targets of the ATM views (cell, AAL5 CPCS-PDU, RFC 2684 LLC): after
// IsValid no getter may index out of range, and what the getters return
// must encode back to the same bytes.

func FuzzATMCell(f *testing.F) {
	c := make([]byte, header.ATMCellSize)
	header.ATMCell(c).Encode(&header.ATMCellFields{VPI: 1, VCI: 100, PT: 1})
	f.Add(c)
	f.Add(c[:header.ATMHeaderLen])
	f.Add([]byte{0, 0, 0, 1, 0x52})
	f.Add([]byte{1, 2, 3, 4})
	f.Fuzz(func(t *testing.T, data []byte) {
		h := header.ATMCell(data)
		if !h.IsValid() {
			return
		}
		fields := atmFieldsOf(h)
		_ = h.IsLastOfPDU()
		if n := len(h.Payload()); n != min(len(data), header.ATMCellSize)-header.ATMHeaderLen {
			t.Fatalf("payload of %d bytes from %d", n, len(data))
		}
		b := header.ATMCell(make([]byte, header.ATMHeaderLen))
		b.Encode(&fields)
		if !bytes.Equal(b[:4], data[:4]) {
			t.Fatalf("re-encoded % x, parsed % x", b[:4], data[:4])
		}
		if b.HEC() == data[4] != h.IsHECValid() {
			t.Fatalf("HEC %#02x, computed %#02x, IsHECValid %v", data[4], b.HEC(), h.IsHECValid())
		}
		fixed := header.ATMCell(append([]byte(nil), data[:header.ATMHeaderLen]...))
		if fixed.CorrectHEC() && !fixed.IsHECValid() {
			t.Fatalf("correction of % x reported success, left % x", data[:5], fixed)
		}
	})
}

func FuzzAAL5(f *testing.F) {
	f.Add([]byte(aal5PDU([]byte("payload"), 0)))
	f.Add(make([]byte, 96))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		p := header.AAL5(data)
		if !p.IsValid() {
			return
		}
		_, _, _ = p.UU(), p.CRC(), p.IsCRCValid()
		if !p.IsLengthValid() {
			if len(p.Payload()) > len(p)-header.AAL5TrailerLen {
				t.Fatal("payload runs into the trailer")
			}
			return
		}
		q := header.AAL5(make([]byte, len(p)))
		copy(q, p.Payload())
		q.Encode(&header.AAL5Fields{UU: p.UU(), CPI: p.CPI(), Length: p.Length()})
		if !q.IsCRCValid() || !bytes.Equal(q.Payload(), p.Payload()) {
			t.Fatal("re-encoded PDU differs in payload or CRC")
		}
		if p.IsCRCValid() && !bytes.Equal(q[len(q)-header.AAL5TrailerLen:], p[len(p)-header.AAL5TrailerLen:]) {
			t.Fatalf("a PDU with a good CRC re-encodes to another trailer: % x vs % x", q[len(q)-8:], p[len(p)-8:])
		}
	})
}

func FuzzRFC2684(f *testing.F) {
	snap := make([]byte, 28)
	header.RFC2684(snap).EncodeSNAP(header.EtherTypeIPv4)
	f.Add(snap)
	f.Add([]byte{0xFE, 0xFE, 0x03, 0x81, 0x1c})
	f.Add([]byte{0xAA, 0xAA, 0x03})
	f.Fuzz(func(t *testing.T, data []byte) {
		h := header.RFC2684(data)
		if !h.IsValid() {
			return
		}
		if len(h.Payload()) != len(data)-h.HeaderLen() {
			t.Fatal("payload length")
		}
		b := header.RFC2684(make([]byte, h.HeaderLen()))
		if h.IsSNAP() {
			_ = h.OUI()
			if et, ok := h.EtherType(); ok {
				b.EncodeSNAP(et)
			} else {
				b.EncodeSNAP(h.PID())
				o := h.OUI()
				copy(b[3:6], o[:])
			}
		} else {
			b.EncodeISO()
		}
		if !bytes.Equal(b, data[:h.HeaderLen()]) {
			t.Fatalf("re-encoded % x, parsed % x", b, data[:h.HeaderLen()])
		}
	})
}
