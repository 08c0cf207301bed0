package config_test

import (
	"fmt"
	"os"

	"simkron/config"
	"simkron/sim"
)

// NICParams is how a component declares its parameters: typed fields with
// the TOML key, help text, and bounds in the field's own syntax.
type NICParams struct {
	Rate   sim.BitRate `toml:"rate" help:"line rate" min:"1Mbps" max:"100Mbps"`
	Buffer sim.Size    `toml:"buffer" help:"on-card packet memory" min:"2KiB"`
	IRQ    int         `toml:"irq" help:"interrupt line" min:"1" max:"15"`
}

func DefaultNICParams() NICParams {
	return NICParams{Rate: 10 * sim.Mbps, Buffer: 16 * sim.KiB, IRQ: 3}
}

func Example() {
	text := `
[host.nic]
rate = "1Gbps"
bufer = "32KiB"
irq = 5
`
	f, err := config.ParseBytes("machine.toml", []byte(text))
	if err != nil {
		fmt.Println(err)
		return
	}
	p := DefaultNICParams()
	if err := f.DecodeInto(&p, "host", "nic"); err != nil {
		fmt.Println(err)
	}
	fmt.Println("irq", p.IRQ)
	// Output:
	// machine.toml:3: host.nic.rate: 1Gbps is above the maximum 100Mbps
	// machine.toml:4: host.nic.bufer: unknown key (did you mean "buffer"?)
	// irq 5
}

func ExampleDescribe() {
	config.Describe(os.Stdout, "hostA.nic0", DefaultNICParams())
	// Output:
	// KEY                TYPE      DEFAULT  RANGE           HELP
	// hostA.nic0.rate    bit rate  10Mbps   1Mbps..100Mbps  line rate
	// hostA.nic0.buffer  size      16KiB    2KiB..          on-card packet memory
	// hostA.nic0.irq     integer   3        1..15           interrupt line
}
