package inet

import (
	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/kernel"
	"simkron/stack/netdev"
)

// ARP (RFC 826): the neighbour cache maps on-link IPv4 addresses to MAC
// addresses. A packet for an unresolved neighbour waits in the entry's
// queue while requests are retried; when the tries run out the queue is
// dropped and counted.
//
//	incomplete ──reply──► reachable ──arp_timeout──► (gone)
//	     │ arp_tries requests unanswered
//	     ▼
//	  dropped              permanent: AddNeighbour, never expires

type neighState uint8

const (
	neighIncomplete neighState = iota
	neighReachable
	neighPermanent
)

type neigh struct {
	ip      Addr
	mac     [6]byte
	state   neighState
	expires sim.Time
	queue   []netdev.Buf
	tries   int
	timer   kernel.Timer
}

type arpCache struct {
	s       *Stack
	entries map[Addr]*neigh
}

func (a *arpCache) init(s *Stack) {
	a.s = s
	a.entries = map[Addr]*neigh{}
}

func (a *arpCache) static(ip Addr, mac [6]byte) {
	a.entries[ip] = &neigh{ip: ip, mac: mac, state: neighPermanent}
}

var broadcastIP = Addr{255, 255, 255, 255}

// lookup returns the MAC of ip if it is known and fresh.
func (a *arpCache) lookup(ip Addr) ([6]byte, bool) {
	n, ok := a.entries[ip]
	if !ok {
		return [6]byte{}, false
	}
	switch n.state {
	case neighPermanent:
		return n.mac, true
	case neighReachable:
		if a.s.c.LocalTime() < n.expires {
			return n.mac, true
		}
		n.state = neighIncomplete
	}
	return [6]byte{}, false
}

// neighOutput sends the IP packet in b (data starting at the IP header) to
// the on-link neighbour next: it adds the Ethernet header when the MAC is
// known, or queues b and resolves it. t is the sending thread, which may
// sleep for room on the device; nil in softirq context, where a full
// device queue drops the packet.
func (s *Stack) neighOutput(t *kernel.Thread, b netdev.Buf, next Addr) {
	c := s.c
	c.Enter(s.sym.neigh)
	defer c.Exit(s.sym.neigh)
	var mac [6]byte
	switch {
	case next == broadcastIP || s.isSubnetBroadcast(next):
		mac = header.EthernetBroadcast
	default:
		m, ok := s.arp.lookup(next)
		if !ok {
			s.arp.enqueue(next, b)
			return
		}
		mac = m
	}
	s.linkOutput(t, b, mac, header.EtherTypeIPv4)
}

// linkOutput adds the Ethernet header and queues the frame on the device.
func (s *Stack) linkOutput(t *kernel.Thread, b netdev.Buf, dst [6]byte, etherType uint16) {
	b.Push(header.EthernetHeaderLen)
	var eh [header.EthernetHeaderLen]byte
	header.Ethernet(eh[:]).Encode(&header.EthernetFields{Dst: dst, Src: s.mac(), Type: etherType})
	s.write(b.Addr, eh[:])
	s.queueXmit(t, b)
}

// framedOutput sends the IP packet in b to the neighbour next through a
// device that frames it itself (netdev.Framer): no ARP, the device's
// table gives the link header. A neighbour the table lacks is dropped and
// counted as no route.
func (s *Stack) framedOutput(t *kernel.Thread, b netdev.Buf, next Addr) {
	n := s.framer.HeaderLen()
	b.Push(n)
	var hdr [64]byte
	if n > len(hdr) || !s.framer.Frame(hdr[:n], header.EtherTypeIPv4, next[:]) {
		s.stats.IPOutNoRoute++
		b.Free(s.k)
		return
	}
	s.write(b.Addr, hdr[:n])
	s.queueXmit(t, b)
}

// queueXmit queues a finished frame on the device, sleeping for room when
// t may (nil, or in interrupt context: a full queue drops it).
func (s *Stack) queueXmit(t *kernel.Thread, b netdev.Buf) {
	for !s.nd.Transmit(s.dev, b) {
		if t == nil || s.c.InInterrupt() {
			s.stats.NoBuffers++
			b.Free(s.k)
			return
		}
		t.Sleep(s.nd.RoomQueue(s.dev))
	}
}

// isSubnetBroadcast reports whether a is the interface subnet's broadcast
// address (all host bits set).
func (s *Stack) isSubnetBroadcast(a Addr) bool {
	if s.mask == broadcastIP {
		return false
	}
	for i := range a {
		if a[i] != s.addr[i]|^s.mask[i] {
			return false
		}
	}
	return true
}

// enqueue keeps b for the neighbour ip and starts resolving it.
func (a *arpCache) enqueue(ip Addr, b netdev.Buf) {
	s := a.s
	n, ok := a.entries[ip]
	if !ok {
		n = &neigh{ip: ip}
		n.timer = kernel.Timer{Name: "arp", Func: func() { a.retry(n) }}
		a.entries[ip] = n
	}
	if len(n.queue) >= s.p.ARPQueue {
		s.stats.ARPQueueDrops++
		n.queue[0].Free(s.k)
		n.queue = append(n.queue[:0], n.queue[1:]...)
	}
	n.queue = append(n.queue, b)
	if !n.timer.Pending() {
		n.tries = 1
		s.arpSend(header.ARPRequest, ip, [6]byte{})
		s.k.AddTimer(&n.timer, s.k.TicksFor(s.p.ARPRetry))
	}
}

// retry runs in the timer softirq.
func (a *arpCache) retry(n *neigh) {
	s := a.s
	c := s.c
	c.Enter(s.sym.arpTimer)
	defer c.Exit(s.sym.arpTimer)
	if n.state != neighIncomplete {
		return
	}
	if n.tries >= s.p.ARPTries {
		s.stats.ARPUnresolved++
		for _, b := range n.queue {
			s.stats.ARPQueueDrops++
			b.Free(s.k)
		}
		n.queue = nil
		delete(a.entries, n.ip)
		return
	}
	n.tries++
	s.arpSend(header.ARPRequest, n.ip, [6]byte{})
	s.k.AddTimer(&n.timer, s.k.TicksFor(s.p.ARPRetry))
}

// arpSend builds and queues a request for ip, or a reply to ip at mac.
func (s *Stack) arpSend(op uint16, ip Addr, mac [6]byte) {
	c := s.c
	c.Enter(s.sym.arpSend)
	defer c.Exit(s.sym.arpSend)
	b, ok := netdev.Alloc(s.k, header.EthernetHeaderLen, header.ARPLen)
	if !ok {
		s.stats.NoBuffers++
		return
	}
	var p [header.ARPLen]byte
	header.ARP(p[:]).Encode(&header.ARPFields{Op: op, SenderMAC: s.mac(), SenderIP: s.addr, TargetMAC: mac, TargetIP: ip})
	s.write(b.Addr, p[:])
	dst := mac
	if op == header.ARPRequest {
		dst = header.EthernetBroadcast
		s.stats.ARPRequestsSent++
	} else {
		s.stats.ARPRepliesSent++
	}
	s.linkOutput(nil, b, dst, header.EtherTypeARP)
}

// arpRcv handles an ARP packet (the frame in b, Ethernet header first).
func (s *Stack) arpRcv(b netdev.Buf) {
	c := s.c
	c.Enter(s.sym.arpRcv)
	defer c.Exit(s.sym.arpRcv)
	defer b.Free(s.k)
	if b.Len < header.EthernetHeaderLen+header.ARPLen {
		s.stats.ARPBadPackets++
		return
	}
	var p [header.ARPLen]byte
	s.read(b.Addr+header.EthernetHeaderLen, p[:])
	a := header.ARP(p[:])
	if !a.IsValid() || (a.Op() != header.ARPRequest && a.Op() != header.ARPReply) {
		s.stats.ARPBadPackets++
		return
	}
	if a.Op() == header.ARPRequest {
		s.stats.ARPRequestsRecvd++
	} else {
		s.stats.ARPRepliesRecvd++
	}
	sender, forUs := a.SenderIP(), a.TargetIP() == s.addr
	n, known := s.arp.entries[sender]
	if forUs || known {
		if !known {
			n = &neigh{ip: sender}
			n.timer = kernel.Timer{Name: "arp", Func: func() { s.arp.retry(n) }}
			s.arp.entries[sender] = n
		}
		if n.state != neighPermanent {
			n.mac = a.SenderMAC()
			n.state = neighReachable
			n.expires = c.LocalTime() + s.p.ARPTimeout
			s.k.DelTimer(&n.timer)
		}
		queued := n.queue
		n.queue = nil
		for _, q := range queued {
			s.linkOutput(nil, q, n.mac, header.EtherTypeIPv4)
		}
	}
	if forUs && a.Op() == header.ARPRequest {
		s.arpSend(header.ARPReply, sender, a.SenderMAC())
	}
}
