package simoseth

// IRQLevel is the level the card drives on its interrupt line.
func (n *NIC) IRQLevel() bool { return n.irqLevel }

// Indexes returns the ring indexes and counts without a register access.
func (n *NIC) Indexes() (txIdx, txCount, rxIdx, rxCount uint32) {
	return n.txIdx, n.txCount, n.rxIdx, n.rxCount
}
