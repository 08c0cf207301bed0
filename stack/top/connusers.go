package top

import (
	"fmt"

	"simkron/cpu"
	"simkron/memory"
	"simkron/stack/header"
	"simkron/stack/osi"
	"simkron/stack/osi/tp4"
)

// Layer users of the connection-mode layers (transport, session,
// presentation). They measure as the connectionless ones do (messages
// with the same header and pattern, from buffers of their own in
// rotation, echo of the last message or of every n-th — the recipient
// replies from its own buffers, writing only the header, so that no
// received frame stays held by a retransmission — the originator
// timing from its first data request to the reply to its last), but
// first set up a connection with the primitives an application entity
// would issue — T-CONNECT, S-CONNECT or P-CONNECT request, indication,
// response and confirmation — and release it after the last reply
// (T-DISCONNECT; S-RELEASE or P-RELEASE request, indication, response
// and confirmation). Neither set-up nor release is timed, as in the
// study.
//
// A user sends as fast as the layer takes its requests; when every
// message buffer is still held below (retained by TP4 until
// acknowledged) it waits until the layer says acknowledgements have
// freed room, instead of spinning.

// Connection-mode levels.
const (
	LevelTP4 Level = iota + 5
	LevelSession
	LevelPresentation
)

// ConnUser is a layer user of a connection-mode layer on one host.
type ConnUser struct {
	h      *Runtime
	p      UserParams
	msg    *User // the message header and pattern routines
	sap    *SAP
	wait   func(t *Task)
	send   *Task
	up     *Queue
	bufs   []userBuf
	seq    int
	origin bool
	res    Result
	recv   RecvStats
	// Connected, Released and Aborted follow the connection: Released
	// when the release completed (confirmation or indication), Aborted
	// when it was lost otherwise (AbortArg holds the indication's
	// argument: cause and reason for TP4).
	Connected, Released, Aborted bool
	AbortArg                     uint16
	nextSeq                      int   // duplex: the sequence number expected next
	replies                      []int // replies owed (recipient)
	doneSent, gotDone            bool  // duplex: the recipient's last message
	// OnFirstSend and OnDone run as the measurement starts and ends;
	// OnReleased when the release is complete, OnAborted when the
	// connection is lost otherwise.
	OnFirstSend, OnDone, OnReleased, OnAborted func()
	sym                                        struct{ send, recv, ctl *cpu.Symbol }
}

var defUserCtl = cpu.Def{Name: "tu_control", Layer: cpu.LayerAPPL, Instructions: 30, CodeBytes: 192, Why: "switch on the primitive's name (jump table: 4), the answer's primitive put (call with name and argument: 8), connection state stored (4), the release's timing recorded (8), return (6)"}

// NewConnUser makes a user of level p.Level (LevelTP4, LevelSession,
// LevelPresentation); Attach then gives it the layer interface it was
// bound to with its queue (Up).
func (h *Runtime) NewConnUser(p UserParams) (*ConnUser, error) {
	if p.Size < MsgHeader {
		return nil, fmt.Errorf("top: user message size %d is below the %d-octet header", p.Size, MsgHeader)
	}
	if p.Level < LevelTP4 || p.Level > LevelPresentation {
		return nil, fmt.Errorf("top: %v is not a connection-mode level", p.Level)
	}
	u := &ConnUser{h: h, p: p, msg: &User{h: h, p: p}}
	u.sym.send = h.define(defUserSend, osi.CatOther)
	u.sym.recv = h.define(defUserRecv, osi.CatOther)
	u.sym.ctl = h.define(defUserCtl, osi.CatOther)
	u.send = h.NewTask(cpu.Def{Name: "tu_send_task", Layer: cpu.LayerAPPL, Instructions: 6, CodeBytes: 32, Why: "the task's entry: prologue (2), sent-all test (2), the send routine (call: 2)"}, osi.CatOther, u.sendOne)
	u.up = h.NewQueue("user.up", cpu.Def{Name: "tu_up_task", Layer: cpu.LayerAPPL, Instructions: 6, CodeBytes: 32, Why: "the task's entry: prologue (2), ifq_get and the user's handler (calls: 2), return (2)"}, u.indication)
	pat := make([]byte, p.Size)
	for i := range pat {
		pat[i] = PatternByte(i)
	}
	for range max(p.Buffers, 1) {
		b := userBuf{blk: h.static(osi.BlockHeader + p.Size)}
		writeStaticBlock(h, b.blk, pat)
		u.bufs = append(u.bufs, b)
	}
	return u, nil
}

// writeStaticBlock lays a message buffer out as the program's
// initialised data: a block header whose one use is the program's, then
// the pattern.
func writeStaticBlock(h *Runtime, blk memory.Addr, pat []byte) {
	var bh [osi.BlockHeader]byte
	bh[0] = 1
	bh[2] = byte(ownerStatic)
	l := uint32(len(pat))
	bh[4], bh[5], bh[6], bh[7] = byte(l), byte(l>>8), byte(l>>16), byte(l>>24)
	sys := h.c.System()
	_ = sys.Phys.Write(blk, bh[:])
	_ = sys.Phys.Write(blk+osi.BlockHeader, pat)
}

// Up returns the user's queue, to bind the layer's interface to.
func (u *ConnUser) Up() *Queue { return u.up }

// Attach gives the user the interface its requests go to, and the way
// to wait for room below.
func (u *ConnUser) Attach(s *SAP, waitReady func(t *Task)) { u.sap, u.wait = s, waitReady }

// Originate makes u the originator: at start-up it asks for the
// connection, and sends once it is confirmed.
func (u *ConnUser) Originate() {
	u.origin = true
	u.res.Size, u.res.Messages = u.p.Size, u.p.Messages
	u.h.OnStart(func() {
		u.h.c.Call(u.sym.ctl, func() { u.sap.Request(PrimConnectReq, 0, 0) })
	})
}

// Result returns the originator's measurement.
func (u *ConnUser) Result() Result { return u.res }

// Received returns the recipient's counters.
func (u *ConnUser) Received() RecvStats { return u.recv }

// SAP returns the interface the user is attached to.
func (u *ConnUser) SAP() *SAP { return u.sap }

// sendOne is the originator's task: one message per run.
func (u *ConnUser) sendOne() {
	if !u.Connected || u.Aborted {
		return
	}
	if len(u.replies) > 0 {
		c := u.h.c
		c.Enter(u.sym.send)
		defer c.Exit(u.sym.send)
		u.sendReply()
		return
	}
	if !u.origin && !u.p.Duplex {
		return // a recipient only replies
	}
	if u.res.Sent >= u.p.Messages {
		if u.p.Duplex && !u.origin && !u.doneSent && u.recv.Messages == uint64(u.p.Messages) {
			u.sendDone()
		}
		return
	}
	h := u.h
	c := h.c
	c.Enter(u.sym.send)
	defer c.Exit(u.sym.send)
	seq := u.res.Sent
	i := u.freeBuf()
	if i < 0 {
		// Every buffer is held below: wait until acknowledgements free
		// some.
		u.wait(u.send)
		return
	}
	flags := uint8(0)
	if !u.p.Duplex && (seq == u.p.Messages-1 || u.p.EchoEvery > 0 && (seq+1)%u.p.EchoEvery == 0) {
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
	blk := u.bufs[i].blk
	u.msg.writeHeader(blk+osi.BlockHeader, flags, seq)
	h.bufs.UseBlock(blk)
	ch := h.bufs.Wrap(osi.Tx, blk, blk+osi.BlockHeader, u.p.Size)
	if ch == 0 || !u.sap.Request(PrimDataReq, ch, 0) {
		h.Schedule(u.send)
		return
	}
	u.res.Sent++
	if u.res.Sent < u.p.Messages || u.p.Duplex && !u.origin {
		h.Schedule(u.send)
	}
}

// sendDone sends the duplex recipient's last message: it has all of the
// originator's.
func (u *ConnUser) sendDone() {
	h := u.h
	i := u.freeBuf()
	if i < 0 {
		u.wait(u.send)
		return
	}
	blk := u.bufs[i].blk
	u.msg.writeHeader(blk+osi.BlockHeader, flagDone, u.p.Messages)
	h.bufs.UseBlock(blk)
	if ch := h.bufs.Wrap(osi.Tx, blk, blk+osi.BlockHeader, u.p.Size); ch != 0 && u.sap.Request(PrimDataReq, ch, 0) {
		u.doneSent = true
		return
	}
	h.Schedule(u.send)
}

func (u *ConnUser) freeBuf() int {
	for k := range u.bufs {
		i := (u.seq + k) % len(u.bufs)
		if u.h.bufs.BlockUses(u.bufs[i].blk) == 1 {
			u.seq = i + 1
			return i
		}
	}
	return -1
}

// indication is the user's handling of what its layer tells it.
func (u *ConnUser) indication(p Prim) {
	h := u.h
	c := h.c
	switch p.Code {
	case PrimDataInd:
		u.data(p.Chain)
		return
	case PrimConnectInd:
		c.Call(u.sym.ctl, func() { u.sap.Request(PrimConnectResp, 0, 0) })
		u.Connected = true
		if u.p.Duplex {
			h.Schedule(u.send)
		}
	case PrimConnectConf:
		if p.Arg&refusedArg != 0 {
			u.Aborted, u.AbortArg = true, p.Arg
			break
		}
		u.Connected = true
		if u.origin {
			h.Schedule(u.send)
		}
	case PrimReleaseInd:
		c.Call(u.sym.ctl, func() { u.sap.Request(PrimReleaseResp, 0, 0) })
		u.released()
	case PrimReleaseConf:
		u.released()
	case PrimAbortInd:
		// For the transport user a T-DISCONNECT from the peer with the
		// normal reason is the release.
		if u.p.Level == LevelTP4 && p.Arg == uint16(tp4.CausePeer)<<8|header.TPDUReasonNormal {
			u.released()
		} else {
			u.Aborted, u.AbortArg = true, p.Arg
			if u.OnAborted != nil {
				u.OnAborted()
			}
		}
	}
	h.bufs.Free(p.Chain)
}

func (u *ConnUser) released() {
	u.Released = true
	if u.OnReleased != nil {
		u.OnReleased()
	}
}

// data handles a received message.
func (u *ConnUser) data(ch osi.Chain) {
	h := u.h
	c := h.c
	c.Enter(u.sym.recv)
	defer c.Exit(u.sym.recv)
	n := h.bufs.Len(ch)
	var first memory.Addr
	pieces := 0
	h.bufs.Pieces(ch, func(a memory.Addr, k int) {
		if pieces == 0 {
			first = a
		}
		pieces++
	})
	var flags uint8
	var seq int
	var ok bool
	if pieces == 1 {
		flags, seq, ok = u.msg.check(first, n, true)
	} else {
		flags, seq, ok = u.msg.checkChain(ch, n)
	}
	if !ok {
		u.recv.Corrupt++
		h.bufs.Free(ch)
		return
	}
	if u.p.Duplex {
		u.duplexData(flags, seq, n)
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
	u.recv.Echoed++
	// The reply goes from one of the user's own buffers, which hold the
	// pattern: only its header is written, and the received message is
	// released at once (were it sent back itself, TP4 would keep it in
	// the MAC's receive buffer until acknowledged, and a circular buffer
	// whose oldest slot is held fills up).
	h.bufs.Free(ch)
	u.replies = append(u.replies, seq)
	h.Schedule(u.send)
}

// sendReply sends the oldest reply owed, from a free buffer.
func (u *ConnUser) sendReply() {
	h := u.h
	i := u.freeBuf()
	if i < 0 {
		u.wait(u.send)
		return
	}
	blk := u.bufs[i].blk
	u.msg.writeHeader(blk+osi.BlockHeader, flagReply, u.replies[0])
	h.bufs.UseBlock(blk)
	if ch := h.bufs.Wrap(osi.Tx, blk, blk+osi.BlockHeader, u.p.Size); ch == 0 || !u.sap.Request(PrimDataReq, ch, 0) {
		h.Schedule(u.send)
		return
	}
	u.replies = u.replies[1:]
	if len(u.replies) > 0 {
		h.Schedule(u.send)
	}
}

// gotReply is the originator's handling of an echo; after the last it
// releases the connection.
func (u *ConnUser) gotReply(seq int) {
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
	c.Call(u.sym.ctl, func() { u.sap.Request(PrimReleaseReq, 0, 0) })
	if u.p.Level == LevelTP4 {
		// T-DISCONNECT is the transport user's release; it has no
		// confirmation.
		u.released()
	}
}

// flagDone marks the duplex recipient's last message.
const flagDone = 4

// duplexData counts a duplex message, checks its order, and ends the
// exchange when everything is there.
func (u *ConnUser) duplexData(flags uint8, seq, n int) {
	if seq != u.nextSeq {
		u.recv.OutOfOrder++
	}
	u.nextSeq = seq + 1
	if flags&flagDone != 0 {
		u.gotDone = true
	} else {
		u.recv.Messages++
		u.recv.Octets += uint64(n)
	}
	switch {
	case !u.origin && u.recv.Messages == uint64(u.p.Messages) && u.res.Sent >= u.p.Messages && !u.doneSent:
		u.sendDone()
	case u.origin && u.gotDone && u.recv.Messages == uint64(u.p.Messages) && !u.res.Done:
		u.gotReply(u.p.Messages - 1)
	}
}
