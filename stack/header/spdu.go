package header

import "encoding/binary"

// ISO 8327-1 session protocol data units (ITU-T X.225 clause 8;
// Wireshark packet-ses.h).
//
//	+------+--------------+--------------------------------+------------------+
//	|  SI  |  LI          |  parameter field               |  user information|
//	|  (1) |  (1, or 3:   |  PI and PGI units:             |  (DT: the SSDU)  |
//	|      |  FF + 2)     |  code(1) LI(1 or 3) value      |                  |
//	+------+--------------+--------------------------------+------------------+
//
// LI counts the parameter field; a value of 255 or more is written as FF
// followed by two octets. A PGI unit's value is itself a sequence of PI
// units (connect/accept item, connection identifier) or user data (PGI
// 193, 194). Several SPDUs may share one TSDU: a category 2 SPDU (DT)
// must follow a category 0 one (GT), so the duplex data phase's minimal
// encoding is GT(01 00) DT(01 00) and then the user data, 4 octets a
// TSDU; only the last SPDU of a TSDU has user information after its
// parameters.

// SPDU identifiers (SI).
const (
	SPDUDataTransfer  = 1 // DT, and GT (give tokens) in category 0
	SPDUGiveTokens    = 1
	SPDUPleaseTokens  = 2
	SPDUExpedited     = 5
	SPDUNotFinished   = 8
	SPDUFinish        = 9
	SPDUDisconnect    = 10
	SPDURefuse        = 12
	SPDUConnect       = 13
	SPDUAccept        = 14
	SPDUAbort         = 25
	SPDUAbortAccept   = 26
	SPDUTypedData     = 33
	SPDUCapabilityDat = 61
)

// Session parameter identifiers (PI) and group identifiers (PGI).
const (
	SESPGIConnectionID    = 1
	SESPGIConnectAccept   = 5
	SESPIReflectParams    = 11
	SESPITransportDisc    = 17
	SESPIProtocolOptions  = 19
	SESPIUserRequirements = 20
	SESPITSDUMaxSize      = 21
	SESPIVersion          = 22
	SESPIInitialSerial    = 23
	SESPITokenSetting     = 26
	SESPIReasonCode       = 50
	SESPICallingSSAP      = 51
	SESPICalledSSAP       = 52
	SESPGIUserData        = 193
	SESPGIExtUserData     = 194
)

// Values.
const (
	SESVersion1             = 0x01
	SESVersion2             = 0x02
	SESFUHalfDuplex         = 0x0001
	SESFUDuplex             = 0x0002
	SESFUExpedited          = 0x0004
	SESTDRelease            = 0x01 // transport disconnect: the transport connection is released
	SESTDUserAbort          = 0x02
	SESTDProtocolError      = 0x04
	SESTDNoReason           = 0x08
	SESRefuseUser           = 0 // rejection by the called SS-user, no reason
	SESRefuseSSAPUnknown    = 128 + 1
	SESRefuseNotAttached    = 128 + 2
	SESRefuseVersion        = 128 + 4
	SESRefuseSPM            = 128 + 5
	SESMaxUserDataV1        = 512
	SESMaxLI                = 0xFFFF
	SESDataPhaseOverhead    = 4 // GT(01 00) DT(01 00)
	SESMaxShortLI           = 254
	sesLongLI               = 0xFF
	SESMaxConnectUserDataV2 = 10240
)

// SPDU is a view of one SPDU, from its SI to the end of the TSDU (its
// user information, if any, runs to the end). Call IsValid first.
type SPDU []byte

// spduLI decodes a length indicator at b[0:]: the value and the octets
// it takes, or ok false.
func spduLI(b []byte) (v, n int, ok bool) {
	if len(b) < 1 {
		return 0, 0, false
	}
	if b[0] != sesLongLI {
		return int(b[0]), 1, true
	}
	if len(b) < 3 {
		return 0, 0, false
	}
	return int(binary.BigEndian.Uint16(b[1:])), 3, true
}

// IsValid reports whether b starts with a well-formed SPDU: its LI lies
// inside b and its parameter field is whole PI/PGI units (the units of a
// connect/accept item or connection identifier group whole PIs too).
func (b SPDU) IsValid() bool {
	if len(b) < 2 {
		return false
	}
	li, n, ok := spduLI(b[1:])
	if !ok || 1+n+li > len(b) {
		return false
	}
	return validSESUnits(b[1+n:1+n+li], true)
}

// validSESUnits reports whether p is whole PI/PGI units; with groups it
// looks inside the groups that hold PIs.
func validSESUnits(p []byte, groups bool) bool {
	for len(p) > 0 {
		li, n, ok := spduLI(p[1:])
		if !ok || 1+n+li > len(p) {
			return false
		}
		code := p[0]
		if groups && (code == SESPGIConnectAccept || code == SESPGIConnectionID) && !validSESUnits(p[1+n:1+n+li], false) {
			return false
		}
		p = p[1+n+li:]
	}
	return true
}

// SI returns the SPDU identifier.
func (b SPDU) SI() uint8 { return b[0] }

// LI returns the parameter field's length.
func (b SPDU) LI() int { v, _, _ := spduLI(b[1:]); return v }

// HeaderLen returns the octets of SI, LI and the parameter field.
func (b SPDU) HeaderLen() int { v, n, _ := spduLI(b[1:]); return 1 + n + v }

// Params returns the parameter field (aliasing b).
func (b SPDU) Params() []byte { _, n, _ := spduLI(b[1:]); return b[1+n : b.HeaderLen()] }

// UserInfo returns what follows the parameter field (aliasing b).
func (b SPDU) UserInfo() []byte { return b[b.HeaderLen():] }

// Param returns the value of the first top-level unit with code.
func (b SPDU) Param(code uint8) ([]byte, bool) { return SESUnit(b.Params(), code) }

// SESUnit returns the value of the first unit with code in p, a
// sequence of PI/PGI units (a parameter field or a group's value).
func SESUnit(p []byte, code uint8) ([]byte, bool) {
	for len(p) > 0 {
		li, n, ok := spduLI(p[1:])
		if !ok || 1+n+li > len(p) {
			return nil, false
		}
		if p[0] == code {
			return p[1+n : 1+n+li], true
		}
		p = p[1+n+li:]
	}
	return nil, false
}

// AppendSESUnit appends a PI or PGI unit with value (the long LI form
// when it is longer than 254 octets).
func AppendSESUnit(p []byte, code uint8, value ...byte) []byte {
	if len(value) > SESMaxShortLI {
		p = append(p, code, sesLongLI, byte(len(value)>>8), byte(len(value)))
	} else {
		p = append(p, code, byte(len(value)))
	}
	return append(p, value...)
}

// SPDUHeaderLen returns the octets of an SPDU with a parameter field of
// n octets, before its user information.
func SPDUHeaderLen(n int) int {
	if n > SESMaxShortLI {
		return 4 + n
	}
	return 2 + n
}

// PutSPDU writes SI, LI and the parameter field into b, which must hold
// SPDUHeaderLen(len(params)) octets, and returns how many it wrote.
func PutSPDU(b []byte, si uint8, params []byte) int {
	b[0] = si
	o := 2
	if len(params) > SESMaxShortLI {
		b[1] = sesLongLI
		binary.BigEndian.PutUint16(b[2:], uint16(len(params)))
		o = 4
	} else {
		b[1] = byte(len(params))
	}
	return o + copy(b[o:], params)
}

// SPDUs splits a TSDU into its SPDUs: each SPDU's header, and the last
// one's user information after it. ok is false when one does not parse.
// A TSDU holds at most two here (a category 0 SPDU, then one of
// category 1 or 2).
func SPDUs(tsdu []byte) (first, second SPDU, ok bool) {
	first = SPDU(tsdu)
	if !first.IsValid() {
		return nil, nil, false
	}
	if first.SI() == SPDUGiveTokens || first.SI() == SPDUPleaseTokens {
		// Category 0: another SPDU follows if anything does.
		rest := tsdu[first.HeaderLen():]
		if len(rest) == 0 {
			return first, nil, true
		}
		second = SPDU(rest)
		if !second.IsValid() {
			return nil, nil, false
		}
		return first[:first.HeaderLen()], second, true
	}
	return first, nil, true
}
