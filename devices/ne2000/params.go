package ne2000

import (
	"fmt"

	"simkron/ethersim"
	"simkron/sim"
)

// Params configures the card.
type Params struct {
	MAC ethersim.MAC `toml:"mac" help:"station address stored in the card's PROM, e.g. \"02:00:00:00:00:01\" (the driver copies it into PAR0-5)"`
	// MaxFrame bounds transmission only: the receiver, like the DP8390's,
	// stores a frame of any length the ring can hold (see Receive).
	MaxFrame sim.Size `toml:"max_frame" min:"64B" max:"16388B" help:"largest frame the card transmits, FCS included; longer transmits are refused (guest error, TSR.ABT). A real DP8390 on 10 Mbit/s Ethernet sends at most 1518 bytes (IEEE 802.3); more is a simulation allowance for FDDI-sized MTUs (MTU 4352: \"4370B\"). At most the 16 KiB packet RAM plus the FCS"`
}

// DefaultMaxFrame is the IEEE 802.3 maximum: 1514 bytes of header and
// payload and the 4-byte FCS.
const DefaultMaxFrame = ethersim.MaxFrame

// MaxFrameLimit is the largest max_frame: a transmit is loaded into the
// 16 KiB packet RAM, and the FCS is appended on the way out. The 16-bit
// byte counts (TBCR, RBCR, the receive header's count) reach further.
const MaxFrameLimit = RAMEnd - RAMStart + fcsBytes

// DefaultParams returns the locally administered unicast address
// 02:00:00:00:00:01 and the Ethernet maximum frame.
func DefaultParams() Params {
	return Params{MAC: ethersim.MAC{0x02, 0, 0, 0, 0, 0x01}, MaxFrame: DefaultMaxFrame}
}

// Validate checks p; errors name the TOML key at fault.
func (p Params) Validate() error {
	if p.MAC[0]&1 != 0 {
		return fmt.Errorf("mac: %v is a group (multicast) address; a station address must be unicast", p.MAC)
	}
	if p.MaxFrame < minFrame || p.MaxFrame > MaxFrameLimit {
		return fmt.Errorf("max_frame: %v must lie between %dB and %dB (the 16 KiB packet RAM a transmit is loaded into, plus the FCS)", p.MaxFrame, minFrame, MaxFrameLimit)
	}
	return nil
}
