package inet

import (
	"fmt"

	"simkron/cpu"
	"simkron/memory"
	"simkron/stack/netdev"
)

// The write queue (Linux 2.2's sk->write_queue; tcp.c tcp_do_sendmsg,
// tcp_output.c): the data a connection has queued and not yet had
// acknowledged, in TCP's own buffers, each holding a run of consecutive
// sequence numbers with the one's-complement sum of its data (skb->csum).
//
//	wq[0]                 wq[1]           wq[2] (never sent: send takes
//	[seq ··· data ···]   [seq ··· ]      [seq ··· ░░ tailroom]   more)
//	 ▲ sndBase                                 ▲ sndBase+slen
//
// send copies and checksums the user's bytes in, filling the last buffer
// while it has never been sent and holds less than a segment, then new
// buffers sized as Linux sizes them; a transmission of a range of bytes
// (the BSD send decision's) first makes the range one buffer: cut from a
// longer one (tcp_fragment: its tail copied and summed into a new buffer,
// the rest summed again), merged from several (tcp_retrans_try_collapse:
// the next buffer's data appended where there is room and neither buffer
// is held by the card, else both copied into a new one: the model's
// generalisation, for BSD's ranges), then clones or copies it for the
// card; an acknowledgement frees the buffers it covers and cuts the front
// of one it covers in part (summing the rest again), so that a
// retransmission starts at snd_una as BSD's does, where Linux 2.2 sends
// the whole buffer again.

// wqBuf is one buffer of the write queue.
type wqBuf struct {
	b   netdev.Buf // data at b.Addr, b.Len bytes; headroom before, tailroom after
	seq uint32     // sequence number of the first byte
	sum uint32     // one's-complement sum of the data from its first byte
}

// tcpMaxHeader is the headroom Linux 2.2 reserves in a TCP buffer:
// MAX_HEADER (32) + tcp_prot.max_header (128) (tcp_do_sendmsg's
// skb_reserve).
const tcpMaxHeader = 32 + 128

// Costs of the write queue's functions (Linux 2.2 net/ipv4/tcp.c,
// tcp_output.c; the blocks are kmallocs, copies and sums csum_partial_copy
// and csum_partial, charged apart):
//
//	tcp_send_skb: per new buffer of tcp_do_sendmsg: its size from the
//	  window, max_window and the MSS, queue_it (18); sock_wmalloc's
//	  check of wmem_alloc, alloc_skb's size rounding, four data pointers,
//	  len, clone flags, users and dataref, skb_set_owner_w (24);
//	  skb_reserve and skb_put (7); the control block: flags, sacked,
//	  urg_ptr, seq, end_seq (8); tcp_send_skb's write_seq and
//	  __skb_queue_tail (10): 67.
//	tcp_send_ack: a segment without data (tcp_send_ack): alloc_skb's
//	  set-up (20), skb_reserve (3), the control block (8), the call (3):
//	  34.
//	tcp_fragment: nsize (2), sock_wmalloc and alloc_skb's set-up (24),
//	  skb_reserve (3), both sequence ranges (4), PSH and FIN moved to the
//	  second, the URG test (8), sacked (1), the calls of csum_partial_copy
//	  and csum_partial (7), skb_trim (5), __skb_append (8), entry and exit
//	  (8): 70.
//	tcp_retrans_try_collapse: the two skb_cloned tests (6), URG and SACK
//	  tests (4), the room and MSS tests (6), __skb_unlink (6), the copy's
//	  call (4), end_seq (3), the flags merged (4), kfree_skb's call and
//	  packets_out (4), entry and exit (8): 45.
//	tcp_clean_rtx_queue: per buffer acknowledged: the end_seq test (4),
//	  the SYN flag and packets_out (4), __skb_unlink (6), kfree_skb's call
//	  (2), the loop (2): 18.
var (
	defTCPSendSkb  = cpu.Def{Name: "tcp_send_skb", Layer: cpu.LayerTCP, Instructions: 67, CodeBytes: 512, Why: "a new write-queue buffer in tcp_sendmsg: its size, sock_wmalloc and alloc_skb's set-up, reserve and put, the control block, write_seq and the queue's tail"}
	defTCPSendAck  = cpu.Def{Name: "tcp_send_ack", Layer: cpu.LayerTCP, Instructions: 34, CodeBytes: 256, Why: "a buffer for a segment without data (ACK, window update, SYN, FIN, probe): alloc_skb's set-up, reserve, the control block"}
	defTCPFragment = cpu.Def{Name: "tcp_fragment", Layer: cpu.LayerTCP, Instructions: 70, CodeBytes: 512, Why: "cut a write-queue buffer in two: a new buffer for the tail, sequence ranges, PSH and FIN to the second, trim, both sums, link it in"}
	defTCPCollapse = cpu.Def{Name: "tcp_retrans_try_collapse", Layer: cpu.LayerTCP, Instructions: 45, CodeBytes: 512, Why: "merge the next write-queue buffer into one: cloned, URG, SACK, room and MSS tests, unlink, the copy, sequence range and flags, free"}
	defTCPCleanRtx = cpu.Def{Name: "tcp_clean_rtx_queue", Layer: cpu.LayerTCP, Instructions: 18, CodeBytes: 256, Why: "per write-queue buffer acknowledged: the sequence test, packets_out, unlink, free"}
)

// tcpAllocBuf returns a write-queue entry whose buffer has room for room
// bytes of data, or nil (counted) when the kernel is out of memory.
func (s *Stack) tcpAllocBuf(room int) *wqBuf {
	b, ok := netdev.AllocShared(s.k, s.tcp.headroom, room)
	if !ok {
		s.stats.NoBuffers++
		return nil
	}
	var w *wqBuf
	if n := len(s.tcp.wqFree); n > 0 {
		w = s.tcp.wqFree[n-1]
		s.tcp.wqFree = s.tcp.wqFree[:n-1]
	} else {
		w = new(wqBuf)
	}
	*w = wqBuf{b: b}
	return w
}

// tcpFreeBuf frees w's buffer (kfree_skb: the block stays while the card
// holds a clone) and keeps w for reuse.
func (s *Stack) tcpFreeBuf(w *wqBuf) {
	w.b.Free(s.k)
	*w = wqBuf{}
	s.tcp.wqFree = append(s.tcp.wqFree, w)
}

// tcpAppend copies n bytes from src after w's data and adds them to its
// sum: in one pass (csum_partial_copy) when the data so far ends on a
// word boundary, else copied and the whole buffer summed again, as Linux
// 2.2 does (tcp_do_sendmsg, tcp_retrans_try_collapse).
func (s *Stack) tcpAppend(w *wqBuf, src memory.Addr, n int) {
	dst := w.b.Addr + memory.Addr(w.b.Len)
	if w.b.Len%4 != 0 {
		s.k.Bcopy(dst, src, n)
		w.b.Len += n
		w.sum = s.k.CsumPartial(w.b.Addr, w.b.Len, 0)
		return
	}
	w.sum = s.k.CsumCopy(dst, src, n, w.sum)
	w.b.Len += n
}

// tcpQueue copies up to n bytes at the user address src onto tp's write
// queue, as one round of tcp_do_sendmsg's loop does: into the last buffer
// while it has never been sent and holds less than a segment, then into
// one new buffer of up to a segment. A new buffer is sized as Linux sizes
// it: for a full segment when its data is less than min(MSS,
// max_window/2), so that later writes fill it, else for its data. It
// returns the bytes queued, fewer when no buffer could be had; the caller
// counts them into slen and lets tcp_output send before the next round,
// as tcp_send_skb does for each new buffer.
func (s *Stack) tcpQueue(tp *tcb, src memory.Addr, n int) int {
	done := 0
	if l := len(tp.wq); l > 0 {
		w := tp.wq[l-1]
		if seqGEQ(w.seq, tp.sndMax) && w.b.Len < tp.mss && w.b.Tailroom() > 0 {
			done = min(n, tp.mss-w.b.Len, w.b.Tailroom())
			s.tcpAppend(w, src, done)
		}
	}
	if done == n {
		return done
	}
	m := min(n-done, tp.mss)
	room := m
	if m < min(tp.mss, tp.maxSndWnd/2) {
		room = min(tp.mss, tp.maxSndWnd)
	}
	c := s.c
	c.Enter(s.tcp.sym.sendSkb)
	defer c.Exit(s.tcp.sym.sendSkb)
	w := s.tcpAllocBuf(room)
	if w == nil {
		return done
	}
	w.seq = tp.sndBase + uint32(tp.slen+done)
	s.tcpAppend(w, src+memory.Addr(done), m)
	tp.wq = append(tp.wq, w)
	return done + m
}

// wqFind returns the index of the write-queue buffer holding sequence
// number seq, which must lie in [sndBase, sndBase+slen).
func (tp *tcb) wqFind(seq uint32) int {
	lo, hi := 0, len(tp.wq) // the answer is in [lo, hi)
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if seqLEQ(tp.wq[mid].seq, seq) {
			lo = mid
		} else {
			hi = mid
		}
	}
	if lo >= len(tp.wq) || seqLT(seq, tp.wq[lo].seq) || seqGEQ(seq, tp.wq[lo].seq+uint32(tp.wq[lo].b.Len)) {
		panic(fmt.Sprintf("inet: sequence %d is not on the write queue (%d bytes from %d in %d buffers)", seq, tp.slen, tp.sndBase, len(tp.wq)))
	}
	return lo
}

// tcpSegBuf makes bytes [off, off+length) of the send buffer (off from
// sndBase) one write-queue buffer, cutting and merging buffers, and
// returns it; nil when a buffer it needed could not be had.
func (s *Stack) tcpSegBuf(tp *tcb, off, length int) *wqBuf {
	seq := tp.sndBase + uint32(off)
	i := tp.wqFind(seq)
	if d := int(seq - tp.wq[i].seq); d > 0 {
		if !s.tcpFragment(tp, i, d) {
			return nil
		}
		i++
	}
	for tp.wq[i].b.Len < length {
		if !s.tcpCollapse(tp, i, length) {
			return nil
		}
	}
	if tp.wq[i].b.Len > length && !s.tcpFragment(tp, i, length) {
		return nil
	}
	return tp.wq[i]
}

// tcpFragment cuts buffer i of the write queue after its first at bytes
// (tcp_fragment): the rest is copied and summed into a new buffer of its
// size, placed after it, and the first part summed again.
func (s *Stack) tcpFragment(tp *tcb, i, at int) bool {
	c := s.c
	c.Enter(s.tcp.sym.fragment)
	defer c.Exit(s.tcp.sym.fragment)
	w := tp.wq[i]
	rest := w.b.Len - at
	nw := s.tcpAllocBuf(rest)
	if nw == nil {
		return false
	}
	nw.seq = w.seq + uint32(at)
	nw.sum = s.k.CsumCopy(nw.b.Addr, w.b.Addr+memory.Addr(at), rest, 0)
	nw.b.Len = rest
	w.b.Len = at
	w.sum = s.k.CsumPartial(w.b.Addr, at, 0)
	tp.wq = append(tp.wq, nil)
	copy(tp.wq[i+2:], tp.wq[i+1:])
	tp.wq[i+1] = nw
	return true
}

// tcpCollapse merges into buffer i the next buffer's first bytes, up to
// length bytes in all, cutting the next one first if it holds more
// (tcp_retrans_try_collapse): appended in place when buffer i has the room
// and neither is held by the card, as Linux does, else both copied into a
// new buffer of a segment's size.
func (s *Stack) tcpCollapse(tp *tcb, i, length int) bool {
	w := tp.wq[i]
	need := length - w.b.Len
	if tp.wq[i+1].b.Len > need && !s.tcpFragment(tp, i+1, need) {
		return false
	}
	nx := tp.wq[i+1]
	c := s.c
	c.Enter(s.tcp.sym.collapse)
	defer c.Exit(s.tcp.sym.collapse)
	if w.b.Tailroom() < nx.b.Len || netdev.Cloned(s.k, w.b) || netdev.Cloned(s.k, nx.b) {
		nw := s.tcpAllocBuf(max(tp.mss, length))
		if nw == nil {
			return false
		}
		nw.seq = w.seq
		s.tcpAppend(nw, w.b.Addr, w.b.Len)
		tp.wq[i] = nw
		s.tcpFreeBuf(w)
		w = nw
	}
	s.tcpAppend(w, nx.b.Addr, nx.b.Len)
	copy(tp.wq[i+1:], tp.wq[i+2:])
	tp.wq[len(tp.wq)-1] = nil
	tp.wq = tp.wq[:len(tp.wq)-1]
	s.tcpFreeBuf(nx)
	return true
}

// tcpCleanRtx frees the first n bytes of the write queue, acknowledged
// (tcp_clean_rtx_queue): the buffers they cover go, and one they cover in
// part loses its front and is summed again.
func (s *Stack) tcpCleanRtx(tp *tcb, n int) {
	c := s.c
	gone := 0
	for n > 0 && gone < len(tp.wq) {
		w := tp.wq[gone]
		c.Enter(s.tcp.sym.cleanRtx)
		if w.b.Len <= n {
			n -= w.b.Len
			s.tcpFreeBuf(w)
			gone++
		} else {
			w.b.Pull(n)
			w.seq += uint32(n)
			w.sum = s.k.CsumPartial(w.b.Addr, w.b.Len, 0)
			n = 0
		}
		c.Exit(s.tcp.sym.cleanRtx)
	}
	if gone > 0 {
		m := copy(tp.wq, tp.wq[gone:])
		clear(tp.wq[m:])
		tp.wq = tp.wq[:m]
	}
}

// tcpSegment returns the buffer a segment of length bytes of data from
// send-buffer offset off goes out in: a clone of the write queue's buffer
// holding them, or a copy when it is a retransmission and the card still
// holds the last clone (tcp_retransmit_skb); a new empty buffer for a
// segment without data. Its data's sum comes with it. ok is false when a
// buffer could not be had (counted).
func (s *Stack) tcpSegment(tp *tcb, off, length int) (b netdev.Buf, sum uint32, ok bool) {
	if length == 0 {
		c := s.c
		c.Enter(s.tcp.sym.sendAck)
		defer c.Exit(s.tcp.sym.sendAck)
		b, ok = netdev.Alloc(s.k, s.tcp.headroom, 0)
		if !ok {
			s.stats.NoBuffers++
		}
		return b, 0, ok
	}
	w := s.tcpSegBuf(tp, off, length)
	if w == nil {
		return netdev.Buf{}, 0, false
	}
	if seqLT(w.seq, tp.sndMax) && netdev.Cloned(s.k, w.b) {
		b, ok = s.tcp.cloner.Copy(w.b)
	} else {
		b, ok = s.tcp.cloner.Clone(w.b)
	}
	if !ok {
		s.stats.NoBuffers++
	}
	return b, w.sum, ok
}
