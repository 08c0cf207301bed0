package via_test

import (
	"fmt"

	"simkron/memory"
	"simkron/stack/kernel"
	"simkron/stack/via"
)

// ep is a program's VIA endpoint: its VIPL, the NIC, a protection tag,
// one registered region holding descriptor slots and then data, and a VI.
type ep struct {
	h    *host
	th   *kernel.Thread
	l    *via.VIPL
	nic  *via.Nic
	ptag via.Ptag
	mem  memory.Addr
	size int
	mh   via.MemHandle
	vi   *via.VI
	cq   *via.CQ
}

const (
	descSlots  = 64
	descStride = 128 // room for a control segment and six data segments
)

// open sets up an endpoint with bufBytes of data room on thread th of h;
// with cq set, both queues of the VI are bound to one completion queue.
func open(h *host, th *kernel.Thread, bufBytes int, attrs via.ViAttributes, cq bool) (*ep, error) {
	e := &ep{h: h, th: th, l: h.agent.NewVIPL(th)}
	var rc via.Return
	if e.nic, rc = e.l.VipOpenNic("eth0"); rc != via.Success {
		return nil, fmt.Errorf("VipOpenNic: %v", rc)
	}
	if e.ptag, rc = e.l.VipCreatePtag(e.nic); rc != via.Success {
		return nil, fmt.Errorf("VipCreatePtag: %v", rc)
	}
	e.size = descSlots*descStride + bufBytes
	if e.mem = h.kern.Kmalloc(e.size); e.mem == 0 {
		return nil, fmt.Errorf("no memory")
	}
	if e.mh, rc = e.l.VipRegisterMem(e.nic, e.mem, uint64(e.size), via.MemAttributes{Ptag: e.ptag}); rc != via.Success {
		return nil, fmt.Errorf("VipRegisterMem: %v", rc)
	}
	if cq {
		if e.cq, rc = e.l.VipCreateCQ(e.nic, 256); rc != via.Success {
			return nil, fmt.Errorf("VipCreateCQ: %v", rc)
		}
	}
	if attrs.ReliabilityLevel == 0 {
		attrs.ReliabilityLevel = via.Unreliable
	}
	attrs.Ptag = e.ptag
	if e.vi, rc = e.l.VipCreateVi(e.nic, attrs, e.cq, e.cq); rc != via.Success {
		return nil, fmt.Errorf("VipCreateVi: %v", rc)
	}
	return e, nil
}

func (e *ep) desc(i int) memory.Addr  { return e.mem + memory.Addr(i%descSlots*descStride) }
func (e *ep) buf(off int) memory.Addr { return e.mem + descSlots*descStride + memory.Addr(off) }

// put writes descriptor d into slot i with the program's stores.
func (e *ep) put(i int, d via.Descriptor) memory.Addr {
	b := make([]byte, d.Size())
	d.Encode(b)
	a := e.desc(i)
	e.h.c.Write(a, b)
	return a
}

// seg is one data segment of n bytes at offset off of the data room.
func (e *ep) seg(off, n int) via.Segment {
	return via.Segment{Addr: uint64(e.buf(off)), Handle: e.mh, Length: uint32(n)}
}

// postRecv posts slot i as a receive of n bytes at offset off.
func (e *ep) postRecv(i, off, n int) via.Return {
	return e.l.VipPostRecv(e.vi, e.put(i, via.Descriptor{Segs: []via.Segment{e.seg(off, n)}}), e.mh)
}

// postSend posts slot i as a send of n bytes at offset off.
func (e *ep) postSend(i, off, n int) via.Return {
	return e.l.VipPostSend(e.vi, e.put(i, via.Descriptor{Segs: []via.Segment{e.seg(off, n)}}), e.mh)
}

// status reads a descriptor's Length and Status (not charged: the test
// looks).
func (e *ep) status(a memory.Addr) (length, status, imm uint32) {
	var b [12]byte
	e.h.sys.Phys.Read(a+20, b[:])
	return le32(b[4:]), le32(b[8:]), le32(b[0:])
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

var disc = []byte("vpingpong")

// accept waits for one connection on the discriminator and accepts it.
func (e *ep) accept() error {
	conn, _, _, rc := e.l.VipConnectWait(e.nic, via.NetAddress{Host: e.h.mac, Discriminator: disc}, 0)
	if rc != via.Success {
		return fmt.Errorf("VipConnectWait: %v", rc)
	}
	if rc := e.l.VipConnectAccept(conn, e.vi); rc != via.Success {
		return fmt.Errorf("VipConnectAccept: %v", rc)
	}
	return nil
}

// connect connects to the server host's discriminator.
func (e *ep) connect(server *host) error {
	_, rc := e.l.VipConnectRequest(e.vi, via.NetAddress{Host: e.h.mac}, via.NetAddress{Host: server.mac, Discriminator: disc}, 0)
	if rc != via.Success {
		return fmt.Errorf("VipConnectRequest: %v", rc)
	}
	return nil
}

// pattern fills n bytes at offset off of the data room from seed.
func (e *ep) pattern(off, n int, seed byte) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = seed + byte(i*11+i>>8)
	}
	e.h.c.Write(e.buf(off), p)
	return p
}

// read returns n bytes at offset off (not charged).
func (e *ep) read(off, n int) []byte {
	p := make([]byte, n)
	e.h.sys.Phys.Read(e.buf(off), p)
	return p
}
