package header_test

import (
	"bytes"
	"encoding/asn1"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/stack/header"
)

func TestSPDURoundTrip(t *testing.T) {
	item := header.AppendSESUnit(header.AppendSESUnit(nil, header.SESPIProtocolOptions, 0), header.SESPIVersion, header.SESVersion2)
	var p []byte
	p = header.AppendSESUnit(p, header.SESPGIConnectAccept, item...)
	p = header.AppendSESUnit(p, header.SESPIUserRequirements, 0, header.SESFUDuplex)
	p = header.AppendSESUnit(p, header.SESPICallingSSAP, 0, 1)
	p = header.AppendSESUnit(p, header.SESPGIUserData, bytes.Repeat([]byte{0xAB}, 300)...)
	b := make([]byte, header.SPDUHeaderLen(len(p))+5)
	n := header.PutSPDU(b, header.SPDUConnect, p)
	copy(b[n:], "hello")
	s := header.SPDU(b)
	if !s.IsValid() || s.SI() != header.SPDUConnect || s.LI() != len(p) || s.HeaderLen() != 4+len(p) || string(s.UserInfo()) != "hello" {
		t.Fatalf("SPDU % x: valid %v SI %d LI %d", b[:8], s.IsValid(), s.SI(), s.LI())
	}
	v, ok := s.Param(header.SESPGIConnectAccept)
	if !ok {
		t.Fatal("no connect/accept item")
	}
	if ver, ok := header.SESUnit(v, header.SESPIVersion); !ok || ver[0] != header.SESVersion2 {
		t.Errorf("version %v %v", ver, ok)
	}
	if ud, ok := s.Param(header.SESPGIUserData); !ok || len(ud) != 300 {
		t.Errorf("user data %d %v", len(ud), ok)
	}
	// The data phase: GT then DT then the data.
	tsdu := []byte{1, 0, 1, 0, 'x', 'y'}
	gt, dt, ok := header.SPDUs(tsdu)
	if !ok || gt.SI() != header.SPDUGiveTokens || len(gt) != 2 || dt.SI() != header.SPDUDataTransfer || string(dt.UserInfo()) != "xy" {
		t.Errorf("GT+DT: %v % x % x", ok, []byte(gt), []byte(dt))
	}
	for _, bad := range [][]byte{{13}, {13, 5, 1, 2}, {13, 3, 20, 5, 0}, {13, 0xFF, 0}, {13, 4, 5, 2, 22, 9}, {1, 0, 'x'}} {
		if _, _, ok := header.SPDUs(bad); ok && header.SPDU(bad).IsValid() && bad[0] != 1 {
			t.Errorf("% x accepted", bad)
		}
	}
	if header.SPDU([]byte{13, 4, 5, 2, 22, 9}).IsValid() {
		t.Error("a group with a PI running past it accepted")
	}
}

// The BER encoder writes what encoding/asn1 writes (both DER), and the
// decoder reads what it writes.
func TestBERAgainstEncodingASN1(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 127, 128, -128, -129, 255, 256, 65535, 1 << 31, -1 << 40, math.MaxInt64, math.MinInt64} {
		want, err := asn1.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got := header.AppendBER(nil, header.PresTagInteger, header.BERInteger(v))
		if !bytes.Equal(got, want) {
			t.Errorf("INTEGER %d: % x, encoding/asn1 % x", v, got, want)
		}
		if x, ok := header.ParseBERInteger(header.BER(want).Content()); !ok || x != v {
			t.Errorf("INTEGER %d read back as %d %v", v, x, ok)
		}
	}
	for _, o := range []header.OID{{1, 3, 6, 1, 4, 1, 99999, 1}, {2, 1, 1}, {2, 999, 3}, {0, 39}, {1, 0, 8571, 1, 1}, {2, 2, 3, 1, 1}} {
		ao := make(asn1.ObjectIdentifier, len(o))
		for i, a := range o {
			ao[i] = int(a)
		}
		want, err := asn1.Marshal(ao)
		if err != nil {
			t.Fatal(err)
		}
		got := header.AppendBER(nil, header.PresTagOID, header.BEROID(o))
		if !bytes.Equal(got, want) {
			t.Errorf("OID %v: % x, encoding/asn1 % x", o, got, want)
		}
		if x, ok := header.ParseBEROID(header.BER(want).Content()); !ok || !x.Equal(o) || x.String() != ao.String() {
			t.Errorf("OID %v read back as %v %v", o, x, ok)
		}
	}
	for _, n := range []int{0, 1, 127, 128, 255, 256, 1152, 65535, 70000} {
		v := bytes.Repeat([]byte{7}, n)
		want, _ := asn1.Marshal(v)
		got := header.AppendBER(nil, header.Tag(header.BERUniversal, false, header.BERTagOctetString), v)
		if !bytes.Equal(got, want) || header.BERHeaderLen(header.PresTagOctets, n) != len(want)-n {
			t.Errorf("OCTET STRING of %d: header % x, encoding/asn1 % x", n, got[:min(len(got), 6)], want[:min(len(want), 6)])
		}
	}
	// High tag numbers.
	for _, tag := range []uint32{30, 31, 127, 128, 16383, 70000} {
		b := header.AppendBER(nil, header.Tag(header.BERContext, false, tag), []byte{1})
		e := header.BER(b)
		if !e.IsValid() || e.Tag().Number != tag || e.Tag().Class != header.BERContext || e.Len() != len(b) || header.BERHeaderLen(e.Tag(), 1) != e.HeaderLen() {
			t.Errorf("tag %d: % x read as %+v", tag, b, e.Tag())
		}
		var raw asn1.RawValue
		if _, err := asn1.Unmarshal(b, &raw); err != nil || raw.Tag != int(tag) || raw.Class != asn1.ClassContextSpecific {
			t.Errorf("tag %d: encoding/asn1 reads % x as %+v, %v", tag, b, raw, err)
		}
	}
}

// The PPDUs as encoding/asn1 marshals the same ASN.1 types.
type asnModeSel struct {
	Value int `asn1:"tag:0"`
}

type asnContext struct {
	ID       int
	Abstract asn1.ObjectIdentifier
	Transfer []asn1.ObjectIdentifier
}

type asnPDV struct {
	Context int
	Value   []byte `asn1:"tag:1"`
}

type asnCPNormal struct {
	Calling  []byte       `asn1:"tag:1,optional"`
	Called   []byte       `asn1:"tag:2,optional"`
	Contexts []asnContext `asn1:"tag:4,optional"`
	UserData []asnPDV     `asn1:"application,tag:1,optional"`
}

// CP-type and CPA-PPDU are SETs: marshalled with the "set" parameter.
type asnCP struct {
	Mode   asnModeSel  `asn1:"tag:0"`
	Normal asnCPNormal `asn1:"tag:2"`
}

type asnResult struct {
	Result   int                   `asn1:"tag:0"`
	Transfer asn1.ObjectIdentifier `asn1:"tag:1,optional"`
}

type asnCPANormal struct {
	Responding []byte      `asn1:"tag:3,optional"`
	Results    []asnResult `asn1:"tag:5,optional"`
	UserData   []asnPDV    `asn1:"application,tag:1,optional"`
}

type asnCPA struct {
	Mode   asnModeSel   `asn1:"tag:0"`
	Normal asnCPANormal `asn1:"tag:2"`
}

type asnCPR struct {
	Responding []byte      `asn1:"tag:3,optional"`
	Results    []asnResult `asn1:"tag:5,optional"`
	Reason     int         `asn1:"tag:10"`
}

var (
	ourAbstract = header.OID{1, 3, 6, 1, 4, 1, 99999, 1}
	asnAbstract = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 99999, 1}
	asnBER      = asn1.ObjectIdentifier{2, 1, 1}
)

func TestPPDUsAgainstEncodingASN1(t *testing.T) {
	ud := header.EncodeUserData([]header.PDV{{Context: 1, Kind: header.PDVOctets, Value: []byte("AARQ")}})
	cp := header.PresCP{Calling: []byte{0, 0, 0, 1}, Called: []byte{0, 0, 0, 2},
		Contexts: []header.PresContext{{ID: 1, Abstract: ourAbstract, Transfer: []header.OID{header.BERTransferSyntax}}, {ID: 3, Abstract: header.OID{2, 2, 1, 0, 1}, Transfer: []header.OID{header.BERTransferSyntax}}},
		UserData: ud}
	got := header.EncodeCP(&cp)
	want, err := asn1.MarshalWithParams(asnCP{Mode: asnModeSel{1}, Normal: asnCPNormal{Calling: cp.Calling, Called: cp.Called,
		Contexts: []asnContext{{1, asnAbstract, []asn1.ObjectIdentifier{asnBER}}, {3, asn1.ObjectIdentifier{2, 2, 1, 0, 1}, []asn1.ObjectIdentifier{asnBER}}},
		UserData: []asnPDV{{1, []byte("AARQ")}}}}, "set")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("CP\n ours % x\n asn1 % x", got, want)
	}
	back, ok := header.ParseCP(want)
	if !ok {
		t.Fatal("encoding/asn1's CP does not parse")
	}
	if d := cmp.Diff(cp, back); d != "" {
		t.Errorf("CP read back (-want +got):\n%s", d)
	}
	var u asnCP
	if rest, err := asn1.UnmarshalWithParams(got, &u, "set"); err != nil || len(rest) != 0 || u.Normal.Contexts[1].ID != 3 || string(u.Normal.UserData[0].Value) != "AARQ" {
		t.Errorf("encoding/asn1 reads our CP: %+v %v", u, err)
	}

	cpa := header.PresCPA{Responding: []byte{0, 0, 0, 2}, Results: []header.PresResult{{Result: 0, Transfer: header.BERTransferSyntax, Reason: -1}, {Result: 2, Reason: -1}}, Reason: -1, UserData: ud}
	got = header.EncodeCPA(&cpa)
	want, _ = asn1.MarshalWithParams(asnCPA{Mode: asnModeSel{1}, Normal: asnCPANormal{Responding: cpa.Responding,
		Results: []asnResult{{0, asnBER}, {2, nil}}, UserData: []asnPDV{{1, []byte("AARQ")}}}}, "set")
	if !bytes.Equal(got, want) {
		t.Errorf("CPA\n ours % x\n asn1 % x", got, want)
	}
	if back, ok := header.ParseCPA(want); !ok || cmp.Diff(cpa, back) != "" {
		t.Errorf("CPA read back %v: %s", ok, cmp.Diff(cpa, back))
	}

	cpr := header.PresCPA{Responding: []byte{9}, Results: []header.PresResult{{Result: 2, Reason: -1}}, Reason: header.PresCPRAddressUnknown}
	got = header.EncodeCPR(&cpr)
	want, _ = asn1.Marshal(asnCPR{Responding: []byte{9}, Results: []asnResult{{2, nil}}, Reason: header.PresCPRAddressUnknown})
	if !bytes.Equal(got, want) {
		t.Errorf("CPR\n ours % x\n asn1 % x", got, want)
	}
	if back, ok := header.ParseCPR(want); !ok || cmp.Diff(cpr, back) != "" {
		t.Errorf("CPR read back %v: %s", ok, cmp.Diff(cpr, back))
	}

	// TD: the header in front of a value, for every length form.
	for _, n := range []int{0, 1, 100, 127, 128, 200, 255, 256, 1152, 4000} {
		v := bytes.Repeat([]byte{0x5A}, n)
		td := append(header.PresDataHeader(nil, 1, n), v...)
		want, _ := asn1.MarshalWithParams([]asnPDV{{1, v}}, "application,tag:1")
		if !bytes.Equal(td, want) {
			t.Errorf("TD of %d: header % x, encoding/asn1 % x", n, td[:min(16, len(td))], want[:min(16, len(want))])
		}
		if ctx, hl, vn, ok := header.ParsePresDataHeader(td[:min(len(td), 24)], len(td)); !ok || ctx != 1 || hl != len(td)-n || vn != n {
			t.Errorf("TD of %d: header read as %d %d %d %v", n, ctx, hl, vn, ok)
		}
		if h := header.PresDataHeaderLen(1, n); h != len(td)-n {
			t.Errorf("TD of %d: header length %d, encoded %d", n, h, len(td)-n)
		}
		pdvs, ok := header.ParseUserData(want)
		if !ok || len(pdvs) != 1 || pdvs[0].Context != 1 || pdvs[0].Kind != header.PDVOctets || !bytes.Equal(pdvs[0].Value, v) {
			t.Errorf("TD of %d read back: %v %v", n, ok, len(pdvs))
		}
	}
}

func FuzzSPDU(f *testing.F) {
	f.Add([]byte{1, 0, 1, 0, 'x'})
	f.Add([]byte{13, 10, 5, 6, 19, 1, 0, 22, 1, 2, 20, 2, 0, 2})
	f.Add([]byte{9, 3, 17, 1, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		first, second, ok := header.SPDUs(b)
		if !ok {
			return
		}
		for _, s := range []header.SPDU{first, second} {
			if s == nil {
				continue
			}
			_, _ = s.Param(header.SESPGIUserData)
			_ = s.UserInfo()
			// Re-encoding the header gives the same octets when the LI is
			// in its shortest form.
			p := s.Params()
			out := make([]byte, header.SPDUHeaderLen(len(p)))
			header.PutSPDU(out, s.SI(), p)
			if (s.LI() > header.SESMaxShortLI) == (s[1] == 0xFF) && !bytes.Equal(out, s[:s.HeaderLen()]) {
				t.Fatalf("re-encoded % x, parsed % x", out, []byte(s[:s.HeaderLen()]))
			}
		}
	})
}

func FuzzPPDU(f *testing.F) {
	ud := header.EncodeUserData([]header.PDV{{Context: 1, Kind: header.PDVOctets, Value: []byte("data")}})
	f.Add(header.EncodeCP(&header.PresCP{Calling: []byte{1}, Contexts: []header.PresContext{{ID: 1, Abstract: ourAbstract, Transfer: []header.OID{header.BERTransferSyntax}}}, UserData: ud}))
	f.Add(header.EncodeCPA(&header.PresCPA{Results: []header.PresResult{{Result: 0, Reason: -1}}, Reason: -1}))
	f.Add(header.EncodeCPR(&header.PresCPA{Reason: 3}))
	f.Add(ud)
	f.Fuzz(func(t *testing.T, b []byte) {
		if cp, ok := header.ParseCP(b); ok {
			again, ok := header.ParseCP(header.EncodeCP(&cp))
			if !ok || cmp.Diff(cp, again) != "" {
				t.Fatalf("CP does not survive a round trip: %v %s", ok, cmp.Diff(cp, again))
			}
		}
		if cpa, ok := header.ParseCPA(b); ok {
			again, ok := header.ParseCPA(header.EncodeCPA(&cpa))
			if !ok || cmp.Diff(cpa, again) != "" {
				t.Fatalf("CPA does not survive a round trip: %v %s", ok, cmp.Diff(cpa, again))
			}
		}
		if _, ok := header.ParseCPR(b); ok {
			_ = ok
		}
		if pdvs, ok := header.ParseUserData(b); ok {
			for _, d := range pdvs {
				if d.Kind == header.PDVOctets && d.Context >= 0 {
					td := append(header.PresDataHeader(nil, d.Context, len(d.Value)), d.Value...)
					back, ok := header.ParseUserData(td)
					if !ok || len(back) != 1 || !bytes.Equal(back[0].Value, d.Value) {
						t.Fatalf("a PDV does not survive re-encoding")
					}
				}
			}
		}
		if ctx, hl, n, ok := header.ParsePresDataHeader(b[:min(len(b), 24)], len(b)); ok {
			pdvs, ok := header.ParseUserData(b)
			if !ok || len(pdvs) != 1 || pdvs[0].Context != ctx || len(pdvs[0].Value) != n || hl+n != len(b) {
				t.Fatalf("TD header %d+%d (context %d) but user data %v %+v", hl, n, ctx, ok, pdvs)
			}
		}
		if e := header.BER(b); e.IsValid() {
			if e.HeaderLen()+e.ContentLen() != e.Len() || e.Len() > len(b) {
				t.Fatalf("BER lengths %d + %d vs %d of %d", e.HeaderLen(), e.ContentLen(), e.Len(), len(b))
			}
			_, _ = header.BERElements(e.Content())
		}
	})
}

func TestParseOID(t *testing.T) {
	for _, tc := range []struct {
		s  string
		ok bool
	}{{"1.3.6.1.4.1.99999.1", true}, {"2.999.3", true}, {"0.39", true}, {"1", false}, {"3.1", false}, {"1.40", false}, {"1.x", false}, {"1..2", false}} {
		o, err := header.ParseOID(tc.s)
		if (err == nil) != tc.ok || tc.ok && o.String() != tc.s {
			t.Errorf("ParseOID(%q) = %v, %v", tc.s, o, err)
		}
	}
	var o header.OID
	if err := o.UnmarshalText([]byte("2.1.1")); err != nil || !o.Equal(header.BERTransferSyntax) {
		t.Errorf("UnmarshalText: %v %v", o, err)
	}
}
