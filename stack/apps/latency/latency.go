// Package latency is the request/response latency sweep of the
// Linux/SimOS study, written once over a transport: a client sends
// messages of each size to an echo server on another host and waits for
// each to come back, and the simulator measures, per size, the send
// latency (the sending thread's cycles inside the send call) and the
// receive latency (from the arrival at the receiving card of the first
// frame of the message until the receive call that completes it
// returns), each split by layer, over both hosts' sends and receives.
// UDP (sendto/recvfrom) and TCP (send/recv) implement the transport here;
// other protocol paths join by implementing Transport (VIA's is in
// stack/apps/vpingpong), and compare.go sets several sweeps' results side
// by side. Layer APPL.
//
// The measurement is the simulator's: hooks on the measured calls'
// kernel symbols and an observer on each card; the programs read no
// clock. The send latency is the sending thread's own cycles inside the
// call (for a TCP message larger than the send buffer that includes the
// cycles of the call's later rounds, not the time spent waiting for
// ACKs), and its split by layer sums to it exactly. The receive latency
// runs from the arrival of the message's first frame at the card (or, if
// the core is busy then, from the end of the work it is doing) until the
// receive call returns; its split counts every cycle of the receiving
// host in that span (interrupts, softirqs, ACKs sent, the woken thread)
// by layer, with the time the core waits for the rest of the message —
// the wire and the card — counted as DMA, and sums to it exactly.
//
// Two settings choose other definitions, for comparisons that need them
// (the Linux/SimOS study's). send_span = "host" makes the send latency
// every cycle of the sending host from the call's entry to its return, by
// layer, idle counted as DMA as on receive: the interrupts and deferred
// work that run while the call waits (a VIA post waiting for the NIC's
// DMA) are then in it. receive_busy = true adds the receive latency as
// the receiving host's busy cycles only — the span less the cycles the
// core was idle, which excludes the wire's and the card's time as the
// study's measurements exclude MAC and physical-layer effects.
//
// The package also holds what the other measuring programs over IP (ttcp)
// share with the sweep: the host they run on and the hooks they measure
// through.
package latency

import (
	"fmt"

	"simkron/cpu"
	"simkron/stack/header"
	"simkron/stack/inet"
	"simkron/stack/kernel"
	"simkron/workload"
)

// Host is what a measuring program needs of a host.
type Host struct {
	Name   string
	Kernel *kernel.Kernel
	Inet   *inet.Stack
	// Observe installs an observer of the frames reaching the host's
	// card; observers installed earlier keep seeing them.
	Observe func(func(frame []byte))
	// Link is how the card frames what it carries: LinkEthernet or
	// LinkLLCSNAP.
	Link string
	// ObserveWhole, on a card whose Observe sees a frame's first part
	// only (LinkLLCSNAP: an AAL5 PDU's first cell), installs an observer
	// of each frame once all of it has arrived; nil on other cards.
	ObserveWhole func(func(frame []byte))
}

// Links: what a card's frames are, for IPv4 to find its packets in them.
const (
	// LinkEthernet: Ethernet II frames (IPv4 under EtherType 0x0800),
	// whole, FCS included.
	LinkEthernet = "ethernet"
	// LinkLLCSNAP: AAL5 PDUs carrying RFC 2684 routed LLC/SNAP
	// encapsulation, handed over when their first cell arrives: the
	// frame may end after the first cell's 48 bytes.
	LinkLLCSNAP = "llc-snap"
)

// Card is what the measuring programs need of a host's network card: a
// way to watch the frames that reach it (when the last bit of an Ethernet
// frame, the first cell of an ATM PDU, arrives). The observer only looks.
// A card that frames other than Ethernet says how with LinkType.
type Card interface {
	ObserveReceive(fn func(frame []byte))
}

// llcSNAPIPv4 is the RFC 2684 routed LLC/SNAP header of an IPv4 packet.
var llcSNAPIPv4 = [8]byte{0xAA, 0xAA, 0x03, 0, 0, 0, 0x08, 0x00}

// IPv4 returns the IPv4 packet a frame from the host's card carries, as
// far as the frame has it: its header and what follows, which may end
// before the packet does (IPv4.Payload clamps); false when it carries
// none.
func (h *Host) IPv4(frame []byte) (header.IPv4, bool) {
	var ip header.IPv4
	switch h.Link {
	case LinkLLCSNAP:
		if len(frame) < len(llcSNAPIPv4)+header.IPv4MinimumSize || [8]byte(frame[:8]) != llcSNAPIPv4 {
			return nil, false
		}
		ip = header.IPv4(frame[len(llcSNAPIPv4):])
	default:
		if len(frame) < header.EthernetHeaderLen+header.IPv4MinimumSize || header.Ethernet(frame).Type() != header.EtherTypeIPv4 {
			return nil, false
		}
		ip = header.IPv4(frame[header.EthernetHeaderLen:])
	}
	if !ip.IsValid(int(ip.TotalLength())) {
		return nil, false
	}
	return ip, true
}

// FindHost returns the host called name as the measuring programs see it:
// its kernel, its Internet protocols and its first card. role is the key
// that named the host, for errors.
func FindHost(env workload.Env, role, name string) (*Host, error) {
	h, err := FindCardHost(env, role, name)
	if err == nil && h.Inet == nil {
		err = fmt.Errorf("%s: host %q has no card with an IP address", role, name)
	}
	return h, err
}

// FindCardHost is FindHost for a program that may run without the
// Internet protocols: Inet is nil on a host without them.
func FindCardHost(env workload.Env, role, name string) (*Host, error) {
	wh, err := env.Host(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", role, err)
	}
	k, _ := workload.Find[*kernel.Kernel](wh)
	in, _ := workload.Find[*inet.Stack](wh)
	cards := workload.FindAll[Card](wh)
	if k == nil || len(cards) == 0 {
		return nil, fmt.Errorf("%s: host %q has no network card", role, name)
	}
	link := LinkEthernet
	if l, ok := cards[0].(interface{ LinkType() string }); ok {
		link = l.LinkType()
	}
	h := &Host{Name: name, Kernel: k, Inet: in, Observe: cards[0].ObserveReceive, Link: link}
	if w, ok := cards[0].(interface{ ObserveWhole(func([]byte)) }); ok {
		h.ObserveWhole = w.ObserveWhole
	}
	return h, nil
}

// Pair returns the two different hosts a two-party program names; roles
// are the keys that named them ("client", "server"), for errors.
func Pair(env workload.Env, roles, names [2]string) (hs [2]*Host, err error) {
	for i := range hs {
		if hs[i], err = FindHost(env, roles[i], names[i]); err != nil {
			return hs, err
		}
	}
	if hs[0].Name == hs[1].Name {
		return hs, fmt.Errorf("%s: the %s and the %s must be different hosts", roles[1], roles[0], roles[1])
	}
	return hs, nil
}

// Watch adds enter and exit (either may be nil) to the function-entry and
// exit hooks of c, after the ones already there: the simulator's
// measurements of calls, which the programs never see.
func Watch(c *cpu.CPU, enter, exit func(c *cpu.CPU, s *cpu.Symbol)) {
	chain := func(prev, f func(*cpu.CPU, *cpu.Symbol)) func(*cpu.CPU, *cpu.Symbol) {
		switch {
		case f == nil:
			return prev
		case prev == nil:
			return f
		}
		return func(c *cpu.CPU, s *cpu.Symbol) { prev(c, s); f(c, s) }
	}
	c.Hooks.Enter = chain(c.Hooks.Enter, enter)
	c.Hooks.Exit = chain(c.Hooks.Exit, exit)
}
