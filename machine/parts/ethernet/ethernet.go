// Package ethernet is the part that gives an experiment Ethernet: its
// segments and switches ([[segment]], ethersim), their bridges to real
// hosts ([[segment.bridge]], bridge.go), the tables that plug a host's
// Ethernet cards into them ([[host.nic]]), and the cards: the NE2000
// (ne2000.go) and the Linux/SimOS study's bus-master NIC (simoseth.go),
// each with the kernel's driver for it. A card is a NIC (nic.go), a
// component of its host that workloads find by the interfaces of package
// card.
package ethernet

import (
	"fmt"
	"slices"
	"strconv"

	"simkron/config"
	"simkron/ethersim"
	"simkron/machine/part"
	"simkron/sim"
)

// Name is the technology's name, as device models and bindings name it.
const Name = "ethernet"

// Tables are an experiment's Ethernet tables.
type Tables struct {
	Segments []SegmentSpec `toml:"segment"`
}

// Bindings are a [[host]]'s tables plugging its Ethernet cards in.
type Bindings struct {
	NICs []NICSpec `toml:"nic" help:"network cards of the machine and the segments they plug into"`
}

// SegmentSpec is one Ethernet segment (or switch) of the experiment.
type SegmentSpec struct {
	Name string `toml:"name" help:"segment name, and of its capture NAME.pcap (a name: letters, digits, '-' and '_', at most 64)"`
	ethersim.SegmentParams
	Pcap bool `toml:"pcap" help:"write every frame to <out>/<name>.pcap with its simulated time"`
	// Bridges join the segment to real hosts (bridge.go).
	Bridges []BridgeSpec `toml:"bridge" help:"bridges of the segment to real hosts through Linux TAP devices; the run is then paced to the wall clock"`
}

// SetDefaults fills a new [[segment]] with Ethernet's defaults.
func (s *SegmentSpec) SetDefaults() { s.SegmentParams = ethersim.DefaultSegmentParams() }

// NICSpec plugs one network device of a host's machine into a segment.
type NICSpec struct {
	Device  string               `toml:"device" help:"the [[device]] name in the host's machine file"`
	Segment string               `toml:"segment" help:"the [[segment]] it is plugged into"`
	MAC     ethersim.MAC         `toml:"mac" help:"station address, e.g. \"02:00:00:00:00:01\" (stored in the card's PROM)"`
	IP      ethersim.IP4         `toml:"ip" help:"IPv4 address of the host on this card (0.0.0.0: no Internet protocols)"`
	Netmask ethersim.IP4         `toml:"netmask" help:"subnet mask of the card's network"`
	Faults  ethersim.FaultParams `toml:"faults" help:"faults on frames arriving at this card"`
	MTU     int                  `toml:"mtu" min:"0" max:"65535" help:"interface MTU on this card (0: the machine file's): sets the card's driver and, on the card with the host's address, IP; frames of mtu + 18 bytes must fit the segment's max_frame (raise both to stand in for FDDI: 4352 and 4370B)"`
}

// SetDefaults fills a new [[host.nic]] with a class C netmask.
func (n *NICSpec) SetDefaults() { n.Netmask = ethersim.IP4{255, 255, 255, 0} }

var _ part.Binding = (*NICSpec)(nil)

func (n *NICSpec) DeviceName() string { return n.Device }
func (n *NICSpec) InterfaceMTU() int  { return n.MTU }
func (n *NICSpec) IPMTU() int         { return n.MTU }
func (n *NICSpec) IPv4() (addr, mask [4]byte, ok bool) {
	return n.IP, n.Netmask, n.IP != (ethersim.IP4{})
}

func init() {
	part.RegisterTechnology(part.Technology{
		Name:     Name,
		Order:    1,
		Help:     "Ethernet segments and switches (ethersim) and the cards on them",
		Noun:     "Ethernet cards",
		Tables:   func() any { return &Tables{} },
		Bindings: func() any { return &Bindings{} },
		Entries:  func(b any) []part.Entry { return part.EntriesOf("nic", b.(*Bindings).NICs) },
		Check:    check,
		Apply:    apply,
		Captures: captures,
		Build: func(k *sim.Scheduler, f *config.File, t any, capture bool) (part.Network, error) {
			return newNetwork(k, f, t.(*Tables).Segments, capture)
		},
		Refuse: refuse,
		Joins:  joins,
	})
}

// TablesOf returns the Ethernet tables of an experiment's tables by
// technology (machine.Experiment.Networks), or empty ones.
func TablesOf(tables map[string]any) *Tables {
	if t, ok := tables[Name].(*Tables); ok {
		return t
	}
	return &Tables{}
}

// BindingsOf returns a [[host]]'s Ethernet bindings, or empty ones.
func BindingsOf(h *part.HostSpec) *Bindings {
	if b := part.BindingsOf[Bindings](h, Name); b != nil {
		return b
	}
	return &Bindings{}
}

// check finds what no single key of the segments and cards shows: names,
// the segments cards name, station addresses, TAPs bridged twice.
func check(f *config.File, t any, hosts []part.HostSpec) config.Errors {
	var out config.Errors
	segs := map[string]bool{}
	for i, sg := range t.(*Tables).Segments {
		k := []string{"segment", strconv.Itoa(i), "name"}
		if err := part.ValidName(sg.Name); err != nil {
			out = append(out, f.Errorf(k, "%v", err))
		} else if segs[sg.Name] {
			out = append(out, f.Errorf(k, "segment %q is defined twice", sg.Name))
		}
		segs[sg.Name] = true
	}
	macs := map[ethersim.MAC]string{}
	for i := range hosts {
		for j, n := range BindingsOf(&hosts[i]).NICs {
			key := func(k string) []string { return []string{"host", strconv.Itoa(i), "nic", strconv.Itoa(j), k} }
			if !segs[n.Segment] {
				out = append(out, f.Errorf(key("segment"), "segment %q is not defined in a [[segment]]", n.Segment))
			}
			switch {
			case n.MAC == ethersim.MAC{}:
				out = append(out, f.Errorf(key("mac"), "a card needs a station address"))
			case n.MAC[0]&1 != 0:
				out = append(out, f.Errorf(key("mac"), "%v is a group address; a station address must be unicast", n.MAC))
			case macs[n.MAC] != "":
				out = append(out, f.Errorf(key("mac"), "%v is already %s's", n.MAC, macs[n.MAC]))
			}
			macs[n.MAC] = fmt.Sprintf("%s.%s", hosts[i].Name, n.Device)
		}
	}
	return append(out, checkBridges(f, t.(*Tables))...)
}

// apply binds host i's Ethernet cards to its machine: each must be an
// Ethernet card of the machine; an MTU the experiment sets is set on the
// card and its driver, and must fit the segment's frames.
func apply(f *config.File, t any, hosts []part.HostSpec, i int) config.Errors {
	h := &hosts[i]
	var out config.Errors
	for j, n := range BindingsOf(h).NICs {
		key := func(k string) []string { return []string{"host", strconv.Itoa(i), "nic", strconv.Itoa(j), k} }
		dev := h.Machine.Device(n.Device)
		var dt *part.DeviceType
		if dev != nil {
			dt, _ = part.LookupDevice(dev.Type)
		}
		if dt == nil || dt.Technology != Name {
			out = append(out, f.Errorf(key("device"), "machine %q has no network device %q", h.Machine.Machine.Name, n.Device))
			continue
		}
		if n.MTU == 0 {
			continue
		}
		if dt.SetMTU == nil {
			out = append(out, f.Errorf(key("mtu"), "a %s card's MTU cannot be set", dev.Type))
		} else if err := dt.SetMTU(dev, n.MTU); err != nil {
			out = append(out, f.Errorf(key("mtu"), "%d: %v", n.MTU, err))
		}
		for _, sg := range t.(*Tables).Segments {
			if sg.Name == n.Segment && n.MTU+18 > int(sg.MaxFrame) {
				out = append(out, f.Errorf(key("mtu"), "%d needs frames of %d bytes; segment %q carries at most %v (its max_frame)", n.MTU, n.MTU+18, sg.Name, sg.MaxFrame))
			}
		}
	}
	return out
}

// captures are the segments' pcap files.
func captures(t any) []part.CaptureFile {
	var out []part.CaptureFile
	for i, sg := range t.(*Tables).Segments {
		if sg.Pcap {
			out = append(out, part.CaptureFile{Name: sg.Name + ".pcap", Key: []string{"segment", strconv.Itoa(i), "pcap"}, What: fmt.Sprintf("segment %q", sg.Name)})
		}
	}
	return out
}

// joins returns the hosts each segment connects (a segment is a switch or
// a shared cable: either way its hosts may exchange frames; segments are
// not joined to each other), and whether a segment is bridged to real
// hosts.
func joins(tables any, hosts []part.HostSpec) (groups []part.Join, paced bool) {
	for _, sg := range tables.(*Tables).Segments {
		j := part.Join{Elements: []string{sg.Name}}
		if sg.Mode == ethersim.ModeSwitch && !sg.Pcap && len(sg.Bridges) == 0 {
			// A captured switch keeps its hosts together: one capture
			// in the order of one clock.
			j.Lookahead = sg.SegmentParams.Lookahead()
		}
		for i := range hosts {
			for _, n := range BindingsOf(&hosts[i]).NICs {
				if n.Segment == sg.Name && !slices.Contains(j.Hosts, i) {
					j.Hosts = append(j.Hosts, i)
				}
			}
		}
		groups = append(groups, j)
		paced = paced || len(sg.Bridges) > 0
	}
	return groups, paced
}
