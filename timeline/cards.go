package timeline

import (
	"fmt"
	"slices"

	"simkron/card"
	"simkron/sim"
)

// A card's frames and DMA on the timeline: a thread for what it sends and
// one for what it receives, a slice per frame for its time on the wire,
// an async slice per burst of its DMA engine; a network's frames as async
// slices in the network's process, with a flow from each frame's
// transmission to each card that received it. A card that carries its
// frames in parts (an ATM card's AAL5 PDUs in cells: card.Segmenter)
// shows each frame from its first part's first bit to its last part's
// last bit on the line, and its network each from the first bit sent to
// the last bit received.

// network is the process of one network (an Ethernet segment, an ATM
// switch): the frames on it.
type network struct {
	name  string
	link  card.Link
	pid   int
	cards int // the cards plugged into it
	// sent are the frames sent within the window that some card on the
	// network has not yet received, oldest first; parts the same of
	// frames carried in parts, each received by one card.
	sent  []*frame
	parts []*partFrame
}

// partFrame is one frame carried in parts, sent on a network.
type partFrame struct {
	data        string
	first, last sim.Time // its first bit and its last bit on the sender's line
	parts       int
	from        *cardState
	tr          *track // the sender's track it is on
}

// maxInFlight bounds the frames carried in parts a network keeps waiting
// for their arrival: more are lost than can be on the way.
const maxInFlight = 1024

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
	// txLanes and rxLanes are the tracks of a card that carries frames in
	// parts, whose frames on one line may overlap (PDUs of two VCs
	// interleaved): each frame goes on the first lane free by its start.
	txLanes, rxLanes []lane
}

// lane is a track of a card's frames and when its last frame ends.
type lane struct {
	tr  *track
	end sim.Time
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

// connect connects the card's listeners when the window opens. What
// reaches them after the window's end, while the host's part waits for
// its core to catch up, is left out: the cards' events are at the event
// clock's time, which has passed the window.
func (cs *cardState) connect() {
	h := cs.h
	if s, ok := cs.c.(card.Segmenter); ok {
		h.off = append(h.off, s.SentFrames().Connect(cs.sentParts), s.ArrivedFrames().Connect(cs.arrivedParts))
	} else {
		h.off = append(h.off, cs.c.Received().Connect(cs.received))
		if s, ok := cs.c.(card.Sender); ok {
			h.off = append(h.off, s.Sent().Connect(cs.sent))
		}
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
		clear(n.parts)
		n.parts = n.parts[:0]
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

// frameSlice draws a frame of n bytes on the card's track tr ("tx" or
// "rx": dir), made at its first frame, from ts for dur.
func (cs *cardState) frameSlice(tr **track, dir string, n int, ts, dur sim.Time) {
	if *tr == nil {
		*tr = cs.h.newTrack(cs.name + " " + dir)
	}
	cs.h.t.emit(&event{ph: phComplete, name: fmt.Sprintf("%s %dB", dir, n), cat: "frame", pid: cs.h.pid, tid: (*tr).tid, ts: int64(ts), dur: int64(dur)})
}

func (cs *cardState) sent(f []byte) {
	t := cs.h.t
	if t.closed {
		return // the host's part may last longer; the wire's does not
	}
	now := t.k.Now()
	ser := cs.serialisation(len(f))
	cs.frameSlice(&cs.tx, "tx", len(f), now, ser)
	if n := cs.network; n != nil && n.cards > 1 {
		n.sent = append(n.sent, &frame{data: string(f), at: now, from: cs, ser: ser})
	}
}

func (cs *cardState) received(f []byte) {
	t := cs.h.t
	if t.closed {
		return // the host's part may last longer; the wire's does not
	}
	now := t.k.Now()
	ser := min(cs.serialisation(len(f)), now)
	cs.frameSlice(&cs.rx, "rx", len(f), now-ser, ser)
	n := cs.network
	if n == nil {
		return
	}
	for i, fr := range n.sent {
		if fr.from == cs || fr.data != string(f) || slices.Contains(fr.seenb, cs) {
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

func (cs *cardState) dma(busy bool) {
	t := cs.h.t
	name := cs.name + " DMA"
	switch {
	case busy && cs.dmaID == 0 && !t.closed:
		cs.dmaID = t.newID()
		t.emit(&event{ph: phAsyncBegin, name: name, cat: "dma", pid: cs.h.pid, tid: 0, ts: int64(t.k.Now()), id: cs.dmaID})
	case !busy && cs.dmaID != 0:
		t.emit(&event{ph: phAsyncEnd, name: name, cat: "dma", pid: cs.h.pid, tid: 0, ts: int64(t.k.Now()), id: cs.dmaID})
		cs.dmaID = 0
	}
}

// onLane returns the track of lanes free from from on, a new one if
// none is, and marks it busy until to.
func (cs *cardState) onLane(lanes *[]lane, name string, from, to sim.Time) *track {
	for i := range *lanes {
		if l := &(*lanes)[i]; l.end <= from {
			l.end = to
			return l.tr
		}
	}
	tr := cs.h.newTrack(name)
	*lanes = append(*lanes, lane{tr: tr, end: to})
	return tr
}

// partsName names a frame carried in parts on its card's tracks.
func partsName(dir string, f card.Carried) string {
	return fmt.Sprintf("%s %dB, %d cells", dir, len(f.Frame), f.Parts)
}

// sentParts shows a frame the card sent in parts, once its last part
// went.
func (cs *cardState) sentParts(f card.Carried) {
	t := cs.h.t
	if t.closed {
		return // the host's part may last longer; the wire's does not
	}
	tr := cs.onLane(&cs.txLanes, cs.name+" tx", f.First, f.Last)
	t.emit(&event{ph: phComplete, name: partsName("tx", f), cat: "frame", pid: cs.h.pid, tid: tr.tid, ts: int64(f.First), dur: int64(f.Last - f.First)})
	if n := cs.network; n != nil {
		if len(n.parts) == maxInFlight {
			n.parts[0] = nil
			n.parts = n.parts[1:]
		}
		n.parts = append(n.parts, &partFrame{data: string(f.Frame), first: f.First, last: f.Last, parts: f.Parts, from: cs, tr: tr})
	}
}

// arrivedParts shows a frame that arrived at the card in parts, once its
// last part did, and its way from the card that sent it: an async slice
// in the network's process and a flow from the sender's slice of it.
func (cs *cardState) arrivedParts(f card.Carried) {
	t := cs.h.t
	if t.closed {
		return // the host's part may last longer; the wire's does not
	}
	tr := cs.onLane(&cs.rxLanes, cs.name+" rx", f.First, f.Last)
	t.emit(&event{ph: phComplete, name: partsName("rx", f), cat: "frame", pid: cs.h.pid, tid: tr.tid, ts: int64(f.First), dur: int64(f.Last - f.First)})
	n := cs.network
	if n == nil {
		return
	}
	i := slices.IndexFunc(n.parts, func(p *partFrame) bool { return p.data == string(f.Frame) })
	if i < 0 {
		return // sent before the window, or by no card of the trace's
	}
	fr := n.parts[i]
	n.parts = slices.Delete(n.parts, i, i+1)
	from := fr.from
	id := t.newID()
	name := fmt.Sprintf("%s.%s → %s.%s %dB", from.h.name, from.name, cs.h.name, cs.name, len(f.Frame))
	args := string(members(nil).int("bytes", int64(len(f.Frame))).int("cells", int64(fr.parts)))
	t.emit(&event{ph: phAsyncBegin, name: name, cat: "wire", pid: n.pid, tid: 0, ts: int64(fr.first), id: id, args: args})
	t.emit(&event{ph: phAsyncEnd, name: name, cat: "wire", pid: n.pid, tid: 0, ts: int64(f.Last), id: id})
	// The arrow from the sender's slice of the frame to the receiver's.
	t.emit(&event{ph: phFlowStart, name: "frame", cat: "wire", pid: from.h.pid, tid: fr.tr.tid, ts: int64(fr.first), id: id})
	t.emit(&event{ph: phFlowEnd, name: "frame", cat: "wire", pid: cs.h.pid, tid: tr.tid, ts: int64(f.Last), id: id})
}
