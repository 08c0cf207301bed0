// Package atm is the part that gives an experiment ATM: TAXI links
// ([[atm_link]], a loop-back cable among them), switches with their ports
// and routes ([[atm_switch]]), each host's ATM cards bound to a link
// ([[host.atm]]), and the card, the Yes V2 TURBOchannel interface with
// its driver (atmtaxi.go). A host's card sits on a link's user side (end
// a); a switch port on its network side (end b).
//
//	[[host]] ─ [[host.atm]] link = "a" ─► a.a ══ link a ══ a.b ◄─ [[atm_switch]] ports = ["a", ...]
//
// A loop-back link has the one end a, whose cells come back to it. A
// card is a Card, a component of its host that workloads find by the
// interfaces of package card, and, for the ATM workloads, by its driver's
// type.
package atm

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"simkron/config"
	devatm "simkron/devices/atmtaxi"
	"simkron/ethersim"
	"simkron/ethersim/atmnet"
	"simkron/machine/part"
	drvatm "simkron/stack/driver/atmtaxi"
)

// Name is the technology's name, as device models and bindings name it.
const Name = "atm"

// Tables are an experiment's ATM tables.
type Tables struct {
	Links    []LinkSpec   `toml:"atm_link"`
	Switches []SwitchSpec `toml:"atm_switch"`
}

// Bindings are a [[host]]'s tables binding its ATM cards to links.
type Bindings struct {
	Cards []Spec `toml:"atm" help:"ATM cards of the machine and the links they plug into (see machine/parts/atm)"`
}

// LinkSpec is one TAXI link of the experiment.
type LinkSpec struct {
	Name string `toml:"name" help:"link name: its ends are NAME.a (the host's) and NAME.b (the switch's) (a name: letters, digits, '-' and '_', at most 64)"`
	atmnet.LinkParams
	Loopback  bool               `toml:"loopback" help:"a cable from a card's transmitter to its own receiver: one end, NAME.a, and no switch"`
	Faults    atmnet.FaultParams `toml:"faults" help:"faults on cells arriving at the host's end (a)"`
	NetFaults atmnet.FaultParams `toml:"net_faults" help:"faults on cells arriving at the switch's end (b)"`
	Pcap      bool               `toml:"pcap" help:"write the AAL5 PDUs sent either way to <out>/NAME.pcap (LINKTYPE_SUNATM: VPI/VCI, LLC/SNAP)"`
	Trace     bool               `toml:"trace" help:"write every cell event of the link (sent, received, lost, corrupted, dropped by the switch port on it) to <out>/NAME.cells"`
}

// SetDefaults fills a new [[atm_link]] with a 100 Mbit/s TAXI link.
func (s *LinkSpec) SetDefaults() { s.LinkParams = atmnet.DefaultLinkParams() }

// SwitchSpec is one ATM switch of the experiment.
type SwitchSpec struct {
	Name string `toml:"name" help:"switch name (a name: letters, digits, '-' and '_', at most 64)"`
	atmnet.SwitchParams
	Ports  []string    `toml:"ports" help:"the links whose network end (b) is a port, in port order"`
	Routes []RouteSpec `toml:"route" help:"the static VC routes (no signalling)"`
}

// SetDefaults fills a new [[atm_switch]] with the switch defaults.
func (s *SwitchSpec) SetDefaults() { s.SwitchParams = atmnet.DefaultSwitchParams() }

// RouteSpec is one route of a switch: cells arriving on link In with
// label VC leave on link Out relabelled OutVC.
type RouteSpec struct {
	In     string  `toml:"in" help:"link (a port of this switch) the cells arrive on"`
	VC     VCLabel `toml:"vc" help:"their label, \"VPI/VCI\""`
	Out    string  `toml:"out" help:"link (a port of this switch) they leave on"`
	OutVC  VCLabel `toml:"out_vc" help:"their label there, \"VPI/VCI\" (empty: vc)"`
	Duplex bool    `toml:"duplex" help:"also route the way back: out_vc on out to vc on in"`
}

// VCLabel is a VPI/VCI pair written "0/100".
type VCLabel struct {
	atmnet.VC
	Set bool
}

// UnmarshalText reads "VPI/VCI".
func (v *VCLabel) UnmarshalText(b []byte) error {
	vp, vc, ok := strings.Cut(string(b), "/")
	p, err1 := strconv.ParseUint(vp, 10, 8)
	c, err2 := strconv.ParseUint(vc, 10, 16)
	if !ok || err1 != nil || err2 != nil {
		return fmt.Errorf("VC %q: want \"VPI/VCI\" with VPI 0-255 and VCI 0-65535", b)
	}
	*v = VCLabel{VC: atmnet.VC{VPI: uint8(p), VCI: uint16(c)}, Set: true}
	return nil
}

// MarshalText writes "VPI/VCI", or nothing for a label not given.
func (v VCLabel) MarshalText() ([]byte, error) {
	if !v.Set {
		return nil, nil
	}
	return []byte(v.VC.String()), nil
}

// Spec binds one ATM card of a host's machine to a link, and gives it
// the IP interface's address and VC table. [host.atm.params] and
// [host.atm.driver] override keys of the card's [device.params] and
// [device.driver] for this host (LoadExperiment applies them).
type Spec struct {
	Device  string           `toml:"device" help:"the [[device]] name of an atmtaxi card in the host's machine file"`
	Link    string           `toml:"link" help:"the [[atm_link]] whose host end (a) the card's line is"`
	IP      ethersim.IP4     `toml:"ip" help:"IPv4 address of the host on this card (0.0.0.0: no Internet protocols on it)"`
	Netmask ethersim.IP4     `toml:"netmask" help:"subnet mask of the logical IP subnet"`
	MTU     int              `toml:"mtu" min:"0" max:"65527" help:"IP MTU of the card's interface (0: the machine file's driver.mtu, 9180 by default); sets IP's on the card with the host's address"`
	VCs     []drvatm.VCEntry `toml:"vc" help:"the card's static VC table for IP: each neighbour's VC (added to the machine file's driver.vc)"`
	// bad says its [host.atm.params] or [host.atm.driver] does not
	// decode (decode); ipMTU is the driver's MTU once applied (apply).
	bad   bool
	ipMTU int
}

// SetDefaults fills a new [[host.atm]] with a class C netmask.
func (a *Spec) SetDefaults() { a.Netmask = ethersim.IP4{255, 255, 255, 0} }

var _ part.Binding = (*Spec)(nil)

func (a *Spec) DeviceName() string { return a.Device }
func (a *Spec) InterfaceMTU() int  { return a.MTU }
func (a *Spec) IPMTU() int         { return a.ipMTU }
func (a *Spec) IPv4() (addr, mask [4]byte, ok bool) {
	return a.IP, a.Netmask, a.IP != (ethersim.IP4{})
}

func init() {
	part.RegisterTechnology(part.Technology{
		Name:     Name,
		Order:    2,
		Help:     "ATM TAXI links and switches (ethersim/atmnet) and the cards on them",
		Noun:     "ATM cards",
		Tables:   func() any { return &Tables{} },
		Bindings: func() any { return &Bindings{} },
		Entries:  func(b any) []part.Entry { return part.EntriesOf("atm", b.(*Bindings).Cards) },
		Decode:   decode,
		Check:    check,
		Apply:    apply,
		Captures: captures,
		Build:    build,
		Joins:    joins,
	})
}

// TablesOf returns the ATM tables of an experiment's tables by technology
// (machine.Experiment.Networks), or empty ones.
func TablesOf(tables map[string]any) *Tables {
	if t, ok := tables[Name].(*Tables); ok {
		return t
	}
	return &Tables{}
}

// BindingsOf returns a [[host]]'s ATM bindings, or empty ones.
func BindingsOf(h *part.HostSpec) *Bindings {
	if b := part.BindingsOf[Bindings](h, Name); b != nil {
		return b
	}
	return &Bindings{}
}

// captures are the links' pcap files and cell traces.
func captures(tables any) []part.CaptureFile {
	var out []part.CaptureFile
	for i, l := range tables.(*Tables).Links {
		what := fmt.Sprintf("atm_link %q", l.Name)
		if l.Pcap {
			out = append(out, part.CaptureFile{Name: l.Name + ".pcap", Key: []string{"atm_link", strconv.Itoa(i), "pcap"}, What: what})
		}
		if l.Trace {
			out = append(out, part.CaptureFile{Name: l.Name + ".cells", Key: []string{"atm_link", strconv.Itoa(i), "trace"}, What: what})
		}
	}
	return out
}

// check finds what no single key of the ATM tables shows: names,
// references between links, switches and hosts, ends used twice, routes
// given twice.
func check(f *config.File, tables any, hosts []part.HostSpec) config.Errors {
	t := tables.(*Tables)
	var errs config.Errors
	at := func(key ...string) []string { return key }
	names := map[string]string{} // link and switch names: one namespace
	links := map[string]*LinkSpec{}
	for i := range t.Links {
		l := &t.Links[i]
		k := strconv.Itoa(i)
		if err := part.ValidName(l.Name); err != nil {
			errs = append(errs, f.Errorf(at("atm_link", k, "name"), "%v", err))
		} else if what, dup := names[l.Name]; dup {
			errs = append(errs, f.Errorf(at("atm_link", k, "name"), "%q is already the name of an %s", l.Name, what))
		}
		names[l.Name] = "atm_link"
		links[l.Name] = l
		if l.Loopback && l.NetFaults != (atmnet.FaultParams{}) {
			errs = append(errs, f.Errorf(at("atm_link", k, "net_faults"), "a loop-back cable has one end: its faults are in faults"))
		}
	}
	netEnd := map[string]string{} // link -> switch using its end b
	for i, s := range t.Switches {
		k := strconv.Itoa(i)
		if err := part.ValidName(s.Name); err != nil {
			errs = append(errs, f.Errorf(at("atm_switch", k, "name"), "%v", err))
		} else if what, dup := names[s.Name]; dup {
			errs = append(errs, f.Errorf(at("atm_switch", k, "name"), "%q is already the name of an %s", s.Name, what))
		}
		names[s.Name] = "atm_switch"
		ports := map[string]bool{}
		for j, p := range s.Ports {
			key := at("atm_switch", k, "ports", strconv.Itoa(j))
			l := links[p]
			switch {
			case l == nil:
				errs = append(errs, f.Errorf(key, "atm link %q is not defined in an [[atm_link]]", p))
			case l.Loopback:
				errs = append(errs, f.Errorf(key, "atm link %q is a loop-back cable: it has no network end", p))
			case netEnd[p] != "":
				errs = append(errs, f.Errorf(key, "the network end of atm link %q is already a port of switch %q", p, netEnd[p]))
			default:
				netEnd[p] = s.Name
			}
			ports[p] = true
		}
		type rk struct {
			link string
			vc   atmnet.VC
		}
		seen := map[rk]bool{}
		for j, r := range s.Routes {
			key := func(x string) []string { return at("atm_switch", k, "route", strconv.Itoa(j), x) }
			ok := true
			for _, x := range [][2]string{{"in", r.In}, {"out", r.Out}} {
				if !ports[x[1]] {
					errs = append(errs, f.Errorf(key(x[0]), "atm link %q is not a port of switch %q (ports: %v)", x[1], s.Name, s.Ports))
					ok = false
				}
			}
			if !r.VC.Set {
				errs = append(errs, f.Errorf(key("vc"), "a route needs the VC it switches, \"VPI/VCI\""))
				ok = false
			}
			if !ok {
				continue
			}
			in := []rk{{r.In, r.VC.VC}}
			if r.Duplex {
				in = append(in, rk{r.Out, r.outVC()})
			}
			for _, x := range in {
				if seen[x] {
					errs = append(errs, f.Errorf(key("vc"), "VC %v arriving on %q is routed twice", x.vc, x.link))
				}
				seen[x] = true
			}
		}
	}
	hostEnd := map[string]string{} // link -> host.device on its end a
	for i := range hosts {
		h := &hosts[i]
		devs := map[string]bool{}
		for j, a := range BindingsOf(h).Cards {
			key := func(x string) []string { return at("host", strconv.Itoa(i), "atm", strconv.Itoa(j), x) }
			where := h.Name + "." + a.Device
			if devs[a.Device] {
				errs = append(errs, f.Errorf(key("device"), "device %q is bound twice", a.Device))
			}
			devs[a.Device] = true
			switch {
			case links[a.Link] == nil:
				errs = append(errs, f.Errorf(key("link"), "atm link %q is not defined in an [[atm_link]]", a.Link))
			case hostEnd[a.Link] != "":
				errs = append(errs, f.Errorf(key("link"), "the host end of atm link %q is already %s's", a.Link, hostEnd[a.Link]))
			default:
				hostEnd[a.Link] = where
			}
		}
	}
	return errs
}

// decode checks every [host.atm.params] and [host.atm.driver] table on
// the defaults (so that a wrong key is reported before any machine file
// is read), marking a binding whose tables are wrong; apply decodes them
// onto the machine's tables once it is read. It also refuses a bridge
// table under an ATM link or switch (before the file's unknown keys, so
// that it is said plainly), marking it used so that it is not reported
// again as an unknown key.
func decode(f *config.File, _ any, hosts []part.HostSpec) config.Errors {
	var errs config.Errors
	for i := range hosts {
		b := BindingsOf(&hosts[i])
		for j := range b.Cards {
			hk, jk := strconv.Itoa(i), strconv.Itoa(j)
			for _, t := range []struct {
				table string
				v     any
			}{{"params", ptr(devatm.DefaultParams())}, {"driver", ptr(drvatm.DefaultParams())}} {
				if !f.Has("host", hk, "atm", jk, t.table) {
					continue
				}
				if err := f.DecodeInto(t.v, "host", hk, "atm", jk, t.table); err != nil {
					b.Cards[j].bad = true
					var es config.Errors
					if errors.As(err, &es) {
						errs = append(errs, es...)
					}
				}
			}
		}
	}
	for _, table := range []string{"atm_link", "atm_switch"} {
		for _, i := range f.Keys(table) {
			if !f.Has(table, i, "bridge") {
				continue
			}
			f.MarkUsed(table, i, "bridge")
			errs = append(errs, f.Errorf([]string{table, i, "bridge"},
				"an ATM %s carries cells, not Ethernet frames, and cannot be bridged: a bridge joins an Ethernet [[segment]] to a TAP device (put it under a [[segment]])", strings.TrimPrefix(table, "atm_")))
		}
	}
	return errs
}

func ptr[T any](v T) *T { return &v }

// apply binds host i's ATM cards to its machine: the device must be an
// atmtaxi; the experiment's overrides, MTU and VC table are applied to
// the host's copy of the machine's tables and checked together; IP on a
// card has its driver's MTU.
func apply(f *config.File, _ any, hosts []part.HostSpec, i int) config.Errors {
	var errs config.Errors
	h := &hosts[i]
	hk := strconv.Itoa(i)
	b := BindingsOf(h)
	for j := range b.Cards {
		a := &b.Cards[j]
		jk := strconv.Itoa(j)
		key := func(x ...string) []string { return append([]string{"host", hk, "atm", jk}, x...) }
		dev := h.Machine.Device(a.Device)
		if dev == nil || dev.Type != "atmtaxi" {
			errs = append(errs, f.Errorf(key("device"), "machine %q has no atmtaxi device %q", h.Machine.Machine.Name, a.Device))
			continue
		}
		if a.bad {
			continue
		}
		for _, t := range []struct {
			table string
			v     any
		}{{"params", dev.Params}, {"driver", dev.Driver}} {
			if f.Has(key(t.table)...) {
				if err := f.DecodeInto(t.v, key(t.table)...); err != nil {
					var es config.Errors
					if errors.As(err, &es) {
						errs = append(errs, es...)
					}
				}
			}
		}
		drv := dev.Driver.(*drvatm.Params)
		if a.MTU != 0 {
			if err := atmMTU(dev, a.MTU); err != nil {
				errs = append(errs, f.Errorf(key("mtu"), "%d: %v", a.MTU, err))
			}
		}
		withVCs := *drv
		withVCs.VCs = append(append([]drvatm.VCEntry(nil), drv.VCs...), a.VCs...)
		if err := withVCs.Validate(); err != nil {
			errs = append(errs, f.Errorf(key("vc"), "with the machine file's driver.vc: %v", err))
		}
		for _, pr := range checkATMTaxi(dev) {
			errs = append(errs, f.Errorf(key(), "device %q of machine %q: %s.%s: %s", a.Device, h.Machine.Machine.Name, pr.Key[0], pr.Key[1], pr.Msg))
		}
		// IP on this card, when the host's Internet protocols run on it,
		// has the driver's MTU.
		a.ipMTU = drv.MTU
	}
	return errs
}

// joins returns the hosts each link connects, the links of one switch
// joined through it (a loop-back link connects its one host to itself).
// ATM reaches no real host.
func joins(tables any, hosts []part.HostSpec) ([]part.Join, bool) {
	t := tables.(*Tables)
	// Each link starts as its own group; a switch merges its ports'.
	group := map[string]int{}
	var groups []part.Join
	for _, l := range t.Links {
		group[l.Name] = len(groups)
		groups = append(groups, part.Join{Elements: []string{l.Name}})
	}
	merge := func(a, b int) {
		if a == b {
			return
		}
		for name, g := range group {
			if g == b {
				group[name] = a
			}
		}
		groups[a].Elements = append(groups[a].Elements, groups[b].Elements...)
		groups[b].Elements = nil
	}
	for _, sw := range t.Switches {
		for _, port := range sw.Ports {
			if g, ok := group[port]; ok {
				if first, ok := group[sw.Name]; ok {
					merge(first, g)
				} else {
					group[sw.Name] = g
					groups[g].Elements = append(groups[g].Elements, sw.Name)
				}
			}
		}
	}
	for i := range hosts {
		b := part.BindingsOf[Bindings](&hosts[i], Name)
		if b == nil {
			continue
		}
		for _, c := range b.Cards {
			if g, ok := group[c.Link]; ok && !slices.Contains(groups[g].Hosts, i) {
				groups[g].Hosts = append(groups[g].Hosts, i)
			}
		}
	}
	var out []part.Join
	for _, g := range groups {
		if len(g.Elements) > 0 {
			out = append(out, g)
		}
	}
	return out, false
}
