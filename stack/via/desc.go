package via

import "encoding/binary"

// A descriptor in registered memory, VIA 1.0's layout (little-endian host
// structs; docs/reference/via.md sec. 2), 64-byte aligned:
//
//	control segment (32 bytes)
//	 0  Next           8   next descriptor in the work queue (the VIPL's link)
//	 8  NextHandle     4   its memory handle
//	12  SegCount       2   data segments that follow
//	14  Control        2   op (bits 0-1), immediate data (0x4), queue fence (0x8)
//	16  Reserved       4
//	20  ImmediateData  4   sent with the message when Control has 0x4
//	24  Length         4   bytes of the message (written by the provider)
//	28  Status         4   written by the provider: DONE, errors, op
//	data segment i (16 bytes) at 32 + 16·i
//	 0  Address        8   start of a buffer in registered memory
//	 8  MemHandle      4   the region it lies in
//	12  Length         4   its bytes
const (
	DescAlign       = 64 // VIP_DESCRIPTOR_ALIGNMENT
	ControlSegSize  = 32
	DataSegSize     = 16
	offNext         = 0
	offNextHandle   = 8
	offSegCount     = 12
	offControl      = 14
	offImmediate    = 20
	offLength       = 24
	offStatus       = 28
	segOffAddr      = 0
	segOffHandle    = 8
	segOffLength    = 12
	controlReserved = 0xFFF0
)

// Control field bits.
const (
	ControlOpSendRecv  = 0x0000
	ControlOpRDMAWrite = 0x0001
	ControlOpRDMARead  = 0x0002
	ControlOpMask      = 0x0003
	ControlImmediate   = 0x0004
	ControlQueueFence  = 0x0008
)

// Status field bits.
const (
	StatusDone            = 0x00000001
	StatusFormatError     = 0x00000002
	StatusProtectionError = 0x00000004
	StatusLengthError     = 0x00000008
	StatusPartialError    = 0x00000010
	StatusFlushed         = 0x00000020
	StatusTransportError  = 0x00000040
	StatusRDMAProtError   = 0x00000080
	StatusRemoteDescError = 0x00000100
	StatusErrorMask       = 0x000001FE
	StatusOpSend          = 0x00000000
	StatusOpReceive       = 0x00010000
	StatusOpMask          = 0x00070000
	StatusImmediate       = 0x00080000
)

// Segment is a data segment.
type Segment struct {
	Addr   uint64
	Handle MemHandle
	Length uint32
}

// Descriptor is a descriptor's fields, for programs that build them.
type Descriptor struct {
	Next       uint64
	NextHandle MemHandle
	Control    uint16
	Immediate  uint32
	Length     uint32
	Status     uint32
	Segs       []Segment
}

// Size returns the bytes the descriptor takes in memory.
func (d *Descriptor) Size() int { return ControlSegSize + DataSegSize*len(d.Segs) }

// Encode writes d into b (at least Size bytes), SegCount from len(Segs).
func (d *Descriptor) Encode(b []byte) {
	binary.LittleEndian.PutUint64(b[offNext:], d.Next)
	binary.LittleEndian.PutUint32(b[offNextHandle:], uint32(d.NextHandle))
	binary.LittleEndian.PutUint16(b[offSegCount:], uint16(len(d.Segs)))
	binary.LittleEndian.PutUint16(b[offControl:], d.Control)
	binary.LittleEndian.PutUint32(b[16:], 0)
	binary.LittleEndian.PutUint32(b[offImmediate:], d.Immediate)
	binary.LittleEndian.PutUint32(b[offLength:], d.Length)
	binary.LittleEndian.PutUint32(b[offStatus:], d.Status)
	for i, s := range d.Segs {
		o := ControlSegSize + DataSegSize*i
		binary.LittleEndian.PutUint64(b[o+segOffAddr:], s.Addr)
		binary.LittleEndian.PutUint32(b[o+segOffHandle:], uint32(s.Handle))
		binary.LittleEndian.PutUint32(b[o+segOffLength:], s.Length)
	}
}

// DecodeControl reads a control segment (32 bytes); Segs stays empty and
// the segment count is returned apart.
func DecodeControl(b []byte) (d Descriptor, segCount int) {
	d.Next = binary.LittleEndian.Uint64(b[offNext:])
	d.NextHandle = MemHandle(binary.LittleEndian.Uint32(b[offNextHandle:]))
	segCount = int(binary.LittleEndian.Uint16(b[offSegCount:]))
	d.Control = binary.LittleEndian.Uint16(b[offControl:])
	d.Immediate = binary.LittleEndian.Uint32(b[offImmediate:])
	d.Length = binary.LittleEndian.Uint32(b[offLength:])
	d.Status = binary.LittleEndian.Uint32(b[offStatus:])
	return d, segCount
}

// decodeSegment reads data segment i of the segment bytes b.
func decodeSegment(b []byte, i int) Segment {
	o := DataSegSize * i
	return Segment{
		Addr:   binary.LittleEndian.Uint64(b[o+segOffAddr:]),
		Handle: MemHandle(binary.LittleEndian.Uint32(b[o+segOffHandle:])),
		Length: binary.LittleEndian.Uint32(b[o+segOffLength:]),
	}
}
