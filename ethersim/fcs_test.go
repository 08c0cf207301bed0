package ethersim_test

import (
	"encoding/binary"
	"hash/crc32"
	"math/bits"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/ethersim"
)

func TestFCSKnownVectors(t *testing.T) {
	// A minimum-size broadcast frame: the FCS of 60 bytes, all of them
	// 0xff for the destination and zero after it, as captured from a
	// padded ARP-sized frame with an empty body.
	zero60 := make([]byte, 60)
	copy(zero60, ethersim.Broadcast[:])
	tests := []struct {
		name string
		in   []byte
		want uint32
		wire []byte // FCS bytes in transmission order
	}{
		// The CRC-32 check value (IEEE 802.3 / ITU-T V.42 CRC catalogue).
		{"check string", []byte("123456789"), 0xcbf43926, []byte{0x26, 0x39, 0xf4, 0xcb}},
		{"empty", nil, 0, []byte{0, 0, 0, 0}},
		{"one zero byte", []byte{0}, 0xd202ef8d, []byte{0x8d, 0xef, 0x02, 0xd2}},
		{"broadcast padding", zero60, crc32.ChecksumIEEE(zero60), binary.LittleEndian.AppendUint32(nil, crc32.ChecksumIEEE(zero60))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ethersim.FCS(tc.in); got != tc.want {
				t.Errorf("FCS = %#08x, want %#08x", got, tc.want)
			}
			with := ethersim.AppendFCS(append([]byte(nil), tc.in...))
			if diff := cmp.Diff(tc.wire, with[len(tc.in):]); diff != "" {
				t.Errorf("AppendFCS wire bytes (-want +got):\n%s", diff)
			}
			if !ethersim.CheckFCS(with) {
				t.Errorf("CheckFCS(AppendFCS(x)) = false")
			}
		})
	}
}

func TestFCSResidue(t *testing.T) {
	for _, n := range []int{0, 1, 60, 1514} {
		f := frame(mac(1), mac(2), max(n+4, 18), uint32(n))
		// The register after running over data and FCS, before the final
		// complement, is the reflected residue; in the generator's bit
		// order it is 0xC704DD7B.
		reg := ^crc32.ChecksumIEEE(f)
		if reg != 0xdebb20e3 || bits.Reverse32(reg) != 0xc704dd7b {
			t.Errorf("n=%d: residue register %#08x (bit-reversed %#08x), want 0xdebb20e3 (0xc704dd7b)", n, reg, bits.Reverse32(reg))
		}
		if got := crc32.ChecksumIEEE(f); got != ethersim.FCSResidue {
			t.Errorf("n=%d: CRC over frame+FCS = %#08x, want FCSResidue %#08x", n, got, uint32(ethersim.FCSResidue))
		}
	}
}

func TestCheckFCSCatchesEverySingleBitError(t *testing.T) {
	f := frame(mac(1), mac(2), ethersim.MinFrame, 7)
	for bit := range len(f) * 8 {
		f[bit/8] ^= 1 << (bit % 8)
		if ethersim.CheckFCS(f) {
			t.Errorf("bit %d flipped: CheckFCS = true", bit)
		}
		f[bit/8] ^= 1 << (bit % 8)
	}
	if !ethersim.CheckFCS(f) {
		t.Error("CheckFCS(good frame) = false")
	}
	for _, short := range [][]byte{nil, {1, 2, 3}} {
		if ethersim.CheckFCS(short) {
			t.Errorf("CheckFCS(%v) = true", short)
		}
	}
}
