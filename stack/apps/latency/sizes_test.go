package latency_test

import (
	"slices"
	"testing"

	"simkron/stack/apps/latency"
	"simkron/stack/header"
)

// The study's sizes rise from 4 B to its 32 KB, the full frame's payload
// between 1 KiB and 2 KiB, a UDP datagram of FullFrameUDP and a TCP
// segment of FullFrameTCP filling an Ethernet frame of the study's MTU
// exactly; each call's slice is the caller's own.
func TestStudySizes(t *testing.T) {
	for _, full := range []int{0, latency.FullFrameTCP, latency.FullFrameUDP} {
		s := latency.StudySizes(full)
		if !slices.IsSorted(s) || s[0] != 4 || s[len(s)-1] != 32*1024 {
			t.Errorf("StudySizes(%d) = %v: not rising from 4 to 32768", full, s)
		}
		if has := slices.Contains(s, full); has != (full != 0) {
			t.Errorf("StudySizes(%d) = %v", full, s)
		}
		if n := 10 + min(full, 1); len(s) != n {
			t.Errorf("StudySizes(%d) has %d sizes, want %d", full, len(s), n)
		}
		s[0] = -1
		if latency.StudySizes(full)[0] != 4 {
			t.Errorf("StudySizes(%d) shares its slice", full)
		}
	}
	if n := latency.FullFrameUDP + header.UDPMinimumSize + header.IPv4MinimumSize; n != header.EthernetMaxPayload {
		t.Errorf("a datagram of FullFrameUDP is an IP packet of %d bytes, want the MTU %d", n, header.EthernetMaxPayload)
	}
	if n := latency.FullFrameTCP + header.TCPMinimumSize + header.IPv4MinimumSize; n != header.EthernetMaxPayload {
		t.Errorf("a segment of FullFrameTCP is an IP packet of %d bytes, want the MTU %d", n, header.EthernetMaxPayload)
	}
	if f := latency.FullFrameTCP; f <= 1024 || f >= 2048 {
		t.Errorf("FullFrameTCP %d is not between 1 KiB and 2 KiB", f)
	}
}
