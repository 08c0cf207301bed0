package pktdrv

// The DP8390 as the driver sees it: register offsets from the card's I/O
// base and the bits it uses (Linux drivers/net/ethernet/8390/8390.h;
// shared reference ne2000.md sections 1–3). The packet driver keeps its own copy
// of these, as a real driver does: it knows the chip only from its data
// sheet.
const (
	regCmd     = 0x00 // CR, every page
	regPStart  = 0x01 // page 0 write
	regPStop   = 0x02
	regBnry    = 0x03
	regTPSR    = 0x04 // write; TSR on read
	regTSR     = 0x04
	regTBCR0   = 0x05
	regTBCR1   = 0x06
	regISR     = 0x07
	regRSAR0   = 0x08
	regRSAR1   = 0x09
	regRBCR0   = 0x0A
	regRBCR1   = 0x0B
	regRCR     = 0x0C
	regTCR     = 0x0D
	regCntr0   = 0x0D // read: frame-alignment errors
	regDCR     = 0x0E
	regCntr1   = 0x0E // read: CRC errors
	regIMR     = 0x0F
	regCntr2   = 0x0F // read: missed frames
	regPAR0    = 0x01 // page 1
	regCurr    = 0x07 // page 1
	regMAR0    = 0x08 // page 1
	regData    = 0x10 // remote-DMA data port
	regReset   = 0x1F
	ioExtent   = 0x20
	pageSize   = 256
	cardMemLo  = 0x40 // first page of packet RAM (NE2000: 16 KiB at 0x4000)
	cardMemHi  = 0x80 // page after the last
	hdrBytes   = 4    // receive header: status, next page, count
	minFrame   = 60   // without FCS
	etherHdr   = 14   // destination, source, type
	fcsBytes   = 4    // frame check sequence, appended by the chip
	maxRxLoops = 9    // frames removed per receive call (Linux ei_receive)
	maxIntLoop = 12   // interrupt-handler rounds (Linux MAX_SERVICE)
)

// CR bits.
const (
	crStop     = 0x01
	crStart    = 0x02
	crTrans    = 0x04
	crRRead    = 0x08
	crRWrite   = 0x10
	crNoDMA    = 0x20
	crPage0    = 0x00
	crPage1    = 0x40
	crPageMask = 0xC0
)

// ISR and IMR bits.
const (
	isrRx      = 0x01
	isrTx      = 0x02
	isrRxErr   = 0x04
	isrTxErr   = 0x08
	isrOver    = 0x10
	isrCounter = 0x20
	isrRDC     = 0x40
	isrReset   = 0x80
	imrAll     = 0x3F // everything but RDC, which the driver polls
)

// Configuration values (reference section 3).
const (
	dcrWord     = 0x49 // word transfers, normal operation, 8-byte FIFO threshold
	dcrByte     = 0x48 // byte transfers, for the PROM read
	tcrNormal   = 0x00
	tcrLoopback = 0x02 // internal loopback while initialising or recovering
	rcrMonitor  = 0x20
	rcrAB       = 0x04
	rcrAM       = 0x08
	rcrPRO      = 0x10
	rsrOK       = 0x01
	tsrOK       = 0x01
	tsrCol      = 0x04
	tsrAbort    = 0x08
)
