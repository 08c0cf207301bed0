package latency

import "simkron/stack/header"

// The payload that fills one frame of the Linux/SimOS study's MTU, 1500
// bytes, for each protocol that has one: StudySizes's full.
const (
	// FullFrameTCP is TCP's MSS at that MTU: 1460.
	FullFrameTCP = header.EthernetMaxPayload - header.IPv4MinimumSize - header.TCPMinimumSize
	// FullFrameUDP is the largest datagram one frame carries unfragmented:
	// 1472.
	FullFrameUDP = header.EthernetMaxPayload - header.IPv4MinimumSize - header.UDPMinimumSize
)

// StudySizes returns the message sizes of the Linux/SimOS study's series,
// the one table of them (a new slice each call). The study gives only
// their range, messages up to 32 KB at an MTU of 1500
// (docs/reference/inet-notes.md sec. 8, docs/reference/via.md sec. 5);
// the sizes within it are this model's, the same for every protocol:
// powers of four from 4 B to 1 KiB, the payload full that fills one
// frame, powers of two from 2 KiB to 32 KiB. That payload depends on the
// protocol: FullFrameTCP is what the comparison and the TCP and TP4
// series use, FullFrameUDP the UDP series; 0 leaves it out, as the VIA
// series does.
func StudySizes(full int) []int {
	sizes := []int{4, 16, 64, 256, 1024}
	if full != 0 {
		sizes = append(sizes, full)
	}
	return append(sizes, 2048, 4096, 8192, 16384, 32768)
}
