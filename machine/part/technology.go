package part

import (
	"fmt"
	"slices"
	"strconv"

	"simkron/config"
	"simkron/report"
	"simkron/sim"
)

// Technology is a network technology: the experiment's tables of its
// network, the tables that plug a host's cards into it, and the network
// it builds for a run. Its device models (DeviceType.Technology) plug
// their cards in as they are built.
type Technology struct {
	Name string
	// Order places it among the technologies: their tables are checked,
	// their networks built and their cards listed in this order.
	Order int
	Help  string
	// Noun names its cards in messages ("ATM cards").
	Noun string
	// Tables returns a pointer to a new struct of the experiment's tables
	// of its network, decoded from the top of the experiment file by its
	// toml tags (SetDefaults methods of table types give defaults).
	Tables func() any
	// Bindings returns a pointer to a new struct of a [[host]]'s tables
	// that plug its cards in, decoded at host[i] by its toml tags.
	Bindings func() any
	// Entries returns the bindings' entries in order, each with its key
	// relative to its [[host]] table (["nic", "0"]).
	Entries func(bindings any) []Entry
	// Decode, when set, runs once the tables and every host's bindings
	// are decoded, before keys nothing took are reported: it may check
	// what the decoder does not take (decoding a table onto defaults
	// before the machine files are read, refusing a table in a place it
	// has no meaning), marking those keys used. f is the experiment file,
	// at whose keys every problem is reported.
	Decode func(f *config.File, tables any, hosts []HostSpec) config.Errors
	// Check finds what no single key of its tables and bindings shows,
	// before the machine files are read: names, references between
	// tables, addresses given twice.
	Check func(f *config.File, tables any, hosts []HostSpec) config.Errors
	// Apply binds host i's cards to its machine once its machine file is
	// read (hosts[i].Machine is set): the bound devices must be the
	// technology's, and what the experiment sets of them (an MTU, a
	// [host.atm.params] table) is applied to the host's copy of the
	// machine's tables and checked.
	Apply func(f *config.File, tables any, hosts []HostSpec, i int) config.Errors
	// Captures lists the files its network writes when asked (pcap
	// captures, cell traces), so that two technologies' files cannot
	// share a name.
	Captures func(tables any) []CaptureFile
	// Build builds its network for a run from the decoded tables; with
	// capture, it records the captures the tables ask for. f is the
	// experiment file (nil when built in code), for errors at its keys.
	Build func(k *sim.Scheduler, f *config.File, tables any, capture bool) (Network, error)
	// Refuse, when set, returns the problem that keeps a command other
	// than simkron run from running the experiment (a bridge to real
	// hosts), or nil.
	Refuse func(tables any, command string) *Problem
	// Joins, when set, returns what its network joins among the
	// experiment's hosts: each group of hosts (indexes into hosts) that
	// its elements connect, directly or through one another (the hosts on
	// one segment; the hosts on the links of one switch), with the names
	// of those elements as its results and captures name them. Hosts in
	// no common group exchange nothing through it, so that a run may
	// simulate them apart (machine's parts, each on its own event
	// scheduler). paced reports a connection to real hosts, which keeps
	// the whole run in one part. Without Joins, every host with a binding
	// of the technology is in one group with all its elements.
	Joins func(tables any, hosts []HostSpec) (groups []Join, paced bool)
}

// Join is one group of hosts a network connects: the hosts, as indexes
// into the experiment's, and the network's elements that connect them.
type Join struct {
	Hosts    []int
	Elements []string
	// Lookahead, when positive, says that the elements let their hosts
	// run apart, each part on its own clock (package machine's linked
	// parts): nothing one host does reaches another through them sooner
	// than Lookahead after it happens, and what will is known by then
	// (a switch's full-duplex links). The network is then a Splitter.
	Lookahead sim.Time
}

// Splitter is a network whose elements with a Lookahead (Join) may be
// spread over several parts of a run, each with its own instance of the
// network and its own event scheduler.
type Splitter interface {
	// Split makes this instance part self's share of element, whose
	// hosts (indexes into hosts) are in the parts partOf gives; post
	// hands a message to another part's instance. It is called before
	// any host is built.
	Split(element string, hosts []HostSpec, partOf func(host int) int, self int, post func(part int, m Message)) error
	// Deliver schedules a message another part's instance posted; it is
	// called before this part's clock reaches the message's time.
	Deliver(m Message)
}

// Message is what a part's instance of a network hands another's: of
// Element, due at At, no sooner than the element's lookahead after it
// was posted.
type Message struct {
	Element string
	At      sim.Time
	Data    any
}

// Entry is one table of a [[host]] binding a card: its key relative to
// the [[host]] table and what it says.
type Entry struct {
	Key []string
	Binding
}

// EntriesOf returns an entry for each binding of bs, keyed [key, index]
// (["nic", "0"], ["nic", "1"]): a technology's Entries over its array of
// tables.
func EntriesOf[B any, PB interface {
	*B
	Binding
}](key string, bs []B) []Entry {
	out := make([]Entry, 0, len(bs))
	for j := range bs {
		out = append(out, Entry{Key: []string{key, strconv.Itoa(j)}, Binding: PB(&bs[j])})
	}
	return out
}

// Binding is what every technology's binding of a card says.
type Binding interface {
	// DeviceName is the [[device]] name of the card in the host's
	// machine file.
	DeviceName() string
	// IPv4 returns the address and netmask the experiment gives the
	// card, and false when it gives none.
	IPv4() (addr, mask [4]byte, ok bool)
	// InterfaceMTU is the interface MTU the experiment sets on the card
	// (0: the machine file's).
	InterfaceMTU() int
	// IPMTU is the MTU IP has on the card when the host's Internet
	// protocols run on it (0: the machine file's [inet] mtu), once the
	// technology's Apply has run.
	IPMTU() int
}

// CaptureFile is a file a network writes: its name in the output folder,
// the key of the experiment that asks for it, and what it is
// ("segment \"lan0\"").
type CaptureFile struct {
	Name string
	Key  []string
	What string
}

// Network is a technology's network as built for a run.
type Network interface {
	// Captures returns its pcap files and traces recorded so far, in the
	// experiment's order.
	Captures() []Capture
	// Report adds its part to the run's result (the segments' figures).
	Report(res *report.Result)
}

// Capture is one pcap file or trace of a network: Ext is the file's
// extension ("" for ".pcap"), Segment the segment's or link's name.
type Capture struct {
	Segment string
	Ext     string
	Data    []byte
}

// FileName is the capture's file name: SEGMENT.pcap, or LINK.cells for
// a cell trace.
func (c Capture) FileName() string {
	if c.Ext == "" {
		return c.Segment + ".pcap"
	}
	return c.Segment + c.Ext
}

// Paced is a network that exchanges frames with real hosts (a bridge to
// a TAP device): a run with one is paced to the wall clock, and its
// result is not determined by its config and seed alone.
type Paced interface {
	Network
	// Paced reports whether the network has a connection to real hosts.
	Paced() bool
	// Inbox is how many frames from real hosts may wait for the
	// simulation.
	Inbox() int
	// Open opens the connections to real hosts (the one step that
	// touches the host's network), delivering through p; its errors are
	// the user's environment, each at its key of the experiment file
	// when the network was built from one.
	Open(p *sim.Pacer) error
	// Err returns the error that lost a connection, or nil.
	Err() error
	// Close closes the connections.
	Close()
	// Nondeterminism names each connection, for the result's
	// nondeterministic field ("segment lan0 to TAP sk0").
	Nondeterminism() []string
	// ReportPaced adds the connections' figures to the run's result.
	ReportPaced(res *report.Result)
}

// RegisterTechnology adds a network technology; a name taken twice, or a
// technology without Tables, Bindings, Entries or Build, is a simulator
// bug.
func RegisterTechnology(t Technology) {
	claim("technology", t.Name)
	if t.Tables == nil || t.Bindings == nil || t.Entries == nil || t.Build == nil {
		panic(fmt.Sprintf("part: technology %q needs Tables, Bindings, Entries and Build", t.Name))
	}
	technologies = insert(technologies, &t, func(t *Technology) (int, string) { return t.Order, t.Name })
}

// Technologies returns the technologies in their order.
func Technologies() []*Technology { return slices.Clone(technologies) }

// Entries returns every binding of host h, technology by technology in
// their order, each technology's in the order of its tables.
func Entries(h *HostSpec) []TechEntry {
	var out []TechEntry
	for _, t := range technologies {
		if b := h.Bindings[t.Name]; b != nil {
			for _, e := range t.Entries(b) {
				out = append(out, TechEntry{Tech: t, Entry: e})
			}
		}
	}
	return out
}

// TechEntry is an Entry with its technology.
type TechEntry struct {
	Tech *Technology
	Entry
}

// Addressed returns the binding of the card host h's Internet protocols
// run on: the first card with an address, technology by technology in
// their order, each in its machine file's device order; false when no
// card of h has an address (or its machine is not read).
func Addressed(h *HostSpec) (TechEntry, bool) {
	if h.Machine == nil {
		return TechEntry{}, false
	}
	for _, t := range technologies {
		b := h.Bindings[t.Name]
		if b == nil {
			continue
		}
		es := t.Entries(b)
		for _, d := range h.Machine.Devices {
			for _, e := range es {
				if _, _, ok := e.IPv4(); ok && e.DeviceName() == d.Name {
					return TechEntry{Tech: t, Entry: e}, true
				}
			}
		}
	}
	return TechEntry{}, false
}
