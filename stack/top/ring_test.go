package top_test

import (
	"testing"

	"simkron/stack/top"
)

// The circular buffer places a frame after the head, wraps to the base
// when the end is too near, and never over a live slot: in particular a
// head that has come round to the oldest live slot exactly means full
// (it was once taken for empty, and a frame TP4 still held for a
// retransmission was overwritten).
func TestRingPlacement(t *testing.T) {
	const base, end = 0x1000, 0x2000
	// Frames of 0x100-8 octets take 0x100 with the block header.
	const n = 0x100 - 8
	for _, tc := range []struct {
		name string
		head uint64
		live []uint64
		at   uint64
		ok   bool
	}{
		{"empty", base, nil, base, true},
		{"after the head", 0x1300, []uint64{0x1200}, 0x1300, true},
		{"wrap to the base", 0x1F80, []uint64{0x1400}, base, true},
		{"no room at either end", 0x1F80, []uint64{0x1080}, 0, false},
		{"wrapped, room before the tail", 0x1100, []uint64{0x1800, 0x1000}, 0x1100, true},
		{"wrapped, the head at the tail", 0x1800, []uint64{0x1800, 0x1F00, 0x1000, 0x1700}, 0, false},
		{"wrapped, too little before the tail", 0x1780, []uint64{0x1800, 0x1000}, 0, false},
		{"exactly to the end", 0x1F00, []uint64{0x1800}, 0x1F00, true},
	} {
		at, ok := top.RingPlace(base, end, tc.head, tc.live, n)
		if at != tc.at || ok != tc.ok {
			t.Errorf("%s: placed at %#x %v, want %#x %v", tc.name, at, ok, tc.at, tc.ok)
		}
	}
}
