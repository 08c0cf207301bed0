package header_test

import (
	"testing"

	"simkron/ethersim"
	"simkron/stack/header"
)

// The software's Ethernet sizes are the wire's: the network (ethersim),
// which may not import the stack, keeps its own copy of IEEE 802.3's
// figures, and the two must agree.
func TestEthernetSizesAreTheWires(t *testing.T) {
	for _, c := range []struct {
		what      string
		got, want int
	}{
		{"FCS", header.EthernetFCSLen, ethersim.FCSBytes},
		{"shortest frame with its FCS", header.EthernetMinFrameLen + header.EthernetFCSLen, ethersim.MinFrame},
		{"longest frame with its FCS", header.EthernetMaxFrameLen + header.EthernetFCSLen, ethersim.MaxFrame},
		{"a payload of the MTU in a frame", header.EthernetMaxPayload + header.EthernetOverhead, ethersim.MaxFrame},
	} {
		if c.got != c.want {
			t.Errorf("%s: the stack's %d bytes, the wire's %d", c.what, c.got, c.want)
		}
	}
}
