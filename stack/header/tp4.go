package header

import "encoding/binary"

// ISO 8073 transport protocol data units (TPDUs), as RFC 905 publishes
// the standard (clause 13, "Structure and encoding of TPDUs"), for the
// classes 2 to 4 formats; Wireshark packet-cotp.c dissects the same.
//
//	octet  1        2        3  ...  n     n+1 ... p     p+1 ... end
//	     +------+--------+----------------+--------------+-------------+
//	     |  LI  | code   | rest of the    | variable part| user data   |
//	     |      | (+CDT) | fixed part     | (parameters) | (DT, ED, CR,|
//	     +------+--------+----------------+--------------+  CC, DR)    |
//	      LI counts the octets after itself up to the user data (≤ 254).
//
// The fixed part after the LI octet, by type (normal format; extended
// formats, negotiated at connection, widen the numbers and the credit):
//
//	CR  E0|CDT  DST-REF(2)=0  SRC-REF(2)  class|options(1)     LI ≥ 6
//	CC  D0|CDT  DST-REF(2)    SRC-REF(2)  class|options(1)     LI ≥ 6
//	DR  80      DST-REF(2)    SRC-REF(2)  reason(1)            LI ≥ 6
//	DC  C0      DST-REF(2)    SRC-REF(2)                       LI ≥ 5
//	DT  F0      DST-REF(2)    EOT|TPDU-NR(1; extended 4)       LI ≥ 4 (7)
//	ED  10      DST-REF(2)    EOT|ED-TPDU-NR(1; extended 4)    LI ≥ 4 (7)
//	AK  60|CDT  DST-REF(2)    YR-TU-NR(1; extended 4 + CDT(2)) LI ≥ 4 (9)
//	EA  20      DST-REF(2)    YR-EDTU-NR(1; extended 4)        LI ≥ 4 (7)
//	RJ  50|CDT  DST-REF(2)    YR-TU-NR(1; extended 4 + CDT(2)) LI ≥ 4 (9)
//	ER  70      DST-REF(2)    reject cause(1)                  LI ≥ 4
//
// In CR and CC the 4-bit CDT is the initial credit in either format. The
// top bit of a DT's or ED's number octet(s) is EOT; of an AK's, EA's and
// RJ's it is zero. Parameters are code, length, value triples. In class 4
// every TPDU carries the checksum parameter (C3, two octets, the ISO
// checksum over the whole TPDU, user data included; see fletcher.go)
// unless its non-use was negotiated (additional option 0x02).
//
// Several TPDUs may share one NSDU (concatenation, clause 6.4): each
// that carries no user data ends at its LI, and only the last may carry
// data, which runs to the end of the NSDU.

// TPDU codes: the high nibble of the second octet.
const (
	TPDUCodeCR = 0xE0
	TPDUCodeCC = 0xD0
	TPDUCodeDR = 0x80
	TPDUCodeDC = 0xC0
	TPDUCodeDT = 0xF0
	TPDUCodeED = 0x10
	TPDUCodeAK = 0x60
	TPDUCodeEA = 0x20
	TPDUCodeRJ = 0x50
	TPDUCodeER = 0x70
)

// TPDU parameter codes (RFC 905 clause 13.3.4 and 13.x; Wireshark).
const (
	TPDUParamAckTime       = 0x85 // 2 octets, ms
	TPDUParamResErrorRate  = 0x86
	TPDUParamPriority      = 0x87
	TPDUParamTransitDelay  = 0x88
	TPDUParamThroughput    = 0x89
	TPDUParamSubsequence   = 0x8A // AK: 2 octets
	TPDUParamReassignment  = 0x8B
	TPDUParamFlowControl   = 0x8C // AK: lower window edge (4), subsequence (2), credit (2)
	TPDUParamTPDUSize      = 0xC0 // 1 octet, log2 of the size
	TPDUParamCallingTSAP   = 0xC1 // CR/CC; in an ER: the invalid TPDU
	TPDUParamCalledTSAP    = 0xC2
	TPDUParamChecksum      = 0xC3 // 2 octets
	TPDUParamVersion       = 0xC4
	TPDUParamProtection    = 0xC5
	TPDUParamOptions       = 0xC6 // additional option selection, 1 octet
	TPDUParamAltClasses    = 0xC7
	TPDUParamClearingInfo  = 0xE0 // DR: additional information
	TPDUParamPrefTPDUSize  = 0xF0
	TPDUParamInactivity    = 0xF2
	TPDUParamInvalidTPDU   = 0xC1 // ER
	TPDUFlowControlLen     = 8
	TPDUChecksumParamLen   = 4 // C3 02 X Y
	TPDUMaxLI              = 254
	TPDUMaxTSAP            = 32
	TPDUVersion            = 0x01
	TPDUMaxExpeditedData   = 16 // octets of an ED (class 4)
	TPDUMaxCRData          = 32
	TPDUMaxDRData          = 64
	TPDUNormalModulus      = 1 << 7
	TPDUExtendedModulus    = 1 << 31
	TPDUNormalMaxCredit    = 15
	TPDUExtendedMaxCredit  = 0xFFFF
	TPDUSizeMinLog2        = 7  // 128 octets
	TPDUSizeMaxLog2        = 13 // 8192 octets
	TPDUEOT                = 0x80
	TPDUClass4             = 0x40 // class in the high nibble of the class/option octet
	TPDUOptExtended        = 0x02 // class/option octet: extended formats
	TPDUOptExplicitFC      = 0x01 // class/option octet (class 2): no explicit flow control
	TPDUAddOptExpedited    = 0x01 // additional options: use of transport expedited data
	TPDUAddOptNoChecksum   = 0x02 // additional options: non-use of the checksum (class 4)
	TPDUAddOptNetExpedited = 0x08
)

// DR reasons (RFC 905 clause 13.5.3 e).
const (
	TPDUReasonNotSpecified   = 0
	TPDUReasonCongestion     = 1
	TPDUReasonNotAttached    = 2 // session entity not attached to TSAP
	TPDUReasonAddressUnknown = 3
	TPDUReasonNormal         = 128 + 0
	TPDUReasonRemoteCongest  = 128 + 1
	TPDUReasonNegotiation    = 128 + 2
	TPDUReasonDuplicateRef   = 128 + 3
	TPDUReasonMismatchedRefs = 128 + 4
	TPDUReasonProtocolError  = 128 + 5
	TPDUReasonRefOverflow    = 128 + 7
	TPDUReasonRefused        = 128 + 8
	TPDUReasonHeaderLength   = 128 + 10
)

// ER reject causes (RFC 905 clause 13.12.3).
const (
	TPDUCauseNotSpecified = 0
	TPDUCauseParamCode    = 1 // invalid parameter code
	TPDUCauseType         = 2 // invalid TPDU type
	TPDUCauseParamValue   = 3 // invalid parameter value
)

// Offsets of the fixed part (0-based, LI at 0).
const (
	tpduLI     = 0
	tpduCode   = 1
	tpduDstRef = 2
	tpduSrcRef = 4
	tpduClass  = 6 // CR, CC
	tpduReason = 6 // DR
	tpduNr     = 4 // DT, ED, AK, EA, RJ
	tpduCause  = 4 // ER
	tpduXCDT   = 8 // extended AK, RJ
)

// TPDUFixedLen returns the length of the fixed part of a TPDU of code
// (after the LI octet: the minimum LI) in the given format, or 0 for a
// code that is no TPDU's.
func TPDUFixedLen(code uint8, extended bool) int {
	switch code & 0xF0 {
	case TPDUCodeCR, TPDUCodeCC, TPDUCodeDR:
		return 6
	case TPDUCodeDC:
		return 5
	case TPDUCodeER:
		return 4
	case TPDUCodeDT, TPDUCodeED, TPDUCodeEA:
		if extended {
			return 7
		}
		return 4
	case TPDUCodeAK, TPDUCodeRJ:
		if extended {
			return 9
		}
		return 4
	}
	return 0
}

// TPDUHasData reports whether a TPDU of code may carry user data (and
// so must come last in an NSDU).
func TPDUHasData(code uint8) bool {
	switch code & 0xF0 {
	case TPDUCodeCR, TPDUCodeCC, TPDUCodeDR, TPDUCodeDT, TPDUCodeED:
		return true
	}
	return false
}

// TPDU is a view of one TPDU, from its LI octet to the end of its user
// data (or of its header, for a TPDU without data). Call IsValid first.
type TPDU []byte

// IsValid reports whether b starts with a well-formed TPDU header in the
// given format: the LI is at most 254 and lies inside b, the code is a
// TPDU's, the LI covers the fixed part, and the variable part is whole
// code/length/value triples.
func (b TPDU) IsValid(extended bool) bool {
	if len(b) < 2 {
		return false
	}
	li := int(b[tpduLI])
	if li > TPDUMaxLI || li+1 > len(b) {
		return false
	}
	fixed := TPDUFixedLen(b[tpduCode], extended)
	if fixed == 0 || li < fixed {
		return false
	}
	return validOptions(b[1+fixed : 1+li])
}

// LI returns the length indicator.
func (b TPDU) LI() int { return int(b[tpduLI]) }

// HeaderLen returns the octets of the header: LI + 1.
func (b TPDU) HeaderLen() int { return int(b[tpduLI]) + 1 }

// Code returns the TPDU code (the high nibble of octet 2).
func (b TPDU) Code() uint8 { return b[tpduCode] & 0xF0 }

// CDT returns the 4-bit credit of a CR, CC, or normal-format AK or RJ.
func (b TPDU) CDT() uint8 { return b[tpduCode] & 0x0F }

// DstRef returns the destination reference.
func (b TPDU) DstRef() uint16 { return binary.BigEndian.Uint16(b[tpduDstRef:]) }

// SrcRef returns the source reference of a CR, CC, DR or DC.
func (b TPDU) SrcRef() uint16 { return binary.BigEndian.Uint16(b[tpduSrcRef:]) }

// ClassOption returns the class and option octet of a CR or CC.
func (b TPDU) ClassOption() uint8 { return b[tpduClass] }

// Reason returns a DR's reason.
func (b TPDU) Reason() uint8 { return b[tpduReason] }

// RejectCause returns an ER's reject cause.
func (b TPDU) RejectCause() uint8 { return b[tpduCause] }

// Number returns the TPDU-NR of a DT, the ED-TPDU-NR of an ED, or the
// YR-TU-NR (YR-EDTU-NR) of an AK, RJ or EA, without the EOT bit.
func (b TPDU) Number(extended bool) uint32 {
	if extended {
		return binary.BigEndian.Uint32(b[tpduNr:]) & 0x7FFFFFFF
	}
	return uint32(b[tpduNr] & 0x7F)
}

// EOT reports the end-of-TSDU mark of a DT or ED.
func (b TPDU) EOT() bool { return b[tpduNr]&TPDUEOT != 0 }

// Credit returns an AK's or RJ's credit: the CDT nibble in normal
// format, the 16-bit field in extended format.
func (b TPDU) Credit(extended bool) uint16 {
	if extended {
		return binary.BigEndian.Uint16(b[tpduXCDT:])
	}
	return uint16(b.CDT())
}

// VarPart returns the variable part (aliasing b).
func (b TPDU) VarPart(extended bool) []byte {
	return b[1+TPDUFixedLen(b[tpduCode], extended) : 1+b.LI()]
}

// Param returns the value of the first parameter with code, if present.
func (b TPDU) Param(extended bool, code byte) ([]byte, bool) {
	v := b.VarPart(extended)
	for len(v) >= 2 && 2+int(v[1]) <= len(v) {
		n := int(v[1])
		if v[0] == code {
			return v[2 : 2+n], true
		}
		v = v[2+n:]
	}
	return nil, false
}

// ChecksumOffset returns the 0-based offset in b of the first checksum
// octet (the checksum parameter's value), if the parameter is present
// with its two octets.
func (b TPDU) ChecksumOffset(extended bool) (int, bool) {
	start := 1 + TPDUFixedLen(b[tpduCode], extended)
	v := b[start : 1+b.LI()]
	off := start
	for len(v) >= 2 && 2+int(v[1]) <= len(v) {
		n := int(v[1])
		if v[0] == TPDUParamChecksum {
			return off + 2, n == 2
		}
		off += 2 + n
		v = v[2+n:]
	}
	return 0, false
}

// Data returns the user data after the header (aliasing b).
func (b TPDU) Data() []byte { return b[b.HeaderLen():] }

// SetChecksum computes the checksum over all of b (header and user data)
// and stores it in the checksum parameter, which must be present.
func (b TPDU) SetChecksum(extended bool) {
	off, ok := b.ChecksumOffset(extended)
	if !ok {
		panic("header: TPDU without a checksum parameter")
	}
	b[off], b[off+1] = FletcherChecksum(b, off)
}

// IsChecksumValid reports whether all of b passes the ISO checksum.
func (b TPDU) IsChecksumValid() bool { return FletcherValid(b) }

// TPDUFields holds the fields of a TPDU header for Encode.
type TPDUFields struct {
	Code     uint8  // TPDUCodeCR, ...
	Extended bool   // extended format (DT, ED, AK, EA, RJ)
	CDT      uint16 // credit: the nibble of CR, CC, normal AK/RJ; the 16-bit field of extended AK/RJ
	DstRef   uint16
	SrcRef   uint16 // CR, CC, DR, DC
	Class    uint8  // CR, CC: class and options octet
	Reason   uint8  // DR: reason; ER: reject cause
	Number   uint32 // DT, ED: TPDU-NR; AK, EA, RJ: YR-TU-NR
	EOT      bool   // DT, ED
	Params   []byte // encoded variable part, copied as it is
}

// TPDUHeaderLen returns the header length f encodes to (LI + 1).
func TPDUHeaderLen(f *TPDUFields) int {
	return 1 + TPDUFixedLen(f.Code, f.Extended) + len(f.Params)
}

// Encode writes the header described by f; b must hold TPDUHeaderLen(f)
// octets.
func (b TPDU) Encode(f *TPDUFields) {
	fixed := TPDUFixedLen(f.Code, f.Extended)
	li := fixed + len(f.Params)
	if fixed == 0 || li > TPDUMaxLI {
		panic("header: TPDU code unknown or header too long")
	}
	b[tpduLI] = byte(li)
	b[tpduCode] = f.Code & 0xF0
	binary.BigEndian.PutUint16(b[tpduDstRef:], f.DstRef)
	switch f.Code & 0xF0 {
	case TPDUCodeCR, TPDUCodeCC:
		b[tpduCode] |= byte(f.CDT) & 0x0F
		binary.BigEndian.PutUint16(b[tpduSrcRef:], f.SrcRef)
		b[tpduClass] = f.Class
	case TPDUCodeDR:
		binary.BigEndian.PutUint16(b[tpduSrcRef:], f.SrcRef)
		b[tpduReason] = f.Reason
	case TPDUCodeDC:
		binary.BigEndian.PutUint16(b[tpduSrcRef:], f.SrcRef)
	case TPDUCodeER:
		b[tpduCause] = f.Reason
	case TPDUCodeDT, TPDUCodeED, TPDUCodeEA, TPDUCodeAK, TPDUCodeRJ:
		eot := uint32(0)
		if f.EOT {
			eot = 1
		}
		if f.Extended {
			binary.BigEndian.PutUint32(b[tpduNr:], eot<<31|f.Number&0x7FFFFFFF)
			if code := f.Code & 0xF0; code == TPDUCodeAK || code == TPDUCodeRJ {
				binary.BigEndian.PutUint16(b[tpduXCDT:], f.CDT)
			}
		} else {
			b[tpduNr] = byte(eot<<7) | byte(f.Number&0x7F)
			if code := f.Code & 0xF0; code == TPDUCodeAK || code == TPDUCodeRJ {
				b[tpduCode] |= byte(f.CDT) & 0x0F
			}
		}
	}
	copy(b[1+fixed:1+li], f.Params)
}

// AppendTPDUParam appends the parameter code, length, value to p.
func AppendTPDUParam(p []byte, code byte, value ...byte) []byte {
	p = append(p, code, byte(len(value)))
	return append(p, value...)
}

// TPDUSizeCode returns the TPDU size parameter's value for size octets (a
// power of two from 128 to 8192), or false.
func TPDUSizeCode(size int) (byte, bool) {
	for c := TPDUSizeMinLog2; c <= TPDUSizeMaxLog2; c++ {
		if size == 1<<c {
			return byte(c), true
		}
	}
	return 0, false
}
