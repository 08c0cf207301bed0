package ne2000

// RingState exposes the ring registers and run state to the external
// tests without changing the page select (reading them through CR would
// be a command with side effects).
func (n *NE2000) RingState() (pstart, pstop, curr, bnry byte, started bool) {
	return n.pstart, n.pstop, n.curr, n.bnry, n.started
}

// IRQLevel is the level the card drives on its interrupt line.
func (n *NE2000) IRQLevel() bool { return n.irqLevel }

// ISRIMR returns ISR (with RST) and IMR without a register access.
func (n *NE2000) ISRIMR() (isr, imr byte) { return n.readISR(), n.imr }

// HashIndex exposes the multicast filter index.
func HashIndex(a []byte) uint32 { return hashIndex(a) }
