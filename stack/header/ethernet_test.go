package header_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/stack/header"
)

func ethernetFieldsOf(h header.Ethernet) header.EthernetFields {
	return header.EthernetFields{Dst: h.Dst(), Src: h.Src(), Type: h.Type()}
}

func TestEthernetRoundTrip(t *testing.T) {
	tests := []header.EthernetFields{
		{Dst: header.EthernetBroadcast, Src: [6]byte{0x52, 0x54, 0, 0x12, 0x34, 0x56}, Type: header.EtherTypeARP},
		{Dst: [6]byte{0, 1, 2, 3, 4, 5}, Src: [6]byte{6, 7, 8, 9, 10, 11}, Type: header.EtherTypeIPv4},
		{},
	}
	for _, want := range tests {
		b := make([]byte, header.EthernetMinFrameLen)
		header.Ethernet(b).Encode(&want)
		h := header.Ethernet(b)
		if !h.IsValid() {
			t.Fatalf("encoded header not valid")
		}
		if diff := cmp.Diff(want, ethernetFieldsOf(h)); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
		if got := len(h.Payload()); got != header.EthernetMinFrameLen-header.EthernetHeaderLen {
			t.Errorf("payload length %d", got)
		}
	}
}

func TestEthernetWire(t *testing.T) {
	b := make([]byte, header.EthernetHeaderLen)
	header.Ethernet(b).Encode(&header.EthernetFields{
		Dst:  [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		Src:  [6]byte{0x00, 0x0c, 0x29, 0x01, 0x02, 0x03},
		Type: header.EtherTypeIPv4,
	})
	want := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x0c, 0x29, 0x01, 0x02, 0x03, 0x08, 0x00}
	if diff := cmp.Diff(want, b); diff != "" {
		t.Errorf("wire bytes (-want +got):\n%s", diff)
	}
}

func TestEthernetIsValid(t *testing.T) {
	for n := range header.EthernetHeaderLen + 2 {
		if got, want := header.Ethernet(make([]byte, n)).IsValid(), n >= header.EthernetHeaderLen; got != want {
			t.Errorf("len %d: IsValid = %v, want %v", n, got, want)
		}
	}
}

func TestMACKinds(t *testing.T) {
	tests := []struct {
		a                    [6]byte
		broadcast, multicast bool
	}{
		{header.EthernetBroadcast, true, true},
		{[6]byte{0x01, 0x00, 0x5e, 0, 0, 1}, false, true},
		{[6]byte{0x52, 0x54, 0, 0, 0, 1}, false, false},
	}
	for _, tt := range tests {
		if got := header.IsBroadcastMAC(tt.a); got != tt.broadcast {
			t.Errorf("IsBroadcastMAC(% x) = %v", tt.a, got)
		}
		if got := header.IsMulticastMAC(tt.a); got != tt.multicast {
			t.Errorf("IsMulticastMAC(% x) = %v", tt.a, got)
		}
	}
}
