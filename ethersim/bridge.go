package ethersim

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"simkron/sim"
)

// A bridge joins a segment to real hosts through a Port: a Linux TAP
// device (tap_linux.go). In the Linux/SimOS study EtherSim "can be
// configured to have any number of real and simulated hosts" (section
// 3.2); here a real host on the TAP's side reaches the simulated hosts
// by ARP, ICMP, UDP and TCP, and they reach it.
//
//	real side                      simulation (kernel goroutine)
//	TAP ── reader goroutine ── Post ──► pacer inbox ── paced delivery ──► queue ──► Transmit ──► segment
//	TAP ◄───────────────────────────────────── WriteFrame ◄── Receive (last bit at the port) ◄─── segment
//
// The reader goroutine never touches the model: it reads a frame, checks
// its length against the segment's (constant) limits and posts it to the
// event scheduler's pacer (sim.Pacer), which delivers it on the kernel's
// goroutine at its stamp; from there the bridge is a station like a
// card: on a shared segment it defers, collides and backs off, on a
// switch it has a port of its own. It has no address and filters
// nothing: every frame that reaches its port goes to the real side (on a
// shared segment every frame, as a hub shows them; on a switch those the
// switch sends to its port), and every frame from the real side goes on
// the wire, padded to the minimum and given its FCS, after the frames
// queued before it. Frames from the simulation are written to the port
// as their last bit reaches the bridge.
//
// Losses are counted, never silent: a frame the simulation did not take
// in time (the pacer's inbox full: the simulation far behind), one that
// found the bridge's queue for the wire full (the real side sends faster
// than the simulated wire carries), one longer than the segment's
// max_frame or shorter than an Ethernet header, one given up after 16
// collisions, one the port refused.
//
// Simplification: the bridge forwards at once (no store-and-forward
// delay of its own) and learns no addresses; it sees the wire as a
// station does, with no receive faults.

// Port is the real side of a bridge: a device that carries whole
// Ethernet frames, destination address through payload, without preamble
// or FCS (a Linux TAP opened with IFF_NO_PI).
type Port interface {
	// ReadFrame waits for a frame and copies it into b, returning its
	// length (a longer frame is cut to len(b)). It returns an error once
	// the port is closed.
	ReadFrame(b []byte) (int, error)
	// WriteFrame sends one frame.
	WriteFrame(frame []byte) error
	// Close closes the port; a ReadFrame waiting returns.
	Close() error
}

// BridgeParams configure one bridge.
type BridgeParams struct {
	Queue int `toml:"queue" min:"1" max:"100000" help:"frames from the TAP that may wait for the simulated wire; one that finds the queue full is dropped and counted (1000: Linux's default txqueuelen)"`
}

// DefaultBridgeParams returns a queue of 1000 frames, as a Linux
// interface's default txqueuelen.
func DefaultBridgeParams() BridgeParams { return BridgeParams{Queue: 1000} }

// BridgeStats counts one bridge's traffic and losses.
type BridgeStats struct {
	// Read counts the frames read from the port: each is sent (InFrames),
	// lost by one of the reasons below, or still on its way (Pending).
	Read      uint64
	InFrames  uint64 // frames from the real side sent on the segment
	InBytes   uint64 // their bytes as read (no padding, no FCS)
	OutFrames uint64 // frames written to the real side
	OutBytes  uint64 // their bytes as written (no FCS)
	// DroppedBehind counts frames the simulation did not take in time:
	// the pacer's inbox was full because the simulation had fallen far
	// behind the wall clock.
	DroppedBehind uint64
	// DroppedQueue counts frames from the real side that found the queue
	// for the simulated wire full.
	DroppedQueue uint64
	Oversized    uint64 // frames from the real side longer than the segment's max_frame (FCS counted)
	Runts        uint64 // frames from the real side shorter than an Ethernet header
	Aborted      uint64 // frames from the real side given up after 16 collisions
	BadFCS       uint64 // frames from the segment with a wrong FCS (damaged on the wire), not passed on
	WriteErrors  uint64 // frames to the real side the port refused
	QueuePeak    int    // most frames ever waiting for the wire
	// Pending counts the frames read but neither sent nor lost yet:
	// waiting for the simulation, in the queue, or on the wire (at the
	// end of a run, those it stopped with).
	Pending uint64
}

// EthernetHeaderBytes is the length of a frame's header: destination,
// source, type or length.
const EthernetHeaderBytes = 14

// Bridge is one bridge port on a segment (see above).
type Bridge struct {
	seg   *Segment
	att   *Attachment
	name  string
	p     BridgeParams
	port  Port
	pacer *sim.Pacer

	queue []queued // frames waiting for the wire, oldest first
	cur   int      // bytes read of the frame being sent
	stats BridgeStats
	// writeErr is the port's first write error.
	writeErr error

	// The reader goroutine's own counters and its end.
	nread, behind, oversized, runts atomic.Uint64
	readErr                         atomic.Pointer[error]
	closing                         atomic.Bool
	done                            chan struct{}
	closeOnce                       sync.Once
	closeErr                        error
}

// AttachBridge attaches a bridge called name ("bridge.sk0", unique on the
// segment) to the segment. It carries nothing until Open gives it its
// port.
func (s *Segment) AttachBridge(name string, p BridgeParams) (*Bridge, error) {
	if p.Queue < 1 {
		return nil, fmt.Errorf("ethersim: segment %q: bridge %q: queue %d must be at least 1", s.name, name, p.Queue)
	}
	b := &Bridge{seg: s, name: name, p: p}
	att, err := s.Attach(name, b, FaultParams{})
	if err != nil {
		return nil, err
	}
	att.OnTxDone = b.txDone
	b.att = att
	return b, nil
}

// Name returns the bridge's name on its segment.
func (b *Bridge) Name() string { return b.name }

// Segment returns the segment the bridge is on.
func (b *Bridge) Segment() *Segment { return b.seg }

// Attachment returns the bridge's attachment to its segment.
func (b *Bridge) Attachment() *Attachment { return b.att }

// Open connects the bridge to its real side: frames read from port are
// posted to pacer, which must be the one that drives the segment's
// kernel. It starts the reader goroutine; Close stops it.
func (b *Bridge) Open(port Port, pacer *sim.Pacer) {
	if b.port != nil {
		panic(fmt.Sprintf("ethersim: bridge %s opened twice", b.name))
	}
	b.port, b.pacer = port, pacer
	b.done = make(chan struct{})
	go b.read()
}

// maxRead bounds one frame read from the port: a TAP's largest MTU and
// its header, with room to spare, so that no frame is cut.
const maxRead = 1 << 17

// read is the reader goroutine: it never touches the model, only the
// atomic counters and the pacer's inbox.
func (b *Bridge) read() {
	defer close(b.done)
	buf := make([]byte, maxRead)
	maxFrame := int(b.seg.p.MaxFrame) // constant once the segment exists
	for {
		n, err := b.port.ReadFrame(buf)
		if err != nil {
			if !b.closing.Load() {
				err = fmt.Errorf("bridge %s: reading its port: %w", b.name, err)
				b.readErr.Store(&err)
			}
			return
		}
		at := time.Now()
		b.nread.Add(1)
		switch {
		case n < EthernetHeaderBytes:
			b.runts.Add(1)
			continue
		case n+FCSBytes > maxFrame:
			b.oversized.Add(1)
			continue
		}
		frame := make([]byte, n, max(n, MinFrame-FCSBytes)+FCSBytes)
		copy(frame, buf[:n])
		if !b.pacer.Post(sim.Arrival{At: at, Deliver: func() { b.fromPort(frame) }}) {
			b.behind.Add(1)
		}
	}
}

// queued is a frame waiting for the wire, padded and with its FCS, and
// its length as read.
type queued struct {
	frame []byte
	n     int
}

// fromPort puts a frame from the real side on the wire, or in the queue
// behind the ones waiting; it runs on the kernel's goroutine.
func (b *Bridge) fromPort(frame []byte) {
	q := queued{n: len(frame)}
	for len(frame) < MinFrame-FCSBytes {
		frame = append(frame, 0)
	}
	q.frame = AppendFCS(frame)
	if b.att.Busy() || len(b.queue) > 0 {
		if len(b.queue) >= b.p.Queue {
			b.stats.DroppedQueue++
			return
		}
		b.queue = append(b.queue, q)
		b.stats.QueuePeak = max(b.stats.QueuePeak, len(b.queue))
		return
	}
	b.transmit(q)
}

func (b *Bridge) transmit(q queued) {
	b.cur = q.n
	if err := b.att.Transmit(q.frame); err != nil {
		// Lengths were checked when the frame was read, and the
		// attachment is idle: a simulator bug.
		panic(fmt.Sprintf("ethersim: bridge %s: %v", b.name, err))
	}
}

// txDone is the attachment's OnTxDone: the next queued frame goes.
func (b *Bridge) txDone(st TxStatus) {
	if st.Aborted {
		b.stats.Aborted++
	} else {
		b.stats.InFrames++
		b.stats.InBytes += uint64(b.cur)
	}
	if len(b.queue) > 0 {
		q := b.queue[0]
		b.queue[0] = queued{}
		b.queue = b.queue[1:]
		b.transmit(q)
	}
}

var errNotOpen = errors.New("the bridge has no port (not opened)")

// Receive is the bridge's side as a station: a frame whose last bit has
// reached its port goes to the real side now, without its FCS.
func (b *Bridge) Receive(frame []byte) {
	if !CheckFCS(frame) {
		b.stats.BadFCS++
		return
	}
	frame = frame[:len(frame)-FCSBytes]
	err := errNotOpen
	if b.port != nil {
		err = b.port.WriteFrame(frame)
	}
	if err != nil {
		b.stats.WriteErrors++
		if b.writeErr == nil {
			b.writeErr = fmt.Errorf("bridge %s: writing to its port: %w", b.name, err)
		}
		return
	}
	b.stats.OutFrames++
	b.stats.OutBytes += uint64(len(frame))
}

// Stats returns the bridge's counters. Call it on the kernel's goroutine
// (or after Close).
func (b *Bridge) Stats() BridgeStats {
	st := b.stats
	// Read last: every frame counted below was read.
	st.DroppedBehind = b.behind.Load()
	st.Oversized = b.oversized.Load()
	st.Runts = b.runts.Load()
	st.Read = b.nread.Load()
	st.Pending = st.Read - st.InFrames - st.DroppedBehind - st.DroppedQueue - st.Oversized - st.Runts - st.Aborted
	return st
}

// ReadErr returns the error that stopped the reader goroutine before
// Close, or nil: the real side was lost.
func (b *Bridge) ReadErr() error {
	if e := b.readErr.Load(); e != nil {
		return *e
	}
	return nil
}

// WriteErr returns the port's first write error, or nil.
func (b *Bridge) WriteErr() error { return b.writeErr }

// Close closes the port and waits for the reader goroutine to end. It may
// be called more than once, and on a bridge never opened.
func (b *Bridge) Close() error {
	b.closeOnce.Do(func() {
		if b.port == nil {
			return
		}
		b.closing.Store(true)
		b.closeErr = b.port.Close()
		<-b.done
	})
	return b.closeErr
}
