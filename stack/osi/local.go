package osi

// LocalNSAP returns the NSAP of a system on a private network, written
// as IS-IS installations write theirs: AFI 49 (local, ISO 8348 annex A),
// area 0001, the system's station address as its 6-octet system ID, and
// the selector sel: 10 octets.
func LocalNSAP(id [6]byte, sel byte) NSAP {
	b := []byte{0x49, 0x00, 0x01}
	b = append(b, id[:]...)
	return MustNSAP(append(b, sel))
}
