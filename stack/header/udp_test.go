package header_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/stack/header"
)

func udpFieldsOf(h header.UDP) header.UDPFields {
	return header.UDPFields{SrcPort: h.SrcPort(), DstPort: h.DstPort(), Length: h.Length(), Checksum: h.Checksum()}
}

func TestUDPRoundTrip(t *testing.T) {
	tests := []header.UDPFields{
		{SrcPort: 5001, DstPort: 5002, Length: 8, Checksum: 0},
		{SrcPort: 0xffff, DstPort: 53, Length: 1480, Checksum: 0xffff},
		{SrcPort: 0, DstPort: 0, Length: 65535, Checksum: 0x1234},
	}
	for _, want := range tests {
		b := make([]byte, header.UDPMinimumSize)
		header.UDP(b).Encode(&want)
		if diff := cmp.Diff(want, udpFieldsOf(header.UDP(b))); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
	}
}

var (
	udpSrc = [4]byte{10, 0, 0, 1}
	udpDst = [4]byte{10, 0, 0, 2}
)

func TestUDPChecksumKnown(t *testing.T) {
	tests := []struct {
		name           string
		sport, dport   uint16
		data           []byte
		want           uint16
		wantSumPartial uint16 // pseudo + header (field zero) + data, before complement
	}{
		{
			// Pseudo-header 0a00+0001+0a00+0002+0011+000b = 141f;
			// header c000+0035+000b+0000 = c040; data 6162+6300 = c462;
			// 141f+c040+c462 = 198c1 → 98c2; complement 673d.
			name: "odd payload with carry", sport: 0xc000, dport: 53,
			data: []byte("abc"), want: 0x673d, wantSumPartial: 0x98c2,
		},
		{
			// Pseudo 141e + header 0400+0035+000a = 043f → 185d; data e7a2
			// brings it to ffff, whose complement 0 is sent as ffff.
			name: "computed zero sent as ffff", sport: 0x0400, dport: 53,
			data: []byte{0xe7, 0xa2}, want: 0xffff, wantSumPartial: 0xffff,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := header.UDPMinimumSize + len(tt.data)
			b := make([]byte, n)
			u := header.UDP(b)
			u.Encode(&header.UDPFields{SrcPort: tt.sport, DstPort: tt.dport, Length: uint16(n), Checksum: 0xdead})
			copy(u.Payload(), tt.data)
			if got := u.CalculateChecksum(udpSrc, udpDst); got != tt.want {
				t.Errorf("CalculateChecksum = %#04x, want %#04x", got, tt.want)
			}
			// The split path: pseudo-header and data summed apart.
			pseudo := header.PseudoHeaderChecksum(header.IPv4ProtocolUDP, udpSrc, udpDst, uint16(n))
			sum := u.HeaderSum(header.ChecksumCombine(pseudo, header.Checksum(tt.data, 0)))
			if sum != tt.wantSumPartial {
				t.Errorf("HeaderSum = %#04x, want %#04x", sum, tt.wantSumPartial)
			}
			if got := header.UDPWireChecksum(sum); got != tt.want {
				t.Errorf("UDPWireChecksum = %#04x, want %#04x", got, tt.want)
			}
			if u.IsChecksumValid(udpSrc, udpDst) {
				t.Errorf("bogus checksum 0xdead reported valid")
			}
			u.SetChecksum(tt.want)
			if !u.IsChecksumValid(udpSrc, udpDst) {
				t.Errorf("checksum %#04x not valid", tt.want)
			}
			if u.IsChecksumValid(udpSrc, [4]byte{10, 0, 0, 3}) {
				t.Errorf("checksum valid for the wrong destination")
			}
		})
	}
}

func TestUDPNoChecksum(t *testing.T) {
	b := make([]byte, 12)
	u := header.UDP(b)
	u.Encode(&header.UDPFields{SrcPort: 1, DstPort: 2, Length: 12})
	if !u.IsChecksumValid(udpSrc, udpDst) {
		t.Errorf("checksum 0 (none computed) not accepted")
	}
}

func TestUDPIsValid(t *testing.T) {
	tests := []struct {
		name   string
		bufLen int
		length uint16
		pktLen int
		want   bool
	}{
		{"header only", 8, 8, 8, true},
		{"with data", 20, 20, 20, true},
		{"trailing bytes", 20, 12, 20, true},
		{"truncated header", 7, 8, 7, false},
		{"length below header", 20, 7, 20, false},
		{"length beyond packet", 20, 21, 20, false},
		{"length beyond pktLen", 20, 20, 19, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := make([]byte, max(tt.bufLen, 8))
			header.UDP(b).SetLength(tt.length)
			b = b[:tt.bufLen]
			if got := header.UDP(b).IsValid(tt.pktLen); got != tt.want {
				t.Errorf("IsValid(%d) = %v, want %v", tt.pktLen, got, tt.want)
			}
		})
	}
}

func TestUDPPayloadHonoursLength(t *testing.T) {
	b := []byte{0, 1, 0, 2, 0, 11, 0, 0, 'a', 'b', 'c', 0xee, 0xee}
	u := header.UDP(b)
	if !u.IsValid(len(b)) {
		t.Fatalf("not valid")
	}
	if diff := cmp.Diff([]byte("abc"), u.Payload()); diff != "" {
		t.Errorf("Payload (-want +got):\n%s", diff)
	}
}
