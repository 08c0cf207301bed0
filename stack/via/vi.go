package via

import (
	"simkron/memory"
	"simkron/stack/kernel"
)

// VI is a virtual interface (VIP_VI_HANDLE): a send and a receive work
// queue, and the connection to a peer VI.
//
//	          VIPL (user level)                    agent (kernel)
//	post  ──► sendPosted: descriptors not yet ──►  sendQ: messages whose
//	          reaped by VipSendDone                fragments the NIC is reading
//	post  ──► recvPosted: descriptors not yet ──►  recvQ: descriptors waiting
//	          reaped by VipRecvDone                for a message, in order
//
// A descriptor is complete when its Status has DONE; the VIPL reaps
// complete descriptors from the head of its lists, in posting order.
type VI struct {
	a     *Agent
	lib   *VIPL
	nic   *Nic
	num   uint16
	attrs ViAttributes
	state State

	sendCQ, recvCQ *CQ

	peerMAC [6]byte
	peerVI  uint16
	txSeq   uint32 // next message to send
	rxSeq   uint32 // next message expected
	asm     assembly

	sendPosted, recvPosted []memory.Addr
	sendQ, recvQ           []*kdesc
	free                   []*kdesc

	sendWait, recvWait, connWait kernel.WaitQueue
	connAnswer                   uint8 // the frame type that answered a request, 0 while none
	connAttrs                    ViAttributes

	entry memory.Addr // this VI's entry in the agent's kernel table
}

// assembly is the message being received.
type assembly struct {
	active  bool
	discard bool // the message is being dropped (no descriptor, too long)
	seq     uint32
	msgLen  uint32
	got     uint32
	d       *kdesc
}

// run is a physically contiguous piece of a translated buffer.
type run struct {
	addr memory.Addr
	n    uint32
}

// kdesc is the agent's record of a posted descriptor.
type kdesc struct {
	vi      *VI
	addr    memory.Addr
	control uint16
	imm     uint32
	length  uint32 // send: the message's bytes; receive: the buffers' room
	runs    []run
	pending int           // send: fragments the NIC has not read yet
	posting bool          // send: the agent is still handing out fragments
	err     uint32        // send: error bits of the completion
	headers []memory.Addr // send: their header buffers, oldest first
	done    func()        // the fragment completion, bound once
}

func (vi *VI) newKdesc(addr memory.Addr) *kdesc {
	var d *kdesc
	if n := len(vi.free); n > 0 {
		d = vi.free[n-1]
		vi.free = vi.free[:n-1]
	} else {
		d = &kdesc{vi: vi}
		d.done = func() { vi.a.fragDone(d) }
	}
	d.addr, d.control, d.imm, d.length = addr, 0, 0, 0
	d.runs, d.headers, d.pending, d.posting, d.err = d.runs[:0], d.headers[:0], 0, false, 0
	return d
}

func (vi *VI) freeKdesc(d *kdesc) { vi.free = append(vi.free, d) }

// State returns the VI's state.
func (vi *VI) State() State { return vi.state }

// Number returns the VI's number on its host (its M-VIA header id).
func (vi *VI) Number() int { return int(vi.num) }

// CQ is a completion queue (VIP_CQ_HANDLE): a ring of entries in memory
// the agent writes and the VIPL reads, each naming a VI and a queue.
//
//	entry (8 bytes): VI number (4) | flags (4): 1 valid, 2 receive queue
type CQ struct {
	a       *Agent
	lib     *VIPL
	nic     *Nic
	ring    memory.Addr
	entries int
	head    int // next entry the VIPL reads
	tail    int // next entry the agent writes
	wait    kernel.WaitQueue
}

const (
	cqEntrySize = 8
	cqValid     = 1
	cqRecv      = 2
)

// Conn is a connection request a server holds (VIP_CONN_HANDLE) between
// VipConnectWait and VipConnectAccept or VipConnectReject.
type Conn struct {
	nic      *Nic
	lib      *VIPL // the server that took it
	mac      [6]byte
	vi       uint16
	attrs    ViAttributes
	disc     []byte
	done     bool
	accepted *VI
}

// listener is a VipConnectWait caller.
type listener struct {
	disc []byte
	got  *Conn
	q    kernel.WaitQueue
}
