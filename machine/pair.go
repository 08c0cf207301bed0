package machine

import (
	"fmt"
	"strconv"
	"strings"

	"simkron/ethersim"
	"simkron/sim"
)

// PairHosts are the hosts of the experiment PairExperiment writes, with
// their IPv4 addresses.
var PairHosts = [2]struct{ Name, IP string }{{"hostA", "10.0.0.1"}, {"hostB", "10.0.0.2"}}

// cable is the experiment text that connects two hosts' copies of a
// network device: the network's tables, and each host's tables binding
// its card to the network with the host's address.
type cable struct {
	network string
	host    func(i int) string
}

// etherCable puts the card named dev on an Ethernet segment at rate,
// shared or a switch (mode).
func etherCable(dev string, rate sim.BitRate, mode string) cable {
	return cable{
		network: fmt.Sprintf("[[segment]]\nname = \"lan0\"\nrate = %q\nmode = %q\n", rate, mode),
		host: func(i int) string {
			return fmt.Sprintf("[[host.nic]]\ndevice = %q\nsegment = \"lan0\"\nmac = \"02:00:00:00:00:%02x\"\nip = %q\n",
				dev, 0x0a+i, PairHosts[i].IP)
		},
	}
}

// PairExperiment returns the text of an experiment of two identical
// hosts (PairHosts), each the machine of the file machinePath (written
// into the text as machineRef, the path relative to where the text is
// read from), connected by the first network device of the file, and
// running workload (the text of its [workload] tables). It is the
// experiment `simkron compare` runs for a machine file.
func PairExperiment(machinePath, machineRef, name, description, workload string) ([]byte, error) {
	spec, err := LoadMachine(machinePath)
	if err != nil {
		return nil, err
	}
	var c *cable
	for i := range spec.Devices {
		d := &spec.Devices[i]
		t := deviceTypes[d.Type]
		if t.DriverDefaults == nil {
			continue
		}
		cb := etherCable(d.Name, ethersim.DefaultRate, ethersim.ModeShared)
		if t.cable != nil {
			cb = t.cable(d)
		}
		c = &cb
		break
	}
	if c == nil {
		return nil, fmt.Errorf("%s: machine %q has no network device to connect two hosts by", machinePath, spec.Machine.Name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Two hosts of %s, made by simkron compare.\n\n", machineRef)
	fmt.Fprintf(&b, "[experiment]\nname = %q\ndescription = %q\nseed = 1\nstop_at = \"86400s\"\n\n", name, description)
	b.WriteString(c.network)
	for i, h := range PairHosts {
		fmt.Fprintf(&b, "\n[[host]]\nname = %q\nmachine = %s\n", h.Name, strconv.Quote(machineRef))
		b.WriteString(c.host(i))
	}
	b.WriteString("\n" + workload)
	return []byte(b.String()), nil
}
