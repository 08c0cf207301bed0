package header_test

import (
	"bytes"
	"testing"

	"simkron/stack/header"
)

// FuzzVIA: after IsValid no getter or Payload leaves the slice, a data
// fragment lies inside its message, and re-encoding the fields gives the
// header's bytes back (the reserved field is written as 0); the same for
// a connection payload inside the frame.
func FuzzVIA(f *testing.F) {
	seed := make([]byte, header.VIAHeaderLen+12)
	header.VIA(seed).Encode(&header.VIAFields{Type: header.VIATypeConnRequest, PayloadLen: 12})
	header.VIAConnect(seed[header.VIAHeaderLen:]).Encode(&header.VIAConnectFields{Reliability: 1, MaxTransfer: 1 << 15, Discriminator: []byte("ping")})
	f.Add(seed)
	data := make([]byte, header.VIAHeaderLen+40)
	header.VIA(data).Encode(&header.VIAFields{Type: header.VIATypeData, Flags: header.VIAFlagImmediate, MsgLen: 100, Offset: 60, PayloadLen: 40})
	f.Add(data)
	f.Add([]byte{1, 3, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		h := header.VIA(b)
		if !h.IsValid() {
			return
		}
		fields := viaFieldsOf(h)
		p := h.Payload()
		if len(p) != int(fields.PayloadLen) {
			t.Fatalf("payload %d bytes, field %d", len(p), fields.PayloadLen)
		}
		if fields.Type == header.VIATypeData && uint64(fields.Offset)+uint64(fields.PayloadLen) > uint64(fields.MsgLen) {
			t.Fatalf("fragment [%d, +%d) outside a message of %d", fields.Offset, fields.PayloadLen, fields.MsgLen)
		}
		_ = h.Last()
		e := make([]byte, header.VIAHeaderLen)
		header.VIA(e).Encode(&fields)
		want := append([]byte(nil), b[:header.VIAHeaderLen]...)
		want[26], want[27] = 0, 0
		if !bytes.Equal(e, want) {
			t.Fatalf("re-encoded % x, parsed % x", e, want)
		}
		c := header.VIAConnect(p)
		if !c.IsValid() {
			return
		}
		cf := header.VIAConnectFields{Reliability: c.Reliability(), MaxTransfer: c.MaxTransfer(), Discriminator: c.Discriminator()}
		ce := make([]byte, c.Len())
		header.VIAConnect(ce).Encode(&cf)
		if !bytes.Equal(ce, p[:c.Len()]) {
			t.Fatalf("connect payload re-encoded % x, parsed % x", ce, p[:c.Len()])
		}
	})
}
