package machine

import (
	"fmt"
	"strconv"
	"strings"

	"simkron/machine/part"
)

// PairHosts are the hosts of the experiment PairExperiment writes, with
// their IPv4 addresses.
var PairHosts = [2]part.PairHost{{Name: "hostA", IP: "10.0.0.1"}, {Name: "hostB", IP: "10.0.0.2"}}

// PairExperiment returns the text of an experiment of two identical
// hosts (PairHosts), each the machine of the file machinePath (written
// into the text as machineRef, the path relative to where the text is
// read from), connected by the first network device of the file as its
// model says (part.DeviceType.Cable), and running workload (the text of
// its [workload] tables). It is the experiment `simkron compare` runs for
// a machine file.
func PairExperiment(machinePath, machineRef, name, description, workload string) ([]byte, error) {
	spec, err := LoadMachine(machinePath)
	if err != nil {
		return nil, err
	}
	var c *part.Cable
	for i := range spec.Devices {
		d := &spec.Devices[i]
		if t, ok := part.LookupDevice(d.Type); ok && t.Cable != nil {
			cb := t.Cable(d, PairHosts)
			c = &cb
			break
		}
	}
	if c == nil {
		return nil, fmt.Errorf("%s: machine %q has no network device to connect two hosts by", machinePath, spec.Machine.Name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Two hosts of %s, made by simkron compare.\n\n", machineRef)
	fmt.Fprintf(&b, "[experiment]\nname = %q\ndescription = %q\nseed = 1\nstop_at = \"86400s\"\n\n", name, description)
	b.WriteString(c.Network)
	for i, h := range PairHosts {
		fmt.Fprintf(&b, "\n[[host]]\nname = %q\nmachine = %s\n", h.Name, strconv.Quote(machineRef))
		b.WriteString(c.Host(i))
	}
	b.WriteString("\n" + workload)
	return []byte(b.String()), nil
}
