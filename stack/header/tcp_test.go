package header_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/stack/header"
)

func tcpFieldsOf(h header.TCP) header.TCPFields {
	f := header.TCPFields{
		SrcPort:  h.SrcPort(),
		DstPort:  h.DstPort(),
		SeqNum:   h.SeqNum(),
		AckNum:   h.AckNum(),
		Flags:    h.Flags(),
		Window:   h.Window(),
		Checksum: h.Checksum(),
		Urgent:   h.Urgent(),
	}
	if o := h.Options(); len(o) > 0 {
		f.Options = append([]byte(nil), o...)
	}
	return f
}

func TestTCPRoundTrip(t *testing.T) {
	mss := make([]byte, header.TCPOptionMSSLen)
	header.PutTCPMSSOption(mss, 1460)
	tests := []struct {
		name string
		in   header.TCPFields
		want header.TCPFields // zero: same as in
	}{
		{name: "SYN with MSS", in: header.TCPFields{SrcPort: 1024, DstPort: 80, SeqNum: 1, Flags: header.TCPFlagSYN, Window: 8192, Options: mss}},
		{name: "data", in: header.TCPFields{SrcPort: 80, DstPort: 1024, SeqNum: 0xfffffff0, AckNum: 0x80000000, Flags: header.TCPFlagACK | header.TCPFlagPSH, Window: 65535, Checksum: 0x1234, Urgent: 7}},
		{name: "all flags", in: header.TCPFields{Flags: 0xff}},
		{name: "most options", in: header.TCPFields{Flags: header.TCPFlagRST, Options: make([]byte, header.TCPMaximumOptionsSize)}},
		{
			name: "options padded",
			in:   header.TCPFields{Flags: header.TCPFlagFIN, Options: []byte{1, 1, 1, 1, 1}},
			want: header.TCPFields{Flags: header.TCPFlagFIN, Options: []byte{1, 1, 1, 1, 1, 0, 0, 0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if want.Flags == 0 {
				want = tt.in
			}
			b := make([]byte, header.TCPMaximumHeaderSize+10)
			h := header.TCP(b)
			h.Encode(&tt.in)
			if !h.IsValid() {
				t.Fatalf("encoded header not valid: % x", b)
			}
			if got, wantLen := h.DataOffset(), header.TCPMinimumSize+len(want.Options); got != wantLen {
				t.Errorf("DataOffset = %d, want %d", got, wantLen)
			}
			if diff := cmp.Diff(want, tcpFieldsOf(h)); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
			if got, wantLen := len(h.Payload()), len(b)-h.DataOffset(); got != wantLen {
				t.Errorf("len(Payload) = %d, want %d", got, wantLen)
			}
		})
	}
}

func TestTCPChecksumKnown(t *testing.T) {
	// SYN 10.0.0.1:1024 → 10.0.0.2:80, seq 1, window 8192, MSS 1460.
	// Pseudo: 0a00+0001+0a00+0002+0006+0018 = 1421. Header: 0400+0050+
	// 0000+0001+0000+0000+6002+2000+0000+0204+05b4 = 8c0b. 1421+8c0b =
	// a02c → complement 5fd3.
	src, dst := [4]byte{10, 0, 0, 1}, [4]byte{10, 0, 0, 2}
	mss := make([]byte, 4)
	header.PutTCPMSSOption(mss, 1460)
	b := make([]byte, 24)
	h := header.TCP(b)
	h.Encode(&header.TCPFields{SrcPort: 1024, DstPort: 80, SeqNum: 1, Flags: header.TCPFlagSYN, Window: 8192, Checksum: 0xdead, Options: mss})
	want := []byte{
		0x04, 0x00, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 0,
		0x60, 0x02, 0x20, 0x00, 0xde, 0xad, 0x00, 0x00, 0x02, 0x04, 0x05, 0xb4,
	}
	if diff := cmp.Diff(want, b); diff != "" {
		t.Fatalf("wire bytes (-want +got):\n%s", diff)
	}
	if got := h.CalculateChecksum(src, dst); got != 0x5fd3 {
		t.Errorf("CalculateChecksum = %#04x, want 0x5fd3", got)
	}
	if h.IsChecksumValid(src, dst) {
		t.Errorf("bogus checksum reported valid")
	}
	h.SetChecksum(0x5fd3)
	if !h.IsChecksumValid(src, dst) {
		t.Errorf("checksum not valid")
	}
}

func TestTCPChecksumWithData(t *testing.T) {
	src, dst := [4]byte{192, 168, 0, 1}, [4]byte{192, 168, 0, 199}
	for _, n := range []int{0, 1, 2, 3, 1460} {
		b := make([]byte, header.TCPMinimumSize+n)
		for i := range n {
			b[header.TCPMinimumSize+i] = byte(i*7 + 3)
		}
		h := header.TCP(b)
		h.Encode(&header.TCPFields{SrcPort: 5001, DstPort: 5002, SeqNum: 1000, AckNum: 2000, Flags: header.TCPFlagACK, Window: 4096})
		h.SetChecksum(h.CalculateChecksum(src, dst))
		// Reference: pseudo-header bytes then the segment, summed plainly.
		ph := []byte{192, 168, 0, 1, 192, 168, 0, 199, 0, 6, byte(len(b) >> 8), byte(len(b))}
		if got := refSum(b, refSum(ph, 0)); got != 0xffff {
			t.Errorf("data %d: reference sum with checksum %#04x = %#04x, want 0xffff", n, h.Checksum(), got)
		}
		if !h.IsChecksumValid(src, dst) {
			t.Errorf("data %d: IsChecksumValid false", n)
		}
		// The split path gives the same value.
		pseudo := header.PseudoHeaderChecksum(header.IPv4ProtocolTCP, src, dst, uint16(len(b)))
		split := ^h.HeaderSum(header.ChecksumCombine(pseudo, header.Checksum(h.Payload(), 0)))
		if split != h.Checksum() {
			t.Errorf("data %d: split checksum %#04x, whole %#04x", n, split, h.Checksum())
		}
	}
}

func TestTCPIsValid(t *testing.T) {
	tests := []struct {
		name   string
		bufLen int
		off    byte // data-offset byte
		want   bool
	}{
		{"no options", 20, 0x50, true},
		{"with data", 100, 0x50, true},
		{"options fit", 24, 0x60, true},
		{"reserved bits ignored", 20, 0x5f, true},
		{"truncated", 19, 0x50, false},
		{"offset 4", 20, 0x40, false},
		{"offset 0", 40, 0x00, false},
		{"options beyond buffer", 23, 0x60, false},
		{"offset 15 beyond buffer", 59, 0xf0, false},
		{"offset 15 fits", 60, 0xf0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := make([]byte, max(tt.bufLen, 20))
			b[12] = tt.off
			if got := header.TCP(b[:tt.bufLen]).IsValid(); got != tt.want {
				t.Errorf("IsValid = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseTCPOptions(t *testing.T) {
	tests := []struct {
		name   string
		opts   []byte
		want   header.TCPOptions
		wantOK bool
	}{
		{"empty", nil, header.TCPOptions{}, true},
		{"MSS", []byte{2, 4, 0x05, 0xb4}, header.TCPOptions{MSS: 1460, HasMSS: true}, true},
		{"NOPs then MSS", []byte{1, 1, 2, 4, 0x10, 0x00, 0, 0}, header.TCPOptions{MSS: 4096, HasMSS: true}, true},
		{"unknown kinds skipped", []byte{4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2, 2, 4, 0x05, 0xb4}, header.TCPOptions{MSS: 1460, HasMSS: true}, true},
		{"window scale, SACK-permitted, MSS", []byte{3, 3, 7, 4, 2, 2, 4, 0x05, 0xb4, 0, 0, 0}, header.TCPOptions{MSS: 1460, HasMSS: true}, true},
		{"EOL stops", []byte{0, 2, 4, 0x05, 0xb4}, header.TCPOptions{}, true},
		{"MSS bad length", []byte{2, 3, 0x05, 0, 0, 0}, header.TCPOptions{}, false},
		{"length below 2", []byte{8, 1, 0, 0}, header.TCPOptions{}, false},
		{"length zero", []byte{8, 0}, header.TCPOptions{}, false},
		{"runs past end", []byte{2, 4, 0x05}, header.TCPOptions{}, false},
		{"kind without length", []byte{1, 1, 1, 2}, header.TCPOptions{}, false},
		{"fault after MSS keeps MSS", []byte{2, 4, 0x02, 0x18, 9, 9}, header.TCPOptions{MSS: 536, HasMSS: true}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := header.ParseTCPOptions(tt.opts)
			if ok != tt.wantOK {
				t.Errorf("ok = %v, want %v", ok, tt.wantOK)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTCPFlagsString(t *testing.T) {
	tests := []struct {
		f    header.TCPFlags
		want string
	}{
		{0, "0"},
		{header.TCPFlagSYN, "SYN"},
		{header.TCPFlagSYN | header.TCPFlagACK, "SYN|ACK"},
		{header.TCPFlagFIN | header.TCPFlagPSH | header.TCPFlagACK, "FIN|PSH|ACK"},
		{0xff, "FIN|SYN|RST|PSH|ACK|URG|ECE|CWR"},
	}
	for _, tt := range tests {
		if got := tt.f.String(); got != tt.want {
			t.Errorf("%#02x.String() = %q, want %q", uint8(tt.f), got, tt.want)
		}
	}
	if !(header.TCPFlagSYN | header.TCPFlagACK).Contains(header.TCPFlagACK) || header.TCPFlagSYN.Contains(header.TCPFlagSYN|header.TCPFlagACK) {
		t.Errorf("Contains wrong")
	}
}
