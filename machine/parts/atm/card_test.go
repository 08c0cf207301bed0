package atm_test

import (
	"bytes"
	"testing"

	"simkron/card"
	"simkron/ethersim/atmnet"
	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/machine/parts/atm"
	"simkron/sim"
)

// carried is a card.Carried kept past its call.
type carried struct {
	frame       []byte
	parts       int
	first, last sim.Time
}

func keep(to *[]carried) func(card.Carried) {
	return func(f card.Carried) {
		*to = append(*to, carried{bytes.Clone(f.Frame), f.Parts, f.First, f.Last})
	}
}

// atmRun builds configs/atm-ip.toml's UDP and TCP sweeps cut to two
// sizes and a few messages, without its TP4 sweep.
func atmRun(t *testing.T) (*machine.Run, [2]*atm.Card) {
	t.Helper()
	exp := machinetest.Edit(t, "../../../configs/atm-ip.toml").Delete("workload.then").Delete("workload.tp4").
		Set("workload.tcp.sizes", []int64{64, 16384}).Set("workload.udp.sizes", []int64{64, 16384}).
		Set("workload.tcp.messages", 2).Set("workload.tcp.warmup", 1).
		Set("workload.udp.messages", 2).Set("workload.udp.warmup", 1).Experiment()
	r, err := machine.New(exp, machine.Options{NoCapture: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	var cards [2]*atm.Card
	for i, h := range r.Hosts {
		cards[i] = machinetest.ATMCards(h)[0]
	}
	return r, cards
}

// The board's Line fires every cell its line end sends. Each PDU a card
// puts on its line is seen whole when its last cell goes
// (SentFrames), and at the other card when its last cell arrives
// (ArrivedFrames, the same as Whole): the same bytes, as many as the
// driver sent, its cells those of an AAL5 PDU of that length, spread
// over at least their slots on the line, and leaving before they arrive.
func TestSegmenterSeesEveryPDU(t *testing.T) {
	r, cards := atmRun(t)
	var sent, arrived [2][]carried
	var whole [2][][]byte
	var cells [2]uint64
	for i, c := range cards {
		c.Dev.Line.Connect(func(*atmnet.Cell) { cells[i]++ })
		c.SentFrames().Connect(keep(&sent[i]))
		c.ArrivedFrames().Connect(keep(&arrived[i]))
		c.Whole().Connect(func(f []byte) { whole[i] = append(whole[i], bytes.Clone(f)) })
	}
	if _, err := r.Execute(machine.Options{}); err != nil {
		t.Fatal(err)
	}
	p := cards[0].End.Link().Params()
	for i, c := range cards {
		other := 1 - i
		if n := c.End.Stats().TxCells; cells[i] != n {
			t.Errorf("card %d: the board's Line fired %d cells, its line end sent %d", i, cells[i], n)
		}
		if n := c.Driver.Stats().TxPDUs; uint64(len(sent[i])) != n || n == 0 {
			t.Errorf("card %d: %d PDUs seen sent, the driver sent %d", i, len(sent[i]), n)
		}
		if len(arrived[other]) != len(sent[i]) || len(whole[other]) != len(sent[i]) {
			t.Fatalf("card %d sent %d PDUs, %d arrived (%d whole)", i, len(sent[i]), len(arrived[other]), len(whole[other]))
		}
		for j, s := range sent[i] {
			a := arrived[other][j]
			if !bytes.Equal(s.frame, a.frame) || !bytes.Equal(a.frame, whole[other][j]) {
				t.Fatalf("card %d's PDU %d: sent %d bytes, arrived %d", i, j, len(s.frame), len(a.frame))
			}
			cells := (len(s.frame) + 8 + atmnet.PayloadSize - 1) / atmnet.PayloadSize
			if s.parts != cells || a.parts != cells {
				t.Errorf("card %d's PDU %d of %d bytes: %d cells sent, %d arrived, want %d", i, j, len(s.frame), s.parts, a.parts, cells)
			}
			least := sim.Time(cells-1)*p.SlotTime() + p.CellTime()
			if s.last-s.first < least || a.last-a.first < least {
				t.Errorf("card %d's PDU %d: %v on the line sending, %v arriving, under %v", i, j, s.last-s.first, a.last-a.first, least)
			}
			if a.first <= s.first || a.last <= s.last {
				t.Errorf("card %d's PDU %d: sent %v-%v, arrived %v-%v", i, j, s.first, s.last, a.first, a.last)
			}
		}
	}
}

// A listener that comes in the middle of a PDU sees the PDUs from the
// next one on, never a part of one; once nobody listens, the card stops
// gathering the board's cells at the next one it sends (the board's Line
// source has no listener left).
func TestSegmenterListenedForAWhile(t *testing.T) {
	r, cards := atmRun(t)
	c := cards[0]
	var sent, arrived []carried
	cards[1].ArrivedFrames().Connect(keep(&arrived))
	// The other card's Received fires at the first cell of each PDU, one
	// cell time and the switch after it left: the sender is then in the
	// middle of the PDU (its cells are paced further apart).
	firsts, inProgress := 0, -1
	var off func()
	cards[1].Received().Connect(func([]byte) {
		firsts++
		if firsts == 20 {
			inProgress = len(arrived)
			off = c.SentFrames().Connect(func(f card.Carried) {
				keep(&sent)(f)
				if len(sent) == 4 {
					off()
				}
			})
		}
	})
	if _, err := r.Execute(machine.Options{}); err != nil {
		t.Fatal(err)
	}
	if inProgress < 0 || len(sent) != 4 || len(arrived) < inProgress+5 {
		t.Fatalf("connected at PDU %d, %d PDUs seen sent, %d arrived", inProgress, len(sent), len(arrived))
	}
	if arrived[inProgress].parts < 2 {
		t.Fatalf("the PDU in progress has %d cell", arrived[inProgress].parts)
	}
	for j, s := range sent {
		a := arrived[inProgress+1+j]
		if !bytes.Equal(a.frame, s.frame) || a.parts != s.parts {
			t.Errorf("PDU %d seen sent (%d bytes, %d cells) is not arrived PDU %d (%d bytes, %d cells)", j, len(s.frame), s.parts, inProgress+1+j, len(a.frame), a.parts)
		}
	}
	if c.Dev.Line.Listened() {
		t.Error("the card still gathers the board's cells with nobody listening")
	}
}

// The Yes V2 experiments of configs/atm-yesv2.toml: raw sockets whose
// PDUs are whole cells with no trailer (the MSNL-like SAR, the driver's
// first cell marked), others with AAL5, on loop-back cables and through
// a switch that interleaves two senders' cells (the senders receive
// nothing). The cards see every PDU
// their drivers sent and received; Whole only the AAL5 ones.
func TestSegmenterSeesRawPDUs(t *testing.T) {
	exp, err := machine.LoadExperiment("../../../configs/atm-yesv2.toml")
	if err != nil {
		t.Fatal(err)
	}
	r, err := machine.New(exp, machine.Options{NoCapture: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	type seen struct{ sent, arrived, whole, raw int }
	count := map[string]*seen{}
	for _, h := range r.Hosts {
		c := machinetest.ATMCards(h)[0]
		s := &seen{}
		count[h.Name] = s
		c.SentFrames().Connect(func(card.Carried) { s.sent++ })
		c.ArrivedFrames().Connect(func(f card.Carried) {
			s.arrived++
			if len(f.Frame) == f.Parts*atmnet.PayloadSize {
				s.raw++ // whole cells: no trailer taken off
			}
		})
		c.Whole().Connect(func([]byte) { s.whole++ })
	}
	if _, err := r.Execute(machine.Options{}); err != nil {
		t.Fatal(err)
	}
	raw := 0
	for _, h := range r.Hosts {
		d := machinetest.ATMCards(h)[0].Driver.Stats()
		s := count[h.Name]
		if uint64(s.sent) != d.TxPDUs || uint64(s.arrived) != d.RxPDUs || d.TxPDUs+d.RxPDUs == 0 {
			t.Errorf("%s: %d PDUs seen sent, %d arrived; the driver sent %d, received %d", h.Name, s.sent, s.arrived, d.TxPDUs, d.RxPDUs)
		}
		if s.whole+s.raw != s.arrived {
			t.Errorf("%s: %d PDUs arrived, %d whole AAL5 ones and %d raw", h.Name, s.arrived, s.whole, s.raw)
		}
		raw += s.raw
	}
	if raw == 0 {
		t.Error("no raw PDU seen")
	}
}
