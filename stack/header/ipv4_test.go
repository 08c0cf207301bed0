package header_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/stack/header"
)

// knownIPv4 is a captured UDP datagram's header, 192.168.0.1 →
// 192.168.0.199, total length 0x73, DF, TTL 64, checksum b861:
// 4500+0073+0000+4000+4011+c0a8+0001+c0a8+00c7 = 2479c → 479e → ~ = b861.
var knownIPv4 = []byte{
	0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61,
	0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
}

func ipv4FieldsOf(h header.IPv4) header.IPv4Fields {
	f := header.IPv4Fields{
		TOS:            h.TOS(),
		TotalLength:    h.TotalLength(),
		ID:             h.ID(),
		Flags:          h.Flags(),
		FragmentOffset: h.FragmentOffset(),
		TTL:            h.TTL(),
		Protocol:       h.Protocol(),
		Checksum:       h.Checksum(),
		Src:            h.Src(),
		Dst:            h.Dst(),
	}
	if o := h.Options(); len(o) > 0 {
		f.Options = append([]byte(nil), o...)
	}
	return f
}

func TestIPv4RoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   header.IPv4Fields
		want header.IPv4Fields // zero: same as in
	}{
		{name: "plain UDP", in: header.IPv4Fields{TotalLength: 28, ID: 7, Flags: header.IPv4FlagDontFragment, TTL: 64, Protocol: header.IPv4ProtocolUDP, Src: [4]byte{10, 0, 0, 1}, Dst: [4]byte{10, 0, 0, 2}}},
		{name: "middle fragment", in: header.IPv4Fields{TOS: 0x10, TotalLength: 1500, ID: 0xbeef, Flags: header.IPv4FlagMoreFragments, FragmentOffset: 1480, TTL: 1, Protocol: header.IPv4ProtocolUDP}},
		{name: "largest offset", in: header.IPv4Fields{TotalLength: 60, Flags: header.IPv4FlagReserved, FragmentOffset: header.IPv4MaximumFragmentOffset, TTL: 255, Protocol: header.IPv4ProtocolTCP, Checksum: 0x1234}},
		{name: "options", in: header.IPv4Fields{TotalLength: 44, Protocol: header.IPv4ProtocolICMP, Options: []byte{0x94, 0x04, 0x00, 0x00, 0x01, 0x01, 0x01, 0x00}}},
		{
			name: "options padded",
			in:   header.IPv4Fields{TotalLength: 24, Protocol: header.IPv4ProtocolICMP, Options: []byte{0x01, 0x01, 0x01}},
			want: header.IPv4Fields{TotalLength: 24, Protocol: header.IPv4ProtocolICMP, Options: []byte{0x01, 0x01, 0x01, 0x00}},
		},
		{name: "most options", in: header.IPv4Fields{TotalLength: 60, Options: make([]byte, header.IPv4MaximumOptionsSize)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if want.TotalLength == 0 {
				want = tt.in
			}
			b := make([]byte, want.TotalLength)
			h := header.IPv4(b)
			h.Encode(&tt.in)
			if !h.IsValid(len(b)) {
				t.Fatalf("encoded header not valid: % x", b)
			}
			if got, wantLen := h.HeaderLength(), header.IPv4MinimumSize+len(want.Options); got != wantLen {
				t.Errorf("HeaderLength = %d, want %d", got, wantLen)
			}
			if diff := cmp.Diff(want, ipv4FieldsOf(h)); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
			h.SetChecksum(h.CalculateChecksum())
			if !h.IsChecksumValid() {
				t.Errorf("checksum %#04x not valid after CalculateChecksum", h.Checksum())
			}
		})
	}
}

func TestIPv4KnownChecksum(t *testing.T) {
	h := header.IPv4(append([]byte(nil), knownIPv4...))
	if !h.IsChecksumValid() {
		t.Errorf("captured header's checksum not valid")
	}
	if got := h.CalculateChecksum(); got != 0xb861 {
		t.Errorf("CalculateChecksum with field set = %#04x, want 0xb861", got)
	}
	h.SetChecksum(0)
	if got := h.CalculateChecksum(); got != 0xb861 {
		t.Errorf("CalculateChecksum with field zero = %#04x, want 0xb861", got)
	}
	if h.IsChecksumValid() {
		t.Errorf("zeroed checksum reported valid")
	}
	h.SetChecksum(0xb861)
	h.SetTTL(63)
	if h.IsChecksumValid() {
		t.Errorf("checksum valid after TTL changed")
	}
}

func TestIPv4KnownFields(t *testing.T) {
	b := append(append([]byte(nil), knownIPv4...), make([]byte, 0x73-20)...)
	h := header.IPv4(b)
	if !h.IsValid(len(b)) {
		t.Fatalf("captured datagram not valid")
	}
	want := header.IPv4Fields{
		TotalLength: 0x73, Flags: header.IPv4FlagDontFragment, TTL: 64,
		Protocol: header.IPv4ProtocolUDP, Checksum: 0xb861,
		Src: [4]byte{192, 168, 0, 1}, Dst: [4]byte{192, 168, 0, 199},
	}
	if diff := cmp.Diff(want, ipv4FieldsOf(h)); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
	if !h.DontFragment() || h.More() || h.IsFragment() {
		t.Errorf("DF %v MF %v fragment %v, want DF only", h.DontFragment(), h.More(), h.IsFragment())
	}
}

func TestIPv4Fragment(t *testing.T) {
	tests := []struct {
		name     string
		word     [2]byte // bytes 6–7
		more, df bool
		offset   uint16
		fragment bool
	}{
		{"whole", [2]byte{0x00, 0x00}, false, false, 0, false},
		{"DF", [2]byte{0x40, 0x00}, false, true, 0, false},
		{"first of many", [2]byte{0x20, 0x00}, true, false, 0, true},
		{"second at 1480", [2]byte{0x20, 0xb9}, true, false, 1480, true},
		{"last at 2960", [2]byte{0x01, 0x72}, false, false, 2960, true},
		{"largest offset", [2]byte{0x1f, 0xff}, false, false, 65528, true},
		{"reserved bit ignored", [2]byte{0x80, 0x01}, false, false, 8, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := append([]byte(nil), knownIPv4...)
			b[6], b[7] = tt.word[0], tt.word[1]
			h := header.IPv4(b)
			if h.More() != tt.more || h.DontFragment() != tt.df || h.FragmentOffset() != tt.offset || h.IsFragment() != tt.fragment {
				t.Errorf("More %v DF %v FragmentOffset %d IsFragment %v, want %v %v %d %v",
					h.More(), h.DontFragment(), h.FragmentOffset(), h.IsFragment(), tt.more, tt.df, tt.offset, tt.fragment)
			}
		})
	}
}

func TestIPv4SetFlagsFragmentOffsetPanics(t *testing.T) {
	tests := []struct {
		name          string
		flags, offset uint16
	}{
		{"offset not multiple of 8", 0, 1481},
		{"flags outside mask", 0x1000, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("no panic")
				}
			}()
			header.IPv4(make([]byte, 20)).SetFlagsFragmentOffset(tt.flags, tt.offset)
		})
	}
}

func TestIPv4IsValid(t *testing.T) {
	// A 28-byte datagram: 20-byte header, 8 bytes of data.
	good := func() []byte {
		b := make([]byte, 28)
		header.IPv4(b).Encode(&header.IPv4Fields{TotalLength: 28, TTL: 64, Protocol: header.IPv4ProtocolUDP})
		return b
	}
	tests := []struct {
		name   string
		mangle func([]byte) []byte
		pktLen int // -1: len of the mangled slice
		want   bool
	}{
		{"good", func(b []byte) []byte { return b }, -1, true},
		{"padded frame", func(b []byte) []byte { return append(b, make([]byte, 18)...) }, -1, true},
		{"header only", func(b []byte) []byte { return b[:20] }, -1, false},
		{"truncated header", func(b []byte) []byte { return b[:19] }, -1, false},
		{"empty", func(b []byte) []byte { return nil }, -1, false},
		{"version 6", func(b []byte) []byte { b[0] = 0x65; return b }, -1, false},
		{"version 0", func(b []byte) []byte { b[0] = 0x05; return b }, -1, false},
		{"IHL 4", func(b []byte) []byte { b[0] = 0x44; return b }, -1, false},
		{"IHL 0", func(b []byte) []byte { b[0] = 0x40; return b }, -1, false},
		{"IHL beyond buffer", func(b []byte) []byte { b[0] = 0x4f; return b }, -1, false},
		{"IHL 7 fits", func(b []byte) []byte { b[0] = 0x47; return b }, -1, true},
		{"total length below header", func(b []byte) []byte { b[3] = 19; return b }, -1, false},
		{"total length below options", func(b []byte) []byte { b[0] = 0x47; b[3] = 24; return b }, -1, false},
		{"total length beyond buffer", func(b []byte) []byte { b[3] = 29; return b }, -1, false},
		{"total length beyond pktLen", func(b []byte) []byte { return b }, 27, false},
		{"header-only view of longer packet", func(b []byte) []byte { return b[:20] }, 28, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.mangle(good())
			n := tt.pktLen
			if n < 0 {
				n = len(b)
			}
			if got := header.IPv4(b).IsValid(n); got != tt.want {
				t.Errorf("IsValid(%d) on % x = %v, want %v", n, b, got, tt.want)
			}
		})
	}
}

func TestIPv4Payload(t *testing.T) {
	data := []byte("ping")
	tests := []struct {
		name    string
		options []byte
		pad     int
	}{
		{"exact", nil, 0},
		{"link padding ignored", nil, 60 - 14 - 24},
		{"options skipped", []byte{0x01, 0x01, 0x01, 0x00, 0x01, 0x01, 0x01, 0x00}, 0},
		{"options and padding", []byte{0x01, 0x01, 0x01, 0x00}, 17},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hlen := header.IPv4MinimumSize + len(tt.options)
			total := hlen + len(data)
			b := make([]byte, total+tt.pad)
			for i := total; i < len(b); i++ {
				b[i] = 0xee // padding garbage
			}
			h := header.IPv4(b)
			h.Encode(&header.IPv4Fields{TotalLength: uint16(total), TTL: 1, Protocol: header.IPv4ProtocolICMP, Options: tt.options})
			copy(b[hlen:], data)
			if !h.IsValid(len(b)) {
				t.Fatalf("not valid")
			}
			if diff := cmp.Diff(data, h.Payload()); diff != "" {
				t.Errorf("Payload (-want +got):\n%s", diff)
			}
			if got := h.PayloadLength(); got != len(data) {
				t.Errorf("PayloadLength = %d, want %d", got, len(data))
			}
			if diff := cmp.Diff(tt.options, h.Options(), cmp.Comparer(func(a, b []byte) bool { return string(a) == string(b) })); diff != "" {
				t.Errorf("Options (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIPv4PayloadShortView(t *testing.T) {
	// A header-only view of a longer datagram: Payload gives what is there.
	b := make([]byte, 40)
	header.IPv4(b).Encode(&header.IPv4Fields{TotalLength: 40})
	h := header.IPv4(b[:24])
	if !h.IsValid(40) {
		t.Fatalf("not valid")
	}
	if got := len(h.Payload()); got != 4 {
		t.Errorf("len(Payload) = %d, want 4", got)
	}
}
