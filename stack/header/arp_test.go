package header_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/stack/header"
)

func arpFieldsOf(h header.ARP) header.ARPFields {
	return header.ARPFields{
		Op:        h.Op(),
		SenderMAC: h.SenderMAC(),
		SenderIP:  h.SenderIP(),
		TargetMAC: h.TargetMAC(),
		TargetIP:  h.TargetIP(),
	}
}

func TestARPRoundTrip(t *testing.T) {
	tests := []header.ARPFields{
		{Op: header.ARPRequest, SenderMAC: [6]byte{0x52, 0x54, 0, 0, 0, 1}, SenderIP: [4]byte{10, 0, 0, 1}, TargetIP: [4]byte{10, 0, 0, 2}},
		{Op: header.ARPReply, SenderMAC: [6]byte{0x52, 0x54, 0, 0, 0, 2}, SenderIP: [4]byte{10, 0, 0, 2}, TargetMAC: [6]byte{0x52, 0x54, 0, 0, 0, 1}, TargetIP: [4]byte{10, 0, 0, 1}},
	}
	for _, want := range tests {
		b := make([]byte, header.ARPLen)
		header.ARP(b).Encode(&want)
		h := header.ARP(b)
		if !h.IsValid() {
			t.Fatalf("encoded packet not valid: % x", b)
		}
		if diff := cmp.Diff(want, arpFieldsOf(h)); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
	}
}

func TestARPWire(t *testing.T) {
	b := make([]byte, header.ARPLen)
	header.ARP(b).Encode(&header.ARPFields{
		Op:        header.ARPRequest,
		SenderMAC: [6]byte{0x00, 0x0c, 0x29, 0xaa, 0xbb, 0xcc},
		SenderIP:  [4]byte{192, 168, 0, 1},
		TargetIP:  [4]byte{192, 168, 0, 199},
	})
	want := []byte{
		0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01,
		0x00, 0x0c, 0x29, 0xaa, 0xbb, 0xcc, 0xc0, 0xa8, 0x00, 0x01,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xc0, 0xa8, 0x00, 0xc7,
	}
	if diff := cmp.Diff(want, b); diff != "" {
		t.Errorf("wire bytes (-want +got):\n%s", diff)
	}
}

func TestARPIsValid(t *testing.T) {
	good := func() []byte {
		b := make([]byte, header.EthernetMinFrameLen-header.EthernetHeaderLen) // padded
		header.ARP(b).Encode(&header.ARPFields{Op: header.ARPRequest})
		return b
	}
	tests := []struct {
		name   string
		mangle func([]byte) []byte
		want   bool
	}{
		{"padded frame", func(b []byte) []byte { return b }, true},
		{"exact", func(b []byte) []byte { return b[:header.ARPLen] }, true},
		{"truncated", func(b []byte) []byte { return b[:header.ARPLen-1] }, false},
		{"empty", func(b []byte) []byte { return b[:0] }, false},
		{"hardware type", func(b []byte) []byte { b[1] = 6; return b }, false},
		{"protocol type", func(b []byte) []byte { b[2] = 0x86; b[3] = 0xdd; return b }, false},
		{"hardware length", func(b []byte) []byte { b[4] = 8; return b }, false},
		{"protocol length", func(b []byte) []byte { b[5] = 16; return b }, false},
		{"unknown opcode passes", func(b []byte) []byte { b[7] = 9; return b }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := header.ARP(tt.mangle(good())).IsValid(); got != tt.want {
				t.Errorf("IsValid = %v, want %v", got, tt.want)
			}
		})
	}
}
