package top

import "fmt"

// RingDump describes the MAC's receive ring for tests.
func (m *MAC) RingDump() string {
	s := fmt.Sprintf("rx base %#x end %#x head %#x:", uint64(m.rx.base), uint64(m.rx.end), uint64(m.rx.head))
	for _, x := range m.rx.slots {
		s += fmt.Sprintf(" [%#x %d r%v t%v f%v]", uint64(x.blk), x.size, x.ready, x.taken, x.freed)
	}
	return s
}

// TxDump describes the transmit ring.
func (m *MAC) TxDump() string {
	s := fmt.Sprintf("tx head %#x room %v:", uint64(m.tx.head), m.room != nil)
	for _, x := range m.tx.slots {
		s += fmt.Sprintf(" [%#x %d r%v t%v f%v]", uint64(x.blk), x.size, x.ready, x.taken, x.freed)
	}
	return s
}

// Depth of the LLC down queue.
func (e *LLC) DownDepth() int { return e.down.depth }
