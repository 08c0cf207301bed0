package timeline_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"simkron/ethersim/atmnet"
	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/sim"
	"simkron/timeline"
	"simkron/workload"
)

// pduOnLinks is an AAL5 PDU as the links' own cell trace shows it: from
// its first cell leaving the sending host's card to its last cell
// arriving at the receiving host's.
type pduOnLinks struct {
	Sender, Receiver string
	From, To         int64 // ps: the first cell's first bit, the last cell's last
}

// linkPDU is a PDU delivered from one host's card to the other's, with
// the times its first and last cells left (Tx) and arrived (Rx), as the
// links show them: a cell leaves at its first bit and arrives at its
// last.
type linkPDU struct {
	sender, receiver         string
	firstTx, lastTx, firstRx sim.Time
	lastRx                   sim.Time
}

// watchPDUs listens to the ATM network's cell trace (atmnet.Network's
// Trace source, which the timeline does not use) and gathers every PDU
// delivered from one host's card to the other's, and the times the
// message msg began and ended (the workload's marks).
func watchPDUs(t testing.TB, r *machine.Run, msg workload.MessageID, pdus *[]linkPDU, begin, end *sim.Time) {
	t.Helper()
	hostOf := map[string]string{} // a host's link end -> the host
	var net *atmnet.Network
	for _, h := range r.Hosts {
		c := machinetest.ATMCards(h)[0]
		hostOf[c.End.Name()] = h.Name
		net = c.End.Link().Network()
	}
	if len(hostOf) != 2 {
		t.Fatalf("%d hosts with an ATM card, want 2", len(hostOf))
	}
	// The PDUs each host has begun to send and the other has not yet
	// received whole, oldest first: on one VC through one switch, cells
	// keep their order.
	begun := map[string][]*linkPDU{}
	sending := map[string]bool{}
	receiving := map[string]bool{}
	net.Trace.Connect(func(rec atmnet.TraceRecord) {
		host := hostOf[rec.Where]
		if host == "" {
			return // the switch's side of a link
		}
		switch rec.Kind {
		case atmnet.TraceTx:
			if !sending[host] {
				sending[host] = true
				begun[host] = append(begun[host], &linkPDU{sender: host, firstTx: rec.At})
			}
			if rec.Cell.EndOfPDU() {
				ps := begun[host]
				ps[len(ps)-1].lastTx = rec.At
				sending[host] = false
			}
		case atmnet.TraceRx:
			for other, ps := range begun {
				if other == host {
					continue
				}
				p := ps[0]
				if !receiving[host] {
					receiving[host] = true
					p.firstRx = rec.At
				}
				if rec.Cell.EndOfPDU() {
					p.receiver, p.lastRx = host, rec.At
					*pdus = append(*pdus, *p)
					begun[other] = ps[1:]
					receiving[host] = false
				}
			}
		}
	})
	for _, wl := range r.Workloads {
		if m, ok := wl.(workload.Messages); ok {
			m.Marks().Connect(func(mk workload.Mark) {
				switch {
				case mk.Message != msg:
				case mk.Kind == workload.MarkBegin:
					*begin = r.Sched.Now()
				case mk.Kind == workload.MarkEnd:
					*end = r.Sched.Now()
				}
			})
		}
	}
}

// The PDUs of classical IP over ATM on the timeline, as the frames of an
// Ethernet are: a slice per PDU on the sending card's and the receiving
// card's threads, an async slice per PDU in the switch's process from its
// first cell's first bit leaving the sender to its last cell's last bit
// reaching the receiver, and a flow between the cards' slices. Every PDU
// the links' own cell trace shows delivered within the window is there,
// at exactly its times, and nothing else; the slices nest, every begin
// has its end, and the run is the same with the trace as without.
func TestTraceOfATMPDUs(t *testing.T) {
	exp := atmIP(t, []int64{1024, 16384})
	plain := runTraced(t, exp, nil)
	for _, c := range []struct {
		win   string
		msg   workload.MessageID
		pdus  int
		check bool
	}{
		// One PDU each way.
		{win: "message=udp:1024:2", msg: workload.MessageID{Protocol: "udp", Size: 1024, N: 2}, pdus: 2},
		// Two fragments each way; TCP's two segments each way and their
		// ACKs.
		{win: "message=udp:16384:2", msg: workload.MessageID{Protocol: "udp", Size: 16384, N: 2}, pdus: 4},
		{win: "message=tcp:16384:2", msg: workload.MessageID{Protocol: "tcp", Size: 16384, N: 2}, pdus: 5},
	} {
		t.Run(c.win, func(t *testing.T) {
			var all []linkPDU
			var begin, end sim.Time
			a := runWatched(t, exp, window(t, c.win), func(r *machine.Run) { watchPDUs(t, r, c.msg, &all, &begin, &end) })
			if a.hash != plain.hash || a.events != plain.events || resultJSON(t, a.res) != resultJSON(t, plain.res) {
				t.Error("the run changed with the trace")
			}
			if end <= begin {
				t.Fatalf("the message ran from %v to %v", begin, end)
			}
			// The window holds the PDUs it saw all of: leave, arrive,
			// or both.
			in := func(from, to sim.Time) bool { return from >= begin && to <= end }
			var want []pduOnLinks
			var sends, arrivals int
			for _, p := range all {
				if in(p.firstTx, p.lastRx) {
					want = append(want, pduOnLinks{Sender: p.sender, Receiver: p.receiver, From: int64(p.firstTx), To: int64(p.lastRx)})
				}
				if in(p.firstTx, p.lastTx) {
					sends++
				}
				if in(p.firstRx, p.lastRx) {
					arrivals++
				}
			}
			if len(want) < c.pdus {
				t.Errorf("%d PDUs delivered in the window, want at least %d", len(want), c.pdus)
			}
			tr, err := timeline.Read(a.trace)
			if err != nil {
				t.Fatal(err)
			}
			var got []pduOnLinks
			for _, f := range tr.Frames {
				if f.Network != "sw0" {
					t.Errorf("frame %s on %q, want sw0", f.Name, f.Network)
				}
				got = append(got, pduOnLinks{Sender: f.Sender, Receiver: f.Receiver, From: f.From, To: f.To})
			}
			if d := gocmp.Diff(want, got); d != "" {
				t.Errorf("PDUs (-the links' cell trace +the timeline):\n%s", d)
			}
			// A flow from the sending card's slice to the receiving
			// card's for each, and a slice on each card's thread.
			for _, c := range []struct {
				what string
				n    int
			}{{`"ph":"s"`, len(want)}, {`"ph":"f"`, len(want)}, {`"name":"tx `, sends}, {`"name":"rx `, arrivals}} {
				if n := bytes.Count(a.trace, []byte(c.what)); n != c.n {
					t.Errorf("%d events with %s, want %d", n, c.what, c.n)
				}
			}
			for _, m := range tr.Check() {
				t.Error(m)
			}
		})
	}
}

// The Yes V2 experiments of configs/atm-yesv2.toml, traced whole: cards
// on loop-back cables receive their own PDUs, and two senders'
// PDUs reach one receiver through the switch interleaved, cell by cell,
// so that its PDUs overlap on the line: they go on a second thread of
// the card's, and every thread's slices still nest. Each PDU a driver
// sent is a slice on its card's tx threads, each it received whole one
// on its rx threads and one on the network's, with a flow from its
// sender.
func TestTraceOfInterleavedPDUs(t *testing.T) {
	exp, err := machine.LoadExperiment("../configs/atm-yesv2.toml")
	if err != nil {
		t.Fatal(err)
	}
	var r *machine.Run
	a := runWatched(t, exp, &timeline.Window{}, func(run *machine.Run) { r = run })
	tr, err := timeline.Read(a.trace)
	if err != nil {
		t.Fatal(err)
	}
	into := map[string]int{}
	loops := 0
	for _, f := range tr.Frames {
		into[f.Receiver]++
		if f.Sender == f.Receiver {
			loops++
		}
	}
	var file struct {
		TraceEvents []struct {
			Ph, Name string
			PID, TID int
			Args     map[string]any
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(a.trace, &file); err != nil {
		t.Fatal(err)
	}
	procs := map[int]string{}
	threads := map[[2]int]string{}
	slices := map[string]int{} // "host tx", "host rx"
	lanes := map[string]int{}
	flows := 0
	for _, e := range file.TraceEvents {
		switch {
		case e.Ph == "M" && e.Name == "process_name":
			procs[e.PID] = e.Args["name"].(string)
		case e.Ph == "M" && e.Name == "thread_name":
			threads[[2]int{e.PID, e.TID}] = e.Args["name"].(string)
			if n := e.Args["name"].(string); strings.HasPrefix(n, "atm0 rx") {
				lanes[procs[e.PID]]++
			}
		case e.Ph == "X" && (strings.HasPrefix(e.Name, "tx ") || strings.HasPrefix(e.Name, "rx ")):
			slices[procs[e.PID]+" "+e.Name[:2]]++
		case e.Ph == "s":
			flows++
		}
	}
	for _, h := range r.Hosts {
		d := machinetest.ATMCards(h)[0].Driver.Stats()
		if got := slices[h.Name+" tx"]; uint64(got) != d.TxPDUs {
			t.Errorf("%s: %d PDUs on its tx threads, the driver sent %d", h.Name, got, d.TxPDUs)
		}
		if got := slices[h.Name+" rx"]; uint64(got) != d.RxPDUs || uint64(into[h.Name]) != d.RxPDUs {
			t.Errorf("%s: %d PDUs on its rx threads, %d on the network to it, the driver received %d", h.Name, got, into[h.Name], d.RxPDUs)
		}
	}
	if flows != len(tr.Frames) || loops == 0 {
		t.Errorf("%d flows, %d PDUs on the networks (%d on loop-back cables)", flows, len(tr.Frames), loops)
	}
	if lanes["r-soft"] != 2 {
		t.Errorf("the interleaving receiver's card has %d rx threads, want 2", lanes["r-soft"])
	}
}
