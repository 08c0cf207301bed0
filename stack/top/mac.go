package top

import (
	"fmt"

	"simkron/cpu"
	"simkron/memory"
	"simkron/stack/driver/pktdrv"
	"simkron/stack/header"
	"simkron/stack/osi"
)

// The MAC entity: IEEE 802.3 over the packet driver, and the MAC–LLC
// interface of the seed, a pair of circular buffers. The layer above
// (LLC, or a MAC user in its place) writes each frame contiguously into
// the transmit buffer and the MAC's transmit task hands it to send_pkt;
// the packet driver's receiver upcall takes room for each received frame
// in the receive buffer, where the frame stays — the layers above work on
// it in place through descriptors — until the last of them releases it.
//
//	ring  base ┌─────────┬─────────┬──────────────┬────────┐ end
//	           │ free    │ frame   │ frame  frame │ free   │
//	           └─────────┴─────────┴──────────────┴────────┘
//	                     tail (oldest)            head (next)
//
// Each slot is a data block (osi block header, then the frame). Slots are
// allocated at the head; a slot that does not fit before the end starts
// again at the base. Slots may be released in any order; the tail moves
// over released slots.

// ring is one circular buffer.
type ring struct {
	h         *Runtime
	name      string
	base, end memory.Addr
	ctl       memory.Addr // head, tail words
	owner     uint16
	head      memory.Addr
	slots     []slot // oldest first
	// Full counts allocations refused for want of room.
	Full uint64
}

type slot struct {
	blk   memory.Addr
	size  memory.Addr // bytes the slot spans, header included
	n     int         // frame octets once ready
	ready bool
	taken bool
	freed bool
}

var (
	defRingAlloc = cpu.Def{Name: "ring_alloc", Layer: cpu.LayerInherit, Instructions: 22, CodeBytes: 160, Why: "the slot size rounded (3), room at the head or from the base, against the tail (loads and compares: 8), the slot recorded and the head moved (far stores: 4), the block header written (use, owner, size: 4), return (3)"}
	defRingFree  = cpu.Def{Name: "ring_free", Layer: cpu.LayerInherit, Instructions: 16, CodeBytes: 128, Why: "the slot found (compare loop set-up: 4), marked released (2), the tail moved over released slots (loop set-up and store: 6), return (4)"}
	defMACPut    = cpu.Def{Name: "mac_put", Layer: cpu.LayerMAC, Instructions: 24, CodeBytes: 160, Why: "the header written in front: destination, source (REP MOVSW of 6 words set-up: 6) and length or type (2), the slot found and marked ready with its length (8), sched_enqueue for the transmit task (call: 3), return (5)"}
	defMACTx     = cpu.Def{Name: "mac_tx_task", Layer: cpu.LayerMAC, Instructions: 20, CodeBytes: 160, Why: "the oldest ready slot (loop set-up and tests: 6), marked taken (2), send_pkt (INT 60h with DS:SI and CX: 5), its error tested and counted (3), ring_free (call: 2), the task waiting for room scheduled (2)"}
	defMACUp0    = cpu.Def{Name: "mac_upcall", Layer: cpu.LayerMAC, Instructions: 18, CodeBytes: 128, Why: "the receiver upcall: AX tested (2); AX=0: ring_alloc for the frame (call: 3), ES:DI returned (3); AX=1: the slot found and marked ready with its length (6), sched_enqueue for the upper task (call: 2), RETF (2)"}
	defMACGet    = cpu.Def{Name: "mac_get", Layer: cpu.LayerMAC, Instructions: 36, CodeBytes: 256, Why: "the oldest ready slot (loop set-up and tests: 6), marked taken (2), the 14-octet header read (REP MOVSW set-up: 5), the Length/Type field tested against 1500 or the user's type (4) and against the frame (3), a descriptor over the data field (pdu_alloc: call 5), addresses returned (6), the slot released on a bad frame (5)"}
	defMACOpen   = cpu.Def{Name: "mac_open", Layer: cpu.LayerMAC, Instructions: 80, CodeBytes: 384, Why: "driver_info, access_type for every frame, get_address (once)"}
)

const slotAlign = 8

// newRing places a circular buffer of size bytes in the static data.
func (h *Runtime) newRing(name string, size int, owner uint16) *ring {
	r := &ring{h: h, name: name, ctl: h.static(8), owner: owner}
	r.base = h.static(size)
	r.end = r.base + memory.Addr(size)
	r.head = r.base
	h.rings = append(h.rings, r)
	return r
}

// place returns where a slot for n octets of frame would go, or false.
func (r *ring) place(n int) (at, need memory.Addr, ok bool) {
	need = memory.Addr((osi.BlockHeader + n + slotAlign - 1) &^ (slotAlign - 1))
	at = r.head
	if len(r.slots) == 0 {
		return r.base, need, r.base+need <= r.end
	}
	tail := r.slots[0].blk
	// Wrapped (the newest slot lies before the oldest): the free room is
	// from the head up to the tail only. A head that has come round to
	// the tail exactly is a full ring, not an empty one.
	if r.slots[len(r.slots)-1].blk < tail {
		if at+need <= tail {
			return at, need, true
		}
		return 0, need, false
	}
	switch {
	case at+need <= r.end:
	case r.base+need <= tail:
		at = r.base
	default:
		return 0, need, false
	}
	return at, need, true
}

// fits reports whether a slot for n octets would be had now (the check
// is part of the caller's code).
func (r *ring) fits(n int) bool {
	r.h.c.Exec(6)
	_, _, ok := r.place(n)
	return ok
}

// alloc returns a slot for n octets of frame, or 0.
func (r *ring) alloc(n int) memory.Addr {
	h := r.h
	c := h.c
	c.Enter(h.mac.sym.ringAlloc)
	defer c.Exit(h.mac.sym.ringAlloc)
	at, need, ok := r.place(n)
	if !ok {
		r.Full++
		return 0
	}
	r.slots = append(r.slots, slot{blk: at, size: need})
	r.head = at + need
	h.wr32(r.ctl, r.head)
	h.bufs.InitBlock(at, r.owner, n)
	return at
}

// find returns the index of the slot of blk.
func (r *ring) find(blk memory.Addr) int {
	for i := range r.slots {
		if r.slots[i].blk == blk {
			return i
		}
	}
	return -1
}

// release frees blk's slot and moves the tail.
func (r *ring) release(blk memory.Addr) {
	h := r.h
	c := h.c
	c.Enter(h.mac.sym.ringFree)
	defer c.Exit(h.mac.sym.ringFree)
	i := r.find(blk)
	if i < 0 || r.slots[i].freed {
		panic(fmt.Sprintf("top: %s: release of %#x, not a live slot", r.name, uint64(blk)))
	}
	r.slots[i].freed = true
	k := 0
	for k < len(r.slots) && r.slots[k].freed {
		k++
	}
	if k > 0 {
		r.slots = append(r.slots[:0], r.slots[k:]...)
		tail := r.head
		if len(r.slots) > 0 {
			tail = r.slots[0].blk
		}
		h.wr32(r.ctl+4, tail)
	}
}

// ringFree is the memory manager's path for ring blocks whose uses
// reached zero.
func (h *Runtime) ringFree(blk memory.Addr) {
	for _, r := range h.rings {
		if blk >= r.base && blk < r.end {
			r.release(blk)
			return
		}
	}
	panic(fmt.Sprintf("top: block %#x is in no circular buffer", uint64(blk)))
}

// MACStats counts the MAC entity's events.
type MACStats struct {
	TxFrames, TxRingFull, TxErrors     uint64
	RxFrames, RxRingFull               uint64
	RxOtherType, RxBadLength, RxNoDesc uint64 // RxOtherType: a Length/Type field the upper layer does not take
}

// MAC is the MAC entity of the host.
type MAC struct {
	h      *Runtime
	drv    *pktdrv.Driver
	handle pktdrv.Handle
	addr   [6]byte
	tx, rx *ring
	txTask *Task
	upper  *Task  // scheduled for each received frame
	etype  uint16 // the EtherType the upper layer takes (0: 802.3 length frames)
	room   *Task  // waits for room in the transmit buffer
	waits  int    // runs of room that found none (each owes a run)
	stats  MACStats
	hdr    [header.EthernetHeaderLen]byte
	sym    struct{ ringAlloc, ringFree, put, txTask, upcall, get, open *cpu.Symbol }
}

// NewMAC makes the MAC entity over drv. Its start-up (OnStart) opens the
// driver for every frame and reads the station address; drv's own
// initialisation must come before it.
func (h *Runtime) NewMAC(drv *pktdrv.Driver) *MAC {
	if h.mac != nil {
		panic("top: a second MAC entity")
	}
	m := &MAC{h: h, drv: drv}
	h.mac = m
	m.sym.ringAlloc = h.define(defRingAlloc, osi.CatMemory)
	m.sym.ringFree = h.define(defRingFree, osi.CatMemory)
	m.sym.put = h.define(defMACPut, osi.CatOther)
	m.sym.upcall = h.define(defMACUp0, osi.CatOther)
	m.sym.get = h.define(defMACGet, osi.CatOther)
	m.sym.open = h.define(defMACOpen, osi.CatOther)
	for _, s := range drv.CopySymbols() {
		h.cat.File(s, osi.CatCopy)
	}
	m.tx = h.newRing("txring", int(h.p.TxRing), ownerTxRing)
	m.rx = h.newRing("rxring", int(h.p.RxRing), ownerRxRing)
	m.txTask = h.NewTask(defMACTx, osi.CatOther, m.transmit)
	h.cat.File(m.txTask.sym, osi.CatOther)
	h.OnStart(m.open)
	return m
}

// SetUpper names the task that takes received frames (LLC's, or a MAC
// user's): it is scheduled once per frame and calls Receive.
func (m *MAC) SetUpper(t *Task) { m.upper = t }

// SetUpperType makes t the task that takes received frames, as SetUpper,
// for an upper layer that frames with an EtherType (typ, at least
// 0x0600) instead of an 802.3 length: a MAC user with a type of its own
// on a LAN it shares.
func (m *MAC) SetUpperType(t *Task, typ uint16) {
	if header.IsLengthField(typ) {
		panic(fmt.Sprintf("top: mac: EtherType %#04x is an 802.3 length", typ))
	}
	m.upper, m.etype = t, typ
}

// Stats returns the counters.
func (m *MAC) Stats() MACStats { return m.stats }

// Address returns the station address (known after start-up).
func (m *MAC) Address() [6]byte { return m.addr }

// MaxSDU returns the largest data field: 1500 octets.
func (m *MAC) MaxSDU() int { return header.IEEE8023MaxLength }

// RingFull returns the allocations the transmit and receive buffers
// refused.
func (m *MAC) RingFull() (tx, rx uint64) { return m.tx.Full, m.rx.Full }

func (m *MAC) open() {
	c := m.h.c
	c.Call(m.sym.open, func() {
		m.drv.DriverInfo()
		h, err := m.drv.AccessType(pktdrv.ClassDIX, pktdrv.AnyType, 0, nil, m.upcall)
		if err != nil {
			c.System().Guest.Report(c.LocalTime(), m.h.name, "mac: access_type: %v", err)
			return
		}
		m.handle = h
		m.h.OnExit(func() { _ = m.drv.ReleaseType(h) })
		buf := m.h.static(8)
		if _, err := m.drv.GetAddress(h, buf, 6); err != nil {
			c.System().Guest.Report(c.LocalTime(), m.h.name, "mac: get_address: %v", err)
			return
		}
		c.Read(buf, m.addr[:])
	})
}

// TxBuffer returns room in the transmit buffer for an n-octet data field
// (the address where the caller writes it; the MAC header goes before),
// or ok false when the buffer is full.
func (m *MAC) TxBuffer(n int) (memory.Addr, bool) {
	blk := m.tx.alloc(header.EthernetHeaderLen + max(n, 1))
	if blk == 0 {
		m.stats.TxRingFull++
		return 0, false
	}
	return blk + osi.BlockHeader + header.EthernetHeaderLen, true
}

// HasRoom reports whether TxBuffer(n) would succeed now.
func (m *MAC) HasRoom(n int) bool { return m.tx.fits(header.EthernetHeaderLen + max(n, 1)) }

// OnRoom schedules t once the transmit buffer has released a slot, once
// for every call since: each call is a run of t that found no room and
// served nothing, so the primitives left keep one run each.
func (m *MAC) OnRoom(t *Task) {
	if m.room != nil && m.room != t {
		panic("top: mac: two tasks wait for transmit room")
	}
	m.room = t
	m.waits++
}

// Send queues the n-octet data field written at a (from TxBuffer) for
// dst: the MAC writes its 802.3 header (the length n) in front and the
// transmit task sends it.
func (m *MAC) Send(a memory.Addr, n int, dst [6]byte) { m.send(a, n, dst, uint16(n)) }

// SendType is Send for a frame whose header carries the EtherType typ
// instead of the length.
func (m *MAC) SendType(a memory.Addr, n int, dst [6]byte, typ uint16) { m.send(a, n, dst, typ) }

func (m *MAC) send(a memory.Addr, n int, dst [6]byte, typ uint16) {
	h := m.h
	c := h.c
	c.Enter(m.sym.put)
	defer c.Exit(m.sym.put)
	f := header.Ethernet(m.hdr[:])
	f.Encode(&header.EthernetFields{Dst: dst, Src: m.addr, Type: typ})
	c.Write(a-header.EthernetHeaderLen, m.hdr[:])
	blk := a - header.EthernetHeaderLen - osi.BlockHeader
	i := m.tx.find(blk)
	if i < 0 {
		panic(fmt.Sprintf("top: mac: send of %#x, not a transmit slot", uint64(a)))
	}
	m.tx.slots[i].ready, m.tx.slots[i].n = true, header.EthernetHeaderLen+n
	h.Schedule(m.txTask)
}

// transmit is the MAC's transmit task: the oldest ready frame goes to
// send_pkt and its slot is released.
func (m *MAC) transmit() {
	for i := range m.tx.slots {
		s := m.tx.slots[i]
		if !s.ready || s.taken {
			continue
		}
		m.tx.slots[i].taken = true
		if err := m.drv.SendPkt(s.blk+osi.BlockHeader, s.n); err != nil {
			m.stats.TxErrors++
		} else {
			m.stats.TxFrames++
		}
		m.tx.release(s.blk)
		if t := m.room; t != nil {
			for ; m.waits > 0; m.waits-- {
				m.h.Schedule(t)
			}
			m.room = nil
		}
		return
	}
}

// upcall is the packet driver's receiver: flag 0 asks for room, flag 1
// says the frame is there.
func (m *MAC) upcall(h pktdrv.Handle, flag int, buf memory.Addr, n int) memory.Addr {
	c := m.h.c
	c.Enter(m.sym.upcall)
	defer c.Exit(m.sym.upcall)
	if flag == 0 {
		// An odd length gets a spare octet: INSW moves whole words.
		blk := m.rx.alloc(n + n&1)
		if blk == 0 {
			m.stats.RxRingFull++
			return 0
		}
		return blk + osi.BlockHeader
	}
	blk := buf - osi.BlockHeader
	i := m.rx.find(blk)
	if i < 0 {
		panic(fmt.Sprintf("top: mac: upcall for %#x, not a receive slot", uint64(buf)))
	}
	m.rx.slots[i].ready, m.rx.slots[i].n = true, n
	m.stats.RxFrames++
	if m.upper != nil {
		m.h.Schedule(m.upper)
	}
	return 0
}

// Receive takes the oldest received frame: its source and destination
// and a chain over its data field (the frame stays in the receive buffer
// until the chain is freed). ok is false when no frame waits. An 802.3
// frame's data field is as long as its length field says; a frame with
// the upper layer's EtherType (SetUpperType) has all the octets after
// its header, a minimum frame's padding included. Frames with another
// EtherType, or a length field the frame does not hold, are dropped and
// counted.
func (m *MAC) Receive() (src, dst [6]byte, ch osi.Chain, ok bool) {
	h := m.h
	c := h.c
	c.Enter(m.sym.get)
	defer c.Exit(m.sym.get)
	for i := range m.rx.slots {
		s := m.rx.slots[i]
		if !s.ready || s.taken || s.freed {
			continue
		}
		m.rx.slots[i].taken = true
		data := s.blk + osi.BlockHeader
		c.Read(data, m.hdr[:])
		f := header.Ethernet(m.hdr[:])
		l := int(f.Type())
		typed := m.etype != 0 && f.Type() == m.etype
		if typed {
			l = s.n - header.EthernetHeaderLen
		}
		switch {
		case !typed && (m.etype != 0 || !header.IsLengthField(f.Type())):
			m.stats.RxOtherType++
		case header.EthernetHeaderLen+l > s.n:
			m.stats.RxBadLength++
		default:
			ch = h.bufs.Wrap(osi.Rx, s.blk, data+header.EthernetHeaderLen, l)
			if ch == 0 {
				m.stats.RxNoDesc++
				break
			}
			return f.Src(), f.Dst(), ch, true
		}
		m.rx.release(s.blk)
		return src, dst, 0, false
	}
	return src, dst, 0, false
}
