package top

import (
	"fmt"

	"simkron/memory"
)

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

// RingPlace is the placement of an n-octet frame in a circular buffer
// [base, end) whose live slots start at the addresses given (oldest
// first) and whose head is head.
func RingPlace(base, end, head uint64, live []uint64, n int) (uint64, bool) {
	r := &ring{base: memory.Addr(base), end: memory.Addr(end), head: memory.Addr(head)}
	for _, b := range live {
		r.slots = append(r.slots, slot{blk: memory.Addr(b)})
	}
	at, _, ok := r.place(n)
	return uint64(at), ok
}
