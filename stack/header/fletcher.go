package header

// The ISO checksum (ISO 8473-1 clause 6.19 and annex C; ISO 8073 clause
// 6.17 and ITU-T X.224 annex D): Fletcher's arithmetic modulo 255. Over
// the L octets a_1..a_L covered, with the two checksum octets counted as
// zero, the running sums are
//
//	C0 = Σ a_i mod 255,  C1 = Σ (C0 after a_i) mod 255
//
// and with n the 1-based position of the first checksum octet the sender
// stores
//
//	X = ((L − n)·C0 − C1) mod 255,  Y = (C1 − (L − n + 1)·C0) mod 255
//
// writing 255 for a result of 0 (0x0000 means "no checksum" in CLNP).
// The receiver sums all L octets, checksum included: both sums are then
// 0 mod 255.

// FletcherSums returns C0 and C1 (each in 0..254) of b.
func FletcherSums(b []byte) (c0, c1 uint32) {
	// Deferred reduction: with 8-bit inputs, c1 stays below 2^32 for
	// blocks of up to 5802 octets (c1 grows at most by 255·k after k).
	const block = 4096
	for len(b) > 0 {
		n := min(len(b), block)
		for _, v := range b[:n] {
			c0 += uint32(v)
			c1 += c0
		}
		c0 %= 255
		c1 %= 255
		b = b[n:]
	}
	return c0, c1
}

// FletcherChecksum returns the two checksum octets X and Y for b, whose
// checksum octets lie at b[pos] and b[pos+1] (0-based) and are taken as
// zero whatever they hold. pos+1 must lie inside b.
func FletcherChecksum(b []byte, pos int) (x, y byte) {
	c0, c1 := FletcherSums(b)
	// Remove the contribution of the two checksum octets as they stand:
	// an octet v at 0-based position i adds v to C0 and v·(L−i) to C1.
	l := uint32(len(b))
	for i := pos; i <= pos+1; i++ {
		v := uint32(b[i])
		c0 = (c0 + 255 - v%255) % 255
		c1 = (c1 + 255*255 - v*(l-uint32(i))%255) % 255
	}
	n := uint32(pos + 1) // 1-based
	// (L−n)·C0 − C1 and C1 − (L−n+1)·C0, kept non-negative mod 255.
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

// FletcherValid reports whether b, checksum octets included, passes the
// ISO checksum: both running sums are 0 mod 255.
func FletcherValid(b []byte) bool {
	c0, c1 := FletcherSums(b)
	return c0 == 0 && c1 == 0
}
