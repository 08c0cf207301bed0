package kernel_test

import (
	"bytes"
	"testing"

	"simkron/memory"
	"simkron/stack/kernel"
)

// refCksum is RFC 1071's checksum computed the plain way.
func refCksum(b []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

func TestSumBytesRFC1071Example(t *testing.T) {
	// RFC 1071 section 3: the bytes 00 01 f2 03 f4 f5 f6 f7 sum to ddf2.
	b := []byte{0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7}
	sum, _ := kernel.SumBytes(0, b, false)
	if got := kernel.Fold(sum); got != 0xddf2 {
		t.Errorf("sum = %#04x, want 0xddf2", got)
	}
	// Split at an odd boundary: the parity carries over.
	s1, odd := kernel.SumBytes(0, b[:3], false)
	s2, _ := kernel.SumBytes(s1, b[3:], odd)
	if got := kernel.Fold(s2); got != 0xddf2 {
		t.Errorf("split sum = %#04x, want 0xddf2", got)
	}
}

// Cksum and Bcopy work on real bytes in simulated memory, across page
// boundaries and at odd addresses and lengths.
func TestCksumAndBcopy(t *testing.T) {
	h := newHost(t)
	data := make([]byte, 9000)
	for i := range data {
		data[i] = byte(i*31 + i>>7)
	}
	type result struct {
		sum    uint16
		copied []byte
	}
	cases := []struct{ off, n int }{{0, 0}, {1, 1}, {3, 7}, {4093, 10}, {1, 8191}, {0, 9000}}
	got := make([]result, len(cases))
	h.kern.Spawn("lib", func(*kernel.Thread) {
		src := h.kern.Kmalloc(len(data) + 8)
		dst := h.kern.Kmalloc(len(data) + 8)
		h.c.Write(src, data)
		for i, tc := range cases {
			got[i].sum = h.kern.Cksum(src+memory.Addr(tc.off), tc.n)
			if s := ^kernel.Fold(h.kern.CsumCopy(dst+1, src+memory.Addr(tc.off), tc.n, 0)); s != got[i].sum {
				t.Errorf("CsumCopy sum %#04x differs from Cksum %#04x", s, got[i].sum)
			}
			h.kern.Bcopy(dst+1, src+memory.Addr(tc.off), tc.n)
			got[i].copied = make([]byte, tc.n)
			h.sys.Phys.Read(dst+1, got[i].copied)
		}
	})
	h.k.Run()
	for i, tc := range cases {
		want := data[tc.off : tc.off+tc.n]
		if got[i].sum != refCksum(want) {
			t.Errorf("Cksum(off %d, n %d) = %#04x, want %#04x", tc.off, tc.n, got[i].sum, refCksum(want))
		}
		if !bytes.Equal(got[i].copied, want) {
			t.Errorf("Bcopy(off %d, n %d) moved the wrong bytes", tc.off, tc.n)
		}
	}
}

// SumBytes folds to RFC 1071's sum over long runs too: all ones (a carry
// out of every word), all zeros but one, and mixed bytes, from a running
// sum of zero or close to 2^31.
func TestSumBytesLong(t *testing.T) {
	ones := bytes.Repeat([]byte{0xff}, 65536+14)
	zeros := make([]byte, 40000)
	zeros[39999] = 1
	mixed := make([]byte, 70001)
	for i := range mixed {
		mixed[i] = byte(i*131 + i>>9)
	}
	for _, b := range [][]byte{ones, zeros, make([]byte, 4096), mixed, mixed[3:], mixed[:8]} {
		for _, start := range []uint32{0, 0x7fffffff, 0x12345} {
			sum, _ := kernel.SumBytes(start, b, false)
			want := refCksum(append([]byte{byte(start >> 24), byte(start >> 16), byte(start >> 8), byte(start)}, b...))
			if sum >= 1<<31 || ^kernel.Fold(sum) != want {
				t.Errorf("%d bytes from %#x: sum %#x folds to %#04x, want %#04x", len(b), start, sum, ^kernel.Fold(sum), want)
			}
		}
	}
}

// SumBytes over any split of any bytes folds to RFC 1071's sum, however
// the pieces fall against the 8-byte steps and odd ends.
func FuzzSumBytesSplits(f *testing.F) {
	f.Add([]byte{0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7, 0xff, 0xff, 0x01}, uint8(3))
	f.Add(bytes.Repeat([]byte{0xff}, 300), uint8(17))
	f.Fuzz(func(t *testing.T, b []byte, cut uint8) {
		var sum uint32
		odd := false
		for rest := b; len(rest) > 0; {
			k := min(len(rest), int(cut%23)+1)
			sum, odd = kernel.SumBytes(sum, rest[:k], odd)
			rest = rest[k:]
		}
		if got, want := ^kernel.Fold(sum), refCksum(b); got != want {
			t.Fatalf("checksum %#04x, want %#04x", got, want)
		}
	})
}

// BenchmarkSumBytes sums 1 KiB, a UDP payload's worth.
func BenchmarkSumBytes(b *testing.B) {
	p := make([]byte, 1024)
	for i := range p {
		p[i] = byte(i * 7)
	}
	var sum uint32
	for b.Loop() {
		sum, _ = kernel.SumBytes(sum, p, false)
	}
	b.SetBytes(int64(len(p)))
}

// Bcopy moves overlapping ranges as memmove does, forwards and backwards,
// within a page and across pages, and copies memory never written as
// zeros; CsumCopy sums what it moved.
func TestBcopyOverlapAndUntouched(t *testing.T) {
	h := newHost(t)
	const n = 3 * 4096
	type tc struct {
		dst, src, n int
	}
	cases := []tc{{8, 0, 100}, {0, 8, 100}, {4000, 3990, 200}, {3990, 4000, 200}, {100, 100, 50}}
	var got [][]byte
	var want [][]byte
	h.kern.Spawn("lib", func(*kernel.Thread) {
		base := h.kern.Kmalloc(n + 4096)
		base = (base + 4095) &^ 4095 // page-aligned, so the cases fall where they say
		ref := make([]byte, n)
		for i := range ref {
			ref[i] = byte(i*13 + i>>8)
		}
		h.c.Write(base, ref)
		for _, c := range cases {
			h.kern.Bcopy(base+memory.Addr(c.dst), base+memory.Addr(c.src), c.n)
			copy(ref[c.dst:c.dst+c.n], ref[c.src:c.src+c.n])
		}
		b := make([]byte, n)
		h.sys.Phys.Read(base, b)
		got, want = append(got, b), append(want, ref)
		// From an untouched page: zeros, summed as such.
		far := h.kern.Kmalloc(2 * 4096)
		far = (far + 4095) &^ 4095
		if s := h.kern.CsumCopy(base+16, far+32, 64, 0); kernel.Fold(s) != 0 {
			t.Errorf("sum of a copy of untouched memory: %#x", s)
		}
		z := make([]byte, 64)
		h.sys.Phys.Read(base+16, z)
		got, want = append(got, z), append(want, make([]byte, 64))
	})
	h.k.Run()
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("copy %d: memory differs from memmove's result", i)
		}
	}
}
