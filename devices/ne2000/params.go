package ne2000

import (
	"fmt"

	"simkron/ethersim"
)

// Params configures the card.
type Params struct {
	MAC ethersim.MAC `toml:"mac" help:"station address stored in the card's PROM, e.g. \"02:00:00:00:00:01\" (the driver copies it into PAR0-5)"`
}

// DefaultParams returns the locally administered unicast address
// 02:00:00:00:00:01.
func DefaultParams() Params {
	return Params{MAC: ethersim.MAC{0x02, 0, 0, 0, 0, 0x01}}
}

// Validate checks p; errors name the TOML key at fault.
func (p Params) Validate() error {
	if p.MAC[0]&1 != 0 {
		return fmt.Errorf("mac: %v is a group (multicast) address; a station address must be unicast", p.MAC)
	}
	return nil
}
