package header

// Fletcher is the ISO checksum's running sums over octets given piece by
// piece (a PDU in a chain of buffers), with the same arithmetic as
// FletcherSums: C0 and C1 are kept below 2^32 by reducing them every
// fletcherBlock octets. The zero value is the sums over nothing.
type Fletcher struct {
	c0, c1  uint32
	n       int // octets added
	pending int // octets added since the last reduction
}

// fletcherBlock bounds the octets between reductions: with 8-bit inputs
// C1 stays below 2^32 for blocks of up to 5802 octets.
const fletcherBlock = 4096

// Write adds the octets of b in order.
func (f *Fletcher) Write(b []byte) {
	for len(b) > 0 {
		k := min(len(b), fletcherBlock-f.pending)
		c0, c1 := f.c0, f.c1
		p := b[:k]
		// Four octets a step: C1 gains C0 four times and the octets
		// weighted 4, 3, 2, 1 (the same sums as one octet a step).
		for ; len(p) >= 4; p = p[4:] {
			v0, v1, v2, v3 := uint32(p[0]), uint32(p[1]), uint32(p[2]), uint32(p[3])
			c1 += 4*c0 + 4*v0 + 3*v1 + 2*v2 + v3
			c0 += v0 + v1 + v2 + v3
		}
		for _, v := range p {
			c0 += uint32(v)
			c1 += c0
		}
		f.c0, f.c1 = c0, c1
		f.pending += k
		f.n += k
		b = b[k:]
		if f.pending == fletcherBlock {
			f.reduce()
		}
	}
}

func (f *Fletcher) reduce() {
	f.c0 %= 255
	f.c1 %= 255
	f.pending = 0
}

// Len returns the octets added.
func (f *Fletcher) Len() int { return f.n }

// Sums returns C0 and C1 (each in 0..254).
func (f *Fletcher) Sums() (c0, c1 uint32) {
	f.reduce()
	return f.c0, f.c1
}

// Valid reports whether the octets added, checksum included, pass the
// checksum: both sums are 0 mod 255.
func (f *Fletcher) Valid() bool {
	c0, c1 := f.Sums()
	return c0 == 0 && c1 == 0
}

// Checksum returns the checksum octets X and Y for the octets added, in
// which the two checksum octets, at 0-based position pos, were zero.
func (f *Fletcher) Checksum(pos int) (x, y byte) {
	c0, c1 := f.Sums()
	l := uint32(f.n)
	n := uint32(pos + 1) // 1-based
	xv := ((l-n)%255*c0 + 255 - c1) % 255
	yv := (c1 + 255*255 - (l-n+1)%255*c0) % 255
	if xv == 0 {
		xv = 255
	}
	if yv == 0 {
		yv = 255
	}
	return byte(xv), byte(yv)
}
