// Package latency is the request/response latency measurement of the
// Linux/SimOS study over a series of message sizes (Series; "sweep" in
// results and older text), written once over a protocol: a client sends
// messages of each size to an echo server on another host and waits for
// each to come back, and the simulator measures, per size, the send and
// the receive latency of every message at both hosts, each split by
// layer, and the client's round trip. Each protocol implements
// Protocol in the package of its workload (udp: sendto/recvfrom; tcp:
// send/recv; via; tp4), and package compare sets several series' results
// side by side. The package registers no workload. Layer APPL.
//
// The measurement is the simulator's: hooks on the measured calls'
// kernel symbols, on the cores' interrupts and on each card; the programs
// read no clock. Each latency has one definition, stated here; where the
// Linux/SimOS study defines one differently from what a user of the call
// sees, both are offered (send_span, receive_span), every report says
// which it shows, and the study's are compare's defaults:
//
//	send, "thread"   the sending thread's own cycles inside the send call
//	                 (for a TCP message larger than the send buffer, the
//	                 call's later rounds too, not the waits for ACKs); for
//	                 a system call, inside the kernel's function of the
//	                 call (sys_sendto), its trap and dispatch left out.
//	                 The default of the series.
//	send, "dma"      the study's (docs/reference/via.md sec. 5, docs/reference/inet-notes.md sec. 8):
//	                 from the call's entry until the message has left host
//	                 memory. A call made by a system call (sendto, send)
//	                 is entered where the program enters the kernel: its
//	                 trap and the system call's dispatch are the call's
//	                 cycles, as M-VIA's fast trap is VipPostSend's (the
//	                 study counts the whole call, "the number of clock
//	                 cycles required to perform sendto()"). It ends when
//	                 the call has returned, the protocol holds none
//	                 of its bytes back (a protocol says so by Conn.Unsent:
//	                 TCP's window and Nagle; TP4's credit is not yet
//	                 followed), and the card has read
//	                 every frame the host handed it and the interrupt that
//	                 says so has been handled. Every cycle of the sending
//	                 host in that span counts, by layer: the interrupts that
//	                 come in it (DMA-completion handling, DEV), the time the
//	                 core waits as DMA, and after the call has returned
//	                 whatever else the host does meanwhile as DMA too (the
//	                 message is waiting for the card then). A call that
//	                 waits for its DMA inside itself and one whose DMA
//	                 completes after it are charged by the same rule.
//	receive, "arrival"  from the arrival at the receiving card of the
//	                 message's first frame (or, if the core is busy then,
//	                 the end of the work it is doing) until the receive call
//	                 that completes it returns: every cycle of the receiving
//	                 host in that span (interrupts, softirqs, ACKs sent, the
//	                 woken thread) by layer, the time the core waits for the
//	                 rest of the message — the wire and the card — counted
//	                 as DMA. The default of the series.
//	receive, "dma"   the study's: the same span without the time the host
//	                 waited for the wire (the study leaves MAC and physical
//	                 layer effects out): the core's idle cycles count, as
//	                 DMA, only while the card's DMA engine was moving data
//	                 between the card and host memory. On a card without a
//	                 DMA engine (programmed I/O) every idle cycle is the
//	                 wire's, and the receive is the host's busy cycles.
//	round trip       the client's time from entering the send call to the
//	                 return of the receive call that brings the echo, in
//	                 microseconds.
//
// Each split by layer sums to its latency exactly.
//
// The package also holds what the other measuring programs over IP (ttcp)
// share with the series: the host they run on and the hooks they measure
// through.
package latency

import (
	"fmt"

	"simkron/card"
	"simkron/stack/header"
	"simkron/stack/inet"
	"simkron/stack/kernel"
	"simkron/stack/netdev"
	"simkron/trace"
	"simkron/workload"
)

// Endpoint is what a measuring program needs of a host.
type Endpoint struct {
	Name   string
	Kernel *kernel.Kernel
	Inet   *inet.Stack
	// Received is the trace source of the frames reaching the host's
	// card (card.Card).
	Received *trace.Source[[]byte]
	// Link is how the card frames what it carries: card.Ethernet or
	// card.LLCSNAP.
	Link card.Link
	// Whole, on a card whose Received sees a frame's first part only
	// (card.LLCSNAP: an AAL5 PDU's first cell), is the trace source of
	// each frame once all of it has arrived (card.Reassembler); nil on
	// other cards.
	Whole *trace.Source[[]byte]
	// DMA, on a bus-master card, is the trace source of its DMA engine
	// (card.BusMaster: true when it starts moving data, false when it
	// stops); nil on other cards.
	DMA *trace.Source[bool]
	// Network describes what the card is plugged into, for reports; nil
	// when the card does not say.
	Network func() string
	// TxInMemory reports whether the host still has frames to send whose
	// bytes are in its memory (queued, or with a bus-master card that has
	// not read them or whose completion is not handled yet); nil on a host
	// without a device layer.
	TxInMemory func() bool
}

// llcSNAPIPv4 is the RFC 2684 routed LLC/SNAP header of an IPv4 packet.
var llcSNAPIPv4 = [8]byte{0xAA, 0xAA, 0x03, 0, 0, 0, 0x08, 0x00}

// IPv4 returns the IPv4 packet a frame from the host's card carries, as
// far as the frame has it: its header and what follows, which may end
// before the packet does (IPv4.Payload clamps); false when it carries
// none.
func (h *Endpoint) IPv4(frame []byte) (header.IPv4, bool) {
	var ip header.IPv4
	switch h.Link {
	case card.LLCSNAP:
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
func FindHost(env workload.Env, role, name string) (*Endpoint, error) {
	h, err := FindCardHost(env, role, name)
	if err == nil && h.Inet == nil {
		err = fmt.Errorf("%s: host %q has no card with an IP address", role, name)
	}
	return h, err
}

// FindCardHost is FindHost for a program that may run without the
// Internet protocols: Inet is nil on a host without them.
func FindCardHost(env workload.Env, role, name string) (*Endpoint, error) {
	wh, err := env.Host(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", role, err)
	}
	k, _ := workload.Find[*kernel.Kernel](wh)
	in, _ := workload.Find[*inet.Stack](wh)
	cards := workload.FindAll[card.Card](wh)
	if k == nil || len(cards) == 0 {
		return nil, fmt.Errorf("%s: host %q has no network card", role, name)
	}
	c := cards[0]
	h := &Endpoint{Name: name, Kernel: k, Inet: in, Received: c.Received(), Link: c.Link()}
	if w, ok := c.(card.Reassembler); ok {
		h.Whole = w.Whole()
	}
	if d, ok := c.(card.BusMaster); ok {
		h.DMA = d.DMA()
	}
	if ns, ok := workload.Find[*netdev.Stack](wh); ok {
		h.TxInMemory = ns.TxInMemory
	}
	if n, ok := c.(card.Networked); ok {
		h.Network = n.Network
	}
	return h, nil
}

// Pair returns the two different hosts a two-party program names; roles
// are the keys that named them ("client", "server"), for errors.
func Pair(env workload.Env, roles, names [2]string) (hs [2]*Endpoint, err error) {
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
