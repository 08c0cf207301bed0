package header

import "encoding/binary"

// LLC encapsulation of routed PDUs over AAL5 (RFC 2684 sections 5.1 and
// 5.2, obsoleting RFC 1483; docs/reference/atm-taxi.md sec. 9): the
// CPCS-SDU starts with an IEEE 802.2 LLC header that says what follows.
//
// Routed non-ISO protocols (IPv4) use LLC AA-AA-03 and a SNAP header,
// whose PID is the EtherType when the OUI is 00-00-00:
//
//	+------+------+------+------+------+------+------+------+
//	| DSAP | SSAP | Ctrl |       OUI          |     PID     |
//	| 0xAA | 0xAA | 0x03 | 0x00   0x00   0x00 | 0x08   0x00 |
//	+------+------+------+------+------+------+------+------+
//	| IPv4 datagram ...
//
// Routed ISO protocols (CLNP, ES-IS) use LLC FE-FE-03 and no SNAP: the
// PDU follows at once, starting with its NLPID (0x81 for CLNP):
//
//	+------+------+------+------+
//	| 0xFE | 0xFE | 0x03 | NLPID| ISO PDU ...
//	+------+------+------+------+
//
// The DSAP and SSAP offsets are the LLC view's (llc.go).
const (
	llcCtrl = 2
	llcOUI  = 3
	llcPID  = 6
)

const (
	// RFC2684SNAPLen is the LLC and SNAP header of a routed non-ISO PDU.
	RFC2684SNAPLen = 8
	// RFC2684ISOLen is the LLC header of a routed ISO PDU.
	RFC2684ISOLen = 3

	// LLC values (IEEE 802.2; RFC 2684 section 4); the SNAP SAP is
	// LLCSAPSNAP (llc.go).
	LLCSAPISO = 0xFE // ISO network layer protocols
	LLCCtrlUI = 0x03 // unnumbered information

	// NLPIDCLNP is the first byte of a CLNP PDU (ISO/IEC TR 9577).
	NLPIDCLNP = 0x81
)

// RFC2684 is a view of an LLC-encapsulated routed PDU, starting at the LLC
// header. Call IsValid before the getters.
type RFC2684 []byte

// IsValid reports whether b starts with one of the two routed headers:
// SNAP (eight bytes, AA-AA-03) or routed ISO (FE-FE-03 and at least the
// NLPID byte after it).
func (b RFC2684) IsValid() bool {
	switch {
	case len(b) >= RFC2684SNAPLen && b[llcDSAP] == LLCSAPSNAP && b[llcSSAP] == LLCSAPSNAP && b[llcCtrl] == LLCCtrlUI:
		return true
	case len(b) > RFC2684ISOLen && b[llcDSAP] == LLCSAPISO && b[llcSSAP] == LLCSAPISO && b[llcCtrl] == LLCCtrlUI:
		return true
	}
	return false
}

// IsSNAP reports whether the header is LLC/SNAP (AA-AA-03).
func (b RFC2684) IsSNAP() bool { return b[llcDSAP] == LLCSAPSNAP }

// IsISO reports whether the header announces a routed ISO PDU (FE-FE-03).
func (b RFC2684) IsISO() bool { return b[llcDSAP] == LLCSAPISO }

// OUI returns the SNAP organisationally unique identifier; valid only when
// IsSNAP.
func (b RFC2684) OUI() [3]byte { return [3]byte(b[llcOUI : llcOUI+3]) }

// PID returns the SNAP protocol identifier, the EtherType when the OUI is
// 00-00-00; valid only when IsSNAP.
func (b RFC2684) PID() uint16 { return binary.BigEndian.Uint16(b[llcPID:]) }

// EtherType returns the EtherType of a routed PDU under SNAP with OUI
// 00-00-00, or false for any other header.
func (b RFC2684) EtherType() (uint16, bool) {
	if !b.IsSNAP() || b.OUI() != [3]byte{} {
		return 0, false
	}
	return b.PID(), true
}

// HeaderLen returns the length of the header: 8 for SNAP, 3 for ISO.
func (b RFC2684) HeaderLen() int {
	if b.IsSNAP() {
		return RFC2684SNAPLen
	}
	return RFC2684ISOLen
}

// Payload returns the routed PDU after the header.
func (b RFC2684) Payload() []byte { return b[b.HeaderLen():] }

// EncodeSNAP writes the LLC/SNAP header for a routed PDU of the given
// EtherType (OUI 00-00-00).
func (b RFC2684) EncodeSNAP(etherType uint16) {
	b[llcDSAP], b[llcSSAP], b[llcCtrl] = LLCSAPSNAP, LLCSAPSNAP, LLCCtrlUI
	b[llcOUI], b[llcOUI+1], b[llcOUI+2] = 0, 0, 0
	binary.BigEndian.PutUint16(b[llcPID:], etherType)
}

// EncodeISO writes the LLC header for a routed ISO PDU; the PDU (its
// NLPID first) follows at offset 3.
func (b RFC2684) EncodeISO() {
	b[llcDSAP], b[llcSSAP], b[llcCtrl] = LLCSAPISO, LLCSAPISO, LLCCtrlUI
}
