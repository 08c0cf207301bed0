package simoseth

// frameQueue is a FIFO of frames in card memory, with its byte count. The
// frames' storage is pooled: a steady stream of frames allocates nothing.
type frameQueue struct {
	ring  [][]byte
	head  int
	n     int
	bytes int
	free  [][]byte
}

func (q *frameQueue) len() int { return q.n }

// push stores a copy of p (extended to size bytes of card memory when
// size is larger, for padding) at the tail.
func (q *frameQueue) push(p []byte) {
	if q.n == len(q.ring) {
		r := make([][]byte, max(8, 2*len(q.ring)))
		for i := range q.n {
			r[i] = q.ring[(q.head+i)%len(q.ring)]
		}
		q.ring, q.head = r, 0
	}
	var b []byte
	if k := len(q.free); k > 0 {
		b = q.free[k-1]
		q.free = q.free[:k-1]
	}
	b = append(b[:0], p...)
	q.ring[(q.head+q.n)%len(q.ring)] = b
	q.n++
	q.bytes += len(b)
}

// front returns the oldest frame; it stays valid until pop.
func (q *frameQueue) front() []byte { return q.ring[q.head] }

// pop drops the oldest frame.
func (q *frameQueue) pop() {
	b := q.ring[q.head]
	q.ring[q.head] = nil
	q.head = (q.head + 1) % len(q.ring)
	q.n--
	q.bytes -= len(b)
	q.free = append(q.free, b)
}

// clear drops every frame and returns how many there were.
func (q *frameQueue) clear() int {
	n := q.n
	for q.n > 0 {
		q.pop()
	}
	return n
}
