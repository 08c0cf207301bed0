// Package llc is IEEE 802.2 logical link control, type 1 (ISO/IEC 8802-2
// clause 6: unacknowledged connectionless operation), over 802.3
// length-field frames. Layer LLC.
//
// Contract: users register a SAP (0xFE, the ISO network layer, for
// CLNP) and exchange DL-UNITDATA with it; UI frames carry the data. XID
// and TEST commands addressed to a registered SAP, the null SAP or the
// global SAP are answered with the matching response (XID with the type 1
// information field, TEST echoing the command's information field), the
// P bit returned as F. The layer below (MAC) needs a contiguous frame, so
// LLC writes its header and copies the chained SDU into the MAC's
// transmit buffer: the one copy of the send path, and most of LLC's time
// in the TOP measurements. On receive it works in place: the header is
// stripped by moving the descriptor's data pointer. The receive path
// never fails loudly: every frame it drops bumps a counter.
//
// Simplifications: type 1 only (no connection-mode type 2: I and S
// frames are counted and dropped); responses received are counted and
// dropped (this station never sends commands); no SNAP.
package llc

import (
	"fmt"

	"simkron/cpu"
	"simkron/memory"
	"simkron/stack/header"
	"simkron/stack/osi"
)

// MAC is the MAC service LLC runs over.
type MAC interface {
	// Address is the station's MAC address.
	Address() [6]byte
	// MaxSDU is the largest data field of a frame.
	MaxSDU() int
	// TxBuffer returns contiguous room for an n-octet data field, or ok
	// false when there is none now.
	TxBuffer(n int) (a memory.Addr, ok bool)
	// Send hands the n octets written at a (from TxBuffer) to the MAC for
	// dst.
	Send(a memory.Addr, n int, dst [6]byte)
}

// User is a DL service user bound to a SAP.
type User interface {
	// DLUnitdataIndication delivers a UI frame's data; the user owns sdu.
	DLUnitdataIndication(src, dst [6]byte, dsap, ssap uint8, sdu osi.Chain)
}

// Stats counts LLC's events; every drop has a counter.
type Stats struct {
	TxUI             uint64 `stat:"tx_ui" help:"UI frames sent"`
	TxXIDResponses   uint64 `stat:"tx_xid_responses" help:"XID responses sent"`
	TxTESTResponses  uint64 `stat:"tx_test_responses" help:"TEST responses sent"`
	TxNoBuffer       uint64 `stat:"tx_no_buffer" help:"frames not sent: no MAC buffer"`
	TxTooLong        uint64 `stat:"tx_too_long" help:"frames not sent: longer than the MAC carries"`
	RxUI             uint64 `stat:"rx_ui" help:"UI frames handed to their SAP's user"`
	RxXID            uint64 `stat:"rx_xid" help:"XID commands received"`
	RxTEST           uint64 `stat:"rx_test" help:"TEST commands received"`
	RxShort          uint64 `stat:"rx_short" help:"frames dropped: too short for the LLC header"`
	RxType2          uint64 `stat:"rx_type2" help:"frames dropped: not a type 1 PDU (the station runs LLC type 1 only)"`
	RxResponses      uint64 `stat:"rx_responses" help:"frames dropped: responses, which a type 1 station never asks for"`
	RxNoSAP          uint64 `stat:"rx_no_sap" help:"frames dropped: for a SAP no user has bound"`
	RxUnknownCommand uint64 `stat:"rx_unknown_command" help:"frames dropped: a command type 1 does not define"`
}

// Costs in instructions per call, from the seed's LLC (1240 lines of C,
// 4 KB of code: seed Table 1) and the work each path does.
var (
	defOutput = cpu.Def{Name: "llc_output", Layer: cpu.LayerLLC, Instructions: 45, CodeBytes: 320, Why: "DL-UNITDATA request: the SDU's length (pdu_len: 3) against the limit (2), transmit room (call: 4), the UI header's DSAP, SSAP and control (3 stores: 6), pdu_copyout behind it (call: 4), the MAC's send (call with address, length, destination: 6), counted (2), the SDU freed (call: 3), refusals (6), prologue and epilogue (9)"}
	defInput  = cpu.Def{Name: "llc_input", Layer: cpu.LayerLLC, Instructions: 40, CodeBytes: 384, Why: "the 3-octet header gathered (pdu_read: 5), U format and command (4), switch on the control (3), the SAP's user (table: 5), pdu_pull over the header (call: 3), the DL-UNITDATA indication with addresses and SAPs (call: 8), counted (2), prologue and epilogue (10)"}
	defXID    = cpu.Def{Name: "llc_xid", Layer: cpu.LayerLLC, Instructions: 35, CodeBytes: 256, Why: "build the XID response with the type 1 information field"}
	defTEST   = cpu.Def{Name: "llc_test", Layer: cpu.LayerLLC, Instructions: 30, CodeBytes: 224, Why: "build the TEST response echoing the information field"}
)

// LLC is the LLC entity of one station.
type LLC struct {
	env   osi.Env
	bufs  *osi.Bufs
	mac   MAC
	c     *cpu.CPU
	users map[uint8]User
	stats Stats
	hdr   [header.LLCHeaderLen]byte
	sym   struct{ output, input, xid, test *cpu.Symbol }
}

// New makes the LLC entity over mac.
func New(env osi.Env, mac MAC) *LLC {
	l := &LLC{env: env, bufs: env.Bufs(), mac: mac, c: env.CPU(), users: map[uint8]User{}}
	osi.DefineAll(env, osi.CatOther, []cpu.Binding{{&l.sym.output, defOutput}, {&l.sym.input, defInput}, {&l.sym.xid, defXID}, {&l.sym.test, defTEST}})
	return l
}

// Stats returns the counters.
func (l *LLC) Stats() Stats { return l.stats }

// MaxSDU returns the largest DL-UNITDATA SDU: the MAC's less the header.
func (l *LLC) MaxSDU() int { return l.mac.MaxSDU() - header.LLCHeaderLen }

// Address returns the station's MAC address.
func (l *LLC) Address() [6]byte { return l.mac.Address() }

// Register binds u to an individual SAP (its I/G bit clear).
func (l *LLC) Register(sap uint8, u User) error {
	if sap&header.LLCGroupBit != 0 || sap == header.LLCSAPNull {
		return fmt.Errorf("llc: SAP %#02x is not an individual SAP a user can bind", sap)
	}
	if _, dup := l.users[sap]; dup {
		return fmt.Errorf("llc: SAP %#02x already has a user", sap)
	}
	l.users[sap] = u
	return nil
}

// UnitdataRequest sends sdu to dsap at dst from ssap in a UI frame
// (DL-UNITDATA request). sdu is consumed. It returns false when the frame
// could not be sent (too long, or no transmit room), counted.
func (l *LLC) UnitdataRequest(dst [6]byte, dsap, ssap uint8, sdu osi.Chain) bool {
	c := l.c
	c.Enter(l.sym.output)
	defer c.Exit(l.sym.output)
	defer l.bufs.Free(sdu)
	n := l.bufs.Len(sdu)
	if n > l.MaxSDU() {
		l.stats.TxTooLong++
		return false
	}
	return l.send(dst, dsap, ssap&^header.LLCResponseBit, header.LLCControlUI, sdu, n, &l.stats.TxUI)
}

// send writes the header and copies the chain into transmit room.
func (l *LLC) send(dst [6]byte, dsap, ssap, control uint8, info osi.Chain, n int, count *uint64) bool {
	a, ok := l.mac.TxBuffer(header.LLCHeaderLen + n)
	if !ok {
		l.stats.TxNoBuffer++
		return false
	}
	header.LLC(l.hdr[:]).Encode(&header.LLCFields{DSAP: dsap, SSAP: ssap, Control: control})
	l.c.Write(a, l.hdr[:])
	if n > 0 {
		l.bufs.CopyOut(info, a+header.LLCHeaderLen)
	}
	l.mac.Send(a, header.LLCHeaderLen+n, dst)
	*count++
	return true
}

// Input takes a received data field (pdu, consumed) from src to dst.
func (l *LLC) Input(src, dst [6]byte, pdu osi.Chain) {
	c := l.c
	c.Enter(l.sym.input)
	defer c.Exit(l.sym.input)
	var b [header.LLCHeaderLen]byte
	if l.bufs.Read(pdu, 0, b[:]) < len(b) {
		l.stats.RxShort++
		l.bufs.Free(pdu)
		return
	}
	h := header.LLC(b[:])
	if !h.IsValid() {
		l.stats.RxType2++
		l.bufs.Free(pdu)
		return
	}
	if h.IsResponse() {
		l.stats.RxResponses++
		l.bufs.Free(pdu)
		return
	}
	dsap := h.DSAP()
	switch h.Command() {
	case header.LLCControlUI:
		u, ok := l.users[dsap]
		if !ok {
			l.stats.RxNoSAP++
			l.bufs.Free(pdu)
			return
		}
		l.stats.RxUI++
		l.bufs.Pull(pdu, header.LLCHeaderLen)
		u.DLUnitdataIndication(src, dst, dsap, h.SSAP(), pdu)
	case header.LLCControlXID, header.LLCControlTEST:
		if _, ok := l.users[dsap]; !ok && dsap != header.LLCSAPNull && dsap != header.LLCSAPGlobal {
			l.stats.RxNoSAP++
			l.bufs.Free(pdu)
			return
		}
		// The response comes from the addressed SAP (the null SAP for the
		// global one) to the command's source SAP, with F = P.
		from := dsap
		if from == header.LLCSAPGlobal {
			from = header.LLCSAPNull
		}
		ctl := h.Command() | h.Control()&header.LLCPollFinal
		to := h.SSAP() &^ header.LLCResponseBit
		if h.Command() == header.LLCControlXID {
			l.stats.RxXID++
			l.xidResponse(src, to, from|header.LLCResponseBit, ctl)
			l.bufs.Free(pdu)
		} else {
			l.stats.RxTEST++
			c.Call(l.sym.test, func() {
				l.bufs.Pull(pdu, header.LLCHeaderLen)
				n := l.bufs.Len(pdu)
				if n <= l.MaxSDU() {
					l.send(src, to, from|header.LLCResponseBit, ctl, pdu, n, &l.stats.TxTESTResponses)
				} else {
					l.stats.TxTooLong++
				}
			})
			l.bufs.Free(pdu)
		}
	default:
		l.stats.RxUnknownCommand++
		l.bufs.Free(pdu)
	}
}

func (l *LLC) xidResponse(dst [6]byte, dsap, ssap, ctl uint8) {
	c := l.c
	c.Enter(l.sym.xid)
	defer c.Exit(l.sym.xid)
	a, ok := l.mac.TxBuffer(header.LLCHeaderLen + header.LLCXIDInfoLen)
	if !ok {
		l.stats.TxNoBuffer++
		return
	}
	b := []byte{dsap, ssap, ctl, header.LLCXIDFormat, header.LLCXIDClass1, 0}
	c.Write(a, b)
	l.mac.Send(a, len(b), dst)
	l.stats.TxXIDResponses++
}
