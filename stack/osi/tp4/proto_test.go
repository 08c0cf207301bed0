package tp4_test

import (
	"testing"

	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/osi/tp4"
)

// tpduBytes encodes f with a good checksum and data.
func tpduBytes(f header.TPDUFields, data []byte) []byte {
	f.Params = append([]byte{header.TPDUParamChecksum, 2, 0, 0}, f.Params...)
	n := header.TPDUHeaderLen(&f)
	b := make([]byte, n+len(data))
	header.TPDU(b).Encode(&f)
	copy(b[n:], data)
	header.TPDU(b).SetChecksum(f.Extended)
	return b
}

// Protocol errors on an open connection get what ISO 8073 says: an ER
// with the reject cause for a TPDU that cannot be parsed, a DR with
// reason protocol error for a procedure violation; TPDUs for no
// connection get a DR (a CC) or a DC (a DR), or are counted.
func TestProtocolErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		make  func(ref, peer uint16) []byte
		er    int   // ERs B must send
		cause uint8 // their cause
		dr    uint8 // the DR reason B must send, 0 for none
		dc    int
		dcut  bool // B's user must be told of a disconnect
	}{
		{"AK for DTs never sent", func(ref, _ uint16) []byte {
			return tpduBytes(header.TPDUFields{Code: header.TPDUCodeAK, DstRef: ref, Number: 5, CDT: 8}, nil)
		}, 0, 0, header.TPDUReasonProtocolError, 0, true},
		{"unknown TPDU type", func(ref, _ uint16) []byte {
			return []byte{4, 0x30, byte(ref >> 8), byte(ref), 0}
		}, 1, header.TPDUCauseType, 0, 1, true},
		{"RJ in class 4", func(ref, _ uint16) []byte {
			return tpduBytes(header.TPDUFields{Code: header.TPDUCodeRJ, DstRef: ref, Number: 0, CDT: 8}, nil)
		}, 1, header.TPDUCauseType, 0, 1, true},
		{"broken parameter", func(ref, _ uint16) []byte {
			return []byte{7, 0x68, byte(ref >> 8), byte(ref), 0, 0x8A, 5, 0}
		}, 1, header.TPDUCauseParamValue, 0, 1, true},
		{"DT over the TPDU size", func(ref, _ uint16) []byte {
			return tpduBytes(header.TPDUFields{Code: header.TPDUCodeDT, DstRef: ref, Number: 0, EOT: true}, make([]byte, 2100))
		}, 0, 0, header.TPDUReasonProtocolError, 0, true},
		{"ED while not agreed size", func(ref, _ uint16) []byte {
			return tpduBytes(header.TPDUFields{Code: header.TPDUCodeED, DstRef: ref, Number: 0, EOT: true}, make([]byte, 17))
		}, 0, 0, header.TPDUReasonProtocolError, 0, true},
		{"CC for no connection", func(_, _ uint16) []byte {
			return tpduBytes(header.TPDUFields{Code: header.TPDUCodeCC, DstRef: 0x7777, SrcRef: 0x0505, Class: 0x40, CDT: 4}, nil)
		}, 0, 0, header.TPDUReasonMismatchedRefs, 0, false},
		{"DR for no connection", func(_, _ uint16) []byte {
			return tpduBytes(header.TPDUFields{Code: header.TPDUCodeDR, DstRef: 0x7777, SrcRef: 0x0505, Reason: 128}, nil)
		}, 0, 0, 0, 1, false},
		{"DT for no connection", func(_, _ uint16) []byte {
			return tpduBytes(header.TPDUFields{Code: header.TPDUCodeDT, DstRef: 0x7777, Number: 0, EOT: true}, []byte("x"))
		}, 0, 0, 0, 0, false},
		{"ER received", func(ref, _ uint16) []byte {
			return tpduBytes(header.TPDUFields{Code: header.TPDUCodeER, DstRef: ref, Reason: header.TPDUCauseType}, nil)
		}, 0, 0, header.TPDUReasonNotSpecified, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPair(t, testParams(), testParams())
			p.connect(t)
			var mark int
			p.at(200*sim.Millisecond, func() {
				ref, peer := p.ub.conn.Ref()
				mark = len(p.w.log)
				p.w.q = append(p.w.q, nsdu{nsapA, nsapB, tc.make(ref, peer)})
				p.H.Schedule(p.w.task)
			})
			p.run(sim.Second)
			var ers []uint8
			var drs []uint8
			dcs := 0
			for _, x := range p.w.log[mark:] {
				if x.src != nsapB {
					continue
				}
				for _, h := range tpdus(x.b) {
					switch h.Code() {
					case header.TPDUCodeER:
						ers = append(ers, h.RejectCause())
					case header.TPDUCodeDR:
						drs = append(drs, h.Reason())
					case header.TPDUCodeDC:
						dcs++
					}
				}
			}
			if len(ers) != tc.er || tc.er > 0 && ers[0] != tc.cause {
				t.Errorf("B sent ERs with causes %v, want %d with %d", ers, tc.er, tc.cause)
			}
			if tc.dr != 0 || tc.name == "ER received" {
				if len(drs) == 0 || drs[0] != tc.dr {
					t.Errorf("B sent DRs %v, want reason %d", drs, tc.dr)
				}
			} else if len(drs) != 0 {
				t.Errorf("B sent DRs %v, want none", drs)
			}
			if dcs != tc.dc {
				t.Errorf("B sent %d DCs, want %d", dcs, tc.dc)
			}
			d, got := p.ub.disconnect()
			if got != tc.dcut {
				t.Errorf("B's user told of a disconnect: %v (%+v), want %v", got, d, tc.dcut)
			}
			// After an ER the peer (A) releases the connection: B hears
			// of it from A's DR.
			want := tp4.CauseProtocolError
			if tc.er > 0 {
				want = tp4.CausePeer
			} else if tc.name == "ER received" {
				want = tp4.CauseErrorTPDU
			}
			if tc.dcut && d.Cause != want {
				t.Errorf("cause %v, want %v", d.Cause, want)
			}
			if tc.er > 0 {
				if da, ok := p.ua.disconnect(); !ok || da.Cause != tp4.CauseErrorTPDU {
					t.Errorf("A (sent the ER): %+v %v", da, ok)
				}
			}
			p.w.checkAllSums(t)
		})
	}
}
