// Package clnp is the connectionless network protocol, ISO 8473-1, as an
// end system runs it: the N-UNITDATA service over a subnetwork (LLC type 1
// on 802.3), DT and ER PDUs, the header checksum, the lifetime,
// segmentation of an NSDU too long for the subnetwork and its
// reassembly under a timer, NSAP addresses whose last octet (the
// selector) picks the NS user, and optionally the inactive subset. Layer
// CLNS.
//
// Contract: NS users register a selector; UnitdataRequest takes an NSDU
// chain (consumed) and sends it as one DT PDU or, when it does not fit
// the subnetwork, as segments made by pointer manipulation (each segment
// a slice of the NSDU's chain behind its own header, chained in front:
// no copy). Input takes a PDU from the subnetwork (consumed) and delivers
// the NSDU in place, reassembled by chaining the segments' pieces. A PDU
// whose checksum fails, whose lifetime has run out, that is not for this
// system, or that cannot be reassembled in time is discarded and counted,
// and an ER PDU goes back when the PDU asked for one (E/R); the receive
// path never fails in another way.
//
// Simplifications: an end system only (no forwarding, so the lifetime is
// checked on arrival, not decremented); static routes from NSAP to
// subnetwork address instead of ES-IS; options are carried and skipped,
// never acted on; echo request/response and multicast PDUs are counted
// and dropped; the data length of the initial PDU is taken from its total
// length less the header length of the segments, which are assumed to
// carry headers of one length (they do, as every end system segments).
package clnp

import (
	"fmt"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/osi"
)

// Params configures CLNP.
type Params struct {
	NSAP              osi.NSAP `toml:"nsap" help:"this system's NSAP address in hex (its last octet, the selector, is replaced by each NS user's)"`
	Lifetime          int      `toml:"lifetime" min:"1" max:"255" help:"lifetime of sent PDUs, in units of 500 ms"`
	Segmentation      bool     `toml:"segmentation" help:"segmentation permitted (SP): send the segmentation part and segment NSDUs longer than the subnetwork takes"`
	ErrorReports      bool     `toml:"error_reports" help:"ask for an error report on discard (E/R) in sent PDUs"`
	Checksum          bool     `toml:"checksum" help:"generate the header checksum (received ones are always checked when present)"`
	InactiveSubset    bool     `toml:"inactive_subset" help:"send and accept the one-octet inactive subset header between systems on the same subnetwork"`
	InactiveSelector  int      `toml:"inactive_selector" min:"0" max:"255" help:"NS user that receives inactive-subset PDUs (they carry no addresses)"`
	ReassemblyTimeout sim.Time `toml:"reassembly_timeout" min:"100ms" help:"longest wait for the rest of a segmented PDU; bounded by the PDU's remaining lifetime"`
	Reassemblies      int      `toml:"reassemblies" min:"1" max:"256" help:"PDUs in reassembly at once; segments of more are discarded"`
}

// DefaultParams returns SP, E/R and the checksum on, a lifetime of 16 s.
func DefaultParams() Params {
	return Params{
		NSAP:     osi.MustNSAP([]byte{0x49, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 1, 0x21}),
		Lifetime: 32, Segmentation: true, ErrorReports: true, Checksum: true,
		InactiveSelector: 0x21, ReassemblyTimeout: 15 * sim.Second, Reassemblies: 8,
	}
}

// Validate checks p.
func (p Params) Validate() error {
	if p.NSAP.Len() < 2 {
		return fmt.Errorf("nsap: %q needs at least a system part and a selector", p.NSAP)
	}
	if p.Lifetime < 1 || p.Lifetime > 255 {
		return fmt.Errorf("lifetime: %d is not in 1..255", p.Lifetime)
	}
	return nil
}

// Subnet is the subnetwork service CLNP uses (DL-UNITDATA to the network
// layer SAP).
type Subnet interface {
	Address() [6]byte
	MaxSDU() int
	// Send sends pdu (consumed) to dst; false when it could not.
	Send(dst [6]byte, pdu osi.Chain) bool
}

// User is an NS user, bound to a selector.
type User interface {
	// NUnitdataIndication delivers an NSDU; the user owns nsdu.
	NUnitdataIndication(src, dst osi.NSAP, nsdu osi.Chain)
}

// ErrorListener, if set, sees the ER PDUs received (reason and the
// location of the error), for users that want to know.
type ErrorListener func(from osi.NSAP, reason, location uint8)

// Stats counts CLNP's events; every discard has a counter.
type Stats struct {
	TxDT              uint64 `stat:"tx_dt" help:"data PDUs (DT) sent, segments counted apart"`
	TxSegments        uint64 `stat:"tx_segments" help:"segments sent of NSDUs longer than the subnetwork takes"`
	TxER              uint64 `stat:"tx_er" help:"error reports (ER) sent"`
	TxInactive        uint64 `stat:"tx_inactive" help:"NSDUs sent with the inactive subset header"`
	TxSegNeeded       uint64 `stat:"tx_seg_needed" help:"NSDUs not sent: too long for the subnetwork, segmentation not permitted"`
	TxNoRoute         uint64 `stat:"tx_no_route" help:"NSDUs not sent: no route to the destination"`
	TxNoMemory        uint64 `stat:"tx_no_memory" help:"NSDUs not sent: no buffer for the header"`
	TxSubnetRefused   uint64 `stat:"tx_subnet_refused" help:"PDUs the subnetwork refused to send"`
	RxPDUs            uint64 `stat:"rx_pdus" help:"PDUs received"`
	RxDelivered       uint64 `stat:"rx_delivered" help:"NSDUs delivered to an NS user"`
	RxInactive        uint64 `stat:"rx_inactive" help:"inactive subset PDUs received"`
	RxHeaderErrors    uint64 `stat:"rx_header_errors" help:"PDUs dropped: a bad header"`
	RxBadChecksum     uint64 `stat:"rx_bad_checksum" help:"PDUs dropped: a bad header checksum"`
	RxLifetimeExpired uint64 `stat:"rx_lifetime_expired" help:"PDUs dropped: their lifetime ran out"`
	RxNotForUs        uint64 `stat:"rx_not_for_us" help:"PDUs dropped: for another system (no forwarding)"`
	RxNoUser          uint64 `stat:"rx_no_user" help:"PDUs dropped: for a selector no NS user has"`
	RxER              uint64 `stat:"rx_er" help:"error reports received"`
	RxUnsupported     uint64 `stat:"rx_unsupported" help:"PDUs dropped: a type the station does not handle"`
	RxInactiveRefused uint64 `stat:"rx_inactive_refused" help:"inactive subset PDUs dropped: the subset not in use"`
	ReasmSegments     uint64 `stat:"reasm_segments" help:"segments received for reassembly"`
	ReasmOK           uint64 `stat:"reasm_ok" help:"NSDUs reassembled"`
	ReasmTimeout      uint64 `stat:"reasm_timeout" help:"reassemblies given up: the rest did not come in time"`
	ReasmDuplicates   uint64 `stat:"reasm_duplicates" help:"segments received again"`
	ReasmBad          uint64 `stat:"reasm_bad" help:"segments dropped: inconsistent with the others of their PDU"`
	ReasmFull         uint64 `stat:"reasm_full" help:"segments dropped: no free reassembly entry"`
	RxNoMemory        uint64 `stat:"rx_no_memory" help:"PDUs dropped: no buffer"`
}

// Costs in instructions per call (seed CLNS: 2290 lines, 15 KB; seed
// Table 1), the per-byte checksum loop separately.
var (
	defOutput  = cpu.Def{Name: "clnp_output", Layer: cpu.LayerCLNS, Instructions: 70, CodeBytes: 640, Why: "N-UNITDATA request: the route by NSAP (compare loop set-up: 8), the NSDU's length (call: 3), flags and lifetime (4), the header encoded: fixed part, both addresses (length octet, REP MOVSB), segmentation part (30), its length against the subnetwork's (6), one PDU or segments (4), return (6), prologue and epilogue (9)"}
	defSegment = cpu.Def{Name: "clnp_segment", Layer: cpu.LayerCLNS, Instructions: 40, CodeBytes: 384, Why: "per segment: slice the NSDU, header with offset and MS, send"}
	defInput   = cpu.Def{Name: "clnp_input", Layer: cpu.LayerCLNS, Instructions: 80, CodeBytes: 768, Why: "NLPID and LI (pdu_read: 5), lengths (6), the header gathered (call: 4), segment length, checksum present, type (10), lifetime (3), both addresses parsed and this system's compared (20), cut to the segment length (4), segmented or whole (4), pdu_pull (call: 3), the selector's user and the indication (8), prologue and epilogue (13)"}
	defReasm   = cpu.Def{Name: "clnp_reass", Layer: cpu.LayerCLNS, Instructions: 60, CodeBytes: 768, Why: "find the PDU's entry, check the segment, keep its new parts, chain when complete"}
	defEmitER  = cpu.Def{Name: "clnp_emit_er", Layer: cpu.LayerCLNS, Instructions: 60, CodeBytes: 512, Why: "build an ER PDU: reason option and the discarded header as data"}
	defCksum   = cpu.Def{Name: "clnp_cksum", Layer: cpu.LayerCLNS, Instructions: 20, CodeBytes: 160, Why: "the ISO checksum over the header (ISO 8473 annex C): pointer, count, C0 and C1 set up (6), the reductions modulo 255 at the end (4), X and Y worked out and stored (8), return (2); each octet 4 more"}
	defReasmTO = cpu.Def{Name: "clnp_reass_timeout", Layer: cpu.LayerCLNS, Instructions: 25, CodeBytes: 192, Why: "discard a PDU whose reassembly timer ran out"}
)

type reasmKey struct {
	src, dst osi.NSAP
	id       uint16
}

type reasmEntry struct {
	key    reasmKey
	pieces pieceList
	chains []osi.Chain // parallel to pieces.spans
	timer  osi.Timer
	used   bool
	snpa   [6]byte
	hdr    []byte // the first segment's header, for an ER
}

type route struct {
	nsap osi.NSAP
	snpa [6]byte
}

// CLNP is the protocol entity of one end system.
type CLNP struct {
	env      osi.Env
	bufs     *osi.Bufs
	c        *cpu.CPU
	p        Params
	sub      Subnet
	users    map[byte]User
	routes   []route
	dui      uint16
	reasm    []*reasmEntry
	onER     ErrorListener
	stats    Stats
	cksumPer int64
	hdr      [header.CLNPMaxHeaderLen + 1]byte
	sym      struct{ output, segment, input, reasm, er, cksum, reasmTO *cpu.Symbol }
}

// New makes the CLNP entity over sub.
func New(env osi.Env, sub Subnet, p Params) (*CLNP, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	n := &CLNP{env: env, bufs: env.Bufs(), c: env.CPU(), p: p, sub: sub, users: map[byte]User{}}
	n.sym.output = env.Define(defOutput, osi.CatOther)
	n.sym.segment = env.Define(defSegment, osi.CatOther)
	n.sym.input = env.Define(defInput, osi.CatOther)
	n.sym.reasm = env.Define(defReasm, osi.CatOther)
	n.sym.er = env.Define(defEmitER, osi.CatOther)
	n.sym.cksum = env.Define(defCksum, osi.CatChecksum)
	n.sym.reasmTO = env.Define(defReasmTO, osi.CatOther)
	n.cksumPer = env.Cost("clnp_cksum.byte", 4, "per octet: LODSB, ADD AL to C0, ADD C0 to C1, LOOP (the reductions modulo 255 deferred)")
	for range p.Reassemblies {
		e := &reasmEntry{}
		e.timer = env.NewTimer("clnp.reass", func() { n.reasmTimeout(e) })
		n.reasm = append(n.reasm, e)
	}
	return n, nil
}

// Stats returns the counters.
func (n *CLNP) Stats() Stats { return n.stats }

// Params returns the configuration.
func (n *CLNP) Params() Params { return n.p }

// SetErrorListener installs fn for received ER PDUs.
func (n *CLNP) SetErrorListener(fn ErrorListener) { n.onER = fn }

// Register binds u to selector sel.
func (n *CLNP) Register(sel byte, u User) error {
	if _, dup := n.users[sel]; dup {
		return fmt.Errorf("clnp: selector %#02x already has a user", sel)
	}
	n.users[sel] = u
	return nil
}

// Address returns this system's NSAP with selector sel.
func (n *CLNP) Address(sel byte) osi.NSAP { return n.p.NSAP.WithSelector(sel) }

// AddRoute makes the system of nsap reachable at subnetwork address
// snpa (selectors ignored).
func (n *CLNP) AddRoute(nsap osi.NSAP, snpa [6]byte) {
	n.routes = append(n.routes, route{nsap: nsap, snpa: snpa})
}

func (n *CLNP) lookup(dst osi.NSAP) ([6]byte, bool) {
	for _, r := range n.routes {
		if r.nsap.SameSystem(dst) {
			return r.snpa, true
		}
	}
	return [6]byte{}, false
}

func (n *CLNP) reverse(snpa [6]byte) (osi.NSAP, bool) {
	for _, r := range n.routes {
		if r.snpa == snpa {
			return r.nsap, true
		}
	}
	return osi.NSAP{}, false
}

// checksum charges the Fletcher loop over the n header octets at a.
func (n *CLNP) checksum(a memory.Addr, cnt int) {
	c := n.c
	c.Enter(n.sym.cksum)
	c.ReferenceRange(a, uint64(cnt), memory.Read)
	c.Exec(int64(cnt) * n.cksumPer)
	c.Exit(n.sym.cksum)
}

// UnitdataRequest sends nsdu (consumed) from src to dst (N-UNITDATA
// request). It returns false when nothing could be sent, counted.
func (n *CLNP) UnitdataRequest(src, dst osi.NSAP, nsdu osi.Chain) bool {
	c := n.c
	c.Enter(n.sym.output)
	defer c.Exit(n.sym.output)
	defer n.bufs.Free(nsdu)
	snpa, ok := n.lookup(dst)
	if !ok {
		n.stats.TxNoRoute++
		return false
	}
	size := n.bufs.Len(nsdu)
	if n.p.InactiveSubset {
		n.bufs.Hold(nsdu) // the PDU keeps it past the deferred free
		pdu := n.withHeader(nsdu, []byte{header.CLNPInactiveNLPID}, 0, size)
		if pdu == 0 {
			n.bufs.Free(nsdu)
			return false
		}
		n.stats.TxInactive++
		return n.send(snpa, pdu)
	}
	flags := uint8(0)
	if n.p.Segmentation {
		flags |= header.CLNPFlagSP
	}
	if n.p.ErrorReports {
		flags |= header.CLNPFlagER
	}
	f := header.CLNPFields{Type: header.CLNPTypeDT, Flags: flags, Lifetime: uint8(n.p.Lifetime), Dst: dst.Bytes(), Src: src.Bytes()}
	li := header.CLNPHeaderLen(&f)
	max := n.sub.MaxSDU()
	n.dui++
	f.Seg = header.CLNPSegmentation{ID: n.dui, Total: uint16(li + size)}
	if li+size <= max {
		return n.emit(snpa, &f, li, nsdu, 0, size, false)
	}
	if !n.p.Segmentation {
		n.stats.TxSegNeeded++
		return false
	}
	per := (max - li) / header.CLNPSegmentUnit * header.CLNPSegmentUnit
	if per <= 0 || li+size > 0xFFFF {
		n.stats.TxSegNeeded++
		return false
	}
	sent := true
	for off := 0; off < size; off += per {
		k := min(per, size-off)
		c.Call(n.sym.segment, func() {
			f.Flags = flags
			if off+k < size {
				f.Flags |= header.CLNPFlagMS
			}
			f.Seg.Offset = uint16(off)
			if !n.emit(snpa, &f, li, nsdu, off, k, true) {
				sent = false
			}
		})
		n.stats.TxSegments++
	}
	return sent
}

// emit sends data octets [off, off+k) of nsdu behind the header f.
func (n *CLNP) emit(snpa [6]byte, f *header.CLNPFields, li int, nsdu osi.Chain, off, k int, slice bool) bool {
	f.SegmentLength = uint16(li + k)
	h := header.CLNP(n.hdr[:li])
	h.Encode(f)
	var data osi.Chain
	if !slice && k > 0 {
		// The whole NSDU: chain the header in front of it as it is (held,
		// since the caller frees its reference).
		n.bufs.Hold(nsdu)
		data = nsdu
	} else if k > 0 {
		data = n.bufs.Slice(osi.Tx, nsdu, off, k)
		if data == 0 {
			n.stats.TxNoMemory++
			return false
		}
	}
	pdu := n.withHeader(data, n.hdr[:li], li, k)
	if pdu == 0 {
		n.bufs.Free(data)
		return false
	}
	n.stats.TxDT++
	return n.send(snpa, pdu)
}

// withHeader chains a PCI holding hdr in front of data; when li > 0 the
// header gets its checksum there.
func (n *CLNP) withHeader(data osi.Chain, hdr []byte, li, size int) osi.Chain {
	pdu, a := n.bufs.Prepend(osi.Tx, data, len(hdr))
	if pdu == 0 {
		n.stats.TxNoMemory++
		return 0
	}
	if li > 0 && n.p.Checksum {
		h := header.CLNP(hdr)
		h.SetChecksum(0)
		h.SetChecksum(h.CalculateChecksum())
	}
	n.c.Write(a, hdr)
	if li > 0 && n.p.Checksum {
		n.checksum(a, li)
	}
	return pdu
}

func (n *CLNP) send(snpa [6]byte, pdu osi.Chain) bool {
	if !n.sub.Send(snpa, pdu) {
		n.stats.TxSubnetRefused++
		return false
	}
	return true
}

// Input takes a PDU (consumed) that arrived from subnetwork address
// from.
func (n *CLNP) Input(from [6]byte, pdu osi.Chain) {
	c := n.c
	c.Enter(n.sym.input)
	defer c.Exit(n.sym.input)
	n.stats.RxPDUs++
	b := n.hdr[:]
	got := n.bufs.Read(pdu, 0, b[:2])
	if got >= 1 && b[0] == header.CLNPInactiveNLPID {
		n.inactive(from, pdu)
		return
	}
	if got < 2 || b[0] != header.CLNPNLPID {
		n.stats.RxHeaderErrors++
		n.bufs.Free(pdu)
		return
	}
	li := int(b[1])
	pktLen := n.bufs.Len(pdu)
	if li > pktLen || li < header.CLNPFixedLen {
		n.stats.RxHeaderErrors++
		n.bufs.Free(pdu)
		return
	}
	n.bufs.Read(pdu, 0, b[:li])
	h := header.CLNP(b[:li])
	// IsValid checks the segment length against what arrived: give it the
	// arrived length, the view holding only the header.
	if !h.IsValid(pktLen) {
		n.stats.RxHeaderErrors++
		n.bufs.Free(pdu)
		return
	}
	if h.Checksum() != 0 {
		// The checksum loop runs over the header in place.
		n.checksumChain(pdu, li)
		if !h.IsChecksumValid() {
			n.stats.RxBadChecksum++
			n.discard(from, h, header.CLNPReasonChecksum, 7, pdu)
			return
		}
	}
	switch h.Type() {
	case header.CLNPTypeDT:
	case header.CLNPTypeER:
		n.stats.RxER++
		if n.onER != nil {
			src, _ := osi.MakeNSAP(h.Src())
			var rl [2]byte
			if v, ok := h.Option(header.CLNPOptReasonDiscard); ok && len(v) == 2 {
				rl = [2]byte(v)
			}
			n.onER(src, rl[0], rl[1])
		}
		n.bufs.Free(pdu)
		return
	default:
		n.stats.RxUnsupported++
		n.discard(from, h, header.CLNPReasonUnsupportedOpt, 4, pdu)
		return
	}
	if h.Lifetime() == 0 {
		n.stats.RxLifetimeExpired++
		n.discard(from, h, header.CLNPReasonLifetimeTransit, 3, pdu)
		return
	}
	dst, err1 := osi.MakeNSAP(h.Dst())
	src, err2 := osi.MakeNSAP(h.Src())
	if err1 != nil || err2 != nil || !dst.SameSystem(n.p.NSAP) {
		n.stats.RxNotForUs++
		n.discard(from, h, header.CLNPReasonDestUnreachable, 9, pdu)
		return
	}
	seglen := int(h.SegmentLength())
	if seglen < pktLen {
		n.bufs.Truncate(pdu, seglen)
	}
	seg, segmented := h.Segmentation()
	if segmented && (seg.Offset != 0 || h.MoreSegments()) {
		n.reassemble(from, h, src, dst, seg, pdu, seglen-li)
		return
	}
	n.bufs.Pull(pdu, li)
	n.deliver(src, dst, pdu, h)
}

// checksumChain charges the checksum loop over the first n octets of the
// chain's first piece (a received header lies in one piece).
func (n *CLNP) checksumChain(pdu osi.Chain, cnt int) {
	var at memory.Addr
	first := true
	n.bufs.Pieces(pdu, func(a memory.Addr, k int) {
		if first {
			at, first = a, false
		}
	})
	n.checksum(at, cnt)
}

func (n *CLNP) deliver(src, dst osi.NSAP, nsdu osi.Chain, h header.CLNP) {
	u, ok := n.users[dst.Selector()]
	if !ok {
		n.stats.RxNoUser++
		n.bufs.Free(nsdu)
		return
	}
	n.stats.RxDelivered++
	u.NUnitdataIndication(src, dst, nsdu)
}

func (n *CLNP) inactive(from [6]byte, pdu osi.Chain) {
	if !n.p.InactiveSubset {
		n.stats.RxInactiveRefused++
		n.bufs.Free(pdu)
		return
	}
	src, ok := n.reverse(from)
	if !ok {
		n.stats.RxInactiveRefused++
		n.bufs.Free(pdu)
		return
	}
	n.stats.RxInactive++
	n.bufs.Pull(pdu, 1)
	sel := byte(n.p.InactiveSelector)
	n.deliver(src, n.p.NSAP.WithSelector(sel), pdu, nil)
}

// discard drops pdu and sends an ER when its header asked for one (never
// for an ER, never for a PDU without E/R).
func (n *CLNP) discard(from [6]byte, h header.CLNP, reason, location uint8, pdu osi.Chain) {
	if h.ErrorReport() && h.Type() != header.CLNPTypeER {
		n.emitER(from, h, reason, location)
	}
	n.bufs.Free(pdu)
}

// emitER sends an ER PDU about the discarded header h back to from.
func (n *CLNP) emitER(to [6]byte, h header.CLNP, reason, location uint8) {
	c := n.c
	c.Enter(n.sym.er)
	defer c.Exit(n.sym.er)
	f := header.CLNPFields{Type: header.CLNPTypeER, Lifetime: uint8(n.p.Lifetime), Dst: h.Src(), Src: n.p.NSAP.Bytes(),
		Options: []byte{header.CLNPOptReasonDiscard, 2, reason, location}}
	li := header.CLNPHeaderLen(&f)
	body := h[:min(len(h), n.sub.MaxSDU()-li)]
	f.SegmentLength = uint16(li + len(body))
	pdu, a := n.bufs.New(osi.Tx, li+len(body))
	if pdu == 0 {
		n.stats.TxNoMemory++
		return
	}
	out := make([]byte, li+len(body))
	eh := header.CLNP(out[:li])
	eh.Encode(&f)
	copy(out[li:], body)
	if n.p.Checksum {
		eh.SetChecksum(eh.CalculateChecksum())
	}
	c.Write(a, out)
	if n.p.Checksum {
		n.checksum(a, li)
	}
	n.stats.TxER++
	n.send(to, pdu)
}
