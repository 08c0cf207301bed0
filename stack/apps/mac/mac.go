// Package mac is the MAC-level workload, "mac": a program on one host sends
// frames of a given payload size straight to a network device (no
// protocol above the link), a program on another host receives them, and
// the simulator reports throughput of user data, frames per second, and
// where each frame's cycles went on both hosts (DEV, DMA, APPL, KERN). In
// loopback mode both programs run on one host and the driver copies each
// frame from its transmit to its receive path, so the cost of the software
// path can be seen without the wire (TOP-on-486 "packet driver loopback");
// the sender then yields the core after each frame so that the receiver
// takes it.
//
// Frames carry EtherType 0x88B5 (IEEE 802 local experimental). Each
// payload starts with the size index and a sequence number; the rest is a
// pattern the receiver checks. Layer APPL.
package mac

import (
	"encoding/binary"
	"fmt"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/kernel"
	"simkron/stack/netdev"
)

// EtherType is the frames' type field.
const EtherType = 0x88B5

// Params configures the workload.
type Params struct {
	Sender   string   `toml:"sender" help:"host that sends"`
	Receiver string   `toml:"receiver" help:"host that receives; with loopback, the sender"`
	Sizes    []int    `toml:"sizes" nonempty:"true" min:"46" max:"1500" help:"payload bytes per frame, one run each"`
	Frames   int      `toml:"frames" min:"2" max:"1000000" help:"frames sent per size"`
	Loopback bool     `toml:"loopback" help:"the sender's driver loops frames back: no card, no wire"`
	Gap      sim.Time `toml:"gap" min:"0s" help:"pause between sizes, so that one size's frames do not meet the next's"`
	Timeout  sim.Time `toml:"timeout" min:"1ms" help:"the receiver stops after this long without a frame"`
}

// DefaultParams sweeps the frame sizes of the TOP measurements.
func DefaultParams() Params {
	return Params{Sizes: []int{128, 256, 512, 1024, 1500}, Frames: 200, Gap: 20 * sim.Millisecond, Timeout: sim.Second}
}

// Validate checks the parts the tags cannot; that the hosts exist is the
// experiment's to check.
func (p Params) Validate() error {
	if len(p.Sizes) == 0 {
		return fmt.Errorf("sizes: give at least one payload size")
	}
	if p.Loopback && p.Receiver != "" && p.Receiver != p.Sender {
		return fmt.Errorf("receiver: with loopback the receiver is the sender %q", p.Sender)
	}
	return nil
}

// LayerCost is the cycles one layer spent per frame on one host.
type LayerCost struct {
	Layer          string  `json:"layer"`
	CyclesPerFrame float64 `json:"cycles_per_frame"`
}

// Row is the result for one payload size.
type Row struct {
	Size           int         `json:"size"`        // payload bytes
	FrameBytes     int         `json:"frame_bytes"` // header + payload + FCS
	Sent           int         `json:"sent"`
	Received       int         `json:"received"`
	Corrupt        int         `json:"corrupt"`     // damaged, misaddressed, duplicated or out of order
	DurationPS     int64       `json:"duration_ps"` // first send to last receive
	ThroughputMbps float64     `json:"throughput_mbps"`
	FramesPerSec   float64     `json:"frames_per_sec"`
	TxTimeUS       float64     `json:"tx_time_us"`   // mean: loading the card to transmit-done interrupt
	WireTimeUS     float64     `json:"wire_time_us"` // one frame's occupancy of the wire, gap included
	Send           []LayerCost `json:"send_layers"`
	Receive        []LayerCost `json:"receive_layers,omitempty"`
}

var (
	defSend  = cpu.Def{Name: "sys_macsend", Layer: cpu.LayerAPPL, Instructions: 60, CodeBytes: 384, Why: "check arguments, allocate a kernel buffer, copy the frame in, queue it"}
	defRecv  = cpu.Def{Name: "sys_macrecv", Layer: cpu.LayerAPPL, Instructions: 55, CodeBytes: 384, Why: "dequeue a frame, copy it out, free the buffer"}
	defSock  = cpu.Def{Name: "mac_rcv", Layer: cpu.LayerAPPL, Instructions: 30, CodeBytes: 192, Why: "queue a frame on the receiving socket, wake the reader"}
	defFill  = cpu.Def{Name: "macbench_fill", Layer: cpu.LayerAPPL, Instructions: 20, CodeBytes: 128, Why: "stamp the size index and sequence number"}
	defCheck = cpu.Def{Name: "macbench_check", Layer: cpu.LayerAPPL, Instructions: 20, CodeBytes: 128, Why: "read the size index and sequence number"}
)

// Endpoint is the part of a host the workload uses.
type Endpoint struct {
	Name   string
	Kernel *kernel.Kernel
	Net    *netdev.Stack
	Dev    int // device queue index
	MAC    [6]byte
	// TxTime reads the driver's accumulated transmit time and count.
	TxTime func() (sim.Time, uint64)
}

// Bench is the workload across its hosts.
type Bench struct {
	p         Params
	rate      sim.BitRate
	tx, rx    *Endpoint
	dst       [6]byte
	rows      []Row
	firstSend []sim.Time
	lastRecv  []sim.Time
	lastSeq   []int // per size: the last sequence number received
	snapTx    []layerSnap
	snapRx    []layerSnap
	txTime0   []sim.Time
	txCount0  []uint64
	sock      socket
	ended     int // programs that have ended; the rows are made when both have
	sym       struct{ send, recv, sock, fill, check *cpu.Symbol }
	rsym      struct{ recv, sock, check *cpu.Symbol }
}

type layerSnap struct{ start, end []cpu.LayerCycles }

// socket is the receiving end: frames wait here for the reader.
type socket struct {
	q       []netdev.Buf
	limit   int
	drops   uint64
	waiting kernel.WaitQueue
}

// New prepares the workload; tx and rx are the same host in loopback.
// rate is the wire's signalling rate (0 in loopback), for the wire time
// each frame occupies.
func New(p Params, tx, rx *Endpoint, rate sim.BitRate) (*Bench, error) {
	b := &Bench{p: p, tx: tx, rx: rx, dst: rx.MAC, rate: rate}
	n := len(p.Sizes)
	b.rows = make([]Row, n)
	for si, size := range p.Sizes {
		b.rows[si].Size, b.rows[si].FrameBytes = size, 14+size+4
	}
	b.firstSend = make([]sim.Time, n)
	b.lastRecv = make([]sim.Time, n)
	b.lastSeq = make([]int, n)
	for i := range b.lastSeq {
		b.lastSeq[i] = -1
	}
	b.snapTx = make([]layerSnap, n)
	b.snapRx = make([]layerSnap, n)
	b.txTime0 = make([]sim.Time, n)
	b.txCount0 = make([]uint64, n)
	b.sock.limit = 64
	ts := tx.Kernel.Symbols()
	b.sym.send = ts.Define(defSend)
	b.sym.fill = ts.Define(defFill)
	rs := rx.Kernel.Symbols()
	b.rsym.recv = rs.Define(defRecv)
	b.rsym.sock = rs.Define(defSock)
	b.rsym.check = rs.Define(defCheck)
	if err := rx.Net.Register(EtherType, b.deliver); err != nil {
		return nil, err
	}
	return b, nil
}

// Start spawns the two programs.
func (b *Bench) Start() {
	b.rx.Kernel.Spawn("macrecv", b.receiver)
	b.tx.Kernel.Spawn("macsend", b.sender)
}

// Rows returns the results once both programs ended.
func (b *Bench) Rows() []Row { return b.rows }

// SocketDrops returns frames dropped because the reader fell behind.
func (b *Bench) SocketDrops() uint64 { return b.sock.drops }

func payloadByte(i int) byte { return byte(i*13 + i>>8) }

func (b *Bench) sender(t *kernel.Thread) {
	k := b.tx.Kernel
	c := k.CPU()
	maxLen := 14
	for _, s := range b.p.Sizes {
		maxLen = max(maxLen, 14+s)
	}
	user := k.Kmalloc(maxLen)
	frame := make([]byte, maxLen)
	copy(frame[0:6], b.dst[:])
	copy(frame[6:12], b.tx.MAC[:])
	binary.BigEndian.PutUint16(frame[12:14], EtherType)
	for i := 14; i < maxLen; i++ {
		frame[i] = payloadByte(i - 14)
	}
	c.Write(user, frame)
	for si, size := range b.p.Sizes {
		b.rows[si].Size = size
		b.rows[si].FrameBytes = 14 + size + 4
		c.Sync()
		b.firstSend[si] = c.LocalTime()
		b.snapTx[si].start = c.LayerCycles()
		b.txTime0[si], b.txCount0[si] = b.tx.TxTime()
		for seq := 0; seq < b.p.Frames; seq++ {
			c.Call(b.sym.fill, func() {
				var hdr [8]byte
				binary.BigEndian.PutUint32(hdr[0:4], uint32(si))
				binary.BigEndian.PutUint32(hdr[4:8], uint32(seq))
				c.Write(user+14, hdr[:])
			})
			b.send(t, user, 14+size)
			b.rows[si].Sent++
			if b.p.Loopback {
				// The receiver shares the core: let it take the frame.
				t.Yield()
			}
		}
		// The size's figures end when its last frame has left.
		for b.tx.Net.Pending(b.tx.Dev) {
			t.Sleep(b.tx.Net.DrainQueue(b.tx.Dev))
		}
		c.Sync()
		b.snapTx[si].end = c.LayerCycles()
		tt, tn := b.tx.TxTime()
		if tn > b.txCount0[si] {
			b.rows[si].TxTimeUS = float64(tt-b.txTime0[si]) / float64(tn-b.txCount0[si]) / float64(sim.Microsecond)
		}
		// Restore the pattern the header overwrote.
		c.Write(user+14, frame[14:22])
		if si+1 < len(b.p.Sizes) && b.p.Gap > 0 {
			t.SleepFor(b.p.Gap)
		}
	}
	b.finish()
}

// send is the system call that hands one frame to the device.
func (b *Bench) send(t *kernel.Thread, user memory.Addr, n int) {
	k := b.tx.Kernel
	t.Syscall(b.sym.send, func() {
		kb := k.Kmalloc(n)
		k.Bcopy(kb, user, n)
		for !b.tx.Net.Transmit(b.tx.Dev, netdev.Buf{Addr: kb, Len: n}) {
			t.Sleep(b.tx.Net.RoomQueue(b.tx.Dev))
		}
	})
}

// deliver is the protocol handler: it runs in the receive softirq.
func (b *Bench) deliver(f netdev.Buf) {
	k := b.rx.Kernel
	c := k.CPU()
	c.Enter(b.rsym.sock)
	if len(b.sock.q) >= b.sock.limit {
		b.sock.drops++
		f.Free(k)
	} else {
		b.sock.q = append(b.sock.q, f)
		k.Wakeup(&b.sock.waiting)
	}
	c.Exit(b.rsym.sock)
}

func (b *Bench) receiver(t *kernel.Thread) {
	k := b.rx.Kernel
	c := k.CPU()
	user := k.Kmalloc(14 + 1500 + 4)
	want := len(b.p.Sizes) * b.p.Frames
	got := make([]byte, 14+1500)
	expect := make([]byte, 1500)
	for i := range expect {
		expect[i] = payloadByte(i)
	}
	current := -1
	for n := 0; n < want; n++ {
		var length int
		timedOut := false
		t.Syscall(b.rsym.recv, func() {
			for len(b.sock.q) == 0 {
				if t.SleepTimeout(&b.sock.waiting, b.p.Timeout) && len(b.sock.q) == 0 {
					timedOut = true
					return
				}
			}
			f := b.sock.q[0]
			b.sock.q = b.sock.q[1:]
			k.Bcopy(user, f.Addr, f.Len)
			f.Free(k)
			length = f.Len
		})
		if timedOut {
			break
		}
		var si, seq int
		c.Call(b.rsym.check, func() {
			var hdr [8]byte
			c.Read(user+14, hdr[:])
			si = int(binary.BigEndian.Uint32(hdr[0:4]))
			seq = int(binary.BigEndian.Uint32(hdr[4:8]))
		})
		c.Sync()
		now := c.LocalTime()
		if si < 0 || si >= len(b.p.Sizes) {
			continue
		}
		if si != current {
			if current >= 0 {
				b.snapRx[current].end = c.LayerCycles()
			}
			current = si
			b.snapRx[si].start = c.LayerCycles()
		}
		row := &b.rows[si]
		row.Received++
		b.lastRecv[si] = now
		// Check every byte (the simulator looks; the program is not
		// charged): addresses, type, order, pattern. A frame out of
		// sequence (a duplicate, or one overtaking another) counts too.
		k.CPU().System().Phys.Read(user, got[:length])
		ok := length == 14+b.p.Sizes[si] &&
			[6]byte(got[0:6]) == b.rx.MAC && [6]byte(got[6:12]) == b.tx.MAC &&
			binary.BigEndian.Uint16(got[12:14]) == EtherType &&
			seq > b.lastSeq[si] && string(got[22:length]) == string(expect[8:length-14])
		b.lastSeq[si] = seq
		if !ok {
			row.Corrupt++
		}
	}
	if current >= 0 {
		b.snapRx[current].end = c.LayerCycles()
	}
	b.finish()
}

// finish turns the raw measurements into rows once both programs ended.
func (b *Bench) finish() {
	if b.ended++; b.ended == 2 {
		b.sum()
	}
}

// sum turns the raw measurements into rows: once both programs ended, or
// when the result of a run that stopped first is taken (the figures of
// what was measured by then).
func (b *Bench) sum() {
	for si := range b.rows {
		r := &b.rows[si]
		if r.Received == 0 {
			continue
		}
		d := b.lastRecv[si] - b.firstSend[si]
		r.DurationPS = int64(d)
		if d > 0 {
			r.ThroughputMbps = float64(r.Received*r.Size*8) / d.Seconds() / 1e6
			r.FramesPerSec = float64(r.Received) / d.Seconds()
		}
		// Preamble and inter-frame gap around the frame.
		if b.rate > 0 {
			r.WireTimeUS = float64(b.rate.ByteTime(8+r.FrameBytes+12)) / float64(sim.Microsecond)
		}
		r.Send = perFrame(b.snapTx[si], r.Sent)
		if !b.p.Loopback {
			r.Receive = perFrame(b.snapRx[si], r.Received)
		}
	}
}

func perFrame(s layerSnap, frames int) []LayerCost {
	if frames == 0 || s.end == nil {
		return nil
	}
	var out []LayerCost
	for i, l := range s.end {
		var before int64
		if i < len(s.start) {
			before = s.start[i].Cycles
		}
		if d := l.Cycles - before; d > 0 {
			name := string(l.Layer)
			if name == "" {
				name = "-"
			}
			out = append(out, LayerCost{Layer: name, CyclesPerFrame: float64(d) / float64(frames)})
		}
	}
	return out
}
