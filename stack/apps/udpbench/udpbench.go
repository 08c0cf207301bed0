// Package udpbench is the UDP latency sweep of the Linux/SimOS study: a
// client sends messages of each size to an echo server on another host
// and waits for each to come back. The simulator measures, per size, the
// send latency (the cycles of the sending thread inside sendto()) and the
// receive latency (from the arrival of the message's first frame at the
// receiving card until recvfrom() returns), each with its split by layer,
// over both hosts' sends and receives. Layer APPL.
//
// The measurement is the simulator's: hooks on the sys_sendto and
// sys_recvfrom symbols and an observer on each card; the programs read no
// clock. The send latency is the sending thread's own cycles inside
// sendto, and its split by layer sums to it exactly. The receive latency
// runs from the arrival of the message's first frame at the card (or, if
// the core is busy then, from the end of the work it is doing) until
// recvfrom returns; its split counts every cycle of the receiving host in
// that span (interrupts, softirqs, the woken thread) by layer, with the
// time the core waits for the rest of the message — the wire and the
// card — counted as DMA, and sums to it exactly.
package udpbench

import (
	"encoding/binary"
	"fmt"
	"slices"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/apps/latency"
	"simkron/stack/header"
	"simkron/stack/inet"
	"simkron/stack/kernel"
)

// Params configures the sweep.
type Params struct {
	Client   string   `toml:"client" help:"host that sends each message and waits for the echo"`
	Server   string   `toml:"server" help:"host that echoes"`
	Sizes    []int    `toml:"sizes" min:"4" max:"65507" help:"message sizes in bytes (UDP payload)"`
	Messages int      `toml:"messages" min:"1" max:"1000000" help:"measured round trips per size"`
	Warmup   int      `toml:"warmup" min:"0" max:"1000" help:"round trips per size before measuring (the first also resolves ARP)"`
	Port     uint16   `toml:"port" min:"1" help:"server's UDP port"`
	Timeout  sim.Time `toml:"timeout" min:"1ms" help:"how long the client waits for an echo before counting the message lost"`
}

// DefaultParams sweeps the sizes of the Linux/SimOS study with the MTU at
// 1500.
func DefaultParams() Params {
	return Params{
		Sizes:    []int{4, 16, 64, 256, 1024, 1472, 2048, 4096, 8192, 16384, 32768},
		Messages: 20, Warmup: 2, Port: 7, Timeout: sim.Second,
	}
}

// The sweep's results.
type (
	Summary   = latency.Summary
	LayerCost = latency.LayerCost
	Row       = latency.Row
)

// Host is what the programs need of a host.
type Host = latency.Host

var defMain = cpu.Def{Name: "udpbench_main", Layer: cpu.LayerAPPL, Instructions: 40, CodeBytes: 256, Why: "loop over sizes and messages, stamp the sequence number"}

// Bench is the sweep across its two hosts.
type Bench struct {
	p        Params
	client   *Host
	server   *Host
	rows     []Row
	perHost  [2]*probe
	sendSamp [][]float64
	recvSamp [][]float64
	sendLay  []latency.Layers
	recvLay  []latency.Layers
	size     int  // index of the size being run
	measured bool // whether the current round trip counts
	rttSum   []sim.Time
	done     bool
	mainC    *cpu.Symbol
	mainS    *cpu.Symbol
}

// New prepares the sweep; Start spawns the programs.
func New(p Params, client, server *Host) (*Bench, error) {
	if client.Inet == nil || server.Inet == nil {
		return nil, fmt.Errorf("both hosts need an IP address on a card")
	}
	n := len(p.Sizes)
	b := &Bench{p: p, client: client, server: server, rows: make([]Row, n),
		sendSamp: make([][]float64, n), recvSamp: make([][]float64, n),
		sendLay: make([]latency.Layers, n), recvLay: make([]latency.Layers, n),
		rttSum: make([]sim.Time, n)}
	for i := range n {
		b.sendLay[i] = latency.Layers{}
		b.recvLay[i] = latency.Layers{}
		b.rows[i].Size = p.Sizes[i]
		maxfrag := (client.Inet.Params().MTU - header.IPv4MinimumSize) &^ 7
		b.rows[i].Packets = (p.Sizes[i] + header.UDPMinimumSize + maxfrag - 1) / maxfrag
	}
	b.mainC = client.Kernel.Symbols().Define(defMain)
	b.mainS = server.Kernel.Symbols().Define(defMain)
	for i, h := range []*Host{client, server} {
		pr := newProbe(b, h)
		b.perHost[i] = pr
		h.Observe(pr.frame)
	}
	return b, nil
}

// Start spawns the echo server and the client.
func (b *Bench) Start() {
	b.server.Kernel.Spawn("udpecho", b.Serve)
	b.client.Kernel.Spawn("udpclient", b.Client)
}

// Rows returns the results once the client has ended.
func (b *Bench) Rows() []Row { return b.rows }

func maxSize(p Params) int { return slices.Max(p.Sizes) }

// Serve is the echo server's program, to run on a thread of the server
// host; it ends once the client has.
func (b *Bench) Serve(t *kernel.Thread) {
	h := b.server
	c := h.Kernel.CPU()
	c.Enter(b.mainS)
	defer c.Exit(b.mainS)
	buf := h.Kernel.Kmalloc(maxSize(b.p))
	b.perHost[1].buf = buf
	fd, err := h.Inet.Socket(t, inet.SockDgram)
	if err == 0 {
		err = h.Inet.Bind(t, fd, b.p.Port)
	}
	if err != 0 {
		return
	}
	for !b.done {
		n, from, port, err := h.Inet.RecvFrom(t, fd, buf, maxSize(b.p), b.p.Timeout)
		if err != 0 {
			continue
		}
		h.Inet.SendTo(t, fd, buf, n, from, port)
	}
	h.Inet.Close(t, fd)
}

func payloadByte(i int) byte { return byte(i*7 + i>>8 + 1) }

// Client is the client's program, to run on a thread of the client host.
func (b *Bench) Client(t *kernel.Thread) {
	h := b.client
	k := h.Kernel
	c := k.CPU()
	c.Enter(b.mainC)
	defer c.Exit(b.mainC)
	defer func() { b.done = true; b.finish() }()
	size := maxSize(b.p)
	out := k.Kmalloc(size)
	in := k.Kmalloc(size)
	b.perHost[0].buf = in
	pattern := make([]byte, size)
	for i := range pattern {
		pattern[i] = payloadByte(i)
	}
	c.Write(out, pattern)
	fd, err := h.Inet.Socket(t, inet.SockDgram)
	if err != 0 {
		return
	}
	dst := b.server.Inet.Addr()
	got := make([]byte, size)
	seq := uint32(0)
	for si, n := range b.p.Sizes {
		b.size = si
		row := &b.rows[si]
		for i := 0; i < b.p.Warmup+b.p.Messages; i++ {
			b.measured = i >= b.p.Warmup
			seq++
			var stamp [4]byte
			binary.BigEndian.PutUint32(stamp[:], seq)
			c.Write(out, stamp[:])
			c.Sync()
			start := c.LocalTime()
			if _, err := h.Inet.SendTo(t, fd, out, n, dst, b.p.Port); err != 0 {
				row.Lost++
				continue
			}
			m, _, _, err := h.Inet.RecvFrom(t, fd, in, size, b.p.Timeout)
			c.Sync()
			if !b.measured {
				continue
			}
			if err != 0 {
				row.Lost++
				continue
			}
			row.Messages++
			b.rttSum[si] += c.LocalTime() - start
			// The simulator checks the echo; the program is not charged.
			c.System().Phys.Read(in, got[:m])
			if m != n || binary.BigEndian.Uint32(got[:4]) != seq || string(got[4:m]) != string(pattern[4:n]) {
				row.Corrupt++
			}
		}
		c.Write(out, pattern[:4])
	}
	h.Inet.Close(t, fd)
}

func (b *Bench) finish() {
	for si := range b.rows {
		r := &b.rows[si]
		r.Send = latency.Summarise(b.sendSamp[si])
		r.Receive = latency.Summarise(b.recvSamp[si])
		if r.Messages > 0 {
			r.RTTMicros = float64(b.rttSum[si]) / float64(r.Messages) / float64(sim.Microsecond)
		}
		r.SendLayers = b.sendLay[si].Means(r.Send.N)
		r.RecvLayers = b.recvLay[si].Means(r.Receive.N)
	}
}

// probe measures one host: its sendto calls, and its receives from the
// card to recvfrom's return.
type probe struct {
	b        *Bench
	h        *Host
	c        *cpu.CPU
	buf      memory.Addr // the program's receive buffer
	sendSym  *cpu.Symbol
	recvSym  *cpu.Symbol
	sendFrom int64
	sendLay  []cpu.LayerCycles
	arrivals map[arrivalKey]*arrival
	bySeq    map[uint32]*arrival
}

type arrivalKey struct {
	src inet.Addr
	id  uint16
}

type arrival struct {
	start    cpu.Account // the host's counters at the first frame
	seq      uint32
	seqKnown bool
}

func newProbe(b *Bench, h *Host) *probe {
	pr := &probe{b: b, h: h, c: h.Kernel.CPU(), arrivals: map[arrivalKey]*arrival{}, bySeq: map[uint32]*arrival{}}
	pr.sendSym, _ = h.Kernel.Symbols().Lookup("sys_sendto")
	pr.recvSym, _ = h.Kernel.Symbols().Lookup("sys_recvfrom")
	latency.Watch(pr.c, func(c *cpu.CPU, s *cpu.Symbol) {
		if s == pr.sendSym {
			x := c.Current()
			pr.sendFrom = x.Cycles()
			pr.sendLay = x.LayerCycles()
		}
	}, func(c *cpu.CPU, s *cpu.Symbol) {
		switch s {
		case pr.sendSym:
			pr.sent(c)
		case pr.recvSym:
			pr.received(c)
		}
	})
	return pr
}

func (pr *probe) sent(c *cpu.CPU) {
	b := pr.b
	if !b.measured || b.done {
		return
	}
	x := c.Current()
	si := b.size
	b.sendSamp[si] = append(b.sendSamp[si], float64(x.Cycles()-pr.sendFrom))
	b.sendLay[si].Add(pr.sendLay, x.LayerCycles())
}

func (pr *probe) received(c *cpu.CPU) {
	b := pr.b
	if !b.measured || b.done || pr.buf == 0 {
		return
	}
	var stamp [4]byte
	c.System().Phys.Read(pr.buf, stamp[:])
	a, ok := pr.bySeq[binary.BigEndian.Uint32(stamp[:])]
	if !ok {
		return
	}
	delete(pr.bySeq, a.seq)
	si := b.size
	end := c.AccountAt(c.LocalTime())
	b.recvSamp[si] = append(b.recvSamp[si], float64(end.Cycle-a.start.Cycle))
	b.recvLay[si].AddReceive(a.start, end)
}

// frame watches frames reaching the host's card: UDP datagrams to or from
// the sweep's port, fragments included.
func (pr *probe) frame(f []byte) {
	if len(f) < header.EthernetHeaderLen+header.IPv4MinimumSize || header.Ethernet(f).Type() != header.EtherTypeIPv4 {
		return
	}
	ip := header.IPv4(f[header.EthernetHeaderLen:])
	if !ip.IsValid(len(ip)) || ip.Protocol() != header.IPv4ProtocolUDP {
		return
	}
	key := arrivalKey{src: ip.Src(), id: ip.ID()}
	a, ok := pr.arrivals[key]
	if !ok {
		a = &arrival{start: pr.c.AccountAt(pr.c.Kernel().Now())}
		pr.arrivals[key] = a
	}
	if ip.FragmentOffset() == 0 {
		u := header.UDP(ip.Payload())
		if len(u) >= header.UDPMinimumSize+4 && (u.DstPort() == pr.b.p.Port || u.SrcPort() == pr.b.p.Port) {
			a.seq, a.seqKnown = binary.BigEndian.Uint32(u[header.UDPMinimumSize:]), true
			pr.bySeq[a.seq] = a
		}
	}
	if ip.FragmentOffset() == 0 {
		// The datagram's frames are all in (Linux sends the first
		// fragment last); forget the key so that IDs may wrap.
		delete(pr.arrivals, key)
	}
}
