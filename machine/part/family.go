package part

import (
	"fmt"
	"slices"

	"simkron/stats"
)

// Family is a protocol family a host's environment runs on its cards:
// the Internet protocols, the ISO family, the VIA agent.
type Family struct {
	Name string
	// Order places it among the families: they are built, and their
	// components listed, in this order.
	Order int
	// Section is its table of the machine file ([inet], [iso], [via]).
	Section Section
	// Environment is the environment it runs in ("kernel").
	Environment string
	// Noun names it in messages: "VIA agent".
	Noun string
	// Enabled reports whether the decoded table asks for the family (a
	// table's enabled key); nil: the family runs wherever Build finds
	// what it needs (the Internet protocols, on a card with an address).
	Enabled func(params any) bool
	// Load, when set, adjusts the family's params of host h once its
	// machine file is read and its cards bound, before the experiment's
	// [host.KEY] overrides them (the Internet protocols take the MTU of
	// the card they run on).
	Load func(h *HostSpec, params any)
	// Build starts the family on host h once its devices are built,
	// adding its components (Host.AddFamily); a family that finds nothing
	// to run on may build nothing. It is called for an enabled family
	// only.
	Build func(h *Host, params any) error
	// Connect, when set, joins the families of every host of the run once
	// all are built (static routes between them).
	Connect func(hosts []*Host)
	// Counters declares the stats structs its components report
	// (Host.AddCounters), each under its name, as zero values: simkron
	// counters lists them.
	Counters []stats.Group
}

// RegisterFamily adds a protocol family; a name taken twice, or a family
// without Build or a table, is a simulator bug.
func RegisterFamily(f Family) {
	claim("family", f.Name)
	if f.Build == nil || f.Section.Key == "" || f.Section.Defaults == nil {
		panic(fmt.Sprintf("part: family %q needs Build and a Section", f.Name))
	}
	families = insert(families, &f, func(f *Family) (int, string) { return f.Order, f.Name })
}

// Families returns the families in their order.
func Families() []*Family { return slices.Clone(families) }

// Sections returns the machine-file tables of every environment and
// family, environments first, each kind in its order.
func Sections() []Section {
	var out []Section
	for _, e := range environments {
		out = append(out, e.Section)
	}
	for _, f := range families {
		out = append(out, f.Section)
	}
	return out
}
