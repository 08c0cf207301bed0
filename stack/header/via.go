package header

import "encoding/binary"

// M-VIA-style frame header: VIA emulated on Ethernet
// (docs/reference/via.md sec. 4). M-VIA carries its traffic under an EtherType of its own,
// beside IP, with a header naming the connection's endpoints and where a
// fragment belongs in its message; the exact M-VIA layout is not in the
// sources, so this one is simkron's own, big-endian as on the wire.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|    Version    |     Type      |             Flags             |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|        Destination VI         |           Source VI           |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                       Message sequence                        |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                        Message length                         |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                        Fragment offset                        |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                        Immediate data                         |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|        Payload length         |           Reserved            |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|  payload (Payload length bytes; the frame may be padded) ...
//
// VIs are numbered by the host that owns them. A data frame carries the
// bytes [Fragment offset, Fragment offset + Payload length) of message
// Message sequence (numbered per connection and direction, from 0) of
// Message length bytes; the message is complete when its last byte has
// come. Connection-management frames carry a VIAConnect payload
// (request, accept) or none.
const (
	viaVersion    = 0
	viaType       = 1
	viaFlags      = 2
	viaDstVI      = 4
	viaSrcVI      = 6
	viaSeq        = 8
	viaMsgLen     = 12
	viaOffset     = 16
	viaImmediate  = 20
	viaPayloadLen = 24
	viaReserved   = 26

	// VIAHeaderLen is the length of the header.
	VIAHeaderLen = 28

	// VIAVersion is the only version.
	VIAVersion = 1

	// EtherTypeVIA is the default EtherType of VIA frames: IEEE 802's
	// local experimental EtherType 1 (the M-VIA value is not in the
	// sources; docs/reference/via.md sec. 4).
	EtherTypeVIA = 0x88B5
)

// VIA frame types.
const (
	VIATypeData        = 1 // a fragment of a message
	VIATypeConnRequest = 2 // client → server: connect to the VI waiting on the discriminator
	VIATypeConnAccept  = 3 // server → client: accepted; Source VI is the server's
	VIATypeConnReject  = 4 // server → client: rejected (or nobody waits on the discriminator)
	VIATypeDisconnect  = 5 // either way: the connection is closed
	VIATypeError       = 6 // either way: the connection is broken; Immediate data holds the reason
	viaTypeMax         = VIATypeError
)

// VIA flags.
const (
	// VIAFlagImmediate: the message carries 32 bits of immediate data
	// (in every fragment's Immediate data field).
	VIAFlagImmediate = 0x0001
	viaFlagsKnown    = VIAFlagImmediate
)

// VIA is a view of a VIA frame starting at its header (after the Ethernet
// header). Call IsValid before the getters.
type VIA []byte

// VIAFields holds the header's fields for Encode.
type VIAFields struct {
	Type       uint8
	Flags      uint16
	DstVI      uint16
	SrcVI      uint16
	Seq        uint32
	MsgLen     uint32
	Offset     uint32
	Immediate  uint32
	PayloadLen uint16
}

// IsValid reports whether b holds a well-formed header of a known version
// and type, with flags it knows, whose payload fits in b, and, for a data
// frame, whose fragment lies inside its message.
func (b VIA) IsValid() bool {
	if len(b) < VIAHeaderLen || b[viaVersion] != VIAVersion {
		return false
	}
	if t := b.Type(); t == 0 || t > viaTypeMax || b.Flags()&^viaFlagsKnown != 0 {
		return false
	}
	if int(b.PayloadLen()) > len(b)-VIAHeaderLen {
		return false
	}
	if b.Type() == VIATypeData {
		return uint64(b.Offset())+uint64(b.PayloadLen()) <= uint64(b.MsgLen())
	}
	return true
}

// Version returns the version field.
func (b VIA) Version() uint8 { return b[viaVersion] }

// Type returns the frame type.
func (b VIA) Type() uint8 { return b[viaType] }

// Flags returns the flags.
func (b VIA) Flags() uint16 { return binary.BigEndian.Uint16(b[viaFlags:]) }

// DstVI returns the receiving host's VI number.
func (b VIA) DstVI() uint16 { return binary.BigEndian.Uint16(b[viaDstVI:]) }

// SrcVI returns the sending host's VI number.
func (b VIA) SrcVI() uint16 { return binary.BigEndian.Uint16(b[viaSrcVI:]) }

// Seq returns the message sequence number.
func (b VIA) Seq() uint32 { return binary.BigEndian.Uint32(b[viaSeq:]) }

// MsgLen returns the message's length in bytes.
func (b VIA) MsgLen() uint32 { return binary.BigEndian.Uint32(b[viaMsgLen:]) }

// Offset returns where the fragment's payload lies in its message.
func (b VIA) Offset() uint32 { return binary.BigEndian.Uint32(b[viaOffset:]) }

// Immediate returns the immediate data (or an error frame's reason).
func (b VIA) Immediate() uint32 { return binary.BigEndian.Uint32(b[viaImmediate:]) }

// PayloadLen returns the payload's length.
func (b VIA) PayloadLen() uint16 { return binary.BigEndian.Uint16(b[viaPayloadLen:]) }

// Payload returns the payload (Ethernet padding excluded).
func (b VIA) Payload() []byte { return b[VIAHeaderLen : VIAHeaderLen+int(b.PayloadLen())] }

// Last reports whether a data frame holds its message's last byte.
func (b VIA) Last() bool { return uint64(b.Offset())+uint64(b.PayloadLen()) == uint64(b.MsgLen()) }

// Encode writes the header from f (version VIAVersion, reserved 0).
func (b VIA) Encode(f *VIAFields) {
	b[viaVersion] = VIAVersion
	b[viaType] = f.Type
	binary.BigEndian.PutUint16(b[viaFlags:], f.Flags)
	binary.BigEndian.PutUint16(b[viaDstVI:], f.DstVI)
	binary.BigEndian.PutUint16(b[viaSrcVI:], f.SrcVI)
	binary.BigEndian.PutUint32(b[viaSeq:], f.Seq)
	binary.BigEndian.PutUint32(b[viaMsgLen:], f.MsgLen)
	binary.BigEndian.PutUint32(b[viaOffset:], f.Offset)
	binary.BigEndian.PutUint32(b[viaImmediate:], f.Immediate)
	binary.BigEndian.PutUint16(b[viaPayloadLen:], f.PayloadLen)
	binary.BigEndian.PutUint16(b[viaReserved:], 0)
}

// VIAConnect is the payload of a connection request or accept: what the
// VIPL's VipConnectRequest and VipConnectAccept exchange.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|      Reliability level        |    Discriminator length       |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                      Max transfer size                        |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|  discriminator (Discriminator length bytes) ...
//
// Reliability level uses the VIPL's bits (1 unreliable, 2 reliable
// delivery, 4 reliable reception).
const (
	viacReliability = 0
	viacDiscLen     = 2
	viacMaxTransfer = 4

	// VIAConnectLen is the length of the fixed part.
	VIAConnectLen = 8
	// VIAMaxDiscriminator bounds the discriminator.
	VIAMaxDiscriminator = 64
)

// VIAConnect is a view of a connection payload. Call IsValid first.
type VIAConnect []byte

// VIAConnectFields holds its fields for Encode.
type VIAConnectFields struct {
	Reliability   uint16
	MaxTransfer   uint32
	Discriminator []byte
}

// IsValid reports whether b holds the fixed part and the discriminator
// its length field announces (at most VIAMaxDiscriminator bytes).
func (b VIAConnect) IsValid() bool {
	if len(b) < VIAConnectLen {
		return false
	}
	n := int(b.DiscriminatorLen())
	return n <= VIAMaxDiscriminator && n <= len(b)-VIAConnectLen
}

// Reliability returns the reliability level.
func (b VIAConnect) Reliability() uint16 { return binary.BigEndian.Uint16(b[viacReliability:]) }

// DiscriminatorLen returns the discriminator's length field.
func (b VIAConnect) DiscriminatorLen() uint16 { return binary.BigEndian.Uint16(b[viacDiscLen:]) }

// MaxTransfer returns the VI's maximum transfer size.
func (b VIAConnect) MaxTransfer() uint32 { return binary.BigEndian.Uint32(b[viacMaxTransfer:]) }

// Discriminator returns the discriminator bytes.
func (b VIAConnect) Discriminator() []byte {
	return b[VIAConnectLen : VIAConnectLen+int(b.DiscriminatorLen())]
}

// Len returns the payload's length: the fixed part and the discriminator.
func (b VIAConnect) Len() int { return VIAConnectLen + int(b.DiscriminatorLen()) }

// Encode writes f; b must hold VIAConnectLen + len(f.Discriminator) bytes.
func (b VIAConnect) Encode(f *VIAConnectFields) {
	binary.BigEndian.PutUint16(b[viacReliability:], f.Reliability)
	binary.BigEndian.PutUint16(b[viacDiscLen:], uint16(len(f.Discriminator)))
	binary.BigEndian.PutUint32(b[viacMaxTransfer:], f.MaxTransfer)
	copy(b[VIAConnectLen:], f.Discriminator)
}
