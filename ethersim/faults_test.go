package ethersim_test

import (
	"fmt"
	"math"
	"testing"

	"simkron/ethersim"
	"simkron/sim"
)

func TestReceiveFaults(t *testing.T) {
	const n = 2000
	tests := []struct {
		f ethersim.FaultParams
		// Seeded, so exact; each is also within 4 sigma of n*p.
		wantDropped, wantCorrupted, wantDuplicated uint64
	}{
		{f: ethersim.FaultParams{}},
		{f: ethersim.FaultParams{Drop: 0.1}, wantDropped: 215},
		{f: ethersim.FaultParams{Corrupt: 0.05}, wantCorrupted: 105},
		{f: ethersim.FaultParams{Duplicate: 0.02}, wantDuplicated: 37},
		{f: ethersim.FaultParams{Drop: 0.2, Corrupt: 0.1, Duplicate: 0.1}, wantDropped: 404, wantCorrupted: 163, wantDuplicated: 148},
		{f: ethersim.FaultParams{Drop: 1}, wantDropped: n},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%+v", tc.f), func(t *testing.T) {
			r := newRig(t, 3, ethersim.DefaultSegmentParams())
			a := r.attach("a", ethersim.FaultParams{})
			b := r.attach("b", tc.f)
			sent := map[uint32][]byte{}
			seq := uint32(0)
			sendNext := func() {
				if seq < n {
					seq++
					f := frame(mac(2), mac(1), 64+int(seq%200), seq)
					sent[seq] = f
					if err := a.Transmit(f); err != nil {
						t.Fatal(err)
					}
				}
			}
			a.OnTxDone = func(ethersim.TxStatus) { sendNext() }
			r.at(0, sendNext)
			r.k.Run()

			st := b.Stats()
			if st.Dropped != tc.wantDropped || st.Corrupted != tc.wantCorrupted || st.Duplicated != tc.wantDuplicated {
				t.Errorf("dropped/corrupted/duplicated = %d/%d/%d, want %d/%d/%d", st.Dropped, st.Corrupted, st.Duplicated, tc.wantDropped, tc.wantCorrupted, tc.wantDuplicated)
			}
			// Corruption and duplication apply to frames that were not
			// dropped.
			kept := n - float64(st.Dropped)
			for _, c := range []struct {
				what string
				got  uint64
				of   float64
				p    float64
			}{{"dropped", st.Dropped, n, tc.f.Drop}, {"corrupted", st.Corrupted, kept, tc.f.Corrupt}, {"duplicated", st.Duplicated, kept, tc.f.Duplicate}} {
				mean := c.of * c.p
				if sigma := math.Sqrt(c.of * c.p * (1 - c.p)); math.Abs(float64(c.got)-mean) > 4*sigma+1e-9 {
					t.Errorf("%s %d, want about %.0f (p=%v)", c.what, c.got, mean, c.p)
				}
			}
			if st.RxFrames != n-st.Dropped+st.Duplicated || uint64(len(r.l.rx)) != st.RxFrames {
				t.Errorf("RxFrames %d, %d logged; want %d", st.RxFrames, len(r.l.rx), n-st.Dropped+st.Duplicated)
			}
			// Every corrupted frame differs from what was sent in exactly one
			// bit and fails the FCS check; every other frame is intact.
			var bad, dups uint64
			seen := map[uint32]bool{}
			for _, x := range r.l.rx {
				want := sent[uint32(x.Frame[17])|uint32(x.Frame[16])<<8]
				if want == nil || len(want) != len(x.Frame) {
					// The sequence number itself may be the flipped bit.
					if ethersim.CheckFCS(x.Frame) {
						t.Fatalf("unknown intact frame %x", x.Frame[:18])
					}
					bad++
					continue
				}
				flipped := 0
				for i := range want {
					d := want[i] ^ x.Frame[i]
					for ; d != 0; d &= d - 1 {
						flipped++
					}
				}
				if ok := ethersim.CheckFCS(x.Frame); ok != (flipped == 0) || flipped > 1 {
					t.Fatalf("frame with %d bits flipped: CheckFCS = %v", flipped, ok)
				}
				if flipped == 1 {
					bad++
				} else {
					seq := uint32(x.Frame[17]) | uint32(x.Frame[16])<<8
					if seen[seq] {
						dups++
					}
					seen[seq] = true
				}
			}
			// A duplicated corrupted frame arrives bad twice.
			if bad < st.Corrupted || bad > st.Corrupted+st.Duplicated || dups > st.Duplicated {
				t.Errorf("%d bad frames for %d corrupted, %d duplicate good ones for %d duplicated", bad, st.Corrupted, dups, st.Duplicated)
			}
			if as := a.Stats(); as.RxFrames != 0 || as.TxFrames != n {
				t.Errorf("sender stats %+v", as)
			}
		})
	}
}

// A reordered frame arrives reorder_delay late, whole, after frames sent
// behind it; nothing is lost or repeated, and the draws leave the other
// faults' streams as they were when reorder is 0.
func TestReorderFault(t *testing.T) {
	const n = 400
	r := newRig(t, 3, ethersim.DefaultSegmentParams())
	a := r.attach("a", ethersim.FaultParams{})
	b := r.attach("b", ethersim.FaultParams{Reorder: 0.1, ReorderDelay: 500 * sim.Microsecond})
	seq := uint32(0)
	sendNext := func() {
		if seq < n {
			seq++
			if err := a.Transmit(frame(mac(2), mac(1), 64, seq)); err != nil {
				t.Fatal(err)
			}
		}
	}
	a.OnTxDone = func(ethersim.TxStatus) { sendNext() }
	r.at(0, sendNext)
	r.k.Run()
	st := b.Stats()
	if st.Reordered != 48 || st.RxFrames != n {
		t.Fatalf("reordered %d, received %d; want 48 (seeded; 40 expected) and %d", st.Reordered, st.RxFrames, n)
	}
	seen := map[uint32]bool{}
	late := 0
	var last uint32
	for _, x := range r.l.rx {
		if !ethersim.CheckFCS(x.Frame) {
			t.Fatal("a reordered frame was damaged")
		}
		s := uint32(x.Frame[17]) | uint32(x.Frame[16])<<8
		if seen[s] {
			t.Fatalf("frame %d twice", s)
		}
		seen[s] = true
		if s < last {
			late++
		}
		last = max(last, s)
	}
	// 64-byte frames take 67.2 us with the gap: a 500 us hold lets 7
	// frames overtake.
	if len(seen) != n || late != int(st.Reordered) {
		t.Errorf("%d frames, %d out of order; want %d and %d", len(seen), late, n, st.Reordered)
	}
	if err := (ethersim.FaultParams{Reorder: 2}).Validate(); err == nil {
		t.Error("reorder 2 accepted")
	}
}
