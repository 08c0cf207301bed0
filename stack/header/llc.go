package header

// IEEE 802.3 frames with a length field, and the IEEE 802.2 LLC header
// they carry (ISO/IEC 8802-2:1998 clause 3, "LLC PDU structure").
//
// In an 802.3 frame the two bytes after the source address hold the length
// of the data field (the LLC PDU), at most 1500; values of 0x0600 and above
// are EtherTypes (IEEE 802.3 clause 3.2.6). A frame padded to the minimum
// size says by this length how much of its data field is the PDU. The
// Ethernet view reads the field as Type(); IsLengthField tells the two
// uses apart.
//
// LLC PDU, type 1 (connectionless) operation:
//
//	+--------+--------+--------+------------------
//	|  DSAP  |  SSAP  |control |  information ...
//	+--------+--------+--------+------------------
//	 I/G bit = DSAP bit 0 (1: group address)
//	 C/R bit = SSAP bit 0 (1: response)
//
// Type 1 uses U-format PDUs only, whose control field is one octet with
// its low two bits set (clause 5.3): UI 0x03, XID 0xAF and TEST 0xE3, with
// the P/F bit 0x10 (so 0xBF and 0xF3 with it set).
const (
	llcDSAP    = 0
	llcSSAP    = 1
	llcControl = 2
)

const (
	// LLCHeaderLen is the length of a U-format LLC header.
	LLCHeaderLen = 3
	// IEEE8023MaxLength is the largest value of the length field: the
	// data field of an 802.3 frame (IEEE 802.3 clause 3.2.7).
	IEEE8023MaxLength = 1500
	// EtherTypeMin is the smallest EtherType; smaller values are lengths
	// (IEEE 802.3 clause 3.2.6).
	EtherTypeMin = 0x0600
)

// LLC SAPs (ISO/IEC TR 11802-1; Wireshark llcsaps.h).
const (
	LLCSAPNull = 0x00
	LLCSAPIP   = 0x06
	LLCSAPSNAP = 0xAA
	// LLCSAPISONet is the ISO network layer SAP: CLNP, ES-IS and IS-IS,
	// told apart by the NLPID that follows the LLC header.
	LLCSAPISONet = 0xFE
	LLCSAPGlobal = 0xFF
)

// LLC U-format control field values (ISO/IEC 8802-2 clause 5.4.1.1).
const (
	LLCControlUI   = 0x03
	LLCControlXID  = 0xAF
	LLCControlTEST = 0xE3
	// LLCPollFinal is the P/F bit of a U-format control field.
	LLCPollFinal = 0x10
	// LLCGroupBit is the I/G bit of a DSAP; LLCResponseBit the C/R bit
	// of an SSAP.
	LLCGroupBit    = 0x01
	LLCResponseBit = 0x01
)

// The XID information field of a type 1 station (ISO/IEC 8802-2 clause
// 5.4.1.1.2): format identifier 0x81 (IEEE basic format), the LLC types
// and classes supported, and the receive window (0 for type 1 only).
const (
	LLCXIDFormat   = 0x81
	LLCXIDClass1   = 0x01
	LLCXIDInfoLen  = 3
	llcUFormatMask = 0x03
)

// IsLengthField reports whether the Length/Type field value v of an
// Ethernet frame is a length (an 802.3 frame with an LLC PDU) rather than
// an EtherType.
func IsLengthField(v uint16) bool { return v <= IEEE8023MaxLength }

// LLC is a view of an LLC PDU starting at its DSAP. Call IsValid first.
type LLC []byte

// LLCFields holds the fields of a U-format LLC header for Encode.
type LLCFields struct {
	DSAP    uint8
	SSAP    uint8 // with the C/R bit
	Control uint8
}

// IsValid reports whether b holds a U-format LLC header: three bytes, the
// control field's low two bits set. (Type 2 I- and S-format PDUs have a
// two-byte control field and are not type 1 PDUs.)
func (b LLC) IsValid() bool {
	return len(b) >= LLCHeaderLen && b[llcControl]&llcUFormatMask == llcUFormatMask
}

// DSAP returns the destination SAP, I/G bit included.
func (b LLC) DSAP() uint8 { return b[llcDSAP] }

// SSAP returns the source SAP, C/R bit included.
func (b LLC) SSAP() uint8 { return b[llcSSAP] }

// Control returns the control field.
func (b LLC) Control() uint8 { return b[llcControl] }

// IsResponse reports whether the C/R bit marks a response.
func (b LLC) IsResponse() bool { return b[llcSSAP]&LLCResponseBit != 0 }

// Command returns the control field without the P/F bit: LLCControlUI,
// LLCControlXID, LLCControlTEST or another U-format command.
func (b LLC) Command() uint8 { return b[llcControl] &^ LLCPollFinal }

// PollFinal reports whether the P/F bit is set.
func (b LLC) PollFinal() bool { return b[llcControl]&LLCPollFinal != 0 }

// Payload returns the information field.
func (b LLC) Payload() []byte { return b[LLCHeaderLen:] }

// Encode writes the header from f.
func (b LLC) Encode(f *LLCFields) {
	b[llcDSAP] = f.DSAP
	b[llcSSAP] = f.SSAP
	b[llcControl] = f.Control
}
