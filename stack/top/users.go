package top

import (
	"encoding/binary"
	"fmt"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/driver/pktdrv"
	"simkron/stack/header"
	"simkron/stack/osi"
)

// Layer users: the specialised programs the TOP study put on top of each
// layer to measure it. An originator sends Messages messages of Size
// octets as fast as the layer takes them; a recipient checks each and
// echoes those that ask for it (by default only the last), and the
// originator's measurement runs from its first send until the reply to
// the last message arrives, timed exactly and with the BIOS tick as the
// study did. One User can be both (loopback: one host talks to itself).
//
// Every message starts with a 16-octet header:
//
//	off  size  field
//	0    2     magic "TU"
//	2    1     flags: 1 echo requested, 2 this is a reply
//	3    1     the level (Level)
//	4    4     sequence number, little-endian
//	8    4     message size
//	12   4     zero
//
// and the rest is a fixed pattern, PatternByte(i) at octet i. The LLC and
// CLNS users send from buffers of their own that hold the pattern, in
// rotation (a buffer is reused only when no chain uses it any more); the
// packet-driver user sends its own frame buffer. The MAC user builds its
// message in the MAC's transmit buffer and writes only the header (the
// rest is whatever the buffer held): its recipient checks the header and
// the length only.
//
// The packet-driver and MAC users have no LLC beneath them, so their
// frames carry an EtherType of their own, as such a program's frames had
// to on a LAN it shared with others: EtherTypeUser, IEEE Std 802's Local
// Experimental EtherType 1 (88-B5), reserved for protocols under
// development and private experiments. The packet-driver user takes only
// frames of that type from the driver (access_type with the type), the
// MAC user only those from the MAC entity (SetUpperType). The frame is
// no longer than the message and its 14-octet header (no 802.3 length
// field, no LLC header); a message shorter than a minimum frame's data
// field arrives with the padding after it, which the recipient leaves.

// Level says which layer a user sits on.
type Level uint8

// Levels.
const (
	LevelPktDrv Level = iota + 1
	LevelMAC
	LevelLLC
	LevelCLNS
)

func (l Level) String() string {
	switch l {
	case LevelPktDrv:
		return "pktdrv"
	case LevelMAC:
		return "mac"
	case LevelLLC:
		return "llc"
	case LevelCLNS:
		return "clns"
	case LevelTP4:
		return "tp4"
	case LevelSession:
		return "session"
	case LevelPresentation:
		return "presentation"
	}
	return fmt.Sprintf("Level(%d)", uint8(l))
}

// MsgHeader is the length of the message header.
const MsgHeader = 16

// EtherTypeUser is the EtherType of the packet-driver and MAC users'
// frames: IEEE Std 802's Local Experimental EtherType 1.
const EtherTypeUser = 0x88B5

// userType is EtherTypeUser as the packet driver's access_type takes it.
var userType = []byte{EtherTypeUser >> 8, EtherTypeUser & 0xFF}

const (
	flagEcho  = 1
	flagReply = 2
)

// PatternByte is the pattern octet at offset i of a message.
func PatternByte(i int) byte { return byte(i*13 + i>>8 + 0x5A) }

// UserParams configures a layer user.
type UserParams struct {
	Level     Level
	Size      int      // message octets (the useful bytes)
	Messages  int      // messages to send (originator)
	EchoEvery int      // also ask for an echo of every n-th message; 0: only the last
	Buffers   int      // message buffers in rotation (LLC and CLNS users)
	SAP       uint8    // LLC user: its SAP
	Selector  byte     // CLNS user: its NSAP selector
	Peer      [6]byte  // the other user's station (MAC, LLC, packet driver)
	PeerNSAP  osi.NSAP // CLNS: the other user's NSAP
	// Duplex (connection-mode users): both ends send Messages, checked
	// in order, none echoed; the recipient ends with a message saying it
	// has all of the originator's, after which the originator releases.
	Duplex bool
}

// Result is the originator's measurement.
type Result struct {
	Sent, Replies int
	// FirstSend and LastReply bound the measurement (simulated time).
	FirstSend, LastReply sim.Time
	// TickStart and TickEnd are the BIOS tick counts the program read at
	// the same two moments.
	TickStart, TickEnd uint32
	Size, Messages     int
	Done               bool
}

// Duration returns the exact time of the run.
func (r Result) Duration() sim.Time { return r.LastReply - r.FirstSend }

// Mbps returns the useful throughput, exactly timed, in Mbit/s.
func (r Result) Mbps() float64 {
	if d := r.Duration(); d > 0 {
		return float64(r.Messages*r.Size*8) / d.Seconds() / 1e6
	}
	return 0
}

// TickMbps returns the throughput timed with the 55 ms BIOS tick, as the
// study timed it (0 when the run took less than a tick).
func (r Result) TickMbps() float64 {
	if n := r.TickEnd - r.TickStart; n > 0 {
		return float64(r.Messages*r.Size*8) / (sim.Time(n) * TickPeriod).Seconds() / 1e6
	}
	return 0
}

// RecvStats counts what a recipient saw.
type RecvStats struct {
	Messages, Echoed, Corrupt, Replies uint64
	// OutOfOrder counts messages whose sequence number was not the next
	// one (duplex users, which check the order).
	OutOfOrder uint64
	Octets     uint64
}

var (
	defUserSend = cpu.Def{Name: "tu_send", Layer: cpu.LayerAPPL, Instructions: 40, CodeBytes: 256, Why: "a free message buffer (its use count tested in a loop: 8), the 16-octet header (4 far stores of words: 8), the block's use raised and a descriptor over it (calls: 8), the request put (call with its parameters: 8), counted and the task rescheduled (8)"}
	defUserRecv = cpu.Def{Name: "tu_recv", Layer: cpu.LayerAPPL, Instructions: 30, CodeBytes: 224, Why: "the 16-octet header read (far loads: 8), magic, level, size checked (6), counted (2), the chain freed or echoed (call: 6), the reply's flag or the release (8)"}
)

// User is a layer user on one host.
type User struct {
	h      *Runtime
	p      UserParams
	mac    *MAC
	llc    *LLC
	clns   *CLNS
	drv    *pktdrv.Driver
	handle pktdrv.Handle
	send   *Task
	rx     *Task     // MAC and packet-driver users: frames to take
	up     *Queue    // LLC and CLNS users: indications
	bufs   []userBuf // LLC, CLNS: message blocks; packet driver: frames
	rxBufs []userBuf // packet driver: receive buffers
	self   [6]byte
	seq    int
	res    Result
	recv   RecvStats
	// OnFirstSend and OnDone, when set, run (in the program's context,
	// after the charged work up to that moment) as the measurement starts
	// and ends: an observer reads counters there. OnLast runs when a
	// recipient has echoed the originator's last message.
	OnFirstSend, OnDone, OnLast func()
	sym                         struct{ send, recv *cpu.Symbol }
	hdr                         [MsgHeader]byte
}

type userBuf struct {
	blk   memory.Addr
	busy  bool // packet driver buffers: in use
	n     int
	ready bool
}

// NewUser makes a layer user of level p.Level on the host, over the
// entity that level needs (mac, llc or clns; drv for the packet-driver
// user, which then must be the only user of the driver).
func (h *Runtime) NewUser(p UserParams, drv *pktdrv.Driver, mac *MAC, l *LLC, n *CLNS) (*User, error) {
	if p.Size < MsgHeader {
		return nil, fmt.Errorf("top: user message size %d is below the %d-octet header", p.Size, MsgHeader)
	}
	u := &User{h: h, p: p, drv: drv, mac: mac, llc: l, clns: n}
	u.sym.send = h.define(defUserSend, osi.CatOther)
	u.sym.recv = h.define(defUserRecv, osi.CatOther)
	u.send = h.NewTask(cpu.Def{Name: "tu_send_task", Layer: cpu.LayerAPPL, Instructions: 6, CodeBytes: 32, Why: "the task's entry: prologue (2), sent-all test (2), the send routine (call: 2)"}, osi.CatOther, u.sendOne)
	nb := max(p.Buffers, 1)
	switch p.Level {
	case LevelPktDrv:
		if drv == nil {
			return nil, fmt.Errorf("top: a packet-driver user needs the driver")
		}
		if p.Size > header.IEEE8023MaxLength {
			return nil, fmt.Errorf("top: packet-driver message of %d octets exceeds one frame", p.Size)
		}
		for range 1 {
			u.bufs = append(u.bufs, userBuf{blk: h.static(header.EthernetHeaderLen + p.Size)})
		}
		for range nb {
			u.rxBufs = append(u.rxBufs, userBuf{blk: h.static(header.EthernetMaxFrameLen + 2)})
		}
		u.rx = h.NewTask(cpu.Def{Name: "tu_pd_rx_task", Layer: cpu.LayerAPPL, Instructions: 6, CodeBytes: 32, Why: "the task's entry: prologue (2), the receive routine (call: 2), return (2)"}, osi.CatOther, u.pdReceive)
		h.OnStart(u.pdOpen)
	case LevelMAC:
		if mac == nil {
			return nil, fmt.Errorf("top: a MAC user needs the MAC entity")
		}
		u.rx = h.NewTask(cpu.Def{Name: "tu_mac_rx_task", Layer: cpu.LayerAPPL, Instructions: 6, CodeBytes: 32, Why: "the task's entry: prologue (2), mac_get and the receive routine (calls: 2), return (2)"}, osi.CatOther, u.macReceive)
		mac.SetUpperType(u.rx, EtherTypeUser)
	case LevelLLC, LevelCLNS:
		for range nb {
			u.bufs = append(u.bufs, userBuf{blk: h.static(osi.BlockHeader + p.Size)})
		}
		u.up = h.NewQueue("user.up", cpu.Def{Name: "tu_up_task", Layer: cpu.LayerAPPL, Instructions: 6, CodeBytes: 32, Why: "the task's entry: prologue (2), ifq_get and the user's handler (calls: 2), return (2)"}, u.indication)
		var err error
		if p.Level == LevelLLC {
			if l == nil {
				return nil, fmt.Errorf("top: an LLC user needs the LLC entity")
			}
			err = l.Bind(p.SAP, u.up)
		} else {
			if n == nil {
				return nil, fmt.Errorf("top: a CLNS user needs the CLNS entity")
			}
			err = n.Bind(p.Selector, u.up)
		}
		if err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("top: no user level %d", p.Level)
	}
	// The message buffers hold the pattern from the start (the program's
	// initialised data), and the LLC/CLNS ones a block header whose one
	// use is the user's.
	sys := h.c.System()
	pat := make([]byte, p.Size)
	for i := range pat {
		pat[i] = PatternByte(i)
	}
	for _, b := range u.bufs {
		if p.Level == LevelPktDrv {
			_ = sys.Phys.Write(b.blk+header.EthernetHeaderLen, pat)
		} else {
			var bh [osi.BlockHeader]byte
			binary.LittleEndian.PutUint16(bh[0:], 1)
			binary.LittleEndian.PutUint16(bh[2:], ownerStatic)
			binary.LittleEndian.PutUint32(bh[4:], uint32(p.Size))
			_ = sys.Phys.Write(b.blk, bh[:])
			_ = sys.Phys.Write(b.blk+osi.BlockHeader, pat)
		}
	}
	return u, nil
}

// Originate makes u the originator: at start-up it begins sending.
func (u *User) Originate() {
	u.res.Size, u.res.Messages = u.p.Size, u.p.Messages
	u.h.OnStart(func() { u.h.Schedule(u.send) })
}

// Result returns the originator's measurement.
func (u *User) Result() Result { return u.res }

// Received returns the recipient's counters.
func (u *User) Received() RecvStats { return u.recv }

func (u *User) pdOpen() {
	h, err := u.drv.AccessType(pktdrv.ClassDIX, pktdrv.AnyType, 0, userType, u.pdUpcall)
	if err != nil {
		u.h.c.System().Guest.Report(u.h.c.LocalTime(), u.h.name, "packet-driver user: access_type: %v", err)
		return
	}
	u.handle = h
	u.h.OnExit(func() { _ = u.drv.ReleaseType(h) })
	buf := u.h.static(8)
	if _, err := u.drv.GetAddress(h, buf, 6); err == nil {
		u.h.c.Read(buf, u.self[:])
	}
}

func (u *User) writeHeader(a memory.Addr, flags uint8, seq int) {
	b := u.hdr[:]
	b[0], b[1], b[2], b[3] = 'T', 'U', flags, byte(u.p.Level)
	binary.LittleEndian.PutUint32(b[4:], uint32(seq))
	binary.LittleEndian.PutUint32(b[8:], uint32(u.p.Size))
	binary.LittleEndian.PutUint32(b[12:], 0)
	u.h.c.Write(a, b)
}

// sendOne is the originator's task: one message, then it schedules
// itself again until all are sent.
func (u *User) sendOne() {
	if u.res.Sent >= u.p.Messages {
		return
	}
	h := u.h
	c := h.c
	c.Enter(u.sym.send)
	defer c.Exit(u.sym.send)
	seq := u.res.Sent
	flags := uint8(0)
	if seq == u.p.Messages-1 || u.p.EchoEvery > 0 && (seq+1)%u.p.EchoEvery == 0 {
		flags = flagEcho
	}
	if seq == 0 {
		c.Sync()
		u.res.FirstSend = c.LocalTime()
		u.res.TickStart = h.ReadTicks()
		if u.OnFirstSend != nil {
			u.OnFirstSend()
		}
	}
	ok := false
	switch u.p.Level {
	case LevelPktDrv:
		b := u.bufs[0].blk
		var eh [header.EthernetHeaderLen]byte
		header.Ethernet(eh[:]).Encode(&header.EthernetFields{Dst: u.p.Peer, Src: u.self, Type: EtherTypeUser})
		c.Write(b, eh[:])
		u.writeHeader(b+header.EthernetHeaderLen, flags, seq)
		ok = u.drv.SendPkt(b, header.EthernetHeaderLen+u.p.Size) == nil
	case LevelMAC:
		a, room := u.mac.TxBuffer(u.p.Size)
		if room {
			u.writeHeader(a, flags, seq)
			u.mac.SendType(a, u.p.Size, u.p.Peer, EtherTypeUser)
			ok = true
		}
	case LevelLLC, LevelCLNS:
		i := u.freeBuf()
		if i < 0 {
			// Every buffer is still in flight: try again after the
			// tasks ahead have run.
			h.Schedule(u.send)
			return
		}
		blk := u.bufs[i].blk
		u.writeHeader(blk+osi.BlockHeader, flags, seq)
		h.bufs.UseBlock(blk)
		ch := h.bufs.Wrap(osi.Tx, blk, blk+osi.BlockHeader, u.p.Size)
		if ch != 0 {
			if u.p.Level == LevelLLC {
				ok = u.llc.Request(u.p.Peer, u.p.SAP, u.p.SAP, ch)
			} else {
				ok = u.clns.Request(u.clns.N.Address(u.p.Selector), u.p.PeerNSAP, ch)
			}
		}
	}
	if !ok {
		// No room below: try the same message again later.
		h.Schedule(u.send)
		return
	}
	u.res.Sent++
	if u.res.Sent < u.p.Messages {
		h.Schedule(u.send)
	}
}

// freeBuf returns a message buffer no chain uses, or -1.
func (u *User) freeBuf() int {
	for k := range u.bufs {
		i := (u.seq + k) % len(u.bufs)
		if u.h.bufs.BlockUses(u.bufs[i].blk) == 1 {
			u.seq = i + 1
			return i
		}
	}
	return -1
}

// check reads a message's header (charged) and its whole content
// (uncharged: the simulator looks, the program does not) and returns its
// flags and sequence number; ok is false for a damaged message.
func (u *User) check(a memory.Addr, n int, full bool) (flags uint8, seq int, ok bool) {
	c := u.h.c
	if n < MsgHeader {
		return 0, 0, false
	}
	b := u.hdr[:]
	c.Read(a, b)
	flags, seq = b[2], int(binary.LittleEndian.Uint32(b[4:]))
	ok = b[0] == 'T' && b[1] == 'U' && b[3] == byte(u.p.Level) && int(binary.LittleEndian.Uint32(b[8:])) == n && n == u.p.Size
	if ok && full {
		got := make([]byte, n-MsgHeader)
		_ = c.System().Phys.Read(a+MsgHeader, got)
		for i, v := range got {
			if v != PatternByte(MsgHeader+i) {
				return flags, seq, false
			}
		}
	}
	return flags, seq, ok
}

// gotReply is the originator's handling of an echo.
func (u *User) gotReply(seq int) {
	u.res.Replies++
	if seq != u.p.Messages-1 || u.res.Done {
		return
	}
	c := u.h.c
	c.Sync()
	u.res.LastReply = c.LocalTime()
	u.res.TickEnd = u.h.ReadTicks()
	u.res.Done = true
	if u.OnDone != nil {
		u.OnDone()
	}
}

// indication is the LLC and CLNS users' handling of a received message.
func (u *User) indication(p Prim) {
	h := u.h
	c := h.c
	c.Enter(u.sym.recv)
	defer c.Exit(u.sym.recv)
	var src [6]byte
	var srcN osi.NSAP
	if u.p.Level == LevelLLC {
		src, _, _, _ = h.DLIndication(p)
	} else {
		srcN, _ = h.NIndication(p)
	}
	ch := p.Chain
	n := h.bufs.Len(ch)
	// A received message lies in one piece unless CLNP reassembled it.
	var first memory.Addr
	contiguous := true
	pieces := 0
	h.bufs.Pieces(ch, func(a memory.Addr, k int) {
		if pieces == 0 {
			first = a
		}
		pieces++
		contiguous = contiguous && pieces == 1
	})
	var flags uint8
	var seq int
	var ok bool
	if contiguous {
		flags, seq, ok = u.check(first, n, true)
	} else {
		flags, seq, ok = u.checkChain(ch, n)
	}
	if !ok {
		u.recv.Corrupt++
		h.bufs.Free(ch)
		return
	}
	if flags&flagReply != 0 {
		h.bufs.Free(ch)
		u.gotReply(seq)
		return
	}
	u.recv.Messages++
	if flags&flagEcho == 0 {
		h.bufs.Free(ch)
		return
	}
	// Echo: the same chain goes back, marked as a reply.
	u.recv.Echoed++
	c.Write(first+2, []byte{flagReply})
	if u.p.Level == LevelLLC {
		u.llc.Request(src, u.p.SAP, u.p.SAP, ch)
	} else {
		u.clns.Request(u.clns.N.Address(u.p.Selector), srcN, ch)
	}
	u.echoed(seq)
}

// echoed tells the observer when the originator's last message has been
// echoed.
func (u *User) echoed(seq int) {
	if seq == u.p.Messages-1 && u.OnLast != nil {
		u.OnLast()
	}
}

// checkChain checks a message spread over several pieces.
func (u *User) checkChain(ch osi.Chain, n int) (uint8, int, bool) {
	h := u.h
	b := make([]byte, n)
	got := h.bufs.Read(ch, 0, b[:MsgHeader])
	if got < MsgHeader {
		return 0, 0, false
	}
	off := 0
	sys := h.c.System()
	h.bufs.Pieces(ch, func(a memory.Addr, k int) {
		_ = sys.Phys.Read(a, b[off:off+k])
		off += k
	})
	ok := b[0] == 'T' && b[1] == 'U' && b[3] == byte(u.p.Level) && int(binary.LittleEndian.Uint32(b[8:])) == n && n == u.p.Size
	for i := MsgHeader; ok && i < n; i++ {
		ok = b[i] == PatternByte(i)
	}
	return b[2], int(binary.LittleEndian.Uint32(b[4:])), ok
}

// macReceive is the MAC user's task for a received frame.
func (u *User) macReceive() {
	h := u.h
	c := h.c
	src, _, ch, got := u.mac.Receive()
	if !got {
		return
	}
	c.Enter(u.sym.recv)
	defer c.Exit(u.sym.recv)
	var a memory.Addr
	h.bufs.Pieces(ch, func(x memory.Addr, _ int) { a = x })
	n := u.unpad(h.bufs.Len(ch))
	flags, seq, ok := u.check(a, n, false)
	h.bufs.Free(ch)
	switch {
	case !ok:
		u.recv.Corrupt++
	case flags&flagReply != 0:
		u.gotReply(seq)
	default:
		u.recv.Messages++
		if flags&flagEcho != 0 {
			if b, room := u.mac.TxBuffer(u.p.Size); room {
				u.recv.Echoed++
				u.writeHeader(b, flagReply, seq)
				u.mac.SendType(b, u.p.Size, src, EtherTypeUser)
				u.echoed(seq)
			}
		}
	}
}

// unpad returns the message octets of a typed frame's n-octet data
// field: a message shorter than a minimum frame's data field arrives
// with the padding after it (the recipient knows the size it expects).
func (u *User) unpad(n int) int {
	if n == header.EthernetMinFrameLen-header.EthernetHeaderLen && u.p.Size < n {
		return u.p.Size
	}
	return n
}

// pdUpcall is the packet-driver user's receiver.
func (u *User) pdUpcall(_ pktdrv.Handle, flag int, buf memory.Addr, n int) memory.Addr {
	if flag == 0 {
		for i := range u.rxBufs {
			if !u.rxBufs[i].busy && n <= header.EthernetMaxFrameLen {
				u.rxBufs[i].busy = true
				return u.rxBufs[i].blk
			}
		}
		return 0
	}
	for i := range u.rxBufs {
		if u.rxBufs[i].blk == buf {
			u.rxBufs[i].ready, u.rxBufs[i].n = true, n
		}
	}
	u.h.Schedule(u.rx)
	return 0
}

// pdReceive is the packet-driver user's task for a received frame.
func (u *User) pdReceive() {
	h := u.h
	c := h.c
	c.Enter(u.sym.recv)
	defer c.Exit(u.sym.recv)
	for i := range u.rxBufs {
		b := &u.rxBufs[i]
		if !b.ready {
			continue
		}
		var eh [header.EthernetHeaderLen]byte
		c.Read(b.blk, eh[:])
		e := header.Ethernet(eh[:])
		l := u.unpad(b.n - header.EthernetHeaderLen)
		flags, seq, ok := 0, 0, false
		if e.Type() == EtherTypeUser {
			var f uint8
			f, seq, ok = u.check(b.blk+header.EthernetHeaderLen, l, true)
			flags = int(f)
		}
		switch {
		case !ok:
			u.recv.Corrupt++
		case flags&flagReply != 0:
			u.gotReply(seq)
		default:
			u.recv.Messages++
			if flags&flagEcho != 0 {
				u.recv.Echoed++
				header.Ethernet(eh[:]).Encode(&header.EthernetFields{Dst: e.Src(), Src: u.self, Type: EtherTypeUser})
				c.Write(b.blk, eh[:])
				c.Write(b.blk+header.EthernetHeaderLen+2, []byte{flagReply})
				u.drv.SendPkt(b.blk, header.EthernetHeaderLen+l)
				u.echoed(seq)
			}
		}
		b.ready, b.busy = false, false
		return
	}
}
