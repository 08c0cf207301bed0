package timeline

import (
	"fmt"

	"simkron/card"
	"simkron/sim"
)

// A card's frames and DMA on the timeline: a thread for what it sends and
// one for what it receives, a slice per frame for its time on the wire,
// an async slice per burst of its DMA engine; a network's frames as async
// slices in the network's process, with a flow from each frame's
// transmission to each card that received it.

// network is the process of one network (an Ethernet segment): the frames
// on it.
type network struct {
	name  string
	pid   int
	cards int // the cards plugged into it
	// sent are the frames sent within the window that some card on the
	// network has not yet received, oldest first.
	sent []*frame
}

// frame is one frame sent on a network.
type frame struct {
	data  string
	at    sim.Time
	from  *cardState
	ser   sim.Time // its serialisation at the sender's wire rate
	seen  int      // cards that have received it
	seenb []*cardState
}

// cardState is the writer's state of one card of a host.
type cardState struct {
	h       *host
	c       card.Card
	name    string
	net     string
	network *network
	rate    sim.BitRate
	tx, rx  *track
	dmaID   uint64 // the DMA burst in progress, 0 for none
}

func newCard(h *host, c card.Card) *cardState {
	cs := &cardState{h: h, c: c, name: c.DeviceName()}
	if a, ok := c.(card.Attached); ok {
		cs.net = a.NetworkName()
	}
	if w, ok := c.(card.Wire); ok {
		cs.rate = w.WireRate()
	}
	return cs
}

// connect connects the card's listeners when the window opens.
func (cs *cardState) connect() {
	h := cs.h
	h.off = append(h.off, cs.c.Received().Connect(cs.received))
	if s, ok := cs.c.(card.Sender); ok {
		h.off = append(h.off, s.Sent().Connect(cs.sent))
	}
	if b, ok := cs.c.(card.BusMaster); ok && b.DMA() != nil {
		h.off = append(h.off, b.DMA().Connect(cs.dma))
	}
}

// close ends a DMA burst in progress when the window closes.
func (cs *cardState) close() {
	if cs.dmaID != 0 {
		cs.dma(false)
	}
	if n := cs.network; n != nil {
		n.sent = n.sent[:0]
	}
}

// serialisation is the time n bytes take on the card's wire, preamble
// included (8 bytes); 0 when the rate is not known.
func (cs *cardState) serialisation(n int) sim.Time {
	if cs.rate <= 0 {
		return 0
	}
	return cs.rate.ByteTime(n + 8)
}

func (cs *cardState) sent(f []byte) {
	t := cs.h.t
	now := t.k.Now()
	if cs.tx == nil {
		cs.tx = cs.h.newTrack(cs.name + " tx")
	}
	ser := cs.serialisation(len(f))
	t.emit(&event{ph: phComplete, name: fmt.Sprintf("tx %dB", len(f)), cat: "frame", pid: cs.h.pid, tid: cs.tx.tid, ts: int64(now), dur: int64(ser)})
	if n := cs.network; n != nil && n.cards > 1 {
		n.sent = append(n.sent, &frame{data: string(f), at: now, from: cs, ser: ser})
	}
}

func (cs *cardState) received(f []byte) {
	t := cs.h.t
	now := t.k.Now()
	if cs.rx == nil {
		cs.rx = cs.h.newTrack(cs.name + " rx")
	}
	ser := min(cs.serialisation(len(f)), now)
	t.emit(&event{ph: phComplete, name: fmt.Sprintf("rx %dB", len(f)), cat: "frame", pid: cs.h.pid, tid: cs.rx.tid, ts: int64(now - ser), dur: int64(ser)})
	n := cs.network
	if n == nil {
		return
	}
	for i, fr := range n.sent {
		if fr.from == cs || fr.data != string(f) || seen(fr, cs) {
			continue
		}
		fr.seen++
		fr.seenb = append(fr.seenb, cs)
		from := fr.from
		id := t.newID()
		name := fmt.Sprintf("%s.%s → %s.%s %dB", from.h.name, from.name, cs.h.name, cs.name, len(f))
		args := string(members(nil).int("bytes", int64(len(f))))
		t.emit(&event{ph: phAsyncBegin, name: name, cat: "wire", pid: n.pid, tid: 0, ts: int64(fr.at), id: id, args: args})
		t.emit(&event{ph: phAsyncEnd, name: name, cat: "wire", pid: n.pid, tid: 0, ts: int64(now), id: id})
		// The arrow from the sender's slice of the frame to the
		// receiver's.
		t.emit(&event{ph: phFlowStart, name: "frame", cat: "wire", pid: from.h.pid, tid: from.tx.tid, ts: int64(fr.at), id: id})
		t.emit(&event{ph: phFlowEnd, name: "frame", cat: "wire", pid: cs.h.pid, tid: cs.rx.tid, ts: int64(now), id: id})
		if fr.seen == n.cards-1 {
			n.sent = append(n.sent[:i], n.sent[i+1:]...)
		}
		return
	}
}

func seen(fr *frame, cs *cardState) bool {
	for _, c := range fr.seenb {
		if c == cs {
			return true
		}
	}
	return false
}

func (cs *cardState) dma(busy bool) {
	t := cs.h.t
	name := cs.name + " DMA"
	switch {
	case busy && cs.dmaID == 0:
		cs.dmaID = t.newID()
		t.emit(&event{ph: phAsyncBegin, name: name, cat: "dma", pid: cs.h.pid, tid: 0, ts: int64(t.k.Now()), id: cs.dmaID})
	case !busy && cs.dmaID != 0:
		t.emit(&event{ph: phAsyncEnd, name: name, cat: "dma", pid: cs.h.pid, tid: 0, ts: int64(t.k.Now()), id: cs.dmaID})
		cs.dmaID = 0
	}
}
