package ethersim

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"simkron/sim"
	"simkron/trace"
)

// Segment is one Ethernet: either a shared half-duplex medium (ModeShared,
// see shared.go) or a star of full-duplex links to one store-and-forward
// switch (ModeSwitch, see switch.go). Stations join it through Attach.
type Segment struct {
	net  *Network
	k    *sim.Scheduler
	name string
	p    SegmentParams

	// Derived times at p.Rate.
	ifg, slot, jam sim.Time

	atts   []*Attachment // in attach order, which is delivery order
	byName map[string]*Attachment

	// Shared mode: wire occupancy bookkeeping for BusyTime.
	active    int
	busySince sim.Time

	// Switch mode: the forwarding table (source MAC -> port), the
	// attachments by port (nil: another part's, split.go), the port of
	// each name given by Split, and the share of a split switch.
	fdb    map[MAC]int
	local  []*Attachment
	portOf map[string]int
	split  *split

	freeBufs    []*frameBuf
	freeTransit []*transit

	taps   []*pcapgo.Writer
	tapErr error

	// Trace is the segment's trace source: it fires at every trace point
	// of its stations (TraceKind). A listener must not transmit or
	// schedule.
	Trace trace.Source[TraceRecord]

	stats SegmentStats
}

// SegmentStats counts what happened on a segment.
type SegmentStats struct {
	Frames     uint64   // frames sent completely by a station (each once, however many receive it)
	Bytes      uint64   // bytes of those frames, FCS included, preamble not
	Collisions uint64   // transmission attempts that ended in a collision; each left a runt that nobody received
	BusyTime   sim.Time // shared: time the medium carried a signal; switch: summed over the stations' uplinks
	Forwarded  uint64   // switch: frames sent to one learned port
	Flooded    uint64   // switch: frames sent to every other port (unknown, broadcast or multicast destination)
	Filtered   uint64   // switch: frames dropped because the destination sits on the ingress port
}

// ErrBusy is returned by Transmit while a transmission is in progress.
var ErrBusy = errors.New("ethersim: a transmission is already in progress")

func newSegment(n *Network, name string, p SegmentParams) *Segment {
	return &Segment{
		net:    n,
		k:      n.k,
		name:   name,
		p:      p,
		ifg:    p.Rate.ByteTime(IFGBits / 8),
		slot:   p.slotTime(),
		jam:    p.Rate.ByteTime(JamBits / 8),
		byName: map[string]*Attachment{},
		fdb:    map[MAC]int{},
	}
}

// Name returns the segment's name.
func (s *Segment) Name() string { return s.name }

// Params returns the segment's parameters.
func (s *Segment) Params() SegmentParams { return s.p }

// Attachments returns the attachments in attach order.
func (s *Segment) Attachments() []*Attachment { return append([]*Attachment(nil), s.atts...) }

// wireTime is how long a frame of n bytes (FCS included) occupies a wire.
func (s *Segment) wireTime(n int) sim.Time { return s.p.Rate.ByteTime(PreambleBytes + n) }

// Attach connects station st to the segment as name (hierarchical,
// "hostA.nic0", unique on the segment) with faults applied to the frames
// it receives. Its random streams are derived from segment/name.
func (s *Segment) Attach(name string, st Station, faults FaultParams) (*Attachment, error) {
	if name == "" {
		return nil, fmt.Errorf("ethersim: segment %q: attachment has no name", s.name)
	}
	if s.byName[name] != nil {
		return nil, fmt.Errorf("ethersim: segment %q: %q attached twice", s.name, name)
	}
	if st == nil {
		return nil, fmt.Errorf("ethersim: segment %q: %q has no station", s.name, name)
	}
	if err := faults.Validate(); err != nil {
		return nil, fmt.Errorf("ethersim: segment %q: %q: %w", s.name, name, err)
	}
	port := len(s.atts)
	if s.split != nil {
		p, ok := s.portOf[name]
		if !ok || s.split.parts[p] != s.split.self {
			return nil, fmt.Errorf("ethersim: segment %q: %q is not one of this part's stations", s.name, name)
		}
		port = p
	}
	stream := s.name + "/" + name
	a := &Attachment{
		port:       port,
		seg:        s,
		name:       name,
		st:         st,
		faults:     faults,
		backoffRng: s.k.Stream(stream + "/backoff"),
		faultRng:   s.k.Stream(stream + "/faults"),
		head:       histLen - 1, // the first signal goes to hist[0]
	}
	ev := s.name + "." + name
	a.tryEv = sim.NewEvent(ev+".try", a.try)
	a.endEv = sim.NewEvent(ev+".txend", a.txEnd)
	a.collEv = sim.NewEvent(ev+".collision", a.collide)
	a.out.startEv = sim.NewEvent(ev+".port.start", a.portStart)
	a.out.endEv = sim.NewEvent(ev+".port.end", a.portEnd)
	s.atts = append(s.atts, a)
	s.byName[name] = a
	if s.split != nil {
		s.local[port] = a
	}
	return a, nil
}

// Stats returns the segment's counters, BusyTime up to now.
func (s *Segment) Stats() SegmentStats {
	st := s.stats
	if s.active > 0 {
		st.BusyTime += s.k.Now() - s.busySince
	}
	return st
}

// Tap writes every frame that completes on the segment to w as a pcap
// file (Ethernet link type, snap length 65535, nanosecond timestamps): in
// shared mode each frame that was sent without collision, in switch mode
// each frame a station sent to the switch; each once, as transmitted
// (before receive faults), without its FCS. A frame's timestamp is the
// simulated time its last bit left the sender, counted from the Unix
// epoch, so the file's bytes depend only on the simulation. The header is
// written now; a later write error stops that tap and is kept for TapErr.
func (s *Segment) Tap(w io.Writer) error {
	pw := pcapgo.NewWriterNanos(w)
	if err := pw.WriteFileHeader(maxFrameLimit, layers.LinkTypeEthernet); err != nil {
		return fmt.Errorf("ethersim: segment %q: pcap tap: %w", s.name, err)
	}
	s.taps = append(s.taps, pw)
	return nil
}

// TapErr returns the first write error of any tap, or nil.
func (s *Segment) TapErr() error { return s.tapErr }

func (s *Segment) writeTaps(frame []byte) {
	n := len(frame) - FCSBytes
	ci := gopacket.CaptureInfo{
		Timestamp:     time.Unix(0, int64(s.k.Now()/sim.Nanosecond)).UTC(),
		CaptureLength: n,
		Length:        n,
	}
	for i := 0; i < len(s.taps); i++ {
		if err := s.taps[i].WritePacket(ci, frame[:n]); err != nil {
			if s.tapErr == nil {
				s.tapErr = fmt.Errorf("ethersim: segment %q: pcap tap: %w", s.name, err)
			}
			s.taps = append(s.taps[:i], s.taps[i+1:]...)
			i--
		}
	}
}

// TraceKind says what a TraceRecord reports.
type TraceKind uint8

// Trace points.
const (
	TraceTxStart   TraceKind = iota // an attempt starts; Arg = frame bytes
	TraceDefer                      // the medium (or own gap) is busy; Arg = wait in ps / 1000 (ns)
	TraceCollision                  // collision detected, jam starts; Arg = collisions so far
	TraceBackoff                    // jam ended; Arg = k, the slots waited
	TraceAbort                      // attempt limit reached
	TraceTxEnd                      // frame sent completely; Arg = frame bytes
	TraceRx                         // frame handed to the station; Arg = frame bytes
	TraceDrop                       // receive fault: frame lost
	TraceCorrupt                    // receive fault: Arg = the bit flipped
	TraceDuplicate                  // receive fault: frame delivered twice
	TraceReorder                    // receive fault: frame held back; Arg = frame bytes
	TraceEnqueue                    // switch: frame queued on the port to this attachment; Arg = queue length
	TraceFlood                      // switch: frame from this attachment flooded
	TraceFilter                     // switch: frame from this attachment filtered
)

var traceNames = [...]string{"txstart", "defer", "collision", "backoff", "abort", "txend", "rx", "drop", "corrupt", "duplicate", "reorder", "enqueue", "flood", "filter"}

func (k TraceKind) String() string {
	if int(k) < len(traceNames) {
		return traceNames[k]
	}
	return fmt.Sprintf("TraceKind(%d)", k)
}

// TraceRecord is one trace point: at simulated time At, Kind happened at
// Attachment (its name).
type TraceRecord struct {
	At         sim.Time
	Attachment string
	Kind       TraceKind
	Arg        int
}

func (s *Segment) emit(a *Attachment, kind TraceKind, arg int) {
	if s.Trace.Listened() {
		s.Trace.Fire(TraceRecord{At: s.k.Now(), Attachment: a.name, Kind: kind, Arg: arg})
	}
}

// frameBuf is a pooled, reference-counted copy of a frame in flight.
type frameBuf struct {
	data []byte
	refs int
}

func (s *Segment) getBuf(frame []byte) *frameBuf {
	var b *frameBuf
	if n := len(s.freeBufs); n > 0 {
		b = s.freeBufs[n-1]
		s.freeBufs = s.freeBufs[:n-1]
	} else {
		b = &frameBuf{}
	}
	b.data = append(b.data[:0], frame...)
	b.refs = 1
	return b
}

func (s *Segment) release(b *frameBuf) {
	b.refs--
	switch {
	case b.refs == 0:
		s.freeBufs = append(s.freeBufs, b)
	case b.refs < 0:
		panic(fmt.Sprintf("ethersim: segment %q: frame buffer released twice", s.name))
	}
}

// transit is a pooled frame on its way somewhere at a known time, with its
// own reusable event: the pool grows to the number of frames in flight at
// once and then allocates nothing.
type transit struct {
	seg  *Segment
	ev   *sim.Event // a delivery's, made at its first
	wire *sim.Event // a lookup's (split.go), made at its first
	kind transitKind
	buf  *frameBuf // one reference, owned by the transit
	from *Attachment
	port int // a lookup's ingress port (split.go)
}

type transitKind uint8

const (
	deliverAll  transitKind = iota // shared: to every attachment but from
	deliverOne                     // switch: from (the port's station) receives it
	deliverLate                    // a reordered frame: from's station receives it, no more faults
)

// getTransit returns a transit from the pool, or a new one.
func (s *Segment) getTransit() *transit {
	if n := len(s.freeTransit); n > 0 {
		t := s.freeTransit[n-1]
		s.freeTransit = s.freeTransit[:n-1]
		return t
	}
	return &transit{seg: s}
}

// send schedules buf (whose reference the transit takes over) to arrive at.
func (s *Segment) send(kind transitKind, buf *frameBuf, from *Attachment, at sim.Time) {
	t := s.getTransit()
	if t.ev == nil {
		t.ev = sim.NewEvent(s.name+".transit", t.fire)
	}
	t.kind, t.buf, t.from = kind, buf, from
	s.k.Schedule(t.ev, at)
}

func (t *transit) fire() {
	// Back to the pool first: a station may transmit from Receive and
	// reuse this transit at once.
	s, kind, buf, from := t.seg, t.kind, t.buf, t.from
	t.buf, t.from = nil, nil
	s.freeTransit = append(s.freeTransit, t)
	switch kind {
	case deliverAll:
		for _, a := range s.atts {
			if a != from {
				a.receive(buf.data)
			}
		}
	case deliverOne:
		from.receive(buf.data)
	case deliverLate:
		from.hand(buf.data, 1)
	}
	s.release(buf)
}

// Attachment is one station's port on a segment: its transmitter, and the
// receive faults of its link.
//
//	          Transmit
//	idle ───────────────► defer ◄──────────── backoff
//	 ▲                     │ medium idle + IFG    ▲
//	 │ OnTxDone(OK)        ▼                      │ jam sent, k·slot drawn
//	 └─────────────────── tx ──── collision ──► jam ──► idle (16th: Aborted)
//
// In switch mode only idle → defer (own gap) → tx → idle is used.
type Attachment struct {
	// OnTxDone, if set, is called when a transmission ends: its last bit
	// sent, or aborted after the attempt limit. The attachment is idle
	// again during the call, so it may Transmit the next frame.
	OnTxDone func(TxStatus)

	seg    *Segment
	name   string
	st     Station
	faults FaultParams

	backoffRng *rand.Rand
	faultRng   *rand.Rand
	backoff    func(collisions int) int // test hook; nil draws from backoffRng

	state  txState
	tx     *frameBuf
	status TxStatus

	// hist holds this attachment's latest transmissions (ring, newest at
	// hist[head]); enough to know every signal still on the wire.
	hist  [histLen]signal
	head  int
	nhist int

	tryEv, endEv, collEv *sim.Event

	out     port   // switch mode: the switch's output port towards this station
	port    int    // switch mode: the port's number (split.go)
	frames  uint64 // switch mode: frames started, for their lookups' order
	scratch []byte // a corrupted copy of a received frame

	stats AttachmentStats
}

// AttachmentStats counts one attachment's traffic and faults.
type AttachmentStats struct {
	TxFrames   uint64 `stat:"tx_frames" help:"frames sent completely"`
	TxBytes    uint64 `stat:"tx_bytes" help:"their bytes, FCS included"`
	RxFrames   uint64 `stat:"rx_frames" help:"frames handed to the station (duplicates count twice)"`
	RxBytes    uint64 `stat:"rx_bytes" help:"bytes of the frames delivered to the station"`
	Collisions uint64 `stat:"collisions" help:"collisions suffered"`
	Deferrals  uint64 `stat:"deferrals" help:"attempts that had to wait for the medium (or own gap)"`
	Aborts     uint64 `stat:"aborts" help:"frames given up after the attempt limit"`
	Dropped    uint64 `stat:"dropped" help:"receive fault: frames lost"`
	// Corrupted counts frames delivered with one bit flipped (a receive
	// fault), whatever the station does with them: a card whose address
	// filter refuses the frame (the bit was in the destination address)
	// never checks its FCS, so the card's CRC errors (an NE2000's CNTR1,
	// which the DP8390 tallies only for frames that pass address
	// recognition) are the corrupted frames less those refused.
	Corrupted  uint64 `stat:"corrupted" help:"receive fault: frames delivered with one bit flipped (the card's CRC errors count those its address filter passes)"`
	Duplicated uint64 `stat:"duplicated" help:"receive fault: frames delivered twice"`
	Reordered  uint64 `stat:"reordered" help:"receive fault: frames held back so that later ones overtook them"`
	QueuePeak  int    `stat:"queue_peak" help:"switch: most frames ever waiting on the port towards this station"`
}

type txState uint8

const (
	stIdle txState = iota
	stDefer
	stTx
	stJam
	stBackoff
)

// Name returns the attachment's name.
func (a *Attachment) Name() string { return a.name }

// Segment returns the segment the attachment is on.
func (a *Attachment) Segment() *Segment { return a.seg }

// Busy reports whether a transmission is in progress (deferring, sending,
// jamming or backing off).
func (a *Attachment) Busy() bool { return a.state != stIdle }

// Stats returns the attachment's counters.
func (a *Attachment) Stats() AttachmentStats { return a.stats }

// SetFaults changes the faults applied to frames arriving from now on
// (a cable pulled and plugged back, a link going bad for a while).
func (a *Attachment) SetFaults(f FaultParams) error {
	if err := f.Validate(); err != nil {
		return err
	}
	a.faults = f
	return nil
}

// Transmit sends frame (destination address through FCS; the card pads
// short frames and computes the FCS). The bytes are copied. It is an error
// to call Transmit while Busy, or with a frame shorter than MinFrame or
// longer than the segment's MaxFrame. The transmission starts now if the
// medium allows, otherwise it defers; OnTxDone reports the outcome.
func (a *Attachment) Transmit(frame []byte) error {
	if a.state != stIdle {
		return fmt.Errorf("%w on %s", ErrBusy, a.name)
	}
	if len(frame) < MinFrame {
		return fmt.Errorf("ethersim: %s: frame of %d bytes is shorter than %d", a.name, len(frame), MinFrame)
	}
	if uint64(len(frame)) > uint64(a.seg.p.MaxFrame) {
		return fmt.Errorf("ethersim: %s: frame of %d bytes is longer than %d", a.name, len(frame), a.seg.p.MaxFrame)
	}
	a.tx = a.seg.getBuf(frame)
	a.status = TxStatus{}
	a.state = stDefer
	a.attempt(true)
	return nil
}

// try is tryEv: the deferral or backoff wait is over.
func (a *Attachment) try() {
	if a.state == stDefer || a.state == stBackoff {
		a.attempt(false)
	}
}

// attempt starts sending now if the medium allows, or waits.
func (a *Attachment) attempt(first bool) {
	s := a.seg
	now := s.k.Now()
	if ready := a.readyAt(now); now < ready {
		if first {
			a.status.Deferred = true
		}
		a.state = stDefer
		a.stats.Deferrals++
		s.emit(a, TraceDefer, int((ready-now)/sim.Nanosecond))
		s.k.Schedule(a.tryEv, ready)
		return
	}
	a.start(now)
}

// txEnd is endEv: the frame's last bit, or the jam's, has left.
func (a *Attachment) txEnd() {
	switch a.state {
	case stTx:
		a.sent()
	case stJam:
		a.jamSent()
	default:
		panic(fmt.Sprintf("ethersim: %s: end of transmission in state %d", a.name, a.state))
	}
}

// sent finishes a successful transmission.
func (a *Attachment) sent() {
	s := a.seg
	now := s.k.Now()
	n := len(a.tx.data)
	a.stats.TxFrames++
	a.stats.TxBytes += uint64(n)
	s.stats.Frames++
	s.stats.Bytes += uint64(n)
	s.emit(a, TraceTxEnd, n)
	if len(s.taps) > 0 {
		s.writeTaps(a.tx.data)
	}
	if s.p.Mode == ModeShared {
		s.carrierOff()
		s.send(deliverAll, a.tx, a, now+s.p.Propagation)
	} else {
		// Its lookup at the switch was announced as it started.
		s.stats.BusyTime += a.hist[a.head].end - a.hist[a.head].start
		s.release(a.tx)
	}
	a.tx = nil
	a.status.OK = true
	a.done()
}

// done returns to idle and reports the outcome.
func (a *Attachment) done() {
	a.state = stIdle
	if a.OnTxDone != nil {
		a.OnTxDone(a.status)
	}
}

// receive hands a frame that reached this attachment to its station,
// after the link's faults.
func (a *Attachment) receive(frame []byte) {
	s := a.seg
	f := &a.faults
	if f.Drop > 0 && a.faultRng.Float64() < f.Drop {
		a.stats.Dropped++
		s.emit(a, TraceDrop, len(frame))
		return
	}
	if f.Corrupt > 0 && a.faultRng.Float64() < f.Corrupt {
		a.scratch = append(a.scratch[:0], frame...)
		bit := a.faultRng.IntN(len(frame) * 8)
		a.scratch[bit/8] ^= 1 << (bit % 8)
		frame = a.scratch
		a.stats.Corrupted++
		s.emit(a, TraceCorrupt, bit)
	}
	copies := 1
	if f.Duplicate > 0 && a.faultRng.Float64() < f.Duplicate {
		copies = 2
		a.stats.Duplicated++
		s.emit(a, TraceDuplicate, len(frame))
	}
	if f.Reorder > 0 && a.faultRng.Float64() < f.Reorder {
		a.stats.Reordered++
		s.emit(a, TraceReorder, len(frame))
		late := s.getBuf(frame)
		if copies == 2 {
			a.hand(frame, 1) // the duplicate goes on time, the frame late
		}
		s.send(deliverLate, late, a, s.k.Now()+f.reorderDelay())
		return
	}
	a.hand(frame, copies)
}

// hand gives copies of frame to the station.
func (a *Attachment) hand(frame []byte, copies int) {
	s := a.seg
	for range copies {
		a.stats.RxFrames++
		a.stats.RxBytes += uint64(len(frame))
		s.emit(a, TraceRx, len(frame))
		a.st.Receive(frame)
	}
}
