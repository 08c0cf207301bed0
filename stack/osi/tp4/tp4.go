// Package tp4 is the ISO 8073 transport protocol, class 4 (RFC 905;
// ITU-T X.224), over the connectionless network service: the transport
// entity of one end system. Layer TP4.
//
// # Contract
//
// The entity runs in an osi.Env (the TOP host, or later a kernel's
// socket layer) and reaches the network through Network (N-UNITDATA
// request); the network delivers NSDUs to Input. TS users Listen on a
// TSAP or Connect to one and get a Conn, whose requests (Accept, Refuse,
// Data, Expedited, Disconnect) and whose indications to the User follow
// the transport service (ISO 8072). Every function is a cpu.Symbol of
// layer TP4; the checksum is a symbol of its own (tp4_cksum,
// tp4_cksum_check) filed under the checksum category, so that its share
// of the layer's time is measured.
//
// What the protocol machine does (RFC 905 clauses 6 and 12, class 4):
//
//   - Connection: CR with the source reference, class 4, the TPDU size,
//     TSAPs, the version, the additional options (expedited data,
//     non-use of the checksum) and the acknowledgement time; CC returns
//     the responder's choices; the initiator confirms with an AK (a
//     three-way handshake); CR, CC and DR are retransmitted on T1 up to
//     N times. Normal or extended formats, as negotiated.
//   - Data: a TSDU is segmented into DTs of at most the negotiated TPDU
//     size by pointer manipulation (each DT a slice of the TSDU's chain
//     behind its own header, EOT on the last), numbered modulo 2^7 or
//     2^31, and kept for retransmission by its allocation count (Hold):
//     no copy. DTs go out while the peer's credit allows (credit
//     reduction honoured: the upper window edge may move back). A DT not
//     acknowledged within T1 is sent again; after N transmissions the
//     connection is released. When T1 finds several DTs due, the oldest
//     goes again and the others wait one more T1: the AK its arrival
//     draws covers the DTs the receiver kept out of sequence, so that
//     only those lost too are sent again later. This is the model's
//     reading of ISO 8073's retransmission on time-out for class 4; an
//     entity that resends every DT due would follow the standard as
//     well, with more duplicates on the wire.
//   - Receiving: in-sequence DTs are chained into the TSDU, delivered at
//     EOT; out-of-sequence DTs inside the window are kept and
//     resequenced; duplicates are acknowledged again; DTs beyond the
//     window are dropped and counted.
//   - Acknowledgement: an AK (next expected number and credit) after
//     every AckStep-th DT received in sequence, and on a timer bounded by
//     the acknowledgement time so that a lone DT is acknowledged too; an
//     AK waiting to go is concatenated in front of a DT going out. AKs
//     that only change the credit carry a subsequence number; one that
//     opens the window is confirmed by the peer with a flow-control
//     confirmation (and resent until it is). The window timer W resends
//     the AK on an idle connection; the inactivity timer I releases a
//     connection that hears nothing.
//   - Expedited data: ED of up to 16 octets, acknowledged by EA, one
//     outstanding; no new DT goes out while an ED is unacknowledged, so
//     that it cannot be overtaken.
//   - Release: DR (with its reason) answered by DC; references stay
//     frozen for FreezeTime after release.
//   - The checksum: generated and verified over the whole TPDU, user data
//     included, unless its non-use was negotiated (additional option
//     0x02; a CR always carries it).
//   - Errors: a TPDU with a bad checksum is dropped and counted; one that
//     cannot be parsed on an open connection gets an ER (reject cause);
//     a procedure violation (an AK for DTs never sent, a DT over the
//     TPDU size) releases the connection with a DR, reason protocol
//     error; a TPDU for an unknown reference gets a DR (or a DC for a
//     DR). The receive path never panics on bad bytes.
//
// # Simplifications
//
// Class 4 only (a CR proposing another class with no alternative 4 is
// refused, reason negotiation failed); no network expedited, no
// security, priority, throughput, transit delay or residual error rate
// (carried in a CR, ignored); one T1 timer per connection multiplexes
// the per-DT retransmission times; the ER carries no invalid-TPDU
// parameter (optional in class 4, and a longer ER is beyond what
// Wireshark dissects); DR user data and CR user data are not carried.
package tp4

import (
	"fmt"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/osi"
)

// Params configures the transport entity.
type Params struct {
	TPDUSize    sim.Size `toml:"tpdu_size" min:"128B" max:"8KiB" help:"largest TPDU proposed and accepted at connect: a power of two from 128 B to 8 KiB (ISO 8073 13.3.4 b); a TSDU longer than one DT's data is segmented"`
	Extended    bool     `toml:"extended_format" help:"propose extended formats (31-bit TPDU numbers, 16-bit credit)"`
	Checksum    bool     `toml:"checksum" help:"use the class 4 checksum; false proposes its non-use (additional option 0x02) and accepts a peer's proposal"`
	Credit      int      `toml:"credit" min:"1" max:"65535" help:"DTs this entity accepts beyond the last acknowledged (the window); at most 15 in normal format"`
	AckStep     int      `toml:"ack_step" min:"1" max:"64" help:"send an AK after every k-th DT received in sequence (the TOP study's acknowledgement step); at most the credit"`
	AckTime     sim.Time `toml:"ack_time" min:"1ms" max:"60s" help:"longest an in-sequence DT waits for its AK; also the acknowledgement time told to the peer at connect"`
	T1          sim.Time `toml:"retransmit_time" min:"10ms" max:"600s" help:"T1: an unacknowledged DT, ED, CR, CC or DR is sent again after this long"`
	N           int      `toml:"max_transmissions" min:"1" max:"64" help:"N: transmissions of one TPDU before the connection is given up"`
	WindowTime  sim.Time `toml:"window_time" min:"100ms" max:"3600s" help:"W: an idle connection resends its AK this often, so that credit is not lost and the peer's inactivity timer is refreshed"`
	Inactivity  sim.Time `toml:"inactivity_time" min:"100ms" max:"3600s" help:"I: a connection that receives nothing for this long is released; longer than the peer's window time"`
	FreezeTime  sim.Time `toml:"freeze_time" min:"0s" max:"3600s" help:"a released connection's reference stays frozen this long (a bound on a TPDU's lifetime in the network)"`
	Expedited   bool     `toml:"expedited" help:"propose and accept the transport expedited data service"`
	Concatenate bool     `toml:"concatenate" help:"concatenate a waiting AK in front of a DT going out (ISO 8073 6.4)"`
	Connections int      `toml:"connections" min:"1" max:"254" help:"connection slots, each with its reference"`
	SendBuffer  int      `toml:"send_buffer" min:"1" max:"65535" help:"DTs a connection holds for sending and retransmission; a T-DATA request beyond it is refused until acknowledgements free room"`
}

// DefaultParams returns the TOP study's settings: credit 8, an AK for
// every DT, the checksum on, normal formats, a 2 KiB TPDU (every message
// of the study's series fits one DT; a larger TPDU would be segmented by
// CLNP on 802.3).
func DefaultParams() Params {
	return Params{
		TPDUSize: 2 * sim.KiB, Checksum: true, Credit: 8, AckStep: 1,
		AckTime: 110 * sim.Millisecond, T1: sim.Second, N: 8,
		WindowTime: 10 * sim.Second, Inactivity: 40 * sim.Second, FreezeTime: 16 * sim.Second,
		Expedited: true, Concatenate: true, Connections: 4, SendBuffer: 64,
	}
}

// Validate checks what the bounds cannot.
func (p Params) Validate() error {
	if _, ok := header.TPDUSizeCode(int(p.TPDUSize)); !ok {
		return fmt.Errorf("tpdu_size: %v is not a power of two from 128B to 8KiB", p.TPDUSize)
	}
	if !p.Extended && p.Credit > header.TPDUNormalMaxCredit {
		return fmt.Errorf("credit: %d needs extended formats (normal ones carry at most %d)", p.Credit, header.TPDUNormalMaxCredit)
	}
	if p.AckStep > p.Credit {
		return fmt.Errorf("ack_step: %d is above the credit %d; the window would close before an AK is due", p.AckStep, p.Credit)
	}
	if p.Inactivity <= p.WindowTime {
		return fmt.Errorf("inactivity_time: %v must be longer than window_time %v, or an idle connection releases itself", p.Inactivity, p.WindowTime)
	}
	if p.T1 <= p.AckTime {
		return fmt.Errorf("retransmit_time: %v must be longer than ack_time %v, or every lone DT is resent", p.T1, p.AckTime)
	}
	if p.AckTime > 0xFFFF*sim.Millisecond {
		return fmt.Errorf("ack_time: %v does not fit the 16-bit parameter (ms)", p.AckTime)
	}
	return nil
}

// Network is the network service the entity sends over: N-UNITDATA.
type Network interface {
	// UnitdataRequest sends nsdu (consumed) from src to dst; false when
	// it could not be taken.
	UnitdataRequest(src, dst osi.NSAP, nsdu osi.Chain) bool
}

// User is a TS user: the indications and confirmations of the transport
// service for its connections. They are called from within the entity's
// processing; a user that owns a chain it is given must free it.
type User interface {
	// TConnectIndication offers a connection to a listening user, which
	// answers with c.Accept or c.Refuse (now or later).
	TConnectIndication(c *Conn)
	// TConnectConfirm says the connection c asked for is open.
	TConnectConfirm(c *Conn)
	// TDataIndication delivers a TSDU.
	TDataIndication(c *Conn, tsdu osi.Chain)
	// TExpeditedIndication delivers expedited data.
	TExpeditedIndication(c *Conn, data osi.Chain)
	// TDisconnectIndication says c is released (refused, given up, or
	// released by the peer); c is not used again.
	TDisconnectIndication(c *Conn, d Disconnect)
	// TReady says acknowledgements have freed room after a refused Data
	// or Expedited request, or after NotifyReady.
	TReady(c *Conn)
}

// Cause says why a connection was released.
type Cause uint8

// Causes of a T-DISCONNECT indication.
const (
	CausePeer           Cause = iota + 1 // the peer sent a DR (Disconnect.Reason)
	CauseRefused                         // the peer answered the CR with a DR (Disconnect.Reason)
	CauseNoResponse                      // CR or CC unanswered after N transmissions
	CauseRetransmission                  // a DT or ED unacknowledged after N transmissions
	CauseInactivity                      // nothing heard for the inactivity time
	CauseProtocolError                   // the peer broke the protocol (a DR with protocol error was sent)
	CauseErrorTPDU                       // the peer sent an ER
	CauseNoMemory                        // no structure left for a TPDU the connection needed
)

func (c Cause) String() string {
	switch c {
	case CausePeer:
		return "released by the peer"
	case CauseRefused:
		return "refused"
	case CauseNoResponse:
		return "no response"
	case CauseRetransmission:
		return "retransmission limit"
	case CauseInactivity:
		return "inactivity"
	case CauseProtocolError:
		return "protocol error"
	case CauseErrorTPDU:
		return "error TPDU received"
	case CauseNoMemory:
		return "no memory"
	}
	return fmt.Sprintf("Cause(%d)", uint8(c))
}

// Disconnect is a T-DISCONNECT indication's parameters.
type Disconnect struct {
	Cause  Cause
	Reason uint8 // the DR's reason (RFC 905 13.5.3 e) when the peer sent one
}

// Stats counts the entity's events; every discard has a counter.
type Stats struct {
	TxCR               uint64 `stat:"tx_cr" help:"connection requests (CR TPDUs) sent, retransmissions included"`
	TxCC               uint64 `stat:"tx_cc" help:"connection confirms (CC) sent"`
	TxDR               uint64 `stat:"tx_dr" help:"disconnect requests (DR) sent"`
	TxDC               uint64 `stat:"tx_dc" help:"disconnect confirms (DC) sent"`
	TxDT               uint64 `stat:"tx_dt" help:"data TPDUs (DT) sent, retransmissions included"`
	TxAK               uint64 `stat:"tx_ak" help:"acknowledgements (AK) sent"`
	TxED               uint64 `stat:"tx_ed" help:"expedited data (ED) sent"`
	TxEA               uint64 `stat:"tx_ea" help:"expedited acknowledgements (EA) sent"`
	TxER               uint64 `stat:"tx_er" help:"error TPDUs (ER) sent"`
	TxRetransmissions  uint64 `stat:"tx_retransmissions" help:"TPDUs sent again on the retransmission timer T1"`
	TxAKConcatenated   uint64 `stat:"tx_ak_concatenated" help:"AKs sent concatenated in front of a DT"`
	TxFCC              uint64 `stat:"tx_fcc" help:"AKs sent with a flow-control confirmation parameter"`
	TxNoMemory         uint64 `stat:"tx_no_memory" help:"TPDUs not sent: no buffer for their header"`
	TxRefused          uint64 `stat:"tx_refused" help:"data requests refused: the connection not open"`
	RxNSDUs            uint64 `stat:"rx_nsdus" help:"network SDUs handed to TP4"`
	RxTPDUs            uint64 `stat:"rx_tpdus" help:"TPDUs taken from them (several when concatenated)"`
	RxCR               uint64 `stat:"rx_cr" help:"connection requests received"`
	RxCC               uint64 `stat:"rx_cc" help:"connection confirms received"`
	RxDR               uint64 `stat:"rx_dr" help:"disconnect requests received"`
	RxDC               uint64 `stat:"rx_dc" help:"disconnect confirms received"`
	RxDT               uint64 `stat:"rx_dt" help:"data TPDUs received"`
	RxAK               uint64 `stat:"rx_ak" help:"acknowledgements received"`
	RxED               uint64 `stat:"rx_ed" help:"expedited data received"`
	RxEA               uint64 `stat:"rx_ea" help:"expedited acknowledgements received"`
	RxER               uint64 `stat:"rx_er" help:"error TPDUs received"`
	RxShort            uint64 `stat:"rx_short" help:"NSDUs dropped: too short for a TPDU header"`
	RxHeaderErrors     uint64 `stat:"rx_header_errors" help:"TPDUs dropped: a header that does not fit"`
	RxBadChecksum      uint64 `stat:"rx_bad_checksum" help:"TPDUs dropped: a bad checksum"`
	RxNoChecksum       uint64 `stat:"rx_no_checksum" help:"TPDUs dropped: no checksum where the connection uses one"`
	RxUnknownRef       uint64 `stat:"rx_unknown_ref" help:"TPDUs for no connection"`
	RxFrozenRef        uint64 `stat:"rx_frozen_ref" help:"TPDUs for a connection reference still frozen"`
	RxWrongState       uint64 `stat:"rx_wrong_state" help:"DTs dropped: the connection not open"`
	RxDTDuplicates     uint64 `stat:"rx_dt_duplicates" help:"DTs received again (already acknowledged)"`
	RxDTOutOfSequence  uint64 `stat:"rx_dt_out_of_sequence" help:"DTs received ahead of the next expected, kept"`
	RxDTOutsideWindow  uint64 `stat:"rx_dt_outside_window" help:"DTs dropped: beyond the credit given"`
	RxAKStale          uint64 `stat:"rx_ak_stale" help:"AKs dropped: older than the lower window edge"`
	RxEDDuplicates     uint64 `stat:"rx_ed_duplicates" help:"expedited data received again"`
	RxEDUnexpected     uint64 `stat:"rx_ed_unexpected" help:"expedited data dropped: not the next expected"`
	RxFCC              uint64 `stat:"rx_fcc" help:"AKs received with a flow-control confirmation"`
	RxProtocolErrors   uint64 `stat:"rx_protocol_errors" help:"TPDUs that broke the protocol on an open connection"`
	RxCRRefused        uint64 `stat:"rx_cr_refused" help:"connection requests refused"`
	RxCRDuplicates     uint64 `stat:"rx_cr_duplicates" help:"connection requests received again for a connection already made"`
	RxNoMemory         uint64 `stat:"rx_no_memory" help:"TPDUs dropped: no buffer to keep them"`
	Opened             uint64 `stat:"opened" help:"connections opened"`
	Released           uint64 `stat:"released" help:"connections released"`
	GivenUp            uint64 `stat:"given_up" help:"connections given up: a TPDU unacknowledged after its retransmissions"`
	InactivityReleases uint64 `stat:"inactivity_releases" help:"connections released by the inactivity timer"`
}

// Costs in instructions per call. The seed's TP4 is 3560 lines of C and
// 65 KB of code (seed Table 1), a state machine of many small paths;
// each count is that of the path's C as a 16-bit compiler would emit
// it, the loops over octets charged separately.
var (
	defConnect    = cpu.Def{Name: "tp4_connect", Layer: cpu.LayerTP4, Instructions: 120, CodeBytes: 1024, Why: "T-CONNECT request: take a free reference, build the CR with its options, arm T1"}
	defCRInput    = cpu.Def{Name: "tp4_cr_input", Layer: cpu.LayerTP4, Instructions: 160, CodeBytes: 1536, Why: "CR: find the TSAP, detect a repeat, negotiate class, format, size, checksum and expedited, indicate"}
	defAccept     = cpu.Def{Name: "tp4_accept", Layer: cpu.LayerTP4, Instructions: 100, CodeBytes: 896, Why: "T-CONNECT response: build the CC with the choices, arm T1"}
	defCCInput    = cpu.Def{Name: "tp4_cc_input", Layer: cpu.LayerTP4, Instructions: 100, CodeBytes: 896, Why: "CC: take the peer's reference and choices, open, confirm with an AK"}
	defDisconnect = cpu.Def{Name: "tp4_disconnect", Layer: cpu.LayerTP4, Instructions: 60, CodeBytes: 512, Why: "T-DISCONNECT request or release: free what the connection holds, send the DR"}
	defDRInput    = cpu.Def{Name: "tp4_dr_input", Layer: cpu.LayerTP4, Instructions: 50, CodeBytes: 448, Why: "DR: answer with a DC, indicate, freeze the reference"}
	defDCInput    = cpu.Def{Name: "tp4_dc_input", Layer: cpu.LayerTP4, Instructions: 30, CodeBytes: 256, Why: "DC: end the release, freeze the reference"}
	defDataReq    = cpu.Def{Name: "tp4_data_request", Layer: cpu.LayerTP4, Instructions: 50, CodeBytes: 448, Why: "T-DATA request: state (3), the TSDU's length (call: 3), the DTs it needs (a division: 4), room in the send queue (3), one DT's tp4_segment (call: 4) or each DT's slice and segment (loop: 8), counted (4), tp4_output (call: 3), refusal and the ready flag (6), prologue and epilogue (12)"}
	defSegment    = cpu.Def{Name: "tp4_segment", Layer: cpu.LayerTP4, Instructions: 35, CodeBytes: 384, Why: "per DT: code, reference, number and EOT (4 stores: 8), the checksum parameter (4), the header's length (3), pdu_prepend (call: 4), the header encoded and written (6), tp4_cksum (call: 4), the send-queue entry and the next number (6)"}
	defOutput     = cpu.Def{Name: "tp4_output", Layer: cpu.LayerTP4, Instructions: 30, CodeBytes: 384, Why: "state (2); while credit and DTs queued: the entry (4), pdu_hold for retention (call: 3), an AK to concatenate (3), the N-UNITDATA request (call with addresses: 6), T1 armed when idle (3), counted (3); an AK still owed sent (test and call: 4), return (2)"}
	defInput      = cpu.Def{Name: "tp4_input", Layer: cpu.LayerTP4, Instructions: 45, CodeBytes: 640, Why: "per TPDU of the NSDU: LI and code (pdu_read: 5), bounds (4), the header gathered (call: 4), the connection by reference (index and compare: 6), the header's validity (4), the checksum parameter found and tp4_cksum_check (call: 6), data or control dispatch (switch: 4), counted (2), prologue and epilogue (10); each further TPDU 22 more"}
	defDTInput    = cpu.Def{Name: "tp4_dt_input", Layer: cpu.LayerTP4, Instructions: 60, CodeBytes: 768, Why: "DT: state and TPDU size (6), number and EOT (4), place in the window (modular difference, compares: 6); in sequence pdu_pull (call: 3) and pdu_append into the TSDU (call: 3), numbers advanced (4), the resequencing slot (4), the AK step reached or the AK timer armed (tests, call: 6); else kept or freed (6); delivery at EOT (call: 4), tp4_output (call: 3), prologue and epilogue (11)"}
	defAKInput    = cpu.Def{Name: "tp4_ak_input", Layer: cpu.LayerTP4, Instructions: 50, CodeBytes: 640, Why: "AK: state (2), YR-TU-NR and credit (4), the subsequence and flow-control parameters looked for (6), what it acknowledges against what is outstanding (6), each acknowledged DT freed (call and advance: 8), lower edge, credit, subsequence stored (6), T1 re-armed (call: 3), tp4_output (call: 3), the user told of room (test and call: 4), prologue and epilogue (8)"}
	defAKBuild    = cpu.Def{Name: "tp4_ak_build", Layer: cpu.LayerTP4, Instructions: 40, CodeBytes: 384, Why: "AK: the subsequence worked out (4), code with credit, reference, number (6), the checksum, subsequence and flow-control parameters (8), header length (2), pdu_alloc or pdu_prepend (call: 4), encoded and written (4), tp4_cksum (call: 3), the AK timer stopped and the window timer restarted (calls: 4), what was acknowledged stored (5)"}
	defEDReq      = cpu.Def{Name: "tp4_ed_request", Layer: cpu.LayerTP4, Instructions: 50, CodeBytes: 448, Why: "T-EXPEDITED-DATA request: one outstanding, build the ED, hold it, send, arm T1"}
	defEDInput    = cpu.Def{Name: "tp4_ed_input", Layer: cpu.LayerTP4, Instructions: 45, CodeBytes: 384, Why: "ED: check its number, indicate once, answer with an EA"}
	defEAInput    = cpu.Def{Name: "tp4_ea_input", Layer: cpu.LayerTP4, Instructions: 30, CodeBytes: 256, Why: "EA: release the ED, let DTs go again"}
	defERInput    = cpu.Def{Name: "tp4_er_input", Layer: cpu.LayerTP4, Instructions: 30, CodeBytes: 256, Why: "ER: release the connection"}
	defEmit       = cpu.Def{Name: "tp4_emit", Layer: cpu.LayerTP4, Instructions: 40, CodeBytes: 448, Why: "build a control TPDU (CR, CC, DR, DC, EA, ER) into a fresh block, checksum it, N-UNITDATA request"}
	defCksum      = cpu.Def{Name: "tp4_cksum", Layer: cpu.LayerTP4, Instructions: 24, CodeBytes: 192, Why: "generate (ISO 8073 6.17, annex B.3): pointer, C0 and C1 set up (6), the TPDU's pieces walked (descriptors: 6), the reductions modulo 255 (4), X = (L-n)C0 - C1 and Y = C1 - (L-n+1)C0 (6), stored (2); each octet 4 more"}
	defCksumCheck = cpu.Def{Name: "tp4_cksum_check", Layer: cpu.LayerTP4, Instructions: 16, CodeBytes: 160, Why: "verify (ISO 8073 annex B.4): pointer, C0 and C1 set up (6), the pieces walked (6), both sums reduced and tested for zero (4); each octet 4 more"}
	defT1         = cpu.Def{Name: "tp4_t1_timeout", Layer: cpu.LayerTP4, Instructions: 40, CodeBytes: 448, Why: "T1: resend every DT (or the CR, CC, DR, ED) due, count transmissions, give up after N"}
	defAckTimeout = cpu.Def{Name: "tp4_ack_timeout", Layer: cpu.LayerTP4, Instructions: 15, CodeBytes: 128, Why: "AK timer: the connection's state and unacknowledged count (6), the AK owed flagged (2), tp4_output (call: 3), prologue and epilogue (4)"}
	defWTimeout   = cpu.Def{Name: "tp4_window_timeout", Layer: cpu.LayerTP4, Instructions: 15, CodeBytes: 128, Why: "window timer: state (3), the flow-control confirmation's tries (4), the AK owed flagged (2), tp4_output (call: 3), prologue and epilogue (3)"}
	defITimeout   = cpu.Def{Name: "tp4_inactivity_timeout", Layer: cpu.LayerTP4, Instructions: 20, CodeBytes: 192, Why: "inactivity timer: release the connection"}
	defFreeze     = cpu.Def{Name: "tp4_unfreeze", Layer: cpu.LayerTP4, Instructions: 10, CodeBytes: 96, Why: "the frozen reference becomes free"}
)

// TP4 is the transport entity of one end system.
type TP4 struct {
	env      osi.Env
	bufs     *osi.Bufs
	c        *cpu.CPU
	p        Params
	net      Network
	listen   map[string]User
	conns    []*Conn
	cksumPB  int64
	stats    Stats
	hdr      [header.TPDUMaxLI + 1]byte
	params   [header.TPDUMaxLI]byte // a variable part being built
	params2  [header.TPDUMaxLI]byte
	crParams [header.TPDUMaxLI]byte
	in       [header.TPDUMaxLI + 1]byte // a received header
	scratch  []byte                     // octets the checksum reads (the simulator looks)
	sym      struct {
		connect, crIn, accept, ccIn, disc, drIn, dcIn, dataReq, segment, output, input,
		dtIn, akIn, akBuild, edReq, edIn, eaIn, erIn, emit, cksum, check, t1, ackTO, wTO, iTO, freeze *cpu.Symbol
	}
}

// New makes the transport entity over net.
func New(env osi.Env, net Network, p Params) (*TP4, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	t := &TP4{env: env, bufs: env.Bufs(), c: env.CPU(), p: p, net: net, listen: map[string]User{}, scratch: make([]byte, 8*1024)}
	s := &t.sym
	// In this order in the text: the checksum's two among the others.
	osi.DefineAll(env, osi.CatOther, []cpu.Binding{
		{&s.connect, defConnect}, {&s.crIn, defCRInput}, {&s.accept, defAccept}, {&s.ccIn, defCCInput},
		{&s.disc, defDisconnect}, {&s.drIn, defDRInput}, {&s.dcIn, defDCInput}, {&s.dataReq, defDataReq},
		{&s.segment, defSegment}, {&s.output, defOutput}, {&s.input, defInput}, {&s.dtIn, defDTInput},
		{&s.akIn, defAKInput}, {&s.akBuild, defAKBuild}, {&s.edReq, defEDReq}, {&s.edIn, defEDInput},
		{&s.eaIn, defEAInput}, {&s.erIn, defERInput}, {&s.emit, defEmit},
	})
	osi.DefineAll(env, osi.CatChecksum, []cpu.Binding{{&s.cksum, defCksum}, {&s.check, defCksumCheck}})
	osi.DefineAll(env, osi.CatOther, []cpu.Binding{
		{&s.t1, defT1}, {&s.ackTO, defAckTimeout}, {&s.wTO, defWTimeout}, {&s.iTO, defITimeout}, {&s.freeze, defFreeze},
	})
	t.cksumPB = env.Cost("tp4_cksum.byte", 4, "per octet: LODSB, ADD AL to C0, ADD C0 to C1, LOOP (the reductions modulo 255 deferred to the end of blocks)")
	for i := range p.Connections {
		t.conns = append(t.conns, newConn(t, i))
	}
	return t, nil
}

// Params returns the configuration.
func (t *TP4) Params() Params { return t.p }

// Stats returns the counters.
func (t *TP4) Stats() Stats { return t.stats }

// Conns returns the connection slots (for observers: states, windows).
func (t *TP4) Conns() []*Conn { return t.conns }

// Listen makes u the user of the TSAP tsap: CRs that call it are
// indicated to u.
func (t *TP4) Listen(tsap []byte, u User) error {
	if len(tsap) > header.TPDUMaxTSAP {
		return fmt.Errorf("tp4: a TSAP selector has at most %d octets, not %d", header.TPDUMaxTSAP, len(tsap))
	}
	if _, dup := t.listen[string(tsap)]; dup {
		return fmt.Errorf("tp4: TSAP %x already has a user", tsap)
	}
	t.listen[string(tsap)] = u
	return nil
}

// Address is a transport address: an NSAP and a TSAP selector.
type Address struct {
	NSAP osi.NSAP
	TSAP []byte
}

// Connect asks for a connection from local to remote for user u
// (T-CONNECT request): it sends the CR and returns the connection, which
// is confirmed (TConnectConfirm) or released (TDisconnectIndication)
// later. It fails when no reference is free.
func (t *TP4) Connect(u User, local, remote Address) (*Conn, error) {
	c := t.c
	c.Enter(t.sym.connect)
	defer c.Exit(t.sym.connect)
	if len(local.TSAP) > header.TPDUMaxTSAP || len(remote.TSAP) > header.TPDUMaxTSAP {
		return nil, fmt.Errorf("tp4: TSAP selectors have at most %d octets", header.TPDUMaxTSAP)
	}
	k := t.freeSlot()
	if k == nil {
		return nil, fmt.Errorf("tp4: no free reference (all %d connections in use or frozen)", len(t.conns))
	}
	k.open(u, local, remote, true)
	k.ext = t.p.Extended
	k.state = stWaitCC
	if !k.sendCR() {
		k.release()
		return nil, fmt.Errorf("tp4: no memory for the CR")
	}
	k.t1.Start(t.p.T1)
	return k, nil
}

// freeSlot returns a closed connection slot, or nil.
func (t *TP4) freeSlot() *Conn {
	for _, k := range t.conns {
		if k.state == stClosed {
			return k
		}
	}
	return nil
}

// byRef returns the slot whose reference is ref (in any state but
// closed), or nil.
func (t *TP4) byRef(ref uint16) *Conn {
	i := int(ref&0xFF) - 1
	if i < 0 || i >= len(t.conns) {
		return nil
	}
	k := t.conns[i]
	if k.state == stClosed || k.ref != ref {
		return nil
	}
	return k
}

// byPeer returns the live connection with the remote NSAP and reference
// (a repeated CR), or nil.
func (t *TP4) byPeer(remote osi.NSAP, ref uint16) *Conn {
	for _, k := range t.conns {
		if k.state != stClosed && k.state != stFrozen && !k.initiator && k.peerRef == ref && k.remote.NSAP == remote {
			return k
		}
	}
	return nil
}

// read copies n octets of simulated memory at a into the scratch buffer
// (uncharged: the charge is the caller's reference loop).
func (t *TP4) look(a memory.Addr, n int) []byte {
	if n > len(t.scratch) {
		t.scratch = make([]byte, n)
	}
	b := t.scratch[:n]
	_ = t.c.System().Phys.Read(a, b)
	return b
}
