// Package dp8390 is the National Semiconductor DP8390 (the NE2000's
// network interface controller) as its drivers see it: register offsets
// from the card's I/O base and the bits they use, the header every driver
// of the chip shares, as Linux's drivers/net/ethernet/8390/8390.h is
// (docs/reference/ne2000.md sections 1-3). The NE2000 kernel driver and
// the DOS packet driver both program the chip through these names.
// Layer: a driver header: constants, and the register sequences every
// driver of the chip runs (Chip).
package dp8390

import "simkron/stack/header"

// Register offsets (page 0 unless noted) and sizes.
const (
	RegCmd     = 0x00 // CR, every page
	RegPStart  = 0x01 // page 0 write
	RegPStop   = 0x02
	RegBnry    = 0x03
	RegTPSR    = 0x04 // write; TSR on read
	RegTSR     = 0x04
	RegTBCR0   = 0x05
	RegTBCR1   = 0x06
	RegISR     = 0x07
	RegRSAR0   = 0x08
	RegRSAR1   = 0x09
	RegRBCR0   = 0x0A
	RegRBCR1   = 0x0B
	RegRCR     = 0x0C
	RegTCR     = 0x0D
	RegCntr0   = 0x0D // read: frame-alignment errors
	RegDCR     = 0x0E
	RegCntr1   = 0x0E // read: CRC errors
	RegIMR     = 0x0F
	RegCntr2   = 0x0F // read: missed frames
	RegPAR0    = 0x01 // page 1
	RegCurr    = 0x07 // page 1
	RegMAR0    = 0x08 // page 1
	RegData    = 0x10 // remote-DMA data port
	RegReset   = 0x1F
	IOExtent   = 0x20
	PageSize   = 256
	CardMemLo  = 0x40 // first page of packet RAM (NE2000: 16 KiB at 0x4000)
	CardMemHi  = 0x80 // page after the last
	HdrBytes   = 4    // receive header: status, next page, count
	MaxRxLoops = 9    // frames removed per receive call (Linux ei_receive)
	MaxIntLoop = 12   // interrupt-handler rounds (Linux MAX_SERVICE)
)

// The Ethernet frame as the chip's drivers size it (stack/header's wire
// constants under the names the drivers use).
const (
	MinFrame = header.EthernetMinFrameLen // without FCS
	EtherHdr = header.EthernetHeaderLen   // destination, source, type
	FcsBytes = header.EthernetFCSLen      // frame check sequence, appended by the chip
)

// CR bits.
const (
	CrStop     = 0x01
	CrStart    = 0x02
	CrTrans    = 0x04
	CrRRead    = 0x08
	CrRWrite   = 0x10
	CrNoDMA    = 0x20
	CrPage0    = 0x00
	CrPage1    = 0x40
	CrPageMask = 0xC0
)

// ISR and IMR bits.
const (
	IsrRx      = 0x01
	IsrTx      = 0x02
	IsrRxErr   = 0x04
	IsrTxErr   = 0x08
	IsrOver    = 0x10
	IsrCounter = 0x20
	ISRRDC     = 0x40
	IsrReset   = 0x80
	IMRAll     = 0x3F // everything but RDC, which the driver polls
)

// Configuration values (reference section 3).
const (
	DcrWord     = 0x49 // word transfers, normal operation, 8-byte FIFO threshold
	DcrByte     = 0x48 // byte transfers, for the PROM read
	TcrNormal   = 0x00
	TcrLoopback = 0x02 // internal loopback while initialising or recovering
	RcrMonitor  = 0x20
	RcrAB       = 0x04
	RcrAM       = 0x08
	RcrPRO      = 0x10
	RsrOK       = 0x01
	TsrOK       = 0x01
	TsrCol      = 0x04
	TsrAbort    = 0x08
)
