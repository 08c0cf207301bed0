package simoseth

// Register window. SimOS's device table (docs/reference/inet-notes.md
// sec. 8, the seed's Table 1) places the Ethernet NIC at 0xA0E02000 with a
// window of 2852 bytes in the uncached kseg1 segment; the sources do not
// give the register layout, so the one below is simkron's own, in the
// manner of the descriptor-ring controllers of the period (DEC 21140
// "Tulip", whose ownership bit and poll-demand registers it borrows, and
// Intel's 8254x): 32-bit little-endian registers at the bottom of the
// window, the rest reserved.
//
//	off    name      access  meaning
//	0x000  CTRL      R/W     TXEN, RXEN, PROM, BCAST; RESET (write 1, self-clearing)
//	0x004  ISR       R/W1C   interrupt causes (below); write 1 to clear
//	0x008  IMR       R/W     interrupt mask: a cause interrupts when its bit is set here
//	0x00C  TXBASE    R/W     physical address of the transmit ring (16-byte aligned)
//	0x010  TXCOUNT   R/W     descriptors in the transmit ring (1..4096)
//	0x014  TXPOLL    W       transmit poll demand: look at the ring again
//	0x018  RXBASE    R/W     physical address of the receive ring (16-byte aligned)
//	0x01C  RXCOUNT   R/W     descriptors in the receive ring (1..4096)
//	0x020  RXPOLL    W       receive poll demand: descriptors were returned
//	0x024  TXINDEX   R       the transmit descriptor the card looks at next
//	0x028  RXINDEX   R       the receive descriptor the card fills next
//	0x02C  MACLO     R/W     station address bytes 0-3 (byte 0 in bits 7:0)
//	0x030  MACHI     R/W     station address bytes 4-5 in bits 15:0
//	0x034  MISSED    R       frames dropped for want of a descriptor or of
//	                         card buffer space since the last read (reading clears)
//	0x038  STATE     R       transmit state in bits 1:0, receive state in bits 9:8
//	0x03C-0xB23              reserved: reads 0, writes ignored (a guest error)
//
// TXBASE/TXCOUNT (RXBASE/RXCOUNT) may be written only while TXEN (RXEN)
// is clear; writing either resets the ring's index to 0.
const (
	RegCtrl    = 0x000
	RegISR     = 0x004
	RegIMR     = 0x008
	RegTxBase  = 0x00C
	RegTxCount = 0x010
	RegTxPoll  = 0x014
	RegRxBase  = 0x018
	RegRxCount = 0x01C
	RegRxPoll  = 0x020
	RegTxIndex = 0x024
	RegRxIndex = 0x028
	RegMACLo   = 0x02C
	RegMACHi   = 0x030
	RegMissed  = 0x034
	RegState   = 0x038

	// Size is the register window of SimOS's Ethernet device (Table 1:
	// 2852 bytes at 0xA0E02000).
	Size = 2852
)

// CTRL bits.
const (
	CtrlTxEn  = 1 << 0  // transmitter on: the card polls the transmit ring
	CtrlRxEn  = 1 << 1  // receiver on: frames are stored through the receive ring
	CtrlProm  = 1 << 2  // accept every unicast address
	CtrlBcast = 1 << 3  // accept broadcast (multicast is not filtered: see the package doc)
	CtrlReset = 1 << 31 // write 1: reset the card; reads as 0

	ctrlMask = CtrlTxEn | CtrlRxEn | CtrlProm | CtrlBcast
)

// ISR and IMR bits.
const (
	IntTx      = 1 << 0 // a frame whose last descriptor asked for it (DescIOC) is in the card
	IntRx      = 1 << 1 // a received frame's descriptors were handed back
	IntRxNoBuf = 1 << 2 // the receive ring ran out; the receiver suspended until RXPOLL
	IntErr     = 1 << 3 // a descriptor or DMA error (details in the descriptors)

	intMask = IntTx | IntRx | IntRxNoBuf | IntErr
)

// Engine states in STATE.
const (
	StateStopped   = 0 // disabled
	StateRunning   = 1 // working through the ring
	StateSuspended = 2 // transmit: ring empty, waiting for TXPOLL; receive: out of descriptors
	StateWaiting   = 3 // transmit: the next frame does not fit the card's transmit buffer yet
)

// Descriptor format: 16 bytes, little-endian, 16-byte aligned, in host
// memory; the rings are arrays of them.
//
//	off  word     written by  bits
//	0    STATUS   both        31 OWN: 1 = the card's, 0 = the driver's
//	                          30 ERR: the card found a problem (27-24 say which)
//	                          29 FIRST, 28 LAST (receive: the frame's first/last buffer)
//	                          27 ELEN: bad length (transmit frame too short or
//	                             too long; receive buffer of length 0)
//	                          26 EDMA: the buffer lies outside memory
//	                          25 EFMT: transmit descriptors not a FIRST..LAST chain
//	                          15-0 receive: bytes stored in this buffer
//	4    CONTROL  driver      31 IOC: interrupt when the frame is in (transmit)
//	                          29 FIRST, 28 LAST (transmit: the frame's first/last piece)
//	                          15-0 buffer length in bytes
//	8    BUFFER   driver      physical address of the buffer
//	12   -        -           reserved (0)
//
// A driver hands a descriptor to the card by setting OWN last, after the
// other words; the card clears OWN when it has finished with it.
// Transmit: a frame is one or more descriptors, FIRST on the first and
// LAST on the last (gather); the card reads the pieces, pads a frame
// shorter than 60 bytes and appends the FCS. Receive: a frame fills as
// many consecutive descriptors as its length needs, without the FCS.
const (
	DescSize = 16

	DescStatus  = 0
	DescControl = 4
	DescBuffer  = 8

	DescOwn   = 1 << 31
	DescErr   = 1 << 30
	DescFirst = 1 << 29
	DescLast  = 1 << 28
	DescELen  = 1 << 27
	DescEDMA  = 1 << 26
	DescEFmt  = 1 << 25
	DescIOC   = 1 << 31 // in CONTROL

	DescLenMask = 0xFFFF
)

// MaxRing is the largest TXCOUNT/RXCOUNT.
const MaxRing = 4096

// maxChain bounds the descriptors of one transmit frame.
const maxChain = 64

// Ethernet sizes (IEEE 802.3 clause 4).
const (
	minFrameNoFCS = 60
	fcsBytes      = 4
	etherHdr      = 14
)
