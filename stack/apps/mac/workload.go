package mac

import (
	"fmt"

	"simkron/report/shape"
	"simkron/sim"
	"simkron/stack/kernel"
	"simkron/stack/netdev"
	"simkron/workload"
)

func init() {
	workload.Register(workload.Type{
		Name:   "mac",
		Help:   "MAC-level frame sender and receiver through the network driver: throughput and cycles per frame by layer",
		Params: func() any { p := DefaultParams(); return &p },
		Hosts: func(params any) []workload.HostRef {
			p := params.(*Params)
			refs := []workload.HostRef{{Key: "sender", Name: p.Sender}}
			if !p.Loopback {
				refs = append(refs, workload.HostRef{Key: "receiver", Name: p.Receiver, Peer: "sender"})
			}
			return refs
		},
		New: newWorkload,
	})
}

// Card is what the workload needs of a host's network card and its
// driver.
type Card interface {
	DeviceName() string
	// Plugged reports whether the card is plugged into a segment.
	Plugged() bool
	StationAddress() [6]byte
	// Queue is the driver's device queue in the kernel's device layer.
	Queue() int
	// TxTime reads the driver's accumulated transmit time and count.
	TxTime() (sim.Time, uint64)
	// SetLoopback makes the driver loop frames back: no card, no wire.
	SetLoopback(on bool)
	// WireRate is the segment's signalling rate (0 when unplugged).
	WireRate() sim.BitRate
}

func newWorkload(env workload.Env, params any) (workload.Workload, error) {
	p := *params.(*Params)
	find := func(role, name string) (*Endpoint, Card, error) {
		wh, err := env.Host(name)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", role, err)
		}
		cards := workload.FindAll[Card](wh)
		if len(cards) == 0 {
			return nil, nil, fmt.Errorf("host %q has no network card", name)
		}
		card := cards[0]
		if !p.Loopback && !card.Plugged() {
			return nil, nil, fmt.Errorf("host %q: its card %q is not plugged into a segment ([[host.nic]])", name, card.DeviceName())
		}
		k, _ := workload.Find[*kernel.Kernel](wh)
		ns, _ := workload.Find[*netdev.Stack](wh)
		return &Endpoint{Name: name, Kernel: k, Net: ns, Dev: card.Queue(), MAC: card.StationAddress(), TxTime: card.TxTime}, card, nil
	}
	tx, txCard, err := find("sender", p.Sender)
	if err != nil {
		return nil, err
	}
	rx := tx
	if !p.Loopback {
		if p.Receiver == p.Sender {
			return nil, fmt.Errorf("receiver: the receiver is the sender; set loopback = true to measure without the wire")
		}
		if rx, _, err = find("receiver", p.Receiver); err != nil {
			return nil, err
		}
	}
	if p.Loopback {
		txCard.SetLoopback(true)
	}
	return New(p, tx, rx, txCard.WireRate())
}

// Result returns the rows, the frame table and the cycles per frame by
// layer.
func (b *Bench) Result() (workload.Result, error) {
	if b.ended < 2 {
		b.sum() // a run that stopped first
	}
	res := workload.Result{Sections: []workload.Section{{Name: "mac", Value: b.rows}}}
	t := shape.Table{
		Title: "MAC-level frames (payload bytes; throughput of payload; tx time = loading the card to transmit done)",
		Columns: []shape.Column{{Name: "payload", Doc: "bytes of payload in each frame"}, {Name: "sent", Doc: "frames sent"},
			{Name: "received", Doc: "frames received"}, {Name: "corrupt", Doc: "frames received with wrong bytes"},
			{Name: "Mbit/s", Doc: "throughput of the payload received"}, {Name: "frames/s", Doc: "frames received per second"},
			{Name: "tx time", Unit: "us", Doc: "the mean time from loading the card to its transmit-done interrupt"},
			{Name: "wire time", Unit: "us", Doc: "one frame's time on the wire: preamble, frame and inter-frame gap"}},
	}
	for _, m := range b.rows {
		row := []string{fmt.Sprint(m.Size), fmt.Sprint(m.Sent), fmt.Sprint(m.Received), fmt.Sprint(m.Corrupt),
			fmt.Sprintf("%.3f", m.ThroughputMbps), fmt.Sprintf("%.1f", m.FramesPerSec),
			fmt.Sprintf("%.1f", m.TxTimeUS), fmt.Sprintf("%.1f", m.WireTimeUS)}
		if m.Sent == 0 {
			// A run that stopped before this size: nothing measured.
			for i := 4; i < len(row); i++ {
				row[i] = "-"
			}
		}
		t.Rows = append(t.Rows, row)
	}
	res.Figures.Tables = append(res.Figures.Tables, t)
	for _, dir := range []string{shape.Send, shape.Receive} {
		bd := shape.Breakdown{Protocol: "MAC", Direction: dir, SizeName: "payload", Unit: "frame",
			What: "the sending host's work for each frame"}
		if dir == shape.Receive {
			bd.What = "the receiving host's work for each frame"
		}
		for _, m := range b.rows {
			ls := m.Send
			if dir == shape.Receive {
				ls = m.Receive
			}
			pt := shape.Point{Size: m.Size}
			for _, l := range ls {
				pt.Layers = append(pt.Layers, shape.LayerCycles{Layer: l.Layer, Cycles: l.CyclesPerFrame})
			}
			bd.Points = append(bd.Points, pt)
		}
		if bd.HasLayers() {
			res.Figures.Breakdowns = append(res.Figures.Breakdowns, bd)
			res.Figures.Tables = append(res.Figures.Tables, shape.LayerTable(bd))
		}
	}
	return res, nil
}
