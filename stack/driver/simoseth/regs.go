package simoseth

import "simkron/stack/header"

// The card as the driver knows it from its programming manual (the
// register file and descriptor format of devices/simoseth, regs.go). A
// driver keeps its own copy, as a real driver does.
const (
	regCtrl    = 0x000
	regISR     = 0x004
	regIMR     = 0x008
	regTxBase  = 0x00C
	regTxCount = 0x010
	regTxPoll  = 0x014
	regRxBase  = 0x018
	regRxCount = 0x01C
	regRxPoll  = 0x020
	regMACLo   = 0x02C
	regMACHi   = 0x030
	regMissed  = 0x034

	ctrlTxEn  = 1 << 0
	ctrlRxEn  = 1 << 1
	ctrlProm  = 1 << 2
	ctrlBcast = 1 << 3
	ctrlReset = 1 << 31

	intTx      = 1 << 0
	intRx      = 1 << 1
	intRxNoBuf = 1 << 2
	intErr     = 1 << 3
	intAll     = intTx | intRx | intRxNoBuf | intErr

	descSize    = 16
	descStatus  = 0
	descControl = 4
	descBuffer  = 8

	descOwn     = 1 << 31
	descErr     = 1 << 30
	descFirst   = 1 << 29
	descLast    = 1 << 28
	descIOC     = 1 << 31
	descLenMask = 0xFFFF

	etherHdr = header.EthernetHeaderLen
)
