package ne2000

// I/O map of an NE2000 card (docs/reference/ne2000.md sec. 1):
//
//	off        use
//	0x00-0x0F  DP8390 registers, page selected by CR.PS1:PS0
//	0x10-0x17  data port: window into the remote-DMA engine (16-bit in word mode)
//	0x18-0x1F  reset port: a read starts a board reset, a write ends it
const (
	RegCR       = 0x00 // command register, on every page
	RegDataPort = 0x10
	RegReset    = 0x1F

	dataPortEnd  = 0x18 // first offset after the data port's decode
	resetPortEnd = 0x20

	// Size is the register window: 32 I/O ports.
	Size = 0x20
)

// Page 0 registers (docs/reference/ne2000.md sec. 2; National Semiconductor DP8390D data
// sheet, "Register Descriptions"; FreeBSD if_edreg.h). Several offsets mean
// one register when read and another when written.
const (
	P0CLDA0  = 0x01 // R: current local DMA address, low
	P0PSTART = 0x01 // W: page start (first ring page)
	P0CLDA1  = 0x02 // R: current local DMA address, high
	P0PSTOP  = 0x02 // W: page stop (last ring page + 1)
	P0BNRY   = 0x03 // R/W: boundary pointer
	P0TSR    = 0x04 // R: transmit status
	P0TPSR   = 0x04 // W: transmit page start
	P0NCR    = 0x05 // R: number of collisions
	P0TBCR0  = 0x05 // W: transmit byte count, low
	P0FIFO   = 0x06 // R: FIFO (loopback diagnostics)
	P0TBCR1  = 0x06 // W: transmit byte count, high
	P0ISR    = 0x07 // R/W1C: interrupt status
	P0CRDA0  = 0x08 // R: current remote DMA address, low
	P0RSAR0  = 0x08 // W: remote start address, low
	P0CRDA1  = 0x09 // R: current remote DMA address, high
	P0RSAR1  = 0x09 // W: remote start address, high
	P0RBCR0  = 0x0A // W: remote byte count, low (R: reserved)
	P0RBCR1  = 0x0B // W: remote byte count, high (R: reserved)
	P0RSR    = 0x0C // R: receive status
	P0RCR    = 0x0C // W: receive configuration
	P0CNTR0  = 0x0D // R: frame-alignment error tally (reading clears)
	P0TCR    = 0x0D // W: transmit configuration
	P0CNTR1  = 0x0E // R: CRC error tally (reading clears)
	P0DCR    = 0x0E // W: data configuration
	P0CNTR2  = 0x0F // R: missed packet tally (reading clears)
	P0IMR    = 0x0F // W: interrupt mask
)

// Page 1 registers: station address, current page, multicast filter (R/W).
const (
	P1PAR0 = 0x01 // PAR0..PAR5 at 0x01..0x06
	P1CURR = 0x07
	P1MAR0 = 0x08 // MAR0..MAR7 at 0x08..0x0F
)

// Page 2 registers: diagnostic read-back of write-only page 0 registers.
const (
	P2PSTART = 0x01 // R (W: CLDA0)
	P2PSTOP  = 0x02 // R (W: CLDA1)
	P2RNPP   = 0x03 // remote next packet pointer
	P2TPSR   = 0x04 // R
	P2LNPP   = 0x05 // local next packet pointer
	P2ACU    = 0x06 // address counter, upper
	P2ACL    = 0x07 // address counter, lower
	P2RCR    = 0x0C // R
	P2TCR    = 0x0D // R
	P2DCR    = 0x0E // R
	P2IMR    = 0x0F // R
)

// CR bits (data sheet "Command Register"; docs/reference/ne2000.md sec. 3).
const (
	CrSTP  = 0x01 // stop: software reset, go offline
	CrSTA  = 0x02 // start
	CrTXP  = 0x04 // transmit the frame at TPSR/TBCR; cleared when done
	CrRD0  = 0x08 // remote DMA command, 3 bits
	CrRD1  = 0x10
	CrRD2  = 0x20
	CrPS0  = 0x40 // page select, 2 bits
	CrPS1  = 0x80
	crRD   = CrRD0 | CrRD1 | CrRD2
	crPage = CrPS0 | CrPS1

	// Values of the RD field.
	RDNotAllowed = 0x00
	RDRead       = CrRD0
	RDWrite      = CrRD1
	RDSendPacket = CrRD0 | CrRD1
	RDAbort      = CrRD2 // 1xx: abort or complete
)

// ISR and IMR bits (same positions; IMR has no bit 7).
const (
	IsrPRX = 0x01 // frame received OK
	IsrPTX = 0x02 // frame transmitted OK
	IsrRXE = 0x04 // receive error: CRC, alignment, missed
	IsrTXE = 0x08 // transmit error: aborted, FIFO underrun
	IsrOVW = 0x10 // receive ring overwrite warning
	IsrCNT = 0x20 // a tally counter's MSB is set
	IsrRDC = 0x40 // remote DMA complete
	IsrRST = 0x80 // stopped, or ring overflow; read-only status, never interrupts

	isrIRQ = 0x7F // the bits that drive the interrupt line
)

// DCR bits.
const (
	DcrWTS = 0x01 // word transfers
	DcrBOS = 0x02 // byte order: 1 = big-endian (68000) hosts
	DcrLAS = 0x04 // 32-bit addresses (not on an NE2000)
	DcrLS  = 0x08 // 1 = normal operation, 0 = loopback select
	DcrAR  = 0x10 // auto-initialise remote (send packet)
	DcrFT0 = 0x20 // FIFO threshold, 2 bits
	DcrFT1 = 0x40
)

// TCR bits.
const (
	TcrCRC  = 0x01 // inhibit the FCS
	TcrLB0  = 0x02 // loopback mode, 2 bits: 01 internal, 1x external
	TcrLB1  = 0x04
	TcrATD  = 0x08 // auto transmit disable
	TcrOFST = 0x10 // collision offset
	tcrLB   = TcrLB0 | TcrLB1
	tcrMask = 0x1F
)

// RCR bits.
const (
	RcrSEP  = 0x01 // save errored frames
	RcrAR   = 0x02 // accept runts
	RcrAB   = 0x04 // accept broadcast
	RcrAM   = 0x08 // accept multicast that hits MAR0-7
	RcrPRO  = 0x10 // accept any physical (unicast) address
	RcrMON  = 0x20 // monitor: check and count, do not store
	rcrMask = 0x3F
)

// TSR bits (bit 1 is reserved on the DP8390).
const (
	TsrPTX = 0x01
	TsrCOL = 0x04
	TsrABT = 0x08
	TsrCRS = 0x10
	TsrFU  = 0x20
	TsrCDH = 0x40
	TsrOWC = 0x80
)

// RSR bits, also byte 0 of each receive header.
const (
	RsrPRX = 0x01
	RsrCRC = 0x02
	RsrFAE = 0x04
	RsrFO  = 0x08
	RsrMPA = 0x10
	RsrPHY = 0x20 // 1 = multicast or broadcast destination
	RsrDIS = 0x40
	RsrDFR = 0x80
)

// Card (local) address space (docs/reference/ne2000.md sec. 4, 8): 256-byte pages.
//
//	0x0000-0x001F  station address PROM, each byte doubled
//	0x0020-0x3FFF  not decoded (reads 0xFF)
//	0x4000-0x7FFF  16 KiB packet RAM, pages 0x40-0x7F
//	0x8000-0xFFFF  not decoded
const (
	PageSize  = 256
	PromSize  = 32
	RAMStart  = 0x4000
	RAMEnd    = 0x8000
	RAMPages  = (RAMEnd - RAMStart) / PageSize
	FirstPage = RAMStart / PageSize // 0x40
	EndPage   = RAMEnd / PageSize   // 0x80, a valid PSTOP

	// HeaderSize is the receive header at the start of each stored frame:
	// status (RSR), next page, byte count low, byte count high. The count
	// includes the header and the stored FCS.
	HeaderSize = 4

	// PromSignature is the byte at PROM offsets 14 and 15 of a genuine
	// NE2000 ('W'); Linux ne.c checks it to tell an NE2000 from an NE1000.
	PromSignature = 0x57
)

// Tally counters saturate at 192 rather than wrapping (data sheet, "Tally
// Counters"); ISR.CNT is set when a counter's MSB becomes set.
const counterMax = 0xC0

// Ethernet sizes (IEEE 802.3 clause 4; docs/reference/ne2000.md sec. 13).
const (
	minFrameNoFCS = 60
	fcsBytes      = 4
	minFrame      = minFrameNoFCS + fcsBytes
)
