package atmtaxi

// The Yes V2 as the driver sees it: register offsets from the interface's
// base and the bits it uses. The driver keeps its own copy, as a real
// driver does: it knows the board from its documentation (the register
// map of devices/atmtaxi/regs.go, which the seed leaves to the model).
const (
	regCSR      = 0x000
	regISR      = 0x004
	regTxSpace  = 0x008
	regTokens   = 0x00C
	regOverflow = 0x014
	regHECErr   = 0x018
	regProto    = 0x01C
	regDMAAddr  = 0x020
	regDMACtl   = 0x024
	regDMAStat  = 0x028
	regRxCRC    = 0x02C
	regVCSel    = 0x030
	regVCCtl    = 0x034
	regVCSize   = 0x038
	regVCBuf    = 0x03C
	regDone     = 0x040
	regDoneLen  = 0x044
	regDoneAddr = 0x048
	regTxFIFO   = 0x100
	regRxFIFO   = 0x200
)

const (
	csrTxEn      = 1 << 0
	csrRxEn      = 1 << 1
	csrRxIntCell = 1 << 2
	csrRxIntFlag = 1 << 3
	csrOvfInt    = 1 << 6
	csrSortInt   = 1 << 7
	csrHdrInsert = 1 << 8
	csrTxCRC     = 1 << 9
	csrRxCRC     = 1 << 10
	csrSort      = 1 << 11
	csrReset     = 1 << 31

	isrRxCell   = 1 << 0
	isrRxFlag   = 1 << 1
	isrRxOvf    = 1 << 4
	isrSortDone = 1 << 5

	dmaDirRx = 1 << 16
	dmaModeB = 1 << 17
	dmaEOP   = 1 << 18
	dmaGo    = 1 << 31
	dmaBusy  = 1 << 0
	dmaError = 1 << 1

	rxCRCEnd     = 1 << 0
	rxCRCGood    = 1 << 1
	rxCRCLenGood = 1 << 2

	doneValid   = 1 << 31
	doneCRCGood = 1 << 30
	doneLenGood = 1 << 29
	doneOverrun = 1 << 28
	doneLost    = 1 << 27

	vcSortOn = 1
)

// Cell geometry.
const (
	cellBytes    = 52 // header word and payload, as the host moves a cell
	payloadBytes = 48
	ptAUU        = 1 // PT bit: last cell of a PDU, the header indication flag
)
