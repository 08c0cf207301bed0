package ethersim

import (
	"fmt"
	"slices"
	"strings"

	"simkron/sim"
)

// Network is the network of one simulation: its segments and, like
// SimOS's EtherSim, a table of the hosts on it with their addresses.
type Network struct {
	k        *sim.Scheduler
	hosts    map[string]HostEntry
	byMAC    map[MAC]string
	byIP     map[IP4]string
	segments map[string]*Segment
}

// HostEntry is one row of the host table.
type HostEntry struct {
	Name string
	MAC  MAC
	IP   IP4
}

// NewNetwork returns an empty network driven by k.
func NewNetwork(k *sim.Scheduler) *Network {
	return &Network{
		k:        k,
		hosts:    map[string]HostEntry{},
		byMAC:    map[MAC]string{},
		byIP:     map[IP4]string{},
		segments: map[string]*Segment{},
	}
}

// Scheduler returns the event scheduler the network runs on.
func (n *Network) Scheduler() *sim.Scheduler { return n.k }

// RegisterHost adds a host to the table. A name, MAC or IP address that is
// already registered is an error; the zero IP address is none (a host that
// runs no Internet protocols), which any number of hosts may have.
func (n *Network) RegisterHost(name string, mac MAC, ip IP4) error {
	switch {
	case name == "":
		return fmt.Errorf("ethersim: host with MAC %v has no name", mac)
	case n.hosts[name] != HostEntry{}:
		return fmt.Errorf("ethersim: host %q registered twice", name)
	case n.byMAC[mac] != "":
		return fmt.Errorf("ethersim: host %q: MAC %v already belongs to %q", name, mac, n.byMAC[mac])
	case ip != IP4{} && n.byIP[ip] != "":
		return fmt.Errorf("ethersim: host %q: IP %v already belongs to %q", name, ip, n.byIP[ip])
	}
	n.hosts[name] = HostEntry{Name: name, MAC: mac, IP: ip}
	n.byMAC[mac] = name
	if ip != (IP4{}) {
		n.byIP[ip] = name
	}
	return nil
}

// Hosts returns the host table sorted by name.
func (n *Network) Hosts() []HostEntry {
	out := make([]HostEntry, 0, len(n.hosts))
	for _, h := range n.hosts {
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b HostEntry) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// HostByIP looks a host up by IP address (a configured stand-in for ARP).
func (n *Network) HostByIP(ip IP4) (HostEntry, bool) {
	name, ok := n.byIP[ip]
	return n.hosts[name], ok
}

// HostByMAC looks a host up by MAC address.
func (n *Network) HostByMAC(mac MAC) (HostEntry, bool) {
	name, ok := n.byMAC[mac]
	return n.hosts[name], ok
}

// NewSegment creates a segment called name (unique in the network).
func (n *Network) NewSegment(name string, p SegmentParams) (*Segment, error) {
	if name == "" {
		return nil, fmt.Errorf("ethersim: segment has no name")
	}
	if n.segments[name] != nil {
		return nil, fmt.Errorf("ethersim: segment %q created twice", name)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("ethersim: segment %q: %w", name, err)
	}
	s := newSegment(n, name, p)
	n.segments[name] = s
	return s, nil
}

// Segments returns the segments sorted by name.
func (n *Network) Segments() []*Segment {
	out := make([]*Segment, 0, len(n.segments))
	for _, s := range n.segments {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *Segment) int { return strings.Compare(a.name, b.name) })
	return out
}
