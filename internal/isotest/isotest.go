// Package isotest checks ISO transport PDUs taken off a capture, for tests
// of the TP4 paths (over Ethernet and over ATM).
// Layer: none; used by tests only.
package isotest

import (
	"fmt"

	"simkron/stack/header"
)

// CheckTPDUs walks the TPDUs concatenated in the NSDU of one CLNP DT
// and verifies each one's class-4 checksum octet by octet (both running
// sums 0 mod 255, computed here, not by the stack's own code). It returns
// how many TPDUs it checked and an error naming the first that fails.
func CheckTPDUs(nsdu []byte) (checked int, err error) {
	for len(nsdu) >= 2 && int(nsdu[0])+1 <= len(nsdu) {
		h := header.TPDU(nsdu)
		end := len(nsdu)
		if !header.TPDUHasData(h.Code()) {
			end = h.HeaderLen()
		}
		c0, c1 := 0, 0
		for _, v := range nsdu[:end] {
			c0 = (c0 + int(v)) % 255
			c1 = (c1 + c0) % 255
		}
		if (c0 != 0 || c1 != 0) && err == nil {
			err = fmt.Errorf("TPDU %#x fails its checksum", h.Code())
		}
		checked++
		if end == len(nsdu) {
			break
		}
		nsdu = nsdu[end:]
	}
	return checked, err
}
