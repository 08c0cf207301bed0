package atmtaxi

// Register map of the Yes V2 in its TURBOchannel slot. Every register is
// a 32-bit word. The seed (docs/reference/atm-taxi.md sec. 4) gives the
// interface's resources — transmit and receive cell FIFOs of 76 cells, a
// token FIFO counting completely received cells, programmed I/O of
// 13-word cells, DMA in modes A and B of up to 39 cells, the interrupt
// sources — but no register layout; the offsets and bit positions below
// are this model's choice, laid out as a simple TURBOchannel option of
// the time would be: control and status words first, then the DMA engine,
// the hardware assists of the seed's section 6, and the two FIFO data
// ports last, each in a window of its own so that a string of word
// accesses can stay on one address.
//
//	0x000 CSR       R/W  control (CSR bits)
//	0x004 ISR       R    latched events; W: 1 clears (ISR bits)
//	0x008 TXSPACE   R    cells the transmit FIFO can still take (partial cell counted)
//	0x00C TOKENS    R    the token FIFO: complete cells in the receive FIFO
//	0x010 FLAGS     R    cells in the receive FIFO with the header indication flag
//	0x014 OVERFLOW  R    cells lost to a full receive FIFO since the last read (read clears)
//	0x018 HECERR    R    cells dropped for a header error since the last read (read clears)
//	0x01C PROTO     R/W  prototype header word (header insertion)
//	0x020 DMAADDR   R/W  host physical address of the next DMA
//	0x024 DMACTL    W    starts a DMA (DMACTL bits); R: the last value written
//	0x028 DMASTAT   R    DMA engine status (DMASTAT bits)
//	0x02C RXCRC     R    AAL5 check of the cell last read from the receive FIFO (RXCRC bits)
//	0x030 VCSEL     R/W  VCI whose receive context VCCTL, VCSIZE and VCBUF address
//	0x034 VCCTL     R/W  bit 0: sort this VC's cells into host memory
//	0x038 VCSIZE    R/W  size in bytes of the buffer armed next
//	0x03C VCBUF     W    arms a host buffer for the VC (four may wait); R: the current one
//	0x040 DONE      R    pops a sorted PDU's completion (DONE bits); 0: none
//	0x044 DONELEN   R    bytes stored of the completion last popped
//	0x048 DONEADDR  R    buffer of the completion last popped (0: none was used)
//	0x100 TXFIFO    W    transmit data port: 13 words a cell (12 with header insertion)
//	0x200 RXFIFO    R    receive data port: 13 words a cell
//
// Word order of a cell at the data ports and in DMA blocks: the header
// word first, as a value GFC<<28 | VPI<<20 | VCI<<4 | PT<<1 | CLP (the
// interface sends it most significant byte first and makes the HEC),
// then the 12 payload words, each sent least significant byte first, so
// that the bytes of a little-endian DECstation's memory go on the wire in
// memory order. A DMA block in memory holds the header word as the host
// stores it (a little-endian word) and the payload bytes as they are.
const (
	RegCSR      = 0x000
	RegISR      = 0x004
	RegTxSpace  = 0x008
	RegTokens   = 0x00C
	RegFlags    = 0x010
	RegOverflow = 0x014
	RegHECErr   = 0x018
	RegProto    = 0x01C
	RegDMAAddr  = 0x020
	RegDMACtl   = 0x024
	RegDMAStat  = 0x028
	RegRxCRC    = 0x02C
	RegVCSel    = 0x030
	RegVCCtl    = 0x034
	RegVCSize   = 0x038
	RegVCBuf    = 0x03C
	RegDone     = 0x040
	RegDoneLen  = 0x044
	RegDoneAddr = 0x048
	RegTxFIFO   = 0x100
	RegRxFIFO   = 0x200

	// Size is the register window.
	Size = 0x400
)

// CSR bits. The assist bits only take when the assist is fitted
// (Params); setting one that is not is a guest error and reads back 0.
const (
	CsrTxEn      = 1 << 0  // transmitter on: complete cells leave the FIFO for the line
	CsrRxEn      = 1 << 1  // receiver on: cells from the line enter the FIFO
	CsrRxIntCell = 1 << 2  // interrupt on every received cell (ISR.RxCell)
	CsrRxIntFlag = 1 << 3  // interrupt on cells with the header indication flag (ISR.RxFlag)
	CsrTxIntHalf = 1 << 4  // interrupt when the transmit FIFO falls below half full
	CsrDMAInt    = 1 << 5  // interrupt at the end of a DMA (and on a DMA error)
	CsrOvfInt    = 1 << 6  // interrupt on a receive FIFO overflow
	CsrSortInt   = 1 << 7  // interrupt when a sorted PDU completes
	CsrHdrInsert = 1 << 8  // assist: insert PROTO before every 48 bytes written
	CsrTxCRC     = 1 << 9  // assist: AAL5 CRC-32 in the last cell of each PDU sent
	CsrRxCRC     = 1 << 10 // assist: AAL5 CRC-32 and length checked per received PDU
	CsrSort      = 1 << 11 // assist: cells of enabled VCs sorted into host memory
	CsrReset     = 1 << 31 // write 1: empty both FIFOs, stop the DMA, clear ISR and contexts

	csrAssists = CsrHdrInsert | CsrTxCRC | CsrRxCRC | CsrSort
	csrMask    = 0x0FFF
)

// ISR bits: latched when the event happens, cleared by writing 1. The
// interrupt line is high while an ISR bit is set whose CSR enable is.
const (
	IsrRxCell   = 1 << 0 // a cell entered the receive FIFO
	IsrRxFlag   = 1 << 1 // a cell with the header indication flag entered it
	IsrTxHalf   = 1 << 2 // the transmit FIFO fell below half full
	IsrDMADone  = 1 << 3 // a DMA ended
	IsrRxOvf    = 1 << 4 // a cell was lost: receive FIFO full
	IsrSortDone = 1 << 5 // a sorted PDU completed (read DONE)
	IsrDMAErr   = 1 << 6 // a DMA was refused or failed (see the guest log)

	isrMask = 0x7F
)

// DMACTL bits. A write with DMAGo set starts a transfer of Count bytes
// between host memory at DMAADDR and a FIFO.
const (
	DMACountMask = 0x0FFF  // bytes to move
	DMADirRx     = 1 << 16 // 0: memory → transmit FIFO; 1: receive FIFO → memory
	DMAModeB     = 1 << 17 // 0: mode A, whole 13-word cells; 1: mode B, 48-byte payloads
	DMAEOP       = 1 << 18 // with header insertion: the last cell of the block ends the PDU
	DMAGo        = 1 << 31
)

// DMASTAT bits.
const (
	DMABusy  = 1 << 0
	DMAError = 1 << 1 // the last DMA was refused or failed
)

// RXCRC bits: the AAL5 check the RX CRC assist made of the PDU that the
// cell last read from the receive FIFO ended.
const (
	RxCRCEnd      = 1 << 0 // the cell ended a PDU: the other bits apply
	RxCRCGood     = 1 << 1 // the CRC-32 residue was right
	RxCRCLenGood  = 1 << 2 // the trailer's Length needs exactly the PDU's cells
	RxCRCLost     = 1 << 3 // the VC's context was taken by another VC mid-PDU: software must check
	RxCRCCellsOff = 16     // bits 16-31: cells of the PDU
)

// DONE bits (a completion of the VCI sorter; 0 when none is waiting).
const (
	DoneValid   = 1 << 31
	DoneCRCGood = 1 << 30 // RX CRC assist on and the residue was right
	DoneLenGood = 1 << 29 // RX CRC assist on and the Length needs exactly the cells stored
	DoneOverrun = 1 << 28 // the buffer was too small: the PDU is cut short
	DoneLost    = 1 << 27 // cells of the PDU were lost (no buffer armed, or no room to queue them)
	DoneVCIMask = 0xFFFF
)

// VCCTL bits.
const VCSortOn = 1 << 0

// Cell geometry at the host side.
const (
	cellWords    = 13
	payloadWords = 12
	cellBytes    = 4 * cellWords // 52
	payloadBytes = 4 * payloadWords
	doneDepth    = 32 // completions the sorter holds
	vcBuffers    = 4  // buffers one VC may have armed
)
