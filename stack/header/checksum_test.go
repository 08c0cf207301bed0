package header_test

import (
	"math/rand/v2"
	"testing"

	"simkron/stack/header"
)

// refSum is RFC 1071's sum the plain way: 16-bit words, odd byte padded,
// carries folded at the end.
func refSum(b []byte, initial uint16) uint16 {
	sum := uint32(initial)
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum>>16 != 0 {
		sum = sum&0xFFFF + sum>>16
	}
	return uint16(sum)
}

func TestChecksum(t *testing.T) {
	tests := []struct {
		name    string
		buf     []byte
		initial uint16
		want    uint16
	}{
		// RFC 1071 section 3: 0001 + f203 + f4f5 + f6f7 = 2ddf0 → ddf2.
		{"rfc1071", []byte{0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7}, 0, 0xddf2},
		{"empty", nil, 0, 0},
		{"empty with initial", nil, 0x1234, 0x1234},
		// Odd byte padded on the right: 0001 + f200 = f201.
		{"odd", []byte{0x00, 0x01, 0xf2}, 0, 0xf201},
		// ffff + 0001 = 1 0000 → 0001 (end-around carry).
		{"carry", []byte{0xff, 0xff, 0x00, 0x01}, 0, 0x0001},
		{"initial carries", []byte{0x80, 0x00}, 0x8000, 0x0001},
		{"all ones stays negative zero", []byte{0xff, 0xff, 0xff, 0xff}, 0, 0xffff},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := header.Checksum(tt.buf, tt.initial); got != tt.want {
				t.Errorf("Checksum(% x, %#04x) = %#04x, want %#04x", tt.buf, tt.initial, got, tt.want)
			}
		})
	}
}

func TestChecksumMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 300 {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		init := uint16(rng.Uint32())
		if got, want := header.Checksum(b, init), refSum(b, init); got != want {
			t.Fatalf("len %d: Checksum = %#04x, reference %#04x", n, got, want)
		}
	}
}

func TestChecksumCombine(t *testing.T) {
	// RFC 1071 example split into two even pieces: the sums combine.
	b := []byte{0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7}
	for cut := 0; cut <= len(b); cut += 2 {
		got := header.ChecksumCombine(header.Checksum(b[:cut], 0), header.Checksum(b[cut:], 0))
		if got != 0xddf2 {
			t.Errorf("cut %d: combined %#04x, want 0xddf2", cut, got)
		}
	}
	if got := header.ChecksumCombine(0xffff, 0x0001); got != 0x0001 {
		t.Errorf("ChecksumCombine(ffff, 0001) = %#04x, want 0x0001", got)
	}
}

func TestPseudoHeaderChecksum(t *testing.T) {
	src := [4]byte{10, 0, 0, 1}
	dst := [4]byte{10, 0, 0, 2}
	// 0a00 + 0001 + 0a00 + 0002 + 0011 + 000c = 1420.
	if got := header.PseudoHeaderChecksum(header.IPv4ProtocolUDP, src, dst, 12); got != 0x1420 {
		t.Errorf("PseudoHeaderChecksum = %#04x, want 0x1420", got)
	}
	// Same as summing the 12 pseudo-header bytes.
	ph := []byte{10, 0, 0, 1, 10, 0, 0, 2, 0, 17, 0, 12}
	if got, want := header.PseudoHeaderChecksum(17, src, dst, 12), header.Checksum(ph, 0); got != want {
		t.Errorf("PseudoHeaderChecksum = %#04x, bytes sum to %#04x", got, want)
	}
}

func TestChecksumUpdate(t *testing.T) {
	// Decrementing TTL in the RFC 791-style example header of
	// TestIPv4KnownChecksum: the incremental result must equal a full
	// recomputation (RFC 1624 section 3).
	h := header.IPv4(append([]byte(nil), knownIPv4...))
	for range 70 {
		oldWord := uint16(h.TTL())<<8 | uint16(h.Protocol())
		h.SetTTL(h.TTL() - 1)
		newWord := uint16(h.TTL())<<8 | uint16(h.Protocol())
		h.SetChecksum(header.ChecksumUpdate(h.Checksum(), oldWord, newWord))
		if got, want := h.Checksum(), h.CalculateChecksum(); got != want {
			t.Fatalf("TTL %d: incremental %#04x, full %#04x", h.TTL(), got, want)
		}
	}
}

func TestUDPWireChecksum(t *testing.T) {
	tests := []struct {
		sum, want uint16
	}{
		{0xddf2, 0x220d},
		{0x0000, 0xffff},
		{0xffff, 0xffff}, // complement 0 is sent as ffff (RFC 768)
	}
	for _, tt := range tests {
		if got := header.UDPWireChecksum(tt.sum); got != tt.want {
			t.Errorf("UDPWireChecksum(%#04x) = %#04x, want %#04x", tt.sum, got, tt.want)
		}
	}
}
