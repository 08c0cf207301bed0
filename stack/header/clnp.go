package header

import "encoding/binary"

// CLNP header (ISO 8473-1:1998 clause 7, "Structure and encoding of
// PDUs"; BSD netiso clnp.h; Wireshark packet-clnp.c).
//
//	octet
//	  0   +-------------------------------+
//	      | Network layer protocol id 0x81|  fixed part
//	  1   | Length indicator (header)     |
//	  2   | Version/protocol id ext. 0x01 |
//	  3   | Lifetime (units of 500 ms)    |
//	  4   | SP | MS | E/R |    type      |
//	  5   | Segment length (2 octets)     |
//	  7   | Checksum (2 octets)           |
//	  9   +-------------------------------+
//	      | Destination address length    |  address part
//	      | Destination address (NSAP)    |
//	      | Source address length         |
//	      | Source address (NSAP)         |
//	      +-------------------------------+
//	      | Data unit identifier (2)      |  segmentation part,
//	      | Segment offset (2)            |  present iff SP = 1
//	      | Total length (2)              |
//	      +-------------------------------+
//	      | Options: code, length, value  |  up to the length
//	      | ...                           |  indicator
//	      +-------------------------------+
//	      | Data                          |  up to the segment length
//
// The segment length counts the whole NPDU, header and data. The checksum
// (Fletcher, see fletcher.go) covers the header only; 0x0000 means it is
// not used. Segment offsets and total lengths count octets of the data of
// the original, unsegmented PDU; every segment but the last carries a
// multiple of 8 octets (clause 6.8).
//
// The inactive subset (clause 6.2.2) is a single octet, NLPID 0x00, in
// place of the whole header, when source and destination are on one
// subnetwork and no network-layer function is needed.
const (
	clnpNLPID      = 0
	clnpLI         = 1
	clnpVersion    = 2
	clnpLifetime   = 3
	clnpTypeFlags  = 4
	clnpSegLen     = 5
	clnpChecksum   = 7
	clnpAddrPart   = 9
	clnpSegPartLen = 6
)

// CLNP constants.
const (
	// CLNPNLPID is the protocol identifier of the full protocol.
	CLNPNLPID = 0x81
	// CLNPInactiveNLPID is the one-octet header of the inactive subset.
	CLNPInactiveNLPID = 0x00
	// CLNPVersion is the version/protocol identifier extension.
	CLNPVersion = 0x01
	// CLNPFixedLen is the length of the fixed part.
	CLNPFixedLen = 9
	// CLNPMaxAddrLen is the longest NSAP address (ISO 8348 annex A).
	CLNPMaxAddrLen = 20
	// CLNPMaxHeaderLen is the largest length indicator.
	CLNPMaxHeaderLen = 254
	// CLNPSegmentUnit is the unit every non-final segment's data is a
	// multiple of.
	CLNPSegmentUnit = 8
	// CLNPLifetimeUnit is the lifetime field's unit, in milliseconds.
	CLNPLifetimeUnitMS = 500
	// CLNPChecksumPos is the 0-based position of the first checksum octet.
	CLNPChecksumPos = clnpChecksum
)

// CLNP PDU types (clause 7.2.6).
const (
	CLNPTypeER  = 0x01 // error report
	CLNPTypeDT  = 0x1C // data
	CLNPTypeMD  = 0x1D // multicast data
	CLNPTypeERQ = 0x1E // echo request
	CLNPTypeERP = 0x1F // echo response
)

// CLNP flags in the type octet.
const (
	CLNPFlagSP = 0x80 // segmentation permitted
	CLNPFlagMS = 0x40 // more segments
	CLNPFlagER = 0x20 // error report requested on discard
	clnpType   = 0x1F
)

// CLNP option codes (clause 7.5).
const (
	CLNPOptPadding       = 0xCC
	CLNPOptSecurity      = 0xC5
	CLNPOptSourceRoute   = 0xC8
	CLNPOptRecordRoute   = 0xCB
	CLNPOptQoS           = 0xC3
	CLNPOptPriority      = 0xCD
	CLNPOptReasonDiscard = 0xC1 // ER only: reason code, error location
)

// Reasons for discard carried in an ER's 0xC1 option (clause 7.9.5,
// table 10). The high nibble is the class.
const (
	CLNPReasonUnspecified     = 0x00
	CLNPReasonProcedure       = 0x01
	CLNPReasonChecksum        = 0x02
	CLNPReasonCongestion      = 0x03
	CLNPReasonHeaderSyntax    = 0x04
	CLNPReasonSegNeeded       = 0x05
	CLNPReasonIncomplete      = 0x06
	CLNPReasonDuplicateOption = 0x07
	CLNPReasonDestUnreachable = 0x80
	CLNPReasonDestUnknown     = 0x81
	CLNPReasonLifetimeTransit = 0xA0
	CLNPReasonLifetimeReasm   = 0xA1
	CLNPReasonUnsupportedOpt  = 0xB0
	CLNPReasonVersion         = 0xB1
	CLNPReasonReassembly      = 0xC0
)

// CLNP is a view of a CLNP PDU starting at its NLPID. Call IsValid first.
type CLNP []byte

// CLNPSegmentation is the segmentation part.
type CLNPSegmentation struct {
	ID     uint16 // data unit identifier
	Offset uint16 // octets of the original data before this segment's
	Total  uint16 // total length of the original PDU, header included
}

// CLNPFields holds the fields of a CLNP header for Encode.
type CLNPFields struct {
	Type          uint8 // CLNPTypeDT, ...
	Flags         uint8 // CLNPFlagSP | CLNPFlagMS | CLNPFlagER
	Lifetime      uint8
	SegmentLength uint16
	Checksum      uint16 // written as given; see SetCLNPChecksum
	Dst, Src      []byte // NSAP addresses, at most 20 octets each
	Seg           CLNPSegmentation
	Options       []byte // encoded options, copied as they are
}

// CLNPHeaderLen returns the header length f encodes to: the length
// indicator.
func CLNPHeaderLen(f *CLNPFields) int {
	n := CLNPFixedLen + 2 + len(f.Dst) + len(f.Src) + len(f.Options)
	if f.Flags&CLNPFlagSP != 0 {
		n += clnpSegPartLen
	}
	return n
}

// IsValid reports whether b starts with a well-formed header of a PDU of
// which pktLen octets arrived (normally len(b)): the NLPID and version
// are CLNP's, the length indicator covers the fixed, address and (if SP)
// segmentation parts and lies inside b, both addresses are at most 20
// octets, the options are well-formed code/length/value triples filling
// the rest of the header exactly, and the segment length covers the
// header and is no more than pktLen.
func (b CLNP) IsValid(pktLen int) bool {
	if len(b) < CLNPFixedLen+1 || b[clnpNLPID] != CLNPNLPID || b[clnpVersion] != CLNPVersion {
		return false
	}
	li := int(b[clnpLI])
	if li > len(b) || li > CLNPMaxHeaderLen || li < CLNPFixedLen+2 {
		return false
	}
	dl := int(b[clnpAddrPart])
	if dl > CLNPMaxAddrLen || clnpAddrPart+1+dl >= li {
		return false
	}
	sl := int(b[clnpAddrPart+1+dl])
	end := clnpAddrPart + 2 + dl + sl
	if sl > CLNPMaxAddrLen || end > li {
		return false
	}
	if b[clnpTypeFlags]&CLNPFlagSP != 0 {
		end += clnpSegPartLen
		if end > li {
			return false
		}
	}
	if !validOptions(b[end:li]) {
		return false
	}
	n := int(b.SegmentLength())
	return n >= li && n <= pktLen
}

// validOptions reports whether opts is a sequence of whole
// code/length/value triples.
func validOptions(opts []byte) bool {
	for len(opts) > 0 {
		if len(opts) < 2 || 2+int(opts[1]) > len(opts) {
			return false
		}
		opts = opts[2+int(opts[1]):]
	}
	return true
}

// HeaderLength returns the length indicator.
func (b CLNP) HeaderLength() int { return int(b[clnpLI]) }

// Lifetime returns the lifetime field (units of 500 ms).
func (b CLNP) Lifetime() uint8 { return b[clnpLifetime] }

// Type returns the PDU type (the low five bits of octet 4).
func (b CLNP) Type() uint8 { return b[clnpTypeFlags] & clnpType }

// Flags returns the SP, MS and E/R bits of octet 4.
func (b CLNP) Flags() uint8 { return b[clnpTypeFlags] &^ clnpType }

// SegmentationPermitted reports SP.
func (b CLNP) SegmentationPermitted() bool { return b[clnpTypeFlags]&CLNPFlagSP != 0 }

// MoreSegments reports MS.
func (b CLNP) MoreSegments() bool { return b[clnpTypeFlags]&CLNPFlagMS != 0 }

// ErrorReport reports E/R: the sender wants an ER if the PDU is discarded.
func (b CLNP) ErrorReport() bool { return b[clnpTypeFlags]&CLNPFlagER != 0 }

// SegmentLength returns the segment length: header and data octets.
func (b CLNP) SegmentLength() uint16 { return binary.BigEndian.Uint16(b[clnpSegLen:]) }

// Checksum returns the checksum field; 0 means not used.
func (b CLNP) Checksum() uint16 { return binary.BigEndian.Uint16(b[clnpChecksum:]) }

// Dst returns the destination NSAP address (aliasing b).
func (b CLNP) Dst() []byte {
	dl := int(b[clnpAddrPart])
	return b[clnpAddrPart+1 : clnpAddrPart+1+dl]
}

func (b CLNP) srcOff() int { return clnpAddrPart + 1 + int(b[clnpAddrPart]) }

// Src returns the source NSAP address (aliasing b).
func (b CLNP) Src() []byte {
	o := b.srcOff()
	return b[o+1 : o+1+int(b[o])]
}

// segOff returns the offset of the segmentation part (or the options when
// SP is clear).
func (b CLNP) segOff() int { o := b.srcOff(); return o + 1 + int(b[o]) }

// Segmentation returns the segmentation part; ok is false when SP is
// clear and there is none.
func (b CLNP) Segmentation() (s CLNPSegmentation, ok bool) {
	if !b.SegmentationPermitted() {
		return s, false
	}
	o := b.segOff()
	return CLNPSegmentation{
		ID:     binary.BigEndian.Uint16(b[o:]),
		Offset: binary.BigEndian.Uint16(b[o+2:]),
		Total:  binary.BigEndian.Uint16(b[o+4:]),
	}, true
}

// Options returns the encoded options (aliasing b).
func (b CLNP) Options() []byte {
	o := b.segOff()
	if b.SegmentationPermitted() {
		o += clnpSegPartLen
	}
	return b[o:b.HeaderLength()]
}

// Option returns the value of the first option with code, if present.
func (b CLNP) Option(code byte) ([]byte, bool) {
	opts := b.Options()
	for len(opts) >= 2 && 2+int(opts[1]) <= len(opts) {
		n := int(opts[1])
		if opts[0] == code {
			return opts[2 : 2+n], true
		}
		opts = opts[2+n:]
	}
	return nil, false
}

// Payload returns the data after the header, up to the segment length or
// the end of the view.
func (b CLNP) Payload() []byte {
	end := min(int(b.SegmentLength()), len(b))
	return b[b.HeaderLength():end]
}

// SetLifetime sets the lifetime field.
func (b CLNP) SetLifetime(v uint8) { b[clnpLifetime] = v }

// SetChecksum sets the checksum field.
func (b CLNP) SetChecksum(v uint16) { binary.BigEndian.PutUint16(b[clnpChecksum:], v) }

// SetSegmentLength sets the segment length field.
func (b CLNP) SetSegmentLength(n uint16) { binary.BigEndian.PutUint16(b[clnpSegLen:], n) }

// Encode writes the header described by f; b must hold CLNPHeaderLen(f)
// octets. The checksum is written as f gives it.
func (b CLNP) Encode(f *CLNPFields) {
	li := CLNPHeaderLen(f)
	if li > CLNPMaxHeaderLen || len(f.Dst) > CLNPMaxAddrLen || len(f.Src) > CLNPMaxAddrLen {
		panic("header: CLNP header too long")
	}
	b[clnpNLPID] = CLNPNLPID
	b[clnpLI] = byte(li)
	b[clnpVersion] = CLNPVersion
	b[clnpLifetime] = f.Lifetime
	b[clnpTypeFlags] = f.Flags&^clnpType | f.Type&clnpType
	b.SetSegmentLength(f.SegmentLength)
	b.SetChecksum(f.Checksum)
	o := clnpAddrPart
	b[o] = byte(len(f.Dst))
	o += 1 + copy(b[o+1:], f.Dst)
	b[o] = byte(len(f.Src))
	o += 1 + copy(b[o+1:], f.Src)
	if f.Flags&CLNPFlagSP != 0 {
		binary.BigEndian.PutUint16(b[o:], f.Seg.ID)
		binary.BigEndian.PutUint16(b[o+2:], f.Seg.Offset)
		binary.BigEndian.PutUint16(b[o+4:], f.Seg.Total)
		o += clnpSegPartLen
	}
	copy(b[o:li], f.Options)
}

// CalculateChecksum returns the checksum field value for the header as it
// stands (its checksum octets taken as zero).
func (b CLNP) CalculateChecksum() uint16 {
	x, y := FletcherChecksum(b[:b.HeaderLength()], clnpChecksum)
	return uint16(x)<<8 | uint16(y)
}

// IsChecksumValid reports whether the header passes its checksum; a
// checksum of 0 (not used) passes.
func (b CLNP) IsChecksumValid() bool {
	return b.Checksum() == 0 || FletcherValid(b[:b.HeaderLength()])
}
