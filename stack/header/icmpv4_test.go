package header_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/stack/header"
)

func icmpFieldsOf(h header.ICMPv4) header.ICMPv4Fields {
	return header.ICMPv4Fields{Type: h.Type(), Code: h.Code(), Checksum: h.Checksum(), Ident: h.Ident(), Sequence: h.Sequence()}
}

func TestICMPv4RoundTrip(t *testing.T) {
	tests := []header.ICMPv4Fields{
		{Type: header.ICMPv4Echo, Ident: 0x1234, Sequence: 1},
		{Type: header.ICMPv4EchoReply, Ident: 0xffff, Sequence: 0xfffe, Checksum: 0xabcd},
		{Type: header.ICMPv4DstUnreachable, Code: header.ICMPv4PortUnreachable},
		{Type: header.ICMPv4DstUnreachable, Code: header.ICMPv4FragmentationNeeded, Sequence: 1500},
		{Type: header.ICMPv4TimeExceeded, Code: header.ICMPv4ReassemblyExceeded},
	}
	for _, want := range tests {
		b := make([]byte, header.ICMPv4MinimumSize)
		header.ICMPv4(b).Encode(&want)
		h := header.ICMPv4(b)
		if !h.IsValid() {
			t.Fatalf("not valid")
		}
		if diff := cmp.Diff(want, icmpFieldsOf(h)); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
	}
}

func TestICMPv4EchoChecksum(t *testing.T) {
	// Echo request, ident 1, sequence 1, data "abcd":
	// 0800+0000+0001+0001+6162+6364 = ccc8 → complement 3337.
	b := []byte{0x08, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 'a', 'b', 'c', 'd'}
	h := header.ICMPv4(b)
	if got := h.CalculateChecksum(); got != 0x3337 {
		t.Fatalf("CalculateChecksum = %#04x, want 0x3337", got)
	}
	h.SetChecksum(h.CalculateChecksum())
	if !h.IsChecksumValid() {
		t.Errorf("checksum not valid")
	}
	// Turning the request into a reply changes the type byte only.
	h.SetType(header.ICMPv4EchoReply)
	if h.IsChecksumValid() {
		t.Errorf("stale checksum reported valid")
	}
	if diff := cmp.Diff([]byte("abcd"), h.Payload()); diff != "" {
		t.Errorf("Payload (-want +got):\n%s", diff)
	}
}

func TestICMPv4MTU(t *testing.T) {
	b := make([]byte, header.ICMPv4MinimumSize)
	h := header.ICMPv4(b)
	h.Encode(&header.ICMPv4Fields{Type: header.ICMPv4DstUnreachable, Code: header.ICMPv4FragmentationNeeded})
	h.SetMTU(1006)
	if got := h.MTU(); got != 1006 {
		t.Errorf("MTU = %d, want 1006", got)
	}
	if got := h.Ident(); got != 0 {
		t.Errorf("unused half = %d, want 0", got)
	}
}

func TestICMPv4IsValid(t *testing.T) {
	for n := range header.ICMPv4MinimumSize + 2 {
		if got, want := header.ICMPv4(make([]byte, n)).IsValid(), n >= header.ICMPv4MinimumSize; got != want {
			t.Errorf("len %d: IsValid = %v, want %v", n, got, want)
		}
	}
}
