// Package part is the contract between simkron's assembler (package
// machine) and the parts a simulated host and its network are built
// from, and the registry the parts join. A part is a package of its own
// (under machine/parts) that declares its tables of the config files,
// checks them at their lines, builds itself, lists the components it adds
// to a host, and registers itself from an init function, as a workload
// does with package workload. Four kinds of part:
//
//   - a network technology (Technology: Ethernet, ATM): the experiment's
//     tables of its network ([[segment]]; [[atm_link]], [[atm_switch]]),
//     the tables that plug a host's cards into it ([[host.nic]],
//     [[host.atm]]), the network it builds for a run, and the cards that
//     plug into it;
//   - a host environment (Environment: the BSD-style kernel, the TOP
//     host): the software a host runs its programs in, chosen by its
//     machine file, booted before the devices, started after them;
//   - a device model (DeviceType: ne2000, simoseth, atmtaxi, timer, pit)
//     with the drivers each environment drives it with (Driver);
//   - a protocol family (Family: inet, ISO, VIA) that a host's
//     environment runs on its cards.
//
// Package machine holds the order of assembly and knows no part by name:
// it decodes the tables every registered part declares, runs their
// checks, builds each host (memory, core, environment, buses, devices,
// families, start) and the network, and takes the result. Adding a part
// adds a package and one import line to machine/parts; it edits no other.
//
// Parts may know each other (the TOP environment drives NE2000s through
// its packet driver; the ISO family runs on an Ethernet card or an ATM
// card with an address): a part names another through the capability
// interfaces of package card, or by importing it.
package part

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Problem is something wrong with a config file that a part finds, at
// Key, a key path of the file (["host", "0", "nic", "1", "mtu"]), or at
// the whole file when Key is nil. The assembler reports it with the file
// and line of the key.
type Problem struct {
	Key []string
	Msg string
}

// Problemf returns a Problem at key.
func Problemf(key []string, format string, args ...any) Problem {
	return Problem{Key: key, Msg: fmt.Sprintf(format, args...)}
}

// Under returns the problems with prefix put before each key: a part
// that checks a table reports keys relative to it.
func Under(prefix []string, ps []Problem) []Problem {
	out := make([]Problem, len(ps))
	for i, p := range ps {
		out[i] = Problem{Key: append(slices.Clone(prefix), p.Key...), Msg: p.Msg}
	}
	return out
}

// MaxName is the longest name of a host, segment, link, switch, bus or
// device, in bytes. Names become file names (<out>/SEGMENT.pcap,
// <out>/LINK.cells) and parts of the hierarchical names in reports
// (hostA.nic0.rx): 64 is far from a file system's 255 and far beyond a
// name a person reads.
const MaxName = 64

// ValidName checks a name of a host, segment, link, switch, bus or
// device: letters, digits, '-' and '_', at most MaxName bytes.
func ValidName(s string) error {
	if s == "" {
		return fmt.Errorf("name is empty")
	}
	if len(s) > MaxName {
		return fmt.Errorf("name %q… is %d characters long; a name has at most %d (it names files and counters)", s[:16], len(s), MaxName)
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return fmt.Errorf("name %q may hold only letters, digits, '-' and '_'", s)
		}
	}
	return nil
}

// The registry. Each kind is kept in the order parts of it are
// assembled: by Order, then by name.
var (
	technologies []*Technology
	environments []*Environment
	families     []*Family
	devices      = map[string]*DeviceType{}
	drivers      = map[[2]string]*Driver{}
	names        = map[string]string{} // every part's name, for duplicates
)

func claim(kind, name string) {
	if name == "" || strings.ToLower(name) != name {
		panic(fmt.Sprintf("part: %s %q: a part's name is lower-case and not empty", kind, name))
	}
	if other, dup := names[kind+"\x00"+name]; dup {
		panic(fmt.Sprintf("part: %s %q registered twice (%s)", kind, name, other))
	}
	names[kind+"\x00"+name] = kind
}

func insert[T any](list []*T, t *T, order func(*T) (int, string)) []*T {
	list = append(list, t)
	sort.SliceStable(list, func(i, j int) bool {
		oi, ni := order(list[i])
		oj, nj := order(list[j])
		if oi != oj {
			return oi < oj
		}
		return ni < nj
	})
	return list
}
