package machine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"simkron/card"
	"simkron/config"
	devatm "simkron/devices/atmtaxi"
	"simkron/ethersim"
	"simkron/ethersim/atmnet"
	"simkron/memory"
	"simkron/report"
	"simkron/sim"
	drvatm "simkron/stack/driver/atmtaxi"
	"simkron/stack/header"
	"simkron/trace"
)

// The ATM network of an experiment: TAXI links ([[atm_link]], a
// loop-back cable among them), switches with their ports and routes
// ([[atm_switch]]), and each host's ATM cards bound to a link
// ([[host.atm]]). A host's card sits on a link's user side (end a); a
// switch port on its network side (end b).
//
//	[[host]] ─ [[host.atm]] link = "a" ─► a.a ══ link a ══ a.b ◄─ [[atm_switch]] ports = ["a", ...]
//
// A loop-back link has the one end a, whose cells come back to it.

// ATMLinkSpec is one TAXI link of the experiment.
type ATMLinkSpec struct {
	Name string `toml:"name" help:"link name: its ends are NAME.a (the host's) and NAME.b (the switch's) (a name: letters, digits, '-' and '_', at most 64)"`
	atmnet.LinkParams
	Loopback  bool               `toml:"loopback" help:"a cable from a card's transmitter to its own receiver: one end, NAME.a, and no switch"`
	Faults    atmnet.FaultParams `toml:"faults" help:"faults on cells arriving at the host's end (a)"`
	NetFaults atmnet.FaultParams `toml:"net_faults" help:"faults on cells arriving at the switch's end (b)"`
	Pcap      bool               `toml:"pcap" help:"write the AAL5 PDUs sent either way to <out>/NAME.pcap (LINKTYPE_SUNATM: VPI/VCI, LLC/SNAP)"`
	Trace     bool               `toml:"trace" help:"write every cell event of the link (sent, received, lost, corrupted, dropped by the switch port on it) to <out>/NAME.cells"`
}

// SetDefaults fills a new [[atm_link]] with a 100 Mbit/s TAXI link.
func (s *ATMLinkSpec) SetDefaults() { s.LinkParams = atmnet.DefaultLinkParams() }

// ATMSwitchSpec is one ATM switch of the experiment.
type ATMSwitchSpec struct {
	Name string `toml:"name" help:"switch name (a name: letters, digits, '-' and '_', at most 64)"`
	atmnet.SwitchParams
	Ports  []string       `toml:"ports" help:"the links whose network end (b) is a port, in port order"`
	Routes []ATMRouteSpec `toml:"route" help:"the static VC routes (no signalling)"`
}

// SetDefaults fills a new [[atm_switch]] with the switch defaults.
func (s *ATMSwitchSpec) SetDefaults() { s.SwitchParams = atmnet.DefaultSwitchParams() }

// ATMRouteSpec is one route of a switch: cells arriving on link In with
// label VC leave on link Out relabelled OutVC.
type ATMRouteSpec struct {
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

// ATMSpec binds one ATM card of a host's machine to a link, and gives it
// the IP interface's address and VC table. [host.atm.params] and
// [host.atm.driver] override keys of the card's [device.params] and
// [device.driver] for this host (LoadExperiment applies them).
type ATMSpec struct {
	Device  string           `toml:"device" help:"the [[device]] name of an atmtaxi card in the host's machine file"`
	Link    string           `toml:"link" help:"the [[atm_link]] whose host end (a) the card's line is"`
	IP      ethersim.IP4     `toml:"ip" help:"IPv4 address of the host on this card (0.0.0.0: no Internet protocols on it)"`
	Netmask ethersim.IP4     `toml:"netmask" help:"subnet mask of the logical IP subnet"`
	MTU     int              `toml:"mtu" min:"0" max:"65527" help:"IP MTU of the card's interface (0: the machine file's driver.mtu, 9180 by default); sets IP's on the card with the host's address"`
	VCs     []drvatm.VCEntry `toml:"vc" help:"the card's static VC table for IP: each neighbour's VC (added to the machine file's driver.vc)"`
}

// SetDefaults fills a new [[host.atm]] with a class C netmask.
func (a *ATMSpec) SetDefaults() { a.Netmask = ethersim.IP4{255, 255, 255, 0} }

// ATMCard is a host's Yes V2 with its driver and the link end it is
// plugged into (nil: unplugged). It is one of the components workloads
// find by type; for the measuring programs over IP it is a card whose
// frames are RFC 2684 LLC/SNAP over AAL5 (card.LLCSNAP), seen as each
// PDU's first cell arrives (Received) and whole once its last has
// (Whole).
type ATMCard struct {
	Name   string // the [[device]] name
	Dev    *devatm.Device
	Driver *drvatm.Driver
	End    *atmnet.End
	Spec   *ATMSpec
	port   *atmnet.Port // the switch port on the far end, or nil
	// received fires the first cell of each PDU reaching the card; inPDU
	// says which VCs are inside a PDU, made when it is first listened to.
	received trace.Source[[]byte]
	inPDU    map[atmnet.VC]bool
	// whole fires each PDU once its last cell is in; gather holds the
	// payloads of each VC's PDU so far, made when it is first listened
	// to.
	whole  trace.Source[[]byte]
	gather map[atmnet.VC][]byte
}

var (
	_ atmnet.Receiver  = (*ATMCard)(nil)
	_ card.Card        = (*ATMCard)(nil)
	_ card.Reassembler = (*ATMCard)(nil)
	_ card.FIFO        = (*ATMCard)(nil)
	_ card.DMAMeter    = (*ATMCard)(nil)
)

// Link implements card.Card: AAL5 PDUs carrying RFC 2684 routed LLC/SNAP,
// handed over at their first cell.
func (a *ATMCard) Link() card.Link { return card.LLCSNAP }

// Received implements card.Card: it fires when the first cell of a PDU
// (on any VC) has arrived with a good header, with that cell's 48
// payload bytes, the PDU as far as it has come.
func (a *ATMCard) Received() *trace.Source[[]byte] { return &a.received }

// Whole implements card.Reassembler: it fires when the last cell of a PDU
// (the one with the header indication flag) has arrived with a good
// header, with the AAL5 CPCS-SDU its VC's cells since the one before
// carried (padding and trailer removed by the trailer's length; a PDU
// whose length does not fit its cells, as after a lost cell, is not
// fired). It only looks: the card's CRC check and the driver's
// reassembly are the model's.
func (a *ATMCard) Whole() *trace.Source[[]byte] { return &a.whole }

// wholeCell gathers a cell for Whole's listeners.
func (a *ATMCard) wholeCell(c *atmnet.Cell) {
	if a.gather == nil {
		a.gather = map[atmnet.VC][]byte{}
	}
	vc := c.VC()
	b := append(a.gather[vc], c[atmnet.HeaderSize:]...)
	if !c.EndOfPDU() {
		a.gather[vc] = b
		return
	}
	a.gather[vc] = b[:0]
	if len(b) < header.AAL5TrailerLen {
		return
	}
	n := int(binary.BigEndian.Uint16(b[len(b)-6:]))
	if pad := len(b) - header.AAL5TrailerLen - n; pad < 0 || pad >= atmnet.PayloadSize {
		return
	}
	a.whole.Fire(b[:n])
}

// ReceiveCell implements atmnet.Receiver: the listeners look, then the
// board takes the cell.
func (a *ATMCard) ReceiveCell(c *atmnet.Cell) {
	if a.received.Listened() && c.HECOK() {
		if a.inPDU == nil {
			a.inPDU = map[atmnet.VC]bool{}
		}
		vc := c.VC()
		if !a.inPDU[vc] {
			a.received.Fire(c[atmnet.HeaderSize:])
		}
		a.inPDU[vc] = !c.EndOfPDU()
	}
	if a.whole.Listened() && c.HECOK() {
		a.wholeCell(c)
	}
	a.Dev.ReceiveCell(c)
}

// DeviceName is the card's [[device]] name.
func (a *ATMCard) DeviceName() string { return a.Name }

// Plugged reports whether the card is on a link.
func (a *ATMCard) Plugged() bool { return a.End != nil }

// DMABusy returns the board's summed DMA busy time in each direction:
// memory to interface (transmit) and interface to memory (receive).
func (a *ATMCard) DMABusy() (read, write sim.Time) {
	s := a.Dev.Stats()
	return s.DMAReadBusy, s.DMAWriteBusy
}

// FIFO implements card.FIFO: the cells crossing between the host and the
// board's FIFOs (devices/atmtaxi Device.FIFO).
func (a *ATMCard) FIFO() *trace.Source[card.FIFOCell] { return &a.Dev.FIFO }

// LinePayloadCeiling is the 48-byte payload rate of the card's line in
// bit/s, 0 when unplugged.
func (a *ATMCard) LinePayloadCeiling() float64 {
	if a.End == nil {
		return 0
	}
	return a.End.Link().Params().PayloadCeiling()
}

// atmDevice is the card's register window as the device registry sees
// it: the board's registers, named as the board is.
type atmDevice struct{ *ATMCard }

var (
	_ Device             = atmDevice{}
	_ memory.BlockDevice = atmDevice{}
	_ memory.Peeker      = atmDevice{}
)

func (a atmDevice) Name() string                         { return a.Dev.Name() }
func (a atmDevice) Read(off uint64, size int) uint64     { return a.Dev.Read(off, size) }
func (a atmDevice) Write(off uint64, size int, v uint64) { a.Dev.Write(off, size, v) }
func (a atmDevice) ReadBlock(off uint64, width int, p []byte) {
	a.Dev.ReadBlock(off, width, p)
}
func (a atmDevice) WriteBlock(off uint64, width int, p []byte) {
	a.Dev.WriteBlock(off, width, p)
}
func (a atmDevice) Peek(off uint64) (uint64, bool) { return a.Dev.Peek(off) }

// Counters reports the board's, the driver's, the IP interface's and the
// line's figures, and the far switch port's when there is one.
func (a *ATMCard) Counters() []report.Counter {
	c, d := a.Dev.Stats(), a.Driver.Stats()
	out := []report.Counter{
		{Name: "card.tx_cells", Value: c.TxCells}, {Name: "card.rx_cells", Value: c.RxCells},
		{Name: "card.rx_overflow", Value: c.RxOverflow}, {Name: "card.rx_bad_hec", Value: c.RxBadHEC},
		{Name: "card.dma_transfers", Value: c.DMATransfers}, {Name: "card.dma_bytes", Value: c.DMABytes},
		{Name: "card.dma_errors", Value: c.DMAErrors}, {Name: "card.interrupts", Value: c.Interrupts},
		{Name: "card.tx_crc_pdus", Value: c.TxCRCPDUs}, {Name: "card.rx_crc_pdus", Value: c.RxCRCPDUs},
		{Name: "card.sort_cells", Value: c.SortCells}, {Name: "card.sort_pdus", Value: c.SortPDUs},
		{Name: "card.sort_no_buffer", Value: c.SortNoBuffer},
		{Name: "driver.tx_pdus", Value: d.TxPDUs}, {Name: "driver.tx_cells", Value: d.TxCells},
		{Name: "driver.tx_dmas", Value: d.TxDMAs}, {Name: "driver.tx_spins", Value: d.TxSpins},
		{Name: "driver.tx_deferred", Value: d.TxDeferred}, {Name: "driver.tx_paced", Value: d.TxPaced},
		{Name: "driver.rx_cells", Value: d.RxCells}, {Name: "driver.rx_pdus", Value: d.RxPDUs},
		{Name: "driver.rx_no_vc", Value: d.RxNoVC}, {Name: "driver.rx_seq_errors", Value: d.RxSeqErrors},
		{Name: "driver.rx_too_long", Value: d.RxTooLong}, {Name: "driver.rx_no_buffer", Value: d.RxNoBuffer},
		{Name: "driver.rx_bad_crc", Value: d.RxBadCRC}, {Name: "driver.rx_bad_length", Value: d.RxBadLength},
		{Name: "driver.rx_bad_llc", Value: d.RxBadLLC}, {Name: "driver.rx_broken", Value: d.RxBroken},
		{Name: "driver.rx_socket_full", Value: d.RxSocketFull}, {Name: "driver.overruns", Value: d.Overruns},
		{Name: "driver.interrupts", Value: d.Interrupts},
	}
	if f := a.Driver.Interface(); f != nil {
		s := f.Stats()
		out = append(out, report.Counter{Name: "ip.tx_frames", Value: s.TxFrames}, report.Counter{Name: "ip.rx_frames", Value: s.RxFrames},
			report.Counter{Name: "ip.no_vc", Value: s.NoVC}, report.Counter{Name: "ip.tx_drops", Value: s.TxDrops})
	}
	if a.End != nil {
		e := a.End.Stats()
		out = append(out, report.Counter{Name: "line.tx_cells", Value: e.TxCells}, report.Counter{Name: "line.rx_cells", Value: e.RxCells},
			report.Counter{Name: "line.lost", Value: e.Lost}, report.Counter{Name: "line.corrupted", Value: e.Corrupted})
	}
	if a.port != nil {
		p := a.port.Stats()
		out = append(out, report.Counter{Name: "switch_port.tx_cells", Value: p.TxCells},
			report.Counter{Name: "switch_port.queue_drops", Value: p.QueueDrops},
			report.Counter{Name: "switch_port.queue_peak", Value: uint64(p.QueuePeak)})
	}
	return out
}

// atmSpec returns the experiment's binding of device, or nil.
func (h *Host) atmSpec(device string) *ATMSpec {
	for i := range h.HostSpec.ATM {
		if h.HostSpec.ATM[i].Device == device {
			return &h.HostSpec.ATM[i]
		}
	}
	return nil
}

// atmNet is the ATM side of the experiment's network.
type atmNet struct {
	*atmnet.Network
	links  map[string]*atmnet.Link
	ports  map[string]*atmnet.Port // by link: the switch port on its end b
	pcaps  []string                // links with a capture, in experiment order
	pcap   map[string]*bytes.Buffer
	traces []string
	trace  map[string]*atmTrace // by link
	byEnd  map[string]*atmTrace // by end name, for the trace listener
}

type atmTrace struct {
	buf bytes.Buffer
	w   *atmnet.TraceWriter
}

// buildATM creates the experiment's links and switches.
func (n *Network) buildATM(k *sim.Kernel, links []ATMLinkSpec, switches []ATMSwitchSpec) error {
	a := &atmNet{Network: atmnet.New(k), links: map[string]*atmnet.Link{}, ports: map[string]*atmnet.Port{},
		pcap: map[string]*bytes.Buffer{}, trace: map[string]*atmTrace{}, byEnd: map[string]*atmTrace{}}
	n.atm = a
	for _, s := range links {
		var l *atmnet.Link
		var err error
		if s.Loopback {
			l, err = a.NewLoopback(s.Name, s.LinkParams)
		} else {
			l, err = a.NewLink(s.Name, s.LinkParams)
		}
		if err != nil {
			return err
		}
		a.links[s.Name] = l
		if err := l.A().SetFaults(s.Faults); err != nil {
			return fmt.Errorf("atm_link %q: faults: %w", s.Name, err)
		}
		if !s.Loopback {
			if err := l.B().SetFaults(s.NetFaults); err != nil {
				return fmt.Errorf("atm_link %q: net_faults: %w", s.Name, err)
			}
		}
		if s.Pcap && n.capture {
			var buf bytes.Buffer
			if err := l.Tap(&buf); err != nil {
				return err
			}
			a.pcaps = append(a.pcaps, s.Name)
			a.pcap[s.Name] = &buf
		}
		if s.Trace && n.capture {
			t := &atmTrace{}
			t.w = atmnet.NewTraceWriter(&t.buf)
			a.traces = append(a.traces, s.Name)
			a.trace[s.Name] = t
			a.byEnd[l.A().Name()] = t
			if !s.Loopback {
				a.byEnd[l.B().Name()] = t
			}
		}
	}
	if len(a.traces) > 0 {
		a.Trace.Connect(func(r atmnet.TraceRecord) {
			if t := a.byEnd[r.Where]; t != nil {
				t.w.Record(r)
			}
		})
	}
	for _, s := range switches {
		sw, err := a.NewSwitch(s.Name, s.SwitchParams)
		if err != nil {
			return err
		}
		index := map[string]int{}
		for _, name := range s.Ports {
			l := a.links[name]
			if l == nil || l.B() == nil {
				return fmt.Errorf("atm_switch %q: port %q is not a link with a network end", s.Name, name)
			}
			i, err := sw.Connect(l.B())
			if err != nil {
				return err
			}
			index[name] = i
			a.ports[name] = sw.Ports()[i]
		}
		for _, r := range s.Routes {
			in, ok1 := index[r.In]
			out, ok2 := index[r.Out]
			if !ok1 || !ok2 {
				return fmt.Errorf("atm_switch %q: route %s -> %s names a link that is not a port", s.Name, r.In, r.Out)
			}
			to := r.outVC()
			if err := sw.Route(in, r.VC.VC, out, to); err != nil {
				return err
			}
			if r.Duplex {
				if err := sw.Route(out, to, in, r.VC.VC); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (r ATMRouteSpec) outVC() atmnet.VC {
	if r.OutVC.Set {
		return r.OutVC.VC
	}
	return r.VC.VC
}

// atmEnd returns the host end of the link called name.
func (n *Network) atmEnd(name string) (*atmnet.End, error) {
	if n.atm == nil || n.atm.links[name] == nil {
		return nil, fmt.Errorf("atm link %q is not defined in an [[atm_link]]", name)
	}
	return n.atm.links[name].A(), nil
}

// atmPort returns the switch port on the link's network end, or nil.
func (n *Network) atmPort(link string) *atmnet.Port {
	if n.atm == nil {
		return nil
	}
	return n.atm.ports[link]
}

// ATM returns the experiment's ATM network (nil before it is built).
func (n *Network) ATM() *atmnet.Network {
	if n.atm == nil {
		return nil
	}
	return n.atm.Network
}

// atmCaptures returns the links' pcap files and cell traces, in the
// experiment's order.
func (n *Network) atmCaptures() []Capture {
	if n.atm == nil {
		return nil
	}
	var out []Capture
	for _, name := range n.atm.pcaps {
		out = append(out, Capture{Segment: name, Data: n.atm.pcap[name].Bytes()})
	}
	for _, name := range n.atm.traces {
		t := n.atm.trace[name]
		_ = t.w.Flush() // a bytes.Buffer does not fail
		out = append(out, Capture{Segment: name, Ext: ".cells", Data: t.buf.Bytes()})
	}
	return out
}

// atmCard returns the ATM card called device, or nil.
func (h *Host) atmCard(device string) *ATMCard {
	for _, a := range h.ATMCards {
		if a.Name == device {
			return a
		}
	}
	return nil
}

// checkATM finds what no single key of the ATM tables shows: names,
// references between links, switches and hosts, ends used twice, routes
// given twice.
func checkATM(f *config.File, e *Experiment) config.Errors {
	var errs config.Errors
	at := func(key ...string) []string { return key }
	names := map[string]string{} // link and switch names: one namespace
	files := map[string]bool{}   // pcap file names of the Ethernet segments
	for _, sg := range e.Segments {
		if sg.Pcap {
			files[sg.Name] = true
		}
	}
	links := map[string]*ATMLinkSpec{}
	for i := range e.ATMLinks {
		l := &e.ATMLinks[i]
		k := strconv.Itoa(i)
		if err := validName(l.Name); err != nil {
			errs = append(errs, f.Errorf(at("atm_link", k, "name"), "%v", err))
		} else if what, dup := names[l.Name]; dup {
			errs = append(errs, f.Errorf(at("atm_link", k, "name"), "%q is already the name of an %s", l.Name, what))
		} else if l.Pcap && files[l.Name] {
			errs = append(errs, f.Errorf(at("atm_link", k, "pcap"), "%s.pcap is already segment %q's capture", l.Name, l.Name))
		}
		names[l.Name] = "atm_link"
		links[l.Name] = l
		if l.Loopback && l.NetFaults != (atmnet.FaultParams{}) {
			errs = append(errs, f.Errorf(at("atm_link", k, "net_faults"), "a loop-back cable has one end: its faults are in faults"))
		}
	}
	netEnd := map[string]string{} // link -> switch using its end b
	for i, s := range e.ATMSwitches {
		k := strconv.Itoa(i)
		if err := validName(s.Name); err != nil {
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
	ips := map[ethersim.IP4]string{}
	for _, h := range e.Hosts {
		for _, n := range h.NICs {
			if n.IP != (ethersim.IP4{}) {
				ips[n.IP] = h.Name + "." + n.Device
			}
		}
	}
	for i, h := range e.Hosts {
		devs := map[string]bool{}
		for j, a := range h.ATM {
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
			if a.IP != (ethersim.IP4{}) {
				if prev := ips[a.IP]; prev != "" {
					errs = append(errs, f.Errorf(key("ip"), "%v is already %s's", a.IP, prev))
				}
				ips[a.IP] = where
			}
		}
	}
	return errs
}

// decodeATMOverrides checks every [host.atm.params] and
// [host.atm.driver] table on the defaults (so that a wrong key is
// reported before any machine file is read); applyATM decodes them onto
// the machine's tables once it is.
func decodeATMOverrides(f *config.File, e *Experiment) (bad map[[2]int]bool, errs config.Errors) {
	bad = map[[2]int]bool{}
	for i := range e.Hosts {
		for j := range e.Hosts[i].ATM {
			hk, jk := strconv.Itoa(i), strconv.Itoa(j)
			for _, t := range []struct {
				table string
				v     any
			}{{"params", ptr(devatm.DefaultParams())}, {"driver", ptr(drvatm.DefaultParams())}} {
				if !f.Has("host", hk, "atm", jk, t.table) {
					continue
				}
				if err := f.DecodeInto(t.v, "host", hk, "atm", jk, t.table); err != nil {
					bad[[2]int{i, j}] = true
					var es config.Errors
					if errors.As(err, &es) {
						errs = append(errs, es...)
					}
				}
			}
		}
	}
	return bad, errs
}

func ptr[T any](v T) *T { return &v }

// applyATM binds host i's ATM cards to its machine: the device must be
// an atmtaxi; the experiment's overrides, MTU and VC table are applied
// to the host's copy of the machine's tables and checked together; the
// IP MTU follows the card with the host's address.
func applyATM(f *config.File, e *Experiment, i int, bad map[[2]int]bool, ipOnNIC bool) config.Errors {
	var errs config.Errors
	h := &e.Hosts[i]
	hk := strconv.Itoa(i)
	for j := range h.ATM {
		a := &h.ATM[j]
		jk := strconv.Itoa(j)
		key := func(x ...string) []string { return append([]string{"host", hk, "atm", jk}, x...) }
		var dev *DeviceSpec
		for k := range h.Machine.Devices {
			if h.Machine.Devices[k].Name == a.Device {
				dev = &h.Machine.Devices[k]
			}
		}
		if dev == nil || dev.Type != "atmtaxi" {
			errs = append(errs, f.Errorf(key("device"), "machine %q has no atmtaxi device %q", h.Machine.Machine.Name, a.Device))
			continue
		}
		if bad[[2]int{i, j}] {
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
		if a.IP != (ethersim.IP4{}) && !ipOnNIC {
			h.Machine.Inet.MTU = drv.MTU
			ipOnNIC = true // the first card with an address carries IP
		}
	}
	return errs
}
