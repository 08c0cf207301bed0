package ethernet

import (
	"fmt"

	"simkron/machine/part"
	"simkron/sim"
)

// Cable puts the card named dev of two hosts on an Ethernet segment at
// rate, shared or a switch (mode), each host with its address: the
// experiment text simkron compare writes for a machine file.
func Cable(dev string, rate sim.BitRate, mode string, hosts [2]part.PairHost) part.Cable {
	return part.Cable{
		Network: fmt.Sprintf("[[segment]]\nname = \"lan0\"\nrate = %q\nmode = %q\n", rate, mode),
		Host: func(i int) string {
			return fmt.Sprintf("[[host.nic]]\ndevice = %q\nsegment = \"lan0\"\nmac = \"02:00:00:00:00:%02x\"\nip = %q\n",
				dev, 0x0a+i, hosts[i].IP)
		},
	}
}
