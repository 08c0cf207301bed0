package via

import (
	"fmt"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/kernel"
	"simkron/stack/netdev"
)

// Stats counts the agent's events; every frame the receive path does not
// use has a named drop counter.
type Stats struct {
	MessagesSent       uint64 `json:"messages_sent" stat:"messages_sent" help:"messages posted for sending and handed to the device"`
	FramesSent         uint64 `json:"frames_sent" stat:"frames_sent" help:"frames of those messages handed to the device"`
	BytesSent          uint64 `json:"bytes_sent" stat:"bytes_sent" help:"message bytes sent"`
	MessagesReceived   uint64 `json:"messages_received" stat:"messages_received" help:"messages placed into a posted receive descriptor"`
	FramesReceived     uint64 `json:"frames_received" stat:"frames_received" help:"VIA frames taken from the device"`
	BytesRecv          uint64 `json:"bytes_recv" stat:"bytes_recv" help:"message bytes received"`
	DescriptorErrors   uint64 `json:"descriptor_errors" stat:"descriptor_errors" help:"posts refused for their descriptors' contents"`
	SendWaits          uint64 `json:"send_waits" stat:"send_waits" help:"frames that waited for the device to have room"`
	DropShort          uint64 `json:"drop_short" stat:"drop_short" help:"frames dropped: too short for the M-VIA header"`
	DropBadHeader      uint64 `json:"drop_bad_header" stat:"drop_bad_header" help:"frames dropped: failing the M-VIA header's checks"`
	DropUnknownVI      uint64 `json:"drop_unknown_vi" stat:"drop_unknown_vi" help:"frames dropped: for no VI"`
	DropNotConnected   uint64 `json:"drop_not_connected" stat:"drop_not_connected" help:"frames dropped: for a VI not connected"`
	DropWrongPeer      uint64 `json:"drop_wrong_peer" stat:"drop_wrong_peer" help:"frames dropped: from another host or VI than the connection's"`
	DropStale          uint64 `json:"drop_stale" stat:"drop_stale" help:"frames dropped: of a message already passed or completed"`
	DropOrphanFragment uint64 `json:"drop_orphan_fragment" stat:"drop_orphan_fragment" help:"frames dropped: of a message whose first fragment never came"`
	DropRecvQEmpty     uint64 `json:"drop_recv_queue_empty" stat:"drop_recv_queue_empty" help:"messages dropped (unreliable): no receive descriptor posted"`
	DropDiscarded      uint64 `json:"drop_discarded" stat:"drop_discarded" help:"frames dropped: of a message already refused (length error, no descriptor)"`
	MessagesLost       uint64 `json:"messages_lost" stat:"messages_lost" help:"messages of which nothing came (sequence gaps)"`
	PartialMessages    uint64 `json:"partial_messages" stat:"partial_messages" help:"receive descriptors completed with a transport error"`
	LengthErrors       uint64 `json:"length_errors" stat:"length_errors" help:"messages longer than their receive descriptor"`
	ConnRequests       uint64 `json:"conn_requests" stat:"conn_requests" help:"connection requests received"`
	ConnAccepts        uint64 `json:"conn_accepts" stat:"conn_accepts" help:"connection accepts received"`
	ConnRejects        uint64 `json:"conn_rejects" stat:"conn_rejects" help:"connection rejects received"`
	Disconnects        uint64 `json:"disconnects" stat:"disconnects" help:"connections the peer closed"`
	ConnBroken         uint64 `json:"conn_broken" stat:"conn_broken" help:"reliable connections broken here"`
	CQOverflows        uint64 `json:"cq_overflows" stat:"cq_overflows" help:"completions lost because a completion queue was full"`
}

// gatherDevice is a driver that sends a frame from pieces of memory
// without copying them, calling done when it has read them
// (stack/driver/simoseth's StartXmitFrags).
type gatherDevice interface {
	StartXmitFrags(frags []netdev.Buf, done func()) bool
}

// directDevice is a driver that hands the frames of one EtherType to a
// handler from its receive interrupt, keeping the buffer
// (stack/driver/simoseth's SetDirectRx): the way M-VIA's device drivers
// give the agent its frames.
type directDevice interface {
	SetDirectRx(etherType uint16, fn func(b netdev.Buf))
}

// maxRegions bounds the registered regions of a host.
const maxRegions = 4096

// pageSize is the unit of pinning and translation.
const pageSize = 4096

// Agent is one host's M-VIA kernel agent: its NICs, protection tags,
// registered memory, VIs and completion queues. It also owns the receive
// path of VIA frames (registered with the device layer for its
// EtherType).
type Agent struct {
	k   *kernel.Kernel
	c   *cpu.CPU
	sys *memory.System
	nd  *netdev.Stack
	p   Params

	nics    []*Nic
	ptags   []*VIPL // by handle-1: the owner
	regions []*region
	vis     []*VI
	viTab   memory.Addr // kernel table: one 64-byte entry per VI
	regTab  memory.Addr // kernel table: one 32-byte entry per region

	hdr   [header.EthernetHeaderLen + header.VIAHeaderLen]byte
	frame []byte // the received frame's header and payload, for parsing
	frags []netdev.Buf
	stats Stats
	sym   struct {
		ftrap, postSend, postRecv, translate, fragment, sendDone, fragDone, dmaWait *cpu.Symbol
		rcv, defrag, recvDone, wait, register, deregister, openNic, ptag, createVi  *cpu.Symbol
		createCQ, connect, disconnect, connRcv, flush                               *cpu.Symbol
		vplPostSend, vplPostRecv, vplSendDone, vplRecvDone, vplSendWait             *cpu.Symbol
		vplRecvWait, vplCQDone, vplCQWait, vplCall                                  *cpu.Symbol
	}
	cost struct{ segment, page, poll, pin, unpin, recvSeg int64 }
}

// Nic is an opened VI NIC (VIP_NIC_HANDLE): one device of the device
// layer the agent drives.
type Nic struct {
	a      *Agent
	name   string
	dev    int
	d      netdev.Device
	gather gatherDevice
	// direct: the driver hands the agent its frames from the receive
	// interrupt (rcvDirect) rather than through the receive softirq.
	direct bool
	// Connection management.
	listeners []*listener
	requests  []*Conn // requests that arrived before anyone waited
	errors    []AsyncError
}

// region is registered memory.
type region struct {
	h     MemHandle
	owner *VIPL
	ptag  Ptag
	base  memory.Addr
	n     uint64
	pt    memory.Addr // translation table: one 4-byte page frame address per page
	pages int
	first memory.Addr // the first page's address
}

// New sets up the agent of a host: its tables in kernel memory (at boot,
// uncharged) and its receive handler for p.EtherType on the device layer.
// NICs are added with AddNIC.
func New(k *kernel.Kernel, nd *netdev.Stack, p Params) (*Agent, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	a := &Agent{k: k, c: k.CPU(), sys: k.CPU().System(), nd: nd, p: p}
	syms := k.Symbols()
	syms.DefineAll([]cpu.Binding{
		{&a.sym.ftrap, defFtrap}, {&a.sym.postSend, defKPostSend}, {&a.sym.postRecv, defKPostRecv},
		{&a.sym.translate, defTranslate}, {&a.sym.fragment, defFragment}, {&a.sym.sendDone, defSendDoneK},
		{&a.sym.fragDone, defFragDone}, {&a.sym.dmaWait, defDMAWait}, {&a.sym.rcv, defRcv},
		{&a.sym.defrag, defDefrag}, {&a.sym.recvDone, defRecvDoneK}, {&a.sym.wait, defKWait},
		{&a.sym.register, defRegister}, {&a.sym.deregister, defDeregister}, {&a.sym.openNic, defKOpenNic},
		{&a.sym.ptag, defKPtag}, {&a.sym.createVi, defKCreateVi}, {&a.sym.createCQ, defKCreateCQ},
		{&a.sym.connect, defKConnect}, {&a.sym.disconnect, defKDisconnect}, {&a.sym.connRcv, defConnRcv},
		{&a.sym.flush, defFlush},
		{&a.sym.vplPostSend, defPostSend}, {&a.sym.vplPostRecv, defPostRecv}, {&a.sym.vplSendDone, defSendDone},
		{&a.sym.vplRecvDone, defRecvDone}, {&a.sym.vplSendWait, defSendWait}, {&a.sym.vplRecvWait, defRecvWait},
		{&a.sym.vplCQDone, defCQDone}, {&a.sym.vplCQWait, defCQWait}, {&a.sym.vplCall, defVIPLCall},
	})
	a.cost.segment = syms.Cost(costSegment, 25, "per data segment: look up the memory handle, check the Ptag and the bounds")
	a.cost.page = syms.Cost(costPage, 8, "per page of a segment: load the translation entry, merge with the previous page if contiguous")
	a.cost.poll = syms.Cost(costPoll, 3, "one turn of the wait loop: load the message's pending count, compare, branch")
	a.cost.pin = syms.Cost(costPin, 40, "per page: look the page up, raise its pin count, write its translation entry")
	a.cost.unpin = syms.Cost(costUnpin, 20, "per page: drop the pin count")
	a.cost.recvSeg = syms.Cost(costRecvSeg, 12, "per receive segment a fragment's bytes land in: bounds, next translated run")
	al := k.Allocator()
	var ok1, ok2 bool
	a.viTab, ok1 = al.Alloc(64 * p.MaxVIs)
	a.regTab, ok2 = al.Alloc(32 * maxRegions)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("via: no kernel memory for the agent's tables")
	}
	if err := nd.Register(p.EtherType, a.rcv); err != nil {
		return nil, fmt.Errorf("via: %w", err)
	}
	return a, nil
}

// AddNIC makes device dev of the device layer a VI NIC, opened by its
// name (the driver's, "eth0").
func (a *Agent) AddNIC(dev int) *Nic {
	d := a.nd.Device(dev)
	n := &Nic{a: a, name: d.Name(), dev: dev, d: d}
	n.gather, _ = d.(gatherDevice)
	if dd, ok := d.(directDevice); ok {
		dd.SetDirectRx(a.p.EtherType, a.rcvDirect)
		n.direct = true
	}
	a.nics = append(a.nics, n)
	return n
}

// Stats returns the agent's counters.
func (a *Agent) Stats() Stats { return a.stats }

// Params returns the agent's parameters.
func (a *Agent) Params() Params { return a.p }

// Errors returns the asynchronous errors reported on the NIC so far.
func (n *Nic) Errors() []AsyncError { return append([]AsyncError(nil), n.errors...) }

// Name returns the NIC's name.
func (n *Nic) Name() string { return n.name }

// Gather reports whether the NIC sends from registered memory without a
// copy.
func (n *Nic) Gather() bool { return n.gather != nil }

// Direct reports whether the NIC's driver hands the agent its frames from
// the receive interrupt (otherwise they come through the receive
// softirq).
func (n *Nic) Direct() bool { return n.direct }

// maxPayload is the message bytes one frame carries.
func (n *Nic) maxPayload() int { return n.d.MTU() - header.VIAHeaderLen }

func (n *Nic) asyncError(vi *VI, r Resource, code ErrorCode) {
	e := AsyncError{Time: n.a.c.LocalTime(), Resource: r, Code: code}
	if vi != nil {
		e.VI = int(vi.num)
	}
	n.errors = append(n.errors, e)
}

// region returns the region of handle h owned by l, charging the load of
// its table entry; nil when there is none.
func (a *Agent) region(l *VIPL, h MemHandle) *region {
	if h == 0 || int(h) > len(a.regions) {
		return nil
	}
	a.c.Reference(a.regTab+memory.Addr(32*(int(h)-1)), memory.Read)
	r := a.regions[h-1]
	if r == nil || r.owner != l {
		return nil
	}
	return r
}

// covers reports whether [addr, addr+n) lies in r.
func (r *region) covers(addr uint64, n uint64) bool {
	return addr >= uint64(r.base) && n <= r.n && addr-uint64(r.base) <= r.n-n
}

// translate appends the physical runs of [addr, addr+n) in r to runs,
// loading a translation entry per page and merging contiguous pages.
func (a *Agent) translate(r *region, addr uint64, n uint32, runs []run) []run {
	c := a.c
	c.Enter(a.sym.translate)
	defer c.Exit(a.sym.translate)
	for n > 0 {
		page := (addr - uint64(r.first)) / pageSize
		off := addr % pageSize
		k := uint32(min(uint64(n), pageSize-off))
		c.Exec(a.cost.page)
		c.Reference(r.pt+memory.Addr(4*page), memory.Read)
		phys := a.sys.Phys.Uint32(r.pt+memory.Addr(4*page)) + uint32(off)
		if l := len(runs); l > 0 && runs[l-1].addr+memory.Addr(runs[l-1].n) == memory.Addr(phys) {
			runs[l-1].n += k
		} else {
			runs = append(runs, run{addr: memory.Addr(phys), n: k})
		}
		addr += uint64(k)
		n -= k
	}
	return runs
}

// registerMem pins [va, va+n) and builds its translation table.
func (a *Agent) registerMem(l *VIPL, va memory.Addr, n uint64, attrs MemAttributes) (MemHandle, Return) {
	c := a.c
	switch {
	case n == 0 || !a.sys.Phys.InRange(va, n):
		return 0, InvalidParameter
	case attrs.EnableRdmaRead || attrs.EnableRdmaWrite:
		return 0, InvalidParameter // no RDMA
	case !a.ptagOf(l, attrs.Ptag):
		return 0, InvalidPtag
	}
	slot := -1
	for i, r := range a.regions {
		if r == nil {
			slot = i
			break
		}
	}
	if slot < 0 {
		if len(a.regions) >= maxRegions {
			return 0, ErrorResource
		}
		a.regions = append(a.regions, nil)
		slot = len(a.regions) - 1
	}
	first := va &^ (pageSize - 1)
	pages := int((uint64(va)+n-1)/pageSize - uint64(first)/pageSize + 1)
	pt := a.k.Kmalloc(4 * pages)
	if pt == 0 {
		return 0, ErrorResource
	}
	var e [4]byte
	for i := range pages {
		c.Exec(a.cost.pin)
		frame := uint32(first) + uint32(i)*pageSize // no VM: the page is its own frame
		e[0], e[1], e[2], e[3] = byte(frame), byte(frame>>8), byte(frame>>16), byte(frame>>24)
		c.Write(pt+memory.Addr(4*i), e[:])
	}
	h := MemHandle(slot + 1)
	a.regions[slot] = &region{h: h, owner: l, ptag: attrs.Ptag, base: va, n: n, pt: pt, pages: pages, first: first}
	c.Reference(a.regTab+memory.Addr(32*slot), memory.Write)
	return h, Success
}

func (a *Agent) deregisterMem(l *VIPL, va memory.Addr, h MemHandle) Return {
	r := a.region(l, h)
	if r == nil || r.base != va {
		return InvalidParameter
	}
	for range r.pages {
		a.c.Exec(a.cost.unpin)
	}
	a.k.Kfree(r.pt)
	a.regions[h-1] = nil
	a.c.Reference(a.regTab+memory.Addr(32*(int(h)-1)), memory.Write)
	return Success
}

// ptagOf reports whether p is a protection tag of l.
func (a *Agent) ptagOf(l *VIPL, p Ptag) bool {
	return p != 0 && int(p) <= len(a.ptags) && a.ptags[p-1] == l
}

// vi returns the VI numbered num on this host, charging its table entry.
func (a *Agent) vi(num uint16) *VI {
	if num == 0 || int(num) > len(a.vis) {
		return nil
	}
	a.c.Reference(a.viTab+memory.Addr(64*(int(num)-1)), memory.Read)
	return a.vis[num-1]
}

// spin waits, in the DMA layer, until done reports true: a loop that loads
// a word of the VI's kernel entry, compares and branches, with interrupts
// open (the NIC's completions arrive as interrupts and count the pending
// fragments down).
func (a *Agent) spin(vi *VI, done func() bool) {
	c := a.c
	c.Enter(a.sym.dmaWait)
	for {
		c.Sync()
		if done() {
			break
		}
		c.Reference(vi.entry+8, memory.Read)
		c.Exec(a.cost.poll)
	}
	c.Exit(a.sym.dmaWait)
}

// sleep blocks t on q (inside vipk_wait) until cond holds or, with a
// timeout, the deadline passes; it reports whether cond holds.
func (a *Agent) sleep(t *kernel.Thread, q *kernel.WaitQueue, timeout sim.Time, cond func() bool) bool {
	c := a.c
	c.Enter(a.sym.wait)
	defer c.Exit(a.sym.wait)
	deadline := c.LocalTime() + timeout
	for !cond() {
		if timeout == 0 {
			t.Sleep(q)
			continue
		}
		left := deadline - c.LocalTime()
		if left <= 0 {
			return false
		}
		t.SleepTimeout(q, left)
	}
	return true
}

// Nics returns the agent's NICs in the order they were added.
func (a *Agent) Nics() []*Nic { return append([]*Nic(nil), a.nics...) }

// MAC returns the NIC's station address: the host part of its VIs'
// network addresses.
func (n *Nic) MAC() [6]byte { return n.d.MAC() }

// MTU returns the MTU of the NIC's device: a VIA frame's header and
// payload.
func (n *Nic) MTU() int { return n.d.MTU() }
