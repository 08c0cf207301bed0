package inet_test

// TCP transfers between pcA and pcB (configs/udp-ne2000.toml, no workload
// of its own) read back by tshark, with checksum validation on, against
// what the segment's fault injector did to every frame:
//
//   - lan0's capture (ethersim's tap: each frame once, as sent, before
//     the receiving link's faults) must dissect without a malformed frame,
//     an error or a bad IP or TCP checksum, whatever the faults;
//   - tshark's TCP analysis flags must be explained by the faults and by
//     nothing else: on a clean segment only flow-control flags; under loss
//     or corruption, retransmission flags exactly on the segments that
//     carry sequence space sent before, duplicate ACKs only for segments
//     the receiver got out of order or twice, and every segment lost at
//     its receiver sent again;
//   - a second capture of what the cards received (after the faults, FCS
//     included) must show a bad FCS on exactly the frames the injector
//     corrupted, as many as it counted, and bad IP or TCP checksums where
//     the flipped bit says they must be, nowhere else.
//
// The analysis needs tshark (the tests skip without it; CI installs it).

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"simkron/cpu"
	"simkron/ethersim"
	"simkron/internal/machinetest"
	"simkron/internal/testtool"
	"simkron/machine"
	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/inet"
)

// tcpMSL is the hosts' maximum segment lifetime, as in tcp_test.go:
// TIME_WAIT lasts 1 s.
const tcpMSL = 500 * sim.Millisecond

// frameFate is what happened to one frame of lan0's capture: when the
// sending card handed it to the wire, and what the receiving link did
// with it.
type frameFate struct {
	from, to string   // host names
	handoff  sim.Time // the card's Transmit
	rxAt     sim.Time // reached the receiving card (0 if dropped)
	dropped  bool
	bit      int // the bit the link flipped, or -1
}

// lost reports whether the frame never reached the receiver's stack: the
// link dropped it, or flipped a bit and the card's FCS check refused it.
func (f *frameFate) lost() bool { return f.dropped || f.bit >= 0 }

// tshRun is one exchange: lan0's capture, the fate of each of its frames
// (by frame number, from 1), and a capture of what the cards received
// with, for each of its frames, the number of that frame in lan0's.
type tshRun struct {
	wire      []byte
	fates     map[int]*frameFate
	rx        []byte
	rxOf      []int
	corrupted uint64 // the links' own count
	// tcpLog is, by host, what its TCP did in program order: 'r' when a
	// segment reached it (tcp_v4_rcv), 'x' when it built one
	// (tcp_transmit_skb, tcp_v4_send_reset). With lan0's capture it
	// tells which of the peer's segments a host had read when it built
	// each of its own.
	tcpLog map[string][]byte
	stats  map[string]inet.Stats // by host, at the end
}

// runTsharkExchange moves size bytes from pcA to pcB and then size bytes
// back (as runTCPExchangeWith does, with the hooks this file needs), with
// faults applied to the experiment first.
func runTsharkExchange(t *testing.T, size int, faults func(*machine.Experiment)) *tshRun {
	t.Helper()
	exp := loadUDP(t, []int{4}, 1, 0)
	for i := range 2 {
		machinetest.InetParams(ownMachine(exp, i)).TCPMSL = tcpMSL
	}
	faults(exp)
	tr := newThreadRun(t, exp)
	res := &tshRun{fates: map[int]*frameFate{}, tcpLog: map[string][]byte{}, stats: map[string]inet.Stats{}}
	k := tr.r.Sched

	// Frame numbers follow the segment's trace: the tap writes a frame
	// right after its txend, and in shared mode the one other station
	// receives a sender's frames in the order they were sent. Each
	// reception is a drop, or an rx, preceded by a corrupt if a bit was
	// flipped.
	hostOf, peer := map[string]string{}, map[string]string{}
	for _, h := range tr.r.Hosts {
		hostOf[machinetest.NICs(h)[0].Port.Name()] = h.Name
		for _, o := range tr.r.Hosts {
			if o != h {
				peer[machinetest.NICs(h)[0].Port.Name()] = machinetest.NICs(o)[0].Port.Name()
			}
		}
	}
	if len(peer) != 2 {
		t.Fatalf("%d stations on lan0, want 2", len(peer))
	}
	handoffs := map[string][]sim.Time{} // frames a card handed over, not yet sent
	inFlight := map[string][]int{}      // frames on their way to a station
	flipped := map[string]int{}         // a corrupt reception's frame, until its rx
	next := func(att string) int {
		q := inFlight[att]
		if len(q) == 0 {
			t.Fatalf("%s receives a frame nobody sent", att)
		}
		inFlight[att] = q[1:]
		return q[0]
	}
	sent, receiving := 0, 0
	lan0(t, tr.r).Trace.Connect(func(r ethersim.TraceRecord) {
		switch r.Kind {
		case ethersim.TraceTxEnd:
			sent++
			to := peer[r.Attachment]
			res.fates[sent] = &frameFate{from: hostOf[r.Attachment], to: hostOf[to], handoff: handoffs[r.Attachment][0], bit: -1}
			handoffs[r.Attachment] = handoffs[r.Attachment][1:]
			inFlight[to] = append(inFlight[to], sent)
		case ethersim.TraceAbort:
			handoffs[r.Attachment] = handoffs[r.Attachment][1:]
		case ethersim.TraceDrop:
			res.fates[next(r.Attachment)].dropped = true
		case ethersim.TraceCorrupt:
			n := next(r.Attachment)
			res.fates[n].bit = r.Arg
			flipped[r.Attachment] = n
		case ethersim.TraceRx:
			n, ok := flipped[r.Attachment]
			if !ok {
				n = next(r.Attachment)
			}
			delete(flipped, r.Attachment)
			res.fates[n].rxAt = r.At
			receiving = n
		case ethersim.TraceDuplicate:
			t.Fatal("duplicated frames are not followed here")
		}
	})
	var rx bytes.Buffer
	rxw := pcapgo.NewWriterNanos(&rx)
	if err := rxw.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	for _, h := range tr.r.Hosts {
		nic := machinetest.NICs(h)[0]
		nic.Sent().Connect(func([]byte) { handoffs[nic.Port.Name()] = append(handoffs[nic.Port.Name()], k.Now()) })
		nic.Received().Connect(func(f []byte) {
			ci := gopacket.CaptureInfo{Timestamp: time.Unix(0, int64(k.Now()/sim.Nanosecond)).UTC(), CaptureLength: len(f), Length: len(f)}
			if err := rxw.WritePacket(ci, f); err != nil {
				t.Fatal(err)
			}
			res.rxOf = append(res.rxOf, receiving)
		})
	}

	for _, h := range tr.r.Hosts {
		name := h.Name
		h.CPU.Trace.Enter.Connect(func(s *cpu.Symbol) {
			switch s.Name {
			case "tcp_v4_rcv":
				res.tcpLog[name] = append(res.tcpLog[name], 'r')
			case "tcp_transmit_skb", "tcp_v4_send_reset":
				res.tcpLog[name] = append(res.tcpLog[name], 'x')
			}
		})
	}

	up, down := pattern(size, 3), pattern(size, 4)
	ex := spawnExchange(tr, up, down)
	tr.execute()
	if !bytes.Equal(ex.toServer, up) || !bytes.Equal(ex.toClient, down) {
		t.Errorf("streams differ: server got %d of %d bytes, client %d", len(ex.toServer), size, len(ex.toClient))
	}
	caps := tr.r.Net.Captures()
	if len(caps) != 1 {
		t.Fatalf("%d captures, want lan0's", len(caps))
	}
	res.wire, res.rx = caps[0].Data, rx.Bytes()
	for _, h := range tr.r.Hosts {
		// The checks take a frame that reached the card intact to have
		// reached the stack.
		card, port := ne2k(machinetest.NICs(h)[0]).Stats(), machinetest.NICs(h)[0].Port.Stats()
		if card.RxFrames != port.RxFrames-port.Corrupted {
			t.Fatalf("%s: the card stored %d frames of the %d that reached it intact: %+v", h.Name, card.RxFrames, port.RxFrames-port.Corrupted, card)
		}
		res.corrupted += port.Corrupted
		res.stats[h.Name] = machinetest.Inet(h).Stats()
	}
	return res
}

var tsharkFlags struct {
	once  sync.Once
	names []string
	err   error
}

// tcpAnalysisFlags returns the names of tshark's TCP analysis flags (the
// fields tcp.analysis.* that only mark a frame), from this tshark's own
// list, so that a flag a later version adds is not missed; it skips the
// test without tshark.
func tcpAnalysisFlags(t *testing.T) []string {
	t.Helper()
	bin := testtool.Need(t, "tshark")
	tf := &tsharkFlags
	tf.once.Do(func() {
		out, err := exec.Command(bin, "-G", "fields").Output()
		if err != nil {
			tf.err = fmt.Errorf("tshark -G fields: %w", err)
			return
		}
		for line := range strings.SplitSeq(string(out), "\n") {
			c := strings.Split(line, "\t")
			if len(c) > 3 && c[0] == "F" && c[3] == "FT_NONE" && strings.HasPrefix(c[2], "tcp.analysis.") && c[2] != "tcp.analysis.flags" {
				tf.names = append(tf.names, strings.TrimPrefix(c[2], "tcp.analysis."))
			}
		}
		for _, want := range []string{"retransmission", "duplicate_ack", "lost_segment", "spurious_retransmission"} {
			if !slices.Contains(tf.names, want) {
				tf.err = fmt.Errorf("tshark knows no field tcp.analysis.%s", want)
			}
		}
	})
	if tf.err != nil {
		t.Fatal(tf.err)
	}
	return tf.names
}

// Flags that a correct stack may raise on a clean segment: they follow
// flow control, not loss. A window update is a pure ACK that opens the
// window as the application reads (RFC 1122 section 4.2.3.3 asks for
// it); window full is a sender that has filled the receiver's window; a
// zero window, its probes and their ACKs are a slow reader and the
// persist timer (RFC 1122 section 4.2.2.17). Anything else fails on a
// clean segment: keep-alives (the stack sends none, so one would be a
// misplaced segment), reused ports (one connection), TFO (never
// offered), and lost_segment, which can never be right here since the
// tap records every frame that is sent.
var benignTCPFlags = []string{"window_update", "window_full", "zero_window", "zero_window_probe", "zero_window_probe_ack"}

// Flags tshark puts on a segment that carries sequence space sent before.
// Seen from a capture at the senders every such segment is a resend;
// tshark calls it out of order instead when it comes within one initial
// RTT of the highest segment, and spurious when the data had already been
// acknowledged on the wire (the ACK may have been lost before the sender
// read it).
var resendTCPFlags = []string{"retransmission", "fast_retransmission", "spurious_retransmission", "out_of_order"}

// Flags that faults explain besides resends: a duplicate ACK answers a
// segment that came out of order (after a loss) or twice, and tshark
// reports an ACK of unseen data when a resend also carried new data (see
// checkWire).
var lossTCPFlags = []string{"duplicate_ack", "ack_lost_segment"}

// tshPrefixed returns names, each with p in front.
func tshPrefixed(p string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = p + n
	}
	return out
}

// tcpSeg is a TCP segment of lan0's capture, its sequence numbers
// relative to its sender's ISN and its acknowledgement relative to the
// receiver's (-1 without ACK). end counts SYN and FIN.
type tcpSeg struct {
	n             int
	from, to      string
	seq, end, ack int64
	flags         header.TCPFlags
}

func (s tcpSeg) String() string {
	return fmt.Sprintf("frame %d %s→%s seq %d len %d ack %d %v", s.n, s.from, s.to, s.seq, s.end-s.seq, s.ack, s.flags)
}

// readFrames returns the frames of a capture.
func pcapFrames(t *testing.T, capture []byte) [][]byte {
	t.Helper()
	rd, err := pcapgo.NewReader(bytes.NewReader(capture))
	if err != nil {
		t.Fatal(err)
	}
	var frames [][]byte
	for {
		data, _, err := rd.ReadPacketData()
		if err == io.EOF {
			return frames
		}
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, data)
	}
}

// tcpSegs parses the TCP segments of a capture (one connection between
// pcA and pcB) with the stack's own header views.
func tcpSegs(t *testing.T, capture []byte) []tcpSeg {
	t.Helper()
	name := map[inet.Addr]string{ipA: "pcA", ipB: "pcB"}
	type raw struct {
		n        int
		src, dst inet.Addr
		tcp      header.TCP
	}
	var raws []raw
	isn := map[inet.Addr]uint32{}
	for i, data := range pcapFrames(t, capture) {
		if len(data) < header.EthernetHeaderLen || header.Ethernet(data).Type() != header.EtherTypeIPv4 {
			continue
		}
		ip := header.IPv4(data[header.EthernetHeaderLen:])
		if !ip.IsValid(len(ip)) || ip.Protocol() != header.IPv4ProtocolTCP {
			continue
		}
		tcp := header.TCP(ip.Payload())
		if !tcp.IsValid() {
			t.Fatalf("frame %d: TCP header not valid", i+1)
		}
		if tcp.Flags().Contains(header.TCPFlagSYN) {
			if old, ok := isn[ip.Src()]; ok && old != tcp.SeqNum() {
				t.Fatalf("frame %d: a second connection", i+1)
			}
			isn[ip.Src()] = tcp.SeqNum()
		}
		raws = append(raws, raw{i + 1, ip.Src(), ip.Dst(), tcp})
	}
	if len(isn) != 2 {
		t.Fatalf("SYNs from %d hosts, want 2", len(isn))
	}
	var segs []tcpSeg
	for _, r := range raws {
		s := tcpSeg{n: r.n, from: name[r.src], to: name[r.dst], ack: -1, flags: r.tcp.Flags()}
		s.seq = int64(r.tcp.SeqNum() - isn[r.src])
		s.end = s.seq + int64(len(r.tcp.Payload()))
		if s.flags&(header.TCPFlagSYN|header.TCPFlagFIN) != 0 {
			s.end++
		}
		if s.flags.Contains(header.TCPFlagACK) {
			s.ack = int64(r.tcp.AckNum() - isn[r.dst])
		}
		segs = append(segs, s)
	}
	return segs
}

// builtAfter is what a host had read from its peer when it built a
// segment: the highest acknowledgement, the last segment (its frame
// number, 0 if none) and how many segments.
type builtAfter struct {
	ack         int64
	last, reads int
}

// replayTCP replays each host's TCP log against the capture and returns,
// for every segment a host sent, what it had read when it built it, and
// for every segment read, how many its reader had read with it. A
// segment built is the next one the host puts on the wire, and a segment
// read is the next one that reached it intact: the counts must agree.
func replayTCP(t *testing.T, r *tshRun, segs []tcpSeg) (built map[int]builtAfter, reads map[int]int) {
	t.Helper()
	built, reads = map[int]builtAfter{}, map[int]int{}
	for h, log := range r.tcpLog {
		var out, in []tcpSeg
		for _, s := range segs {
			switch {
			case s.from == h:
				out = append(out, s)
			case s.to == h && !r.fates[s.n].lost():
				in = append(in, s)
			}
		}
		if x, n := bytes.Count(log, []byte{'x'}), bytes.Count(log, []byte{'r'}); x != len(out) || n != len(in) {
			t.Fatalf("%s: TCP built %d segments and read %d; the capture shows %d sent and %d received intact", h, x, n, len(out), len(in))
		}
		b := builtAfter{ack: -1}
		for _, e := range log {
			if e == 'r' {
				b.reads++
				b.ack, b.last, reads[in[0].n], in = max(b.ack, in[0].ack), in[0].n, b.reads, in[1:]
			} else {
				built[out[0].n], out = b, out[1:]
			}
		}
	}
	return built, reads
}

// hostSeq is a host and a sequence number in what it receives.
type hostSeq struct {
	host string
	seq  int64
}

// checkWire runs tshark on lan0's capture and checks it against the
// frames' fates; faulty says whether the run injected faults, and so
// whether loss-driven flags may appear at all.
func checkWire(t *testing.T, r *tshRun, faulty bool) {
	t.Helper()
	names := tcpAnalysisFlags(t)
	segs := tcpSegs(t, r.wire)
	built, reads := replayTCP(t, r, segs)
	byFrame := map[int]tcpSeg{}
	for _, s := range segs {
		byFrame[s.n] = s
	}

	// Nothing malformed, no error, no bad checksum, every TCP checksum
	// verified good: the tap records frames before any receive fault. A
	// warning must come with an analysis flag (or be a reset), judged
	// below.
	frames := testtool.TsharkFields(t, r.wire, nil, append([]string{"frame.protocols", "_ws.expert.severity", "_ws.expert.message",
		"ip.checksum.status", "tcp", "tcp.checksum.status", "tcp.flags.reset"}, tshPrefixed("tcp.analysis.", names)...)...)
	flagged := map[int][]string{}
	for i, row := range frames {
		n := i + 1
		switch {
		case testtool.Malformed(row) || testtool.Severity(row) >= testtool.ExpertError:
			t.Errorf("frame %d: tshark finds it malformed or in error: %s", n, row["_ws.expert.message"])
		case row["ip.checksum.status"] == "0" || row["tcp"] != "" && row["tcp.checksum.status"] != "1":
			t.Errorf("frame %d: IP checksum %q, TCP checksum %q; want good", n, row["ip.checksum.status"], row["tcp.checksum.status"])
		}
		for _, f := range names {
			if row["tcp.analysis."+f] != "" {
				flagged[n] = append(flagged[n], f)
			}
		}
		if testtool.Severity(row) >= testtool.ExpertWarn && len(flagged[n]) == 0 && row["tcp.flags.reset"] != "1" {
			t.Errorf("frame %d: a warning and no analysis flag: %s", n, row["_ws.expert.message"])
		}
		for _, f := range flagged[n] {
			if !slices.Contains(benignTCPFlags, f) && !(faulty && (slices.Contains(resendTCPFlags, f) || slices.Contains(lossTCPFlags, f))) {
				t.Errorf("frame %d: tshark flags %s (%v), which no injected fault explains", n, f, flagged[n])
			}
		}
	}
	has := func(n int, set ...string) bool {
		return slices.ContainsFunc(flagged[n], func(f string) bool { return slices.Contains(set, f) })
	}

	// Replay the capture frame by frame: what each host has sent and
	// received, and what tshark says of it.
	maxEnd := map[string]int64{}    // by sender: the highest sequence number sent
	repack := map[string]int64{}    // by sender: maxEnd before its last resend that also carried new data
	finEnd := map[string]int64{}    // by sender: the sequence number after its FIN
	got := map[string][]int{}       // by receiver: the frame that first brought each sequence number
	rcvNxt := map[string]int64{}    // by receiver: the first sequence number missing
	finAt := map[string]sim.Time{}  // by receiver: when rcvNxt passed its peer's FIN
	finRead := map[string]int{}     // by receiver: the segments its TCP had read then
	lastReads := map[string]int{}   // by sender: the segments it had read when it built its last one
	credit := map[hostSeq]int{}     // segments that left a receiver's rcvNxt where it was
	afterFIN := map[int]bool{}      // pure ACKs that answer nothing after the peer's FIN
	resent := map[int]bool{}        // frames carrying sequence space sent before
	resentBy := map[string]uint64{} // the same, by sender
	var lost []tcpSeg               // segments with data that never reached the receiver
	for _, s := range segs {
		f := r.fates[s.n]
		if f == nil || f.from != s.from || f.to != s.to {
			t.Fatalf("%v: fate %+v does not match", s, f)
		}
		b := built[s.n]
		if s.ack > maxEnd[s.to] {
			t.Errorf("%v: acknowledges beyond the %d %s has sent", s, maxEnd[s.to], s.to)
		}
		if has(s.n, "ack_lost_segment") && !(repack[s.to] > 0 && s.ack > repack[s.to]) {
			// tshark does not advance its next expected sequence number
			// on a resend, so when the resend also carried new data
			// (repacketization, RFC 1122 section 4.2.2.15) the ACK of
			// that data looks to it like the ACK of an unseen segment.
			t.Errorf("%v: tshark sees it acknowledge unseen data, and no repacketized resend explains it", s)
		}
		if s.flags.Contains(header.TCPFlagFIN) {
			finEnd[s.from] = s.end
		}

		switch {
		case s.flags.Contains(header.TCPFlagRST):
			// Resets that faults explain, both of a host whose
			// connection is gone when a segment of its peer comes: its
			// TIME_WAIT ran out (2·MSL, 1 s here, less than a backed-off
			// RTO) before the peer, its ACKs lost, resent; or it closed
			// on the ACK of its FIN (LAST_ACK) before the peer's answer
			// to one of its resends came.
			k, ok := byFrame[b.last]
			timeWaitOver := finAt[s.from] > 0 && f.handoff-finAt[s.from] >= 2*tcpMSL && resent[k.n]
			closed := finAt[s.from] > 0 && finEnd[s.from] > 0 && b.ack >= finEnd[s.from] && resent[built[k.n].last]
			switch {
			case ok && afterFIN[k.n]:
				t.Errorf("%v answers %v, a window update after the FIN", s, k)
			case !ok || !timeWaitOver && !closed:
				t.Errorf("%v: a reset, answering %v; no fault explains it", s, k)
			}
		case finRead[s.from] > 0 && b.reads >= finRead[s.from] && s.end == s.seq && b.reads == lastReads[s.from]:
			// Once it has read its peer's FIN, a host sends a pure ACK
			// only to answer a segment: no more data can come, so there
			// is no window to update.
			afterFIN[s.n] = true
			t.Errorf("%v: a pure ACK after %s read its peer's FIN, answering no segment (tshark: %v)", s, s.from, flagged[s.n])
		}
		lastReads[s.from] = b.reads

		if s.end > s.seq {
			if s.seq < maxEnd[s.from] {
				resent[s.n] = true
				resentBy[s.from]++
				// From the sender's view a resend must be needed: it had
				// read no ACK covering the segment when it built it.
				if s.end <= b.ack {
					t.Errorf("%v: STACK BUG: resent after %s had read an ACK of %d", s, s.from, b.ack)
				}
				if s.end > maxEnd[s.from] {
					repack[s.from] = maxEnd[s.from]
				}
			}
			maxEnd[s.from] = max(maxEnd[s.from], s.end)
		}
		if has(s.n, "duplicate_ack") {
			k := hostSeq{s.from, s.ack}
			if credit[k] == 0 {
				t.Errorf("%v: tshark calls it a duplicate ACK but %s received nothing out of order or twice to answer", s, s.from)
			} else {
				credit[k]--
			}
		}

		if f.lost() {
			if s.end > s.seq {
				lost = append(lost, s)
			}
			continue
		}
		if s.end == s.seq {
			continue
		}
		g := got[s.to]
		for int64(len(g)) < s.end {
			g = append(g, 0)
		}
		nxt := rcvNxt[s.to]
		if s.seq > nxt || s.end <= nxt {
			// Out of order, or a copy: the receiver's answer is a
			// duplicate ACK of nxt. Out of order means a hole, and a
			// hole means a segment lost on the way.
			credit[hostSeq{s.to, nxt}]++
			if s.seq > nxt && !slices.ContainsFunc(lost, func(l tcpSeg) bool { return l.to == s.to && l.seq <= nxt && nxt < l.end }) {
				t.Errorf("%v: arrives after a hole at %d that no lost segment explains", s, nxt)
			}
		}
		for i := s.seq; i < s.end; i++ {
			if g[i] == 0 {
				g[i] = s.n
			}
		}
		for nxt < int64(len(g)) && g[nxt] != 0 {
			nxt++
		}
		got[s.to], rcvNxt[s.to] = g, nxt
		if finAt[s.to] == 0 && finEnd[s.from] > 0 && nxt >= finEnd[s.from] {
			finAt[s.to], finRead[s.to] = f.rxAt, reads[s.n]
		}
	}

	// Resends are exactly what tshark flags as such, and what the stacks
	// count.
	for _, s := range segs {
		if resent[s.n] != has(s.n, resendTCPFlags...) {
			t.Errorf("%v: carries sequence space sent before: %v; tshark flags %v", s, resent[s.n], flagged[s.n])
		}
	}
	for h, st := range r.stats {
		if st.TCPRetransSegs != resentBy[h] {
			t.Errorf("%s counts %d retransmitted segments; the capture shows %d", h, st.TCPRetransSegs, resentBy[h])
		}
	}
	// Every lost segment's data reached the receiver later (unless it
	// already had it), by a frame tshark flags as a resend.
	for _, l := range lost {
		g := got[l.to]
		for i := l.seq; i < l.end; i++ {
			if i >= int64(len(g)) || g[i] == 0 {
				t.Errorf("%v lost: %s never received sequence number %d", l, l.to, i)
				break
			}
			if g[i] > l.n && !has(g[i], resendTCPFlags...) {
				t.Errorf("%v lost: frame %d brought it again, and tshark does not flag it a resend (%v)", l, g[i], flagged[g[i]])
				break
			}
		}
	}
	if !faulty && len(resent) != 0 {
		t.Errorf("%d resent segments on a clean segment", len(resent))
	}
	t.Logf("%d TCP segments, %d lost at the receiver, %d resent; tshark flags %d frames", len(segs), len(lost), len(resent), len(flagged))
}

// Where a flipped bit lies in a frame, which decides what tshark can see.
type bitRegion string

const (
	inEthernet  bitRegion = "ethernet"   // addresses and type: only the FCS tells
	inIPHeader  bitRegion = "ip"         // the IP header checksum is bad
	inIPLength  bitRegion = "ip-length"  // version, IHL or total length: tshark may stop before the checksum
	inTCP       bitRegion = "tcp"        // header or data: the TCP checksum is bad
	inTCPOffset bitRegion = "tcp-offset" // the data offset: tshark may stop before the checksum
	inTrailer   bitRegion = "trailer"    // padding, FCS, or not IP or TCP: only the FCS tells
)

// regionOf says where byte i of frame (as sent, without FCS) lies.
func regionOf(frame []byte, i int) bitRegion {
	const e = header.EthernetHeaderLen
	if i < e {
		return inEthernet
	}
	if header.Ethernet(frame).Type() != header.EtherTypeIPv4 {
		return inTrailer
	}
	ip := header.IPv4(frame[e:])
	ihl, total := ip.HeaderLength(), int(ip.TotalLength())
	switch {
	case i >= e+total:
		return inTrailer
	case i == e || i == e+2 || i == e+3:
		return inIPLength
	case i < e+ihl:
		return inIPHeader
	case ip.Protocol() != header.IPv4ProtocolTCP:
		return inTrailer
	case i == e+ihl+12:
		return inTCPOffset
	}
	return inTCP
}

// checkReceived dissects what the cards received (FCS included) and
// checks it against the fates of the frames: a bad FCS on exactly the
// corrupted ones, bad IP or TCP checksums where the flipped bit lies,
// and nothing wrong with the others.
func checkReceived(t *testing.T, r *tshRun) {
	t.Helper()
	wire := pcapFrames(t, r.wire)
	frames := testtool.TsharkFields(t, r.rx, []string{"eth.fcs:Always", "eth.check_fcs:TRUE"},
		"frame.protocols", "_ws.expert.severity", "_ws.expert.message", "eth.fcs.status", "ip.checksum.status", "tcp.checksum.status")
	if len(frames) != len(r.rxOf) {
		t.Fatalf("tshark read %d received frames, want %d", len(frames), len(r.rxOf))
	}
	badFCS := uint64(0)
	where := map[bitRegion]int{}
	for i, row := range frames {
		n := r.rxOf[i]
		f := r.fates[n]
		what := fmt.Sprintf("received frame %d (frame %d on the wire, %s→%s)", i+1, n, f.from, f.to)
		fcs, ipSum, tcpSum := row["eth.fcs.status"], row["ip.checksum.status"], row["tcp.checksum.status"]
		broken := testtool.Malformed(row) || testtool.Severity(row) >= testtool.ExpertError
		if f.bit < 0 {
			if fcs != "1" || ipSum == "0" || tcpSum == "0" || broken {
				t.Errorf("%s, not corrupted: FCS %q, IP checksum %q, TCP checksum %q, malformed %v: %s", what, fcs, ipSum, tcpSum, broken, row["_ws.expert.message"])
			}
			continue
		}
		if fcs == "0" {
			badFCS++
		} else {
			t.Errorf("%s, bit %d flipped: FCS %q, want bad", what, f.bit, fcs)
		}
		g := regionOf(wire[n-1], f.bit/8)
		where[g]++
		var ok bool
		switch g {
		case inEthernet, inTrailer:
			ok = ipSum != "0" && tcpSum != "0"
		case inIPHeader:
			ok = ipSum == "0"
		case inIPLength:
			ok = ipSum == "0" || broken
		case inTCP:
			ok = ipSum != "0" && tcpSum == "0"
		case inTCPOffset:
			ok = ipSum != "0" && (tcpSum == "0" || broken)
		}
		if !ok {
			t.Errorf("%s, bit %d flipped (byte %d, %s): IP checksum %q, TCP checksum %q, malformed %v: %s", what, f.bit, f.bit/8, g, ipSum, tcpSum, broken, row["_ws.expert.message"])
		}
	}
	if badFCS != r.corrupted || r.corrupted == 0 {
		t.Errorf("tshark finds %d frames with a bad FCS; the links corrupted %d (want some)", badFCS, r.corrupted)
	}
	t.Logf("%d frames corrupted, by where the flipped bit lies: %v", r.corrupted, where)
}

// faults returns a fault setting for both cards with the seed given.
func tshFaults(seed uint64, drop, corrupt float64) func(*machine.Experiment) {
	return func(exp *machine.Experiment) {
		exp.Info.Seed = seed
		for i := range exp.Hosts {
			f := &machinetest.NICSpecs(&exp.Hosts[i])[0].Faults
			f.Drop, f.Corrupt = drop, corrupt
		}
	}
}

// TestTCPTsharkClean moves 128 KiB each way on a clean segment: nothing
// malformed, no bad checksum, no resend and no analysis flag but flow
// control's.
func TestTCPTsharkClean(t *testing.T) {
	tcpAnalysisFlags(t) // skips without tshark
	r := runTsharkExchange(t, 128*1024, tshFaults(1, 0, 0))
	checkWire(t, r, false)
}

// TestTCPTsharkLoss drops 3 % of the frames each card receives, with a
// few seeds: every resend tshark flags is one, every lost segment is
// resent, every duplicate ACK answers a segment that came out of order
// or twice, and nothing else is flagged.
func TestTCPTsharkLoss(t *testing.T) {
	tcpAnalysisFlags(t)
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := runTsharkExchange(t, 128*1024, tshFaults(seed, 0.03, 0))
			checkWire(t, r, true)
			dropped := 0
			for _, f := range r.fates {
				if f.dropped {
					dropped++
				}
			}
			if dropped == 0 {
				t.Error("no frame dropped")
			}
		})
	}
}

// TestTCPTsharkCorrupt flips a bit in 3 % of the frames each card
// receives. On the wire nothing is damaged (the tap is before the
// faults) and the corrupted frames count as lost, since the card's FCS
// check refuses them; in the capture of what the cards received, tshark
// must find a bad FCS on exactly the corrupted frames, as many as the
// links counted, and bad IP or TCP checksums just where the flipped bit
// lies in the IP header or the TCP segment.
func TestTCPTsharkCorrupt(t *testing.T) {
	tcpAnalysisFlags(t)
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := runTsharkExchange(t, 128*1024, tshFaults(seed, 0, 0.03))
			checkWire(t, r, true)
			checkReceived(t, r)
		})
	}
}

// TestTCPTsharkNoUpdateAfterFIN runs the seed on which a stack bug these
// tests found showed: pcA read pcB's FIN after a resend filled a hole and
// then sent window updates as its application drained the buffer, and
// pcB, closed by then, answered each with a RST. No update may follow the
// peer's FIN.
func TestTCPTsharkNoUpdateAfterFIN(t *testing.T) {
	tcpAnalysisFlags(t)
	r := runTsharkExchange(t, 128*1024, tshFaults(2, 0.02, 0.01))
	checkWire(t, r, true)
	checkReceived(t, r)
}
