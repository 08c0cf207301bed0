package machine_test

// The UDP and TCP sweeps under seeded drop, corruption, duplication and
// reordering: every counter of the sweep equals what the cards saw. The
// cards' taps (machine.NIC observers) record each frame as it reached a
// card (after the link's faults, before the card checks its FCS) and as it
// left; the test rebuilds from them, independently of the stack, what the
// client must have found.

import (
	"encoding/binary"
	"testing"

	"simkron/ethersim"
	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/sim"
	"simkron/stack/apps/latency"
	"simkron/stack/header"
)

// tapped is a frame a card saw, and when.
type tapped struct {
	at    sim.Time
	frame []byte
}

// taps records every frame host's first card receives and sends.
func taps(r *machine.Run, h *machine.Host) (rx, tx *[]tapped) {
	rx, tx = &[]tapped{}, &[]tapped{}
	n := machinetest.NICs(h)[0]
	n.Received().Connect(func(f []byte) { *rx = append(*rx, tapped{r.Sched.Now(), append([]byte(nil), f...)}) })
	n.Sent().Connect(func(f []byte) { *tx = append(*tx, tapped{r.Sched.Now(), append([]byte(nil), f...)}) })
	return rx, tx
}

var faulty = ethersim.FaultParams{Drop: 0.02, Corrupt: 0.01, Duplicate: 0.05, Reorder: 0.08, ReorderDelay: 30 * sim.Millisecond}

// datagram is a UDP datagram rebuilt from the frames a card received, at
// the time its last fragment came.
type datagram struct {
	at      sim.Time
	payload []byte // the UDP payload
}

// reassemble rebuilds the UDP datagrams in frames (those from or to port,
// with a good FCS) as an IP layer does: a datagram is delivered once all
// its bytes are in; a fragment of one already delivered starts a new one.
func reassemble(frames []tapped, port uint16) []datagram {
	type queue struct {
		have  map[int][]byte // fragment offset -> bytes
		total int            // from the last fragment, -1 until it came
	}
	qs := map[uint32]*queue{}
	var out []datagram
	for _, f := range frames {
		if !ethersim.CheckFCS(f.frame) {
			continue
		}
		fr := f.frame[:len(f.frame)-ethersim.FCSBytes]
		if header.Ethernet(fr).Type() != header.EtherTypeIPv4 {
			continue
		}
		ip := header.IPv4(fr[header.EthernetHeaderLen:])
		if !ip.IsValid(len(ip)) || ip.Protocol() != header.IPv4ProtocolUDP {
			continue
		}
		ip = ip[:ip.TotalLength()]
		key := uint32(ip.ID()) | uint32(ip.Src()[3])<<16
		q := qs[key]
		if q == nil {
			q = &queue{have: map[int][]byte{}, total: -1}
			qs[key] = q
		}
		off := int(ip.FragmentOffset())
		q.have[off] = ip.Payload()
		if !ip.More() {
			q.total = off + len(ip.Payload())
		}
		if q.total < 0 {
			continue
		}
		whole := make([]byte, q.total)
		got := 0
		for o, b := range q.have {
			got += copy(whole[o:], b)
		}
		if got < q.total {
			continue
		}
		delete(qs, key)
		u := header.UDP(whole)
		if u.DstPort() == port || u.SrcPort() == port {
			out = append(out, datagram{at: f.at, payload: whole[header.UDPMinimumSize:]})
		}
	}
	return out
}

func TestUDPSweepCountersMatchTheCards(t *testing.T) {
	sizes := []int{64, 1024, 4096}
	const messages, warmup = 30, 2
	exp := machinetest.LoadUDP(t, sizes, messages, warmup)
	p := udpParams(exp)
	p.Timeout = 20 * sim.Millisecond // reordered echoes (30 ms late) come stale
	for i := range exp.Hosts {
		machinetest.NICSpecs(&exp.Hosts[i])[0].Faults = faulty
	}
	r := machinetest.Build(t, exp, machine.Options{})
	clientRx, clientTx := taps(r, machinetest.Host(t, r, "pcA"))
	res := machinetest.Execute(t, r)
	rows := udpRows(res)

	// Request i left the client when the first frame of its datagram did;
	// its stamp (i+1) is in the first fragment.
	firstByID := map[uint16]sim.Time{}
	sentAt := map[uint32]sim.Time{}
	for _, f := range *clientTx {
		fr := f.frame[:len(f.frame)-ethersim.FCSBytes]
		ip := header.IPv4(fr[header.EthernetHeaderLen:])
		if header.Ethernet(fr).Type() != header.EtherTypeIPv4 || ip.Protocol() != header.IPv4ProtocolUDP {
			continue
		}
		if _, ok := firstByID[ip.ID()]; !ok {
			firstByID[ip.ID()] = f.at
		}
		if ip.FragmentOffset() == 0 {
			sentAt[binary.BigEndian.Uint32(ip.Payload()[header.UDPMinimumSize:])] = firstByID[ip.ID()]
		}
	}
	n := len(sizes) * (messages + warmup)
	if len(sentAt) != n {
		t.Fatalf("%d requests on the wire, want %d", len(sentAt), n)
	}
	// The client waits for message i from its request until the next
	// one: an echo completed in that window is a match if it is i's
	// first, a duplicate if its message was answered, stale otherwise.
	want := make([]latency.Row, len(sizes))
	replied := map[uint32]bool{}
	for _, d := range reassemble(*clientRx, p.Port) {
		var waiting uint32
		for s, at := range sentAt {
			if at <= d.at && s > waiting {
				waiting = s
			}
		}
		s := binary.BigEndian.Uint32(d.payload)
		idx := int(s - 1)
		si, measured := idx/(messages+warmup), idx%(messages+warmup) >= warmup
		switch {
		case s == waiting && !replied[s]:
			if measured {
				want[si].Messages++
			}
		case replied[s]:
			if measured {
				want[si].Duplicates++
			}
		default:
			if measured {
				want[si].Stale++
			}
		}
		replied[s] = true
	}
	var dups, stale int
	for i := range sizes {
		want[i].Lost = messages - want[i].Messages
		got := rows[i]
		if got.Messages != want[i].Messages || got.Lost != want[i].Lost || got.Duplicates != want[i].Duplicates || got.Stale != want[i].Stale || got.Corrupt != 0 {
			t.Errorf("%d B: messages/lost/duplicates/stale/corrupt %d/%d/%d/%d/%d; the cards say %d/%d/%d/%d/0",
				sizes[i], got.Messages, got.Lost, got.Duplicates, got.Stale, got.Corrupt, want[i].Messages, want[i].Lost, want[i].Duplicates, want[i].Stale)
		}
		if got.Send.N == 0 || got.Receive.N == 0 || got.RTTMicros <= 0 {
			t.Errorf("%d B: nothing measured: %+v", sizes[i], got)
		}
		dups += got.Duplicates
		stale += got.Stale
		t.Logf("%5d B: %d matched, %d lost, %d duplicates, %d stale", sizes[i], got.Messages, got.Lost, got.Duplicates, got.Stale)
	}
	// The faults this seed draws make every kind of event happen.
	if dups == 0 || stale == 0 || rows[2].Lost == 0 {
		t.Errorf("the faults made %d duplicates, %d stale echoes and %d losses at 4096 B: the test checks too little", dups, stale, rows[2].Lost)
	}
	// Only matched pairs are timed: every measured echo came within the
	// timeout, and each host measured each message's receive once.
	for i, row := range rows {
		if row.RTTMicros*float64(sim.Microsecond) > float64(p.Timeout) {
			t.Errorf("%d B: round trip %.0f us is longer than the timeout", sizes[i], row.RTTMicros)
		}
		if row.Receive.N > 2*messages || row.Send.N > 2*messages {
			t.Errorf("%d B: %d receives and %d sends measured for %d messages", sizes[i], row.Receive.N, row.Send.N, messages)
		}
	}
}

// Under the same faults TCP delivers every message once and in order;
// the retransmissions the stacks count are the segments the cards sent
// twice.
func TestTCPSweepUnderFaults(t *testing.T) {
	exp, err := machine.LoadExperiment("../configs/tcp-ne2000.toml")
	if err != nil {
		t.Fatal(err)
	}
	machinetest.Segments(exp)[0].Pcap = false
	p := tcpParams(exp)
	p.CompareUDP = false
	p.Sizes = []int{64, 1024, 8192}
	p.Messages, p.Warmup = 20, 1
	for i := range exp.Hosts {
		machinetest.NICSpecs(&exp.Hosts[i])[0].Faults = faulty
	}
	r := machinetest.Build(t, exp, machine.Options{})
	var sent [2]*[]tapped
	for i, name := range []string{"pcA", "pcB"} {
		_, sent[i] = taps(r, machinetest.Host(t, r, name))
	}
	res := machinetest.Execute(t, r)
	for _, row := range tcpRows(res) {
		if row.Messages != p.Messages || row.Lost != 0 || row.Corrupt != 0 || row.Duplicates != 0 || row.Stale != 0 {
			t.Errorf("%d B: %+v; want every message once", row.Size, row)
		}
	}
	total := 0
	for i, name := range []string{"pcA", "pcB"} {
		// A data segment that reaches no further than data sent before it
		// is a retransmission.
		high := map[uint16]uint32{} // by source port: highest sequence end sent
		started := map[uint16]bool{}
		resent := 0
		for _, f := range *sent[i] {
			fr := f.frame[:len(f.frame)-ethersim.FCSBytes]
			if header.Ethernet(fr).Type() != header.EtherTypeIPv4 {
				continue
			}
			ip := header.IPv4(fr[header.EthernetHeaderLen:])
			if ip.Protocol() != header.IPv4ProtocolTCP {
				continue
			}
			seg := header.TCP(ip.Payload()[:int(ip.TotalLength())-ip.HeaderLength()])
			n := uint32(len(seg) - seg.DataOffset())
			if seg.Flags()&(header.TCPFlagSYN|header.TCPFlagFIN) != 0 {
				n++
			}
			if n == 0 {
				continue
			}
			end := seg.SeqNum() + n
			port := seg.SrcPort()
			if started[port] && int32(end-high[port]) <= 0 {
				resent++
			}
			if !started[port] || int32(end-high[port]) > 0 {
				high[port] = end
			}
			started[port] = true
		}
		stats := machinetest.Inet(machinetest.Host(t, r, name)).Stats()
		if uint64(resent) != stats.TCPRetransSegs {
			t.Errorf("%s: %d segments resent on the wire, the stack counts %d", name, resent, stats.TCPRetransSegs)
		}
		total += resent
		t.Logf("%s resent %d segments", name, resent)
	}
	if total == 0 {
		t.Error("no retransmission: the faults did nothing")
	}
}
