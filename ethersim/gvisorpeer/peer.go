// Package gvisorpeer puts an independent TCP/IP implementation, gVisor's
// netstack, on a simulated Ethernet segment, so that tests can check that
// simkron's simulated stack interoperates with one it was not written
// against. It is test support only: nothing outside _test.go files
// imports it, and it is not part of the simulator (it would bring gVisor
// into the simkron binary and it runs no simulated hardware: the gVisor
// host costs no cycles and sends the moment its stack asks).
//
// A Peer is an ethersim.Station. Frames that reach it are checked (FCS),
// filtered by destination address as a card would, stripped of their FCS
// and injected into a gVisor NIC built from a channel link endpoint
// wrapped in an Ethernet endpoint. Frames gVisor writes are taken from the
// channel endpoint, padded to the 60-byte minimum, given an FCS and sent
// on the peer's attachment one at a time (queued while it is busy, the
// next on OnTxDone).
//
// Determinism: gVisor runs on a Clock driven by the event scheduler, its
// random sources come from a sim random stream, and every packet gVisor
// handles is handled synchronously on the simulation's goroutine
// (InjectInbound delivers through DeliverNetworkPacket in the caller's
// goroutine, timers fire from sim events); with TCP, whose segments go to
// gVisor's processor goroutines, the peer waits for those to drain. Output is collected by a sim
// event scheduled when the channel endpoint reports a write. The peer and
// its gVisor stack must therefore be used from the simulation's
// goroutine only (from events, or before and between Run calls).
package gvisorpeer

import (
	"errors"
	"fmt"
	"time"

	"gvisor.dev/gvisor/pkg/buffer"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/link/channel"
	"gvisor.dev/gvisor/pkg/tcpip/link/ethernet"
	"gvisor.dev/gvisor/pkg/tcpip/network/arp"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
	"gvisor.dev/gvisor/pkg/tcpip/transport/icmp"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
	"gvisor.dev/gvisor/pkg/tcpip/transport/udp"

	"simkron/ethersim"
	"simkron/sim"
	"simkron/trace"
)

// NICID is the identifier of the peer's only gVisor NIC.
const NICID tcpip.NICID = 1

// ethMinFrame is the shortest Ethernet frame without its FCS.
const ethMinFrame = ethersim.MinFrame - 4

// Config describes the gVisor host.
type Config struct {
	Name      string       // host name in the network's table, and the attachment's name
	MAC       ethersim.MAC // the NIC's address
	IP        ethersim.IP4 // its IPv4 address
	PrefixLen int          // on-link prefix; 0 means 24
	MTU       int          // IP MTU; 0 means 1500
	Faults    ethersim.FaultParams
	// Epoch is what gVisor's clock reads at simulated time 0; the zero
	// value means 2000-01-01 UTC.
	Epoch time.Time
	// TCP adds gVisor's TCP. Its segments are handled on gVisor's own
	// processor goroutines, so the peer then settles them (Settle) after
	// every frame it injects and every timer that fires.
	TCP bool
}

// Stats counts the bridge's traffic (gVisor keeps its own in Stack.Stats).
type Stats struct {
	RxFrames   uint64 // frames injected into gVisor
	RxBadFCS   uint64 // frames dropped because their FCS was wrong
	RxFiltered uint64 // frames for another station, dropped as a card would
	RxRunts    uint64 // frames too short to carry a header and an FCS
	TxFrames   uint64 // frames sent completely
	TxAborted  uint64 // frames given up after too many collisions
	TxTooLong  uint64 // frames gVisor wrote that the segment cannot carry
	TxQueuePk  int    // most frames ever waiting for the transmitter
}

// Peer is a gVisor host on a simulated segment.
type Peer struct {
	// Stack is the gVisor network stack, with IPv4, ARP, UDP and ICMP
	// (and TCP when configured).
	Stack *stack.Stack
	// Received fires every frame the peer receives (before filtering,
	// without its FCS), Sent every frame it sends (padded, without its
	// FCS, as it is handed to the attachment). A listener only looks;
	// the frame is valid during the call only.
	Received, Sent trace.Source[[]byte]

	cfg   Config
	k     *sim.Scheduler
	clock *Clock
	link  *channel.Endpoint
	att   *ethersim.Attachment
	addr  tcpip.Address
	drain *sim.Event
	txq   [][]byte
	stats Stats
}

var _ ethersim.Station = (*Peer)(nil)

// New builds the gVisor host cfg, attaches it to segment seg of network n
// and registers it in n's host table.
func New(n *ethersim.Network, seg *ethersim.Segment, cfg Config) (*Peer, error) {
	if cfg.PrefixLen == 0 {
		cfg.PrefixLen = 24
	}
	if cfg.MTU == 0 {
		cfg.MTU = 1500
	}
	if cfg.Epoch.IsZero() {
		cfg.Epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if cfg.Name == "" {
		return nil, errors.New("gvisorpeer: the peer needs a name")
	}
	if cfg.MTU+header14+4 > int(seg.Params().MaxFrame) {
		return nil, fmt.Errorf("gvisorpeer: MTU %d does not fit segment %s's max_frame %d", cfg.MTU, seg.Name(), seg.Params().MaxFrame)
	}
	k := n.Scheduler()
	p := &Peer{cfg: cfg, k: k, addr: tcpip.AddrFrom4(cfg.IP)}
	p.clock = NewClock(k, cfg.Epoch, cfg.Name+".gvisor")
	p.drain = sim.NewEvent(cfg.Name+".gvisor.output", p.collect)
	rng := k.Stream("gvisorpeer/" + cfg.Name)
	transports := []stack.TransportProtocolFactory{udp.NewProtocol, icmp.NewProtocol4}
	var clock tcpip.Clock = p.clock
	if cfg.TCP {
		transports = append(transports, tcp.NewProtocol)
		clock = settlingClock{p.clock, p}
	}
	p.Stack = stack.New(stack.Options{
		NetworkProtocols:   []stack.NetworkProtocolFactory{ipv4.NewProtocol, arp.NewProtocol},
		TransportProtocols: transports,
		Clock:              clock,
		RandSource:         randSource{rng},
		SecureRNG:          randReader{rng},
	})
	// The channel's MTU counts the Ethernet header; the Ethernet endpoint
	// subtracts it again.
	p.link = channel.New(1024, uint32(cfg.MTU+header14), tcpip.LinkAddress(cfg.MAC[:]))
	p.link.AddNotify(p)
	if err := p.Stack.CreateNIC(NICID, ethernet.New(p.link)); err != nil {
		return nil, fmt.Errorf("gvisorpeer: CreateNIC: %s", err)
	}
	pa := tcpip.ProtocolAddress{
		Protocol:          ipv4.ProtocolNumber,
		AddressWithPrefix: tcpip.AddressWithPrefix{Address: p.addr, PrefixLen: cfg.PrefixLen},
	}
	if err := p.Stack.AddProtocolAddress(NICID, pa, stack.AddressProperties{}); err != nil {
		return nil, fmt.Errorf("gvisorpeer: AddProtocolAddress: %s", err)
	}
	p.Stack.SetRouteTable([]tcpip.Route{{Destination: pa.AddressWithPrefix.Subnet(), NIC: NICID}})
	att, err := seg.Attach(cfg.Name, p, cfg.Faults)
	if err != nil {
		return nil, err
	}
	p.att = att
	att.OnTxDone = p.txDone
	if err := n.RegisterHost(cfg.Name, cfg.MAC, cfg.IP); err != nil {
		return nil, err
	}
	return p, nil
}

// header14 is the Ethernet II header's length.
const header14 = 14

// Addr returns the peer's IPv4 address as gVisor spells it.
func (p *Peer) Addr() tcpip.Address { return p.addr }

// Config returns the peer's configuration, defaults filled in.
func (p *Peer) Config() Config { return p.cfg }

// Clock returns the simulated clock gVisor runs on.
func (p *Peer) Clock() *Clock { return p.clock }

// Attachment returns the peer's port on its segment.
func (p *Peer) Attachment() *ethersim.Attachment { return p.att }

// Stats returns the bridge's counters.
func (p *Peer) Stats() Stats { return p.stats }

// Neighbour returns the link address gVisor's neighbour table holds for
// ip, and whether it holds a usable one (any state but incomplete or
// unreachable).
func (p *Peer) Neighbour(ip ethersim.IP4) (ethersim.MAC, stack.NeighborState, bool) {
	entries, err := p.Stack.Neighbors(NICID, ipv4.ProtocolNumber)
	if err != nil {
		return ethersim.MAC{}, stack.Unknown, false
	}
	want := tcpip.AddrFrom4(ip)
	for _, e := range entries {
		if e.Addr != want || len(e.LinkAddr) != 6 {
			continue
		}
		var m ethersim.MAC
		copy(m[:], e.LinkAddr)
		ok := e.State != stack.Incomplete && e.State != stack.Unreachable
		return m, e.State, ok
	}
	return ethersim.MAC{}, stack.Unknown, false
}

// Scheduler returns the event scheduler the peer runs on.
func (p *Peer) Scheduler() *sim.Scheduler { return p.k }

// Settle waits until gVisor's processor goroutines have handled everything
// queued to them, so that gVisor never runs while the event loop does.
// Callers that use TCP endpoints directly settle after each call.
func (p *Peer) Settle() {
	if p.cfg.TCP {
		p.Stack.Pause()
		p.Stack.Resume()
	}
}

// settlingClock is the simulated clock whose timer functions are followed
// by a Settle.
type settlingClock struct {
	*Clock
	p *Peer
}

func (c settlingClock) AfterFunc(d time.Duration, f func()) tcpip.Timer {
	return c.Clock.AfterFunc(d, func() { f(); c.p.Settle() })
}

// Close shuts the gVisor stack down.
func (p *Peer) Close() {
	p.k.Cancel(p.drain)
	p.Stack.Close()
	p.Stack.Wait()
	p.link.Close()
}

// Receive implements ethersim.Station: the frame's last bit has arrived.
func (p *Peer) Receive(frame []byte) {
	if len(frame) < header14+4 {
		p.stats.RxRunts++
		return
	}
	if p.Received.Listened() {
		p.Received.Fire(frame[:len(frame)-4])
	}
	if !ethersim.CheckFCS(frame) {
		p.stats.RxBadFCS++
		return
	}
	var dst ethersim.MAC
	copy(dst[:], frame)
	if dst != p.cfg.MAC && !dst.IsMulticast() {
		p.stats.RxFiltered++
		return
	}
	p.stats.RxFrames++
	data := append([]byte(nil), frame[:len(frame)-4]...)
	pkt := stack.NewPacketBuffer(stack.PacketBufferOptions{Payload: buffer.MakeWithData(data)})
	// The Ethernet endpoint reads the protocol from the header.
	p.link.InjectInbound(0, pkt)
	pkt.DecRef()
	p.Settle()
}

// WriteNotify implements channel.Notification: gVisor queued an outbound
// packet. It may hold its own locks here, so the packets are collected
// from an event at the same instant.
func (p *Peer) WriteNotify() {
	if !p.drain.Scheduled() {
		p.k.Schedule(p.drain, p.k.Now())
	}
}

// collect moves gVisor's outbound packets to the transmit queue.
func (p *Peer) collect() {
	for {
		pkt := p.link.Read()
		if pkt == nil {
			break
		}
		v := pkt.ToView()
		frame := make([]byte, max(v.Size(), ethMinFrame), max(v.Size(), ethMinFrame)+4)
		copy(frame, v.AsSlice())
		v.Release()
		pkt.DecRef()
		if len(frame)+4 > int(p.att.Segment().Params().MaxFrame) {
			p.stats.TxTooLong++
			continue
		}
		p.txq = append(p.txq, ethersim.AppendFCS(frame))
	}
	p.stats.TxQueuePk = max(p.stats.TxQueuePk, len(p.txq))
	p.kick()
}

// kick starts the next transmission if the transmitter is idle.
func (p *Peer) kick() {
	if len(p.txq) == 0 || p.att.Busy() {
		return
	}
	f := p.txq[0]
	p.txq[0] = nil
	p.txq = p.txq[1:]
	if p.Sent.Listened() {
		p.Sent.Fire(f[:len(f)-4])
	}
	if err := p.att.Transmit(f); err != nil {
		// Transmit refuses only when busy or for a bad length, both
		// excluded above.
		panic(fmt.Sprintf("gvisorpeer: %s: %v", p.cfg.Name, err))
	}
}

// txDone is the attachment's OnTxDone.
func (p *Peer) txDone(st ethersim.TxStatus) {
	if st.Aborted {
		p.stats.TxAborted++
	} else {
		p.stats.TxFrames++
	}
	p.kick()
}

// randSource adapts a sim random stream to gVisor's math/rand Source.
type randSource struct{ r interface{ Int64() int64 } }

func (s randSource) Int63() int64 { return s.r.Int64() & (1<<63 - 1) }
func (s randSource) Seed(int64)   {}

// randReader gives gVisor's "secure" random reader deterministic bytes
// from a sim random stream.
type randReader struct{ r interface{ Uint64() uint64 } }

func (r randReader) Read(b []byte) (int, error) {
	for i := 0; i < len(b); i += 8 {
		v := r.r.Uint64()
		for j := i; j < len(b) && j < i+8; j++ {
			b[j] = byte(v)
			v >>= 8
		}
	}
	return len(b), nil
}
