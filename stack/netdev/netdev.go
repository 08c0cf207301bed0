// Package netdev is the kernel's meeting point of network drivers and
// protocols, in the manner of Linux 2.x's net/core/dev.c: drivers register
// devices and hand received frames to the backlog (netif_rx); the receive
// softirq delivers each frame to the protocol registered for its
// EtherType; protocols transmit through the device's queue
// (dev_queue_xmit), and the transmit softirq restarts a device whose
// transmitter has room again. Layer DEV.
//
// Frames live in kernel buffers in simulated memory. A buffer handed to
// Transmit or delivered to a protocol changes owner: the receiver frees it.
//
// Simplifications: one backlog per host (there is one core); no queueing
// disciplines beyond a FIFO per device; no VLANs.
package netdev

import (
	"fmt"

	"simkron/cpu"
	"simkron/memory"
	"simkron/stack/kernel"
	"simkron/trace"
)

// Buf is one frame (or packet being built) in a kernel buffer: Len bytes
// at Addr. A frame handed to a device starts with the Ethernet header;
// the FCS is not included. Head is the start of the allocated block when
// it lies before Addr (headroom left for headers that lower layers push):
//
//	Head          Addr              Addr+Len
//	 │ headroom    │ data            │
//	 └─────────────┴─────────────────┘
type Buf struct {
	Head memory.Addr // 0: the block starts at Addr
	Addr memory.Addr
	Len  int
	// Dev is the device a received frame came in on.
	Dev Device
	// Proto, when not 0, is the EtherType of a received packet whose
	// driver has already taken its link header off (Linux's skb->protocol
	// after the driver pulled its header): the data starts at the network
	// header and the receive softirq dispatches on Proto without reading
	// a header. Drivers of non-Ethernet devices (Framer) set it. 0 is an
	// Ethernet frame, header first, as every Ethernet driver delivers.
	Proto uint16
	// Peer, on a packet a Framer's driver delivers, is the neighbour it
	// came from as that device names its neighbours (ATM: the VC's
	// neighbour's IPv4 address in the first four octets): the link
	// source address a link without a MAC header has no room for.
	Peer [6]byte
	// DataRef, when not 0, is the address of the block's data reference
	// count, the 32-bit word that ends a block from AllocShared (Linux's
	// skb_datarefp, at skb->end): the block is shared by the buffer and
	// its clones, and goes back to the kernel when the last of them is
	// freed. The bytes between the data's end and DataRef are tailroom.
	DataRef memory.Addr
	// CloneHead is a clone's own head (its struct sk_buff, a block of
	// SkbHeadSize bytes), freed with it; 0 for a buffer that is no clone.
	CloneHead memory.Addr
}

// Alloc returns a buffer of size bytes of data with headroom bytes before
// it, or ok false when the kernel is out of memory.
func Alloc(k *kernel.Kernel, headroom, size int) (Buf, bool) {
	blk := k.Kmalloc(headroom + size)
	if blk == 0 {
		return Buf{}, false
	}
	return Buf{Head: blk, Addr: blk + memory.Addr(headroom), Len: size}, true
}

// Headroom returns the bytes free before the data.
func (b *Buf) Headroom() int {
	if b.Head == 0 {
		return 0
	}
	return int(b.Addr - b.Head)
}

// Push extends the data n bytes towards the head, for a lower layer's
// header. Pushing past the headroom is a simulator bug.
func (b *Buf) Push(n int) {
	if n > b.Headroom() {
		panic(fmt.Sprintf("netdev: push of %d bytes with %d of headroom", n, b.Headroom()))
	}
	b.Addr -= memory.Addr(n)
	b.Len += n
}

// Pull removes n bytes from the front of the data (a consumed header).
func (b *Buf) Pull(n int) {
	if n > b.Len {
		panic(fmt.Sprintf("netdev: pull of %d bytes from %d", n, b.Len))
	}
	if b.Head == 0 {
		b.Head = b.Addr
	}
	b.Addr += memory.Addr(n)
	b.Len -= n
}

// Free returns the buffer's block to the kernel (kfree_skb). A clone
// frees its head; a shared block (DataRef) goes only with its last holder,
// whose count is read and written as Linux's atomic_dec_and_test does.
func (b Buf) Free(k *kernel.Kernel) {
	if b.CloneHead != 0 {
		k.Kfree(b.CloneHead)
	}
	if b.DataRef != 0 && addDataRef(k, b.DataRef, -1) > 0 {
		return
	}
	if b.Head != 0 {
		k.Kfree(b.Head)
	} else {
		k.Kfree(b.Addr)
	}
}

// Device is a driver's side of a network interface.
type Device interface {
	Name() string
	MAC() [6]byte
	// MTU is the largest payload of one frame (1500 on Ethernet).
	MTU() int
	// StartXmit offers a frame to the driver. It returns false when the
	// driver has no room; the frame stays with the caller, and the driver
	// calls Stack.WakeQueue when it has room again.
	StartXmit(b Buf) bool
	// Busy reports whether frames handed to the driver are still on their
	// way out (loaded on the card or on the wire).
	Busy() bool
}

// DMADevice is implemented by a driver whose card reads a frame out of host
// memory by DMA after StartXmit has returned (a bus master), and tells the
// driver so by an interrupt. A device that does not implement it has taken
// a frame's bytes by the time StartXmit returns (programmed I/O, or a copy
// into the card's memory).
type DMADevice interface {
	Device
	// TxDMAPending reports whether frames handed to the driver are still
	// in host memory for the card to read, or read without the driver
	// having handled the completion yet.
	TxDMAPending() bool
}

// Framer is implemented by a device whose link layer is not Ethernet and
// which maps a neighbour's network address to its link address itself,
// without ARP: ATM with a static table of virtual channels (classical IP
// over AAL5, RFC 2225, without ATMARP). A protocol sending through it
// reserves HeaderLen bytes of headroom, has Frame write the link header
// there and queues the frame with Transmit; the device's StartXmit reads
// what Frame wrote. On receive the driver takes its header off and sets
// Buf.Proto.
type Framer interface {
	Device
	// HeaderLen is the length of the link header Frame writes.
	HeaderLen() int
	// Frame writes into hdr (HeaderLen bytes) the link header of a packet
	// of protocol etherType for the neighbour whose network address is
	// next, charging its lookup on the host's core. It reports false when
	// the device has no path to next; the caller drops and counts the
	// packet.
	Frame(hdr []byte, etherType uint16, next []byte) bool
}

// Handler receives frames of one EtherType. It runs in the receive softirq
// and owns b.
type Handler func(b Buf)

// EtherType8022 is the pseudo-EtherType under which IEEE 802.3 frames,
// whose type field is a length (at most 1500) and whose data field is an
// 802.2 LLC PDU, are delivered (Linux's ETH_P_802_2): the ISO protocols'
// frames, beside Ethernet II ones on the same card.
const EtherType8022 = 0x0004

// ProtoISO is the pseudo-EtherType under which a Framer's driver delivers
// routed ISO network layer PDUs that have no MAC sublayer beneath them
// (RFC 2684 LLC FE-FE-03 over AAL5, the LLC header taken off: the data
// start at the NLPID), and under which a protocol asks it to frame one.
const ProtoISO = 0x00FE

// Stats counts the stack's own events.
type Stats struct {
	RxFrames     uint64 `stat:"rx_frames" help:"received frames taken from the backlog and handed to their protocol"`
	RxDropped    uint64 `stat:"rx_dropped" help:"received frames dropped: the backlog was full"`
	RxUnknown    uint64 `stat:"rx_unknown" help:"received frames dropped: no protocol handles their EtherType"`
	TxQueued     uint64 `stat:"tx_queued" help:"frames queued for a device to send"`
	TxQueueDrops uint64 `stat:"tx_queue_drops" help:"frames dropped: the device queue was full"`
}

// Stack is one host's device layer.
type Stack struct {
	k        *kernel.Kernel
	backlog  []Buf
	limit    int
	handlers map[uint16]Handler
	queues   []*txQueue
	stats    Stats
	sym      struct{ netifRx, netRxAction, devQueueXmit, netTxAction *cpu.Symbol }
	// gauges fires the queues' lengths (Gauges).
	gauges trace.Source[trace.Gauge]
}

var _ trace.Gauged = (*Stack)(nil)

type txQueue struct {
	dev     Device
	frames  []Buf
	limit   int
	stopped bool
	// running is set while runQueue feeds the driver; rerun asks it to
	// look again (Linux's __QDISC_STATE_RUNNING).
	running, rerun bool
	// Room is woken when the queue drains below its limit: senders blocked
	// on a full queue sleep here.
	Room kernel.WaitQueue
	// Drained is woken whenever the driver reports progress: a sender
	// that wants all its frames gone sleeps here and checks Pending.
	Drained kernel.WaitQueue
	// gauge names the queue in Gauges, once it has been watched.
	gauge string
}

var (
	defNetifRx      = cpu.Def{Name: "netif_rx", Layer: cpu.LayerDEV, Instructions: 35, CodeBytes: 192, Why: "append to the backlog, raise the receive softirq"}
	defNetRxAction  = cpu.Def{Name: "net_rx_action", Layer: cpu.LayerDEV, Instructions: 40, CodeBytes: 256, Why: "per frame: dequeue, read the EtherType, find the handler"}
	defDevQueueXmit = cpu.Def{Name: "dev_queue_xmit", Layer: cpu.LayerDEV, Instructions: 45, CodeBytes: 256, Why: "enqueue on the device, call the driver if it has room"}
	defNetTxAction  = cpu.Def{Name: "net_tx_action", Layer: cpu.LayerDEV, Instructions: 30, CodeBytes: 192, Why: "restart stopped device queues"}
)

// BacklogLimit is the receive backlog's length (Linux 2.2 netdev_max_backlog
// was 300).
const BacklogLimit = 300

// TxQueueLimit is a device queue's length (Linux tx_queue_len for
// Ethernet: 100).
const TxQueueLimit = 100

// New sets up the device layer of a host's kernel.
func New(k *kernel.Kernel) *Stack {
	s := &Stack{k: k, limit: BacklogLimit, handlers: map[uint16]Handler{}}
	syms := k.Symbols()
	syms.DefineAll([]cpu.Binding{
		{&s.sym.netifRx, defNetifRx}, {&s.sym.netRxAction, defNetRxAction},
		{&s.sym.devQueueXmit, defDevQueueXmit}, {&s.sym.netTxAction, defNetTxAction},
	})
	k.OpenSoftirq(kernel.SoftirqNetRx, s.sym.netRxAction, s.rxAction)
	k.OpenSoftirq(kernel.SoftirqNetTx, s.sym.netTxAction, s.txAction)
	return s
}

// Kernel returns the host's kernel.
func (s *Stack) Kernel() *kernel.Kernel { return s.k }

// Stats returns the counters.
func (s *Stack) Stats() Stats { return s.stats }

// Gauges implements trace.Gauged: it fires the length of a device's
// transmit queue ("eth0 tx queue") and of the receive backlog
// ("backlog"), in frames, whenever one changes, at the time the core has
// charged to.
func (s *Stack) Gauges() *trace.Source[trace.Gauge] { return &s.gauges }

// Backlog is the receive backlog's name in Gauges.
const Backlog = "backlog"

// showQueue fires q's length; the caller has checked that gauges is
// listened to.
func (s *Stack) showQueue(q *txQueue) {
	if q.gauge == "" {
		q.gauge = q.dev.Name() + " tx queue"
	}
	s.gauges.Fire(trace.Gauge{Name: q.gauge, Unit: "frames", Value: int64(len(q.frames))})
}

// showBacklog fires the backlog's length; the caller has checked that
// gauges is listened to.
func (s *Stack) showBacklog() {
	s.gauges.Fire(trace.Gauge{Name: Backlog, Unit: "frames", Value: int64(len(s.backlog))})
}

// Register installs the handler of an EtherType (dev_add_pack).
func (s *Stack) Register(etherType uint16, h Handler) error {
	if _, dup := s.handlers[etherType]; dup {
		return fmt.Errorf("netdev: EtherType %#04x already has a handler", etherType)
	}
	s.handlers[etherType] = h
	return nil
}

// AddDevice registers a device and returns its queue index for
// Transmit and WakeQueue.
func (s *Stack) AddDevice(d Device) int {
	s.queues = append(s.queues, &txQueue{dev: d, limit: TxQueueLimit})
	return len(s.queues) - 1
}

// Device returns the device registered under index i.
func (s *Stack) Device(i int) Device { return s.queues[i].dev }

// RoomQueue returns the wait queue senders on device i sleep on while its
// queue is full.
func (s *Stack) RoomQueue(i int) *kernel.WaitQueue { return &s.queues[i].Room }

// Pending reports whether device i still has frames to send: queued, on
// the card, or on the wire.
func (s *Stack) Pending(i int) bool {
	q := s.queues[i]
	return len(q.frames) > 0 || q.dev.Busy()
}

// TxInMemory reports whether any device still has frames to send whose
// bytes are in host memory: queued on the device, or handed to a
// bus-master card (DMADevice) that has not read them yet or whose
// completion its driver has not handled. It is for observers: it charges
// nothing.
func (s *Stack) TxInMemory() bool {
	for _, q := range s.queues {
		if len(q.frames) > 0 {
			return true
		}
		if d, ok := q.dev.(DMADevice); ok && d.TxDMAPending() {
			return true
		}
	}
	return false
}

// DrainQueue returns the wait queue woken as device i makes progress; a
// thread waiting for Pending to turn false sleeps there.
func (s *Stack) DrainQueue(i int) *kernel.WaitQueue { return &s.queues[i].Drained }

// Transmit queues b on device i (dev_queue_xmit). It returns false and
// frees nothing when the queue is full: the caller keeps b and may sleep
// on RoomQueue(i).
func (s *Stack) Transmit(i int, b Buf) bool {
	c := s.k.CPU()
	c.Enter(s.sym.devQueueXmit)
	defer c.Exit(s.sym.devQueueXmit)
	q := s.queues[i]
	if len(q.frames) >= q.limit {
		s.stats.TxQueueDrops++
		return false
	}
	s.stats.TxQueued++
	q.frames = append(q.frames, b)
	if s.gauges.Listened() {
		s.showQueue(q)
	}
	if !q.stopped {
		s.runQueue(q)
	}
	// Like local_bh_enable: deferred work raised on the way (a loopback
	// receive) runs before the caller goes on.
	if !c.InInterrupt() {
		s.k.RunSoftirqs()
	}
	return true
}

// runQueue hands frames to the driver until it refuses one. A driver's
// register access can take an interrupt whose exit runs the transmit
// softirq, which would call runQueue again on the queue this call is
// feeding: the inner call only tells the outer one to look again, as
// Linux lets one qdisc_run at a time.
func (s *Stack) runQueue(q *txQueue) {
	if q.running {
		q.rerun = true
		return
	}
	q.running = true
	defer func() { q.running = false }()
	for len(q.frames) > 0 {
		q.rerun = false
		if !q.dev.StartXmit(q.frames[0]) {
			if q.rerun {
				continue // the driver made room meanwhile
			}
			q.stopped = true
			return
		}
		kernel.PopFront(&q.frames)
		if s.gauges.Listened() {
			s.showQueue(q)
		}
		s.k.Wakeup(&q.Room)
	}
	q.stopped = false
}

// WakeQueue is called by a driver whose transmitter has room again (from
// its interrupt handler): the transmit softirq feeds it the next frames.
func (s *Stack) WakeQueue(i int) {
	q := s.queues[i]
	q.stopped = false
	s.k.RaiseSoftirq(kernel.SoftirqNetTx)
	s.k.Wakeup(&q.Drained)
}

func (s *Stack) txAction() {
	for _, q := range s.queues {
		if !q.stopped && len(q.frames) > 0 {
			s.runQueue(q)
		}
	}
}

// Rx queues a received frame for the protocols (netif_rx); drivers call
// it from their interrupt handlers. A full backlog drops the frame.
func (s *Stack) Rx(b Buf) {
	c := s.k.CPU()
	c.Enter(s.sym.netifRx)
	if len(s.backlog) >= s.limit {
		s.stats.RxDropped++
		b.Free(s.k)
	} else {
		s.backlog = append(s.backlog, b)
		if s.gauges.Listened() {
			s.showBacklog()
		}
		s.k.RaiseSoftirq(kernel.SoftirqNetRx)
	}
	c.Exit(s.sym.netifRx)
}

// rxAction is the receive softirq: it delivers the backlog.
func (s *Stack) rxAction() {
	c := s.k.CPU()
	var hdr [14]byte
	for len(s.backlog) > 0 {
		b := kernel.PopFront(&s.backlog)
		if s.gauges.Listened() {
			s.showBacklog()
		}
		s.stats.RxFrames++
		if b.Proto != 0 {
			// The driver took the link header off and said what follows.
			h, ok := s.handlers[b.Proto]
			if !ok {
				s.stats.RxUnknown++
				b.Free(s.k)
				continue
			}
			h(b)
			continue
		}
		if b.Len < 14 {
			s.stats.RxUnknown++
			b.Free(s.k)
			continue
		}
		c.Read(b.Addr, hdr[:])
		et := uint16(hdr[12])<<8 | uint16(hdr[13])
		if et <= 1500 {
			et = EtherType8022
		}
		h, ok := s.handlers[et]
		if !ok {
			s.stats.RxUnknown++
			b.Free(s.k)
			continue
		}
		h(b)
	}
}
