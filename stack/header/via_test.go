package header_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/stack/header"
)

func viaFieldsOf(h header.VIA) header.VIAFields {
	return header.VIAFields{Type: h.Type(), Flags: h.Flags(), DstVI: h.DstVI(), SrcVI: h.SrcVI(), Seq: h.Seq(),
		MsgLen: h.MsgLen(), Offset: h.Offset(), Immediate: h.Immediate(), PayloadLen: h.PayloadLen()}
}

func TestVIARoundTrip(t *testing.T) {
	tests := []header.VIAFields{
		{Type: header.VIATypeData, DstVI: 1, SrcVI: 2, Seq: 0, MsgLen: 4, Offset: 0, PayloadLen: 4},
		{Type: header.VIATypeData, Flags: header.VIAFlagImmediate, DstVI: 0xffff, SrcVI: 0, Seq: 0xfffffffe,
			MsgLen: 32768, Offset: 32768 - 392, Immediate: 0xdeadbeef, PayloadLen: 392},
		{Type: header.VIATypeConnRequest, SrcVI: 7, PayloadLen: 12},
		{Type: header.VIATypeError, DstVI: 3, SrcVI: 9, Immediate: 2},
	}
	for _, want := range tests {
		b := make([]byte, header.VIAHeaderLen+int(want.PayloadLen))
		h := header.VIA(b)
		h.Encode(&want)
		if !h.IsValid() {
			t.Fatalf("encoded %+v is not valid", want)
		}
		if d := cmp.Diff(want, viaFieldsOf(h)); d != "" {
			t.Errorf("round trip (-want +got):\n%s", d)
		}
		if len(h.Payload()) != int(want.PayloadLen) {
			t.Errorf("payload %d bytes, want %d", len(h.Payload()), want.PayloadLen)
		}
	}
}

// TestVIAKnownBytes pins the layout: big-endian fields at their offsets.
func TestVIAKnownBytes(t *testing.T) {
	b := make([]byte, header.VIAHeaderLen+3)
	header.VIA(b).Encode(&header.VIAFields{Type: header.VIATypeData, Flags: header.VIAFlagImmediate, DstVI: 0x0102,
		SrcVI: 0x0304, Seq: 0x05060708, MsgLen: 0x100, Offset: 0xfd, Immediate: 0x11223344, PayloadLen: 3})
	want := []byte{1, 1, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 1, 0, 0, 0, 0, 0xfd, 0x11, 0x22, 0x33, 0x44, 0, 3, 0, 0, 0, 0, 0}
	if d := cmp.Diff(want, b); d != "" {
		t.Errorf("bytes (-want +got):\n%s", d)
	}
	if !header.VIA(b).Last() {
		t.Error("the fragment ending at the message's length is not Last")
	}
}

func TestVIAIsValid(t *testing.T) {
	good := func() []byte {
		b := make([]byte, header.VIAHeaderLen+10)
		header.VIA(b).Encode(&header.VIAFields{Type: header.VIATypeData, MsgLen: 20, Offset: 10, PayloadLen: 10})
		return b
	}
	tests := []struct {
		name string
		b    []byte
		want bool
	}{
		{"good", good(), true},
		{"padded", append(good(), 0, 0, 0), true},
		{"short", good()[:header.VIAHeaderLen-1], false},
		{"version", func() []byte { b := good(); b[0] = 2; return b }(), false},
		{"type 0", func() []byte { b := good(); b[1] = 0; return b }(), false},
		{"unknown type", func() []byte { b := good(); b[1] = 7; return b }(), false},
		{"unknown flag", func() []byte { b := good(); b[3] = 2; return b }(), false},
		{"payload past the end", good()[:header.VIAHeaderLen+9], false},
		{"fragment past the message", func() []byte { b := good(); b[15] = 19; return b }(), false},
		{"offset overflow", func() []byte { b := good(); b[16], b[17], b[18], b[19] = 0xff, 0xff, 0xff, 0xff; return b }(), false},
	}
	for _, tt := range tests {
		if got := header.VIA(tt.b).IsValid(); got != tt.want {
			t.Errorf("%s: IsValid = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestVIAConnect(t *testing.T) {
	f := header.VIAConnectFields{Reliability: 2, MaxTransfer: 32768, Discriminator: []byte("vpingpong")}
	b := make([]byte, header.VIAConnectLen+len(f.Discriminator))
	c := header.VIAConnect(b)
	c.Encode(&f)
	if !c.IsValid() || c.Len() != len(b) {
		t.Fatal("encoded connect payload invalid")
	}
	got := header.VIAConnectFields{Reliability: c.Reliability(), MaxTransfer: c.MaxTransfer(), Discriminator: c.Discriminator()}
	if d := cmp.Diff(f, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	if header.VIAConnect(b[:len(b)-1]).IsValid() || header.VIAConnect(b[:7]).IsValid() {
		t.Error("truncated connect payload valid")
	}
	long := make([]byte, header.VIAConnectLen+100)
	header.VIAConnect(long).Encode(&header.VIAConnectFields{Discriminator: make([]byte, 100)})
	if header.VIAConnect(long).IsValid() {
		t.Error("a 100-byte discriminator is valid")
	}
}
