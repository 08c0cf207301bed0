// Package ping is ping(8) for simulated hosts: a program sends ICMP echo
// requests through a ping socket (SockPing) and waits for each reply. The
// simulator times each round trip from the sendto() call to recvfrom()
// returning and checks the reply's sequence number and data. Layer APPL.
package ping

import (
	"simkron/cpu"
	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/inet"
	"simkron/stack/kernel"
)

// Params configures the pings.
type Params struct {
	From     string   `toml:"from" help:"host that pings"`
	To       string   `toml:"to" help:"host pinged"`
	Count    int      `toml:"count" min:"1" max:"100000" help:"echo requests sent"`
	Size     int      `toml:"size" min:"0" max:"65000" help:"data bytes after the 8-byte ICMP header (ping -s; 56 by default)"`
	Interval sim.Time `toml:"interval" min:"0s" help:"pause between a reply and the next request"`
	Timeout  sim.Time `toml:"timeout" min:"1ms" help:"how long to wait for each reply"`
}

// DefaultParams returns ping's defaults: 56 data bytes, one a second.
func DefaultParams() Params {
	return Params{Count: 4, Size: 56, Interval: sim.Second, Timeout: sim.Second}
}

// Reply is one echo's outcome.
type Reply struct {
	Seq      int     `json:"seq"`
	OK       bool    `json:"ok"`
	RTTMicro float64 `json:"rtt_us,omitempty"`
}

// Result is the pings' summary.
type Result struct {
	From        string  `json:"from"`
	To          string  `json:"to"`
	Size        int     `json:"size"`
	Sent        int     `json:"sent"`
	Received    int     `json:"received"`
	Bad         int     `json:"bad"` // replies with the wrong sequence or data
	MinRTTMicro float64 `json:"min_rtt_us"`
	AvgRTTMicro float64 `json:"avg_rtt_us"`
	MaxRTTMicro float64 `json:"max_rtt_us"`
	Replies     []Reply `json:"replies"`
}

var defMain = cpu.Def{Name: "ping_main", Layer: cpu.LayerAPPL, Instructions: 60, CodeBytes: 384, Why: "build the echo request, check the reply"}

// Program is ping on one host.
type Program struct {
	p   Params
	k   *kernel.Kernel
	in  *inet.Stack
	dst inet.Addr
	sym *cpu.Symbol
	res Result
}

// New prepares ping from k's host (with Internet stack in) to dst.
func New(p Params, k *kernel.Kernel, in *inet.Stack, dst inet.Addr) *Program {
	return &Program{p: p, k: k, in: in, dst: dst, sym: k.Symbols().Define(defMain),
		res: Result{From: p.From, To: p.To, Size: p.Size}}
}

// Start spawns the program.
func (pr *Program) Start() { pr.k.Spawn("ping", pr.run) }

func (pr *Program) run(t *kernel.Thread) {
	c := pr.k.CPU()
	c.Enter(pr.sym)
	defer c.Exit(pr.sym)
	n := header.ICMPv4MinimumSize + pr.p.Size
	out := pr.k.Kmalloc(n)
	in := pr.k.Kmalloc(n)
	msg := make([]byte, n)
	for i := header.ICMPv4MinimumSize; i < n; i++ {
		msg[i] = byte(i)
	}
	got := make([]byte, n)
	fd, err := pr.in.Socket(t, inet.SockPing)
	if err != 0 {
		return
	}
	var sum sim.Time
	for seq := 1; seq <= pr.p.Count; seq++ {
		header.ICMPv4(msg).Encode(&header.ICMPv4Fields{Type: header.ICMPv4Echo, Sequence: uint16(seq)})
		c.Write(out, msg)
		c.Sync()
		start := c.LocalTime()
		pr.res.Sent++
		r := Reply{Seq: seq}
		if _, err := pr.in.SendTo(t, fd, out, n, pr.dst, 0); err == 0 {
			for {
				m, _, _, err := pr.in.RecvFrom(t, fd, in, n, pr.p.Timeout)
				if err != 0 {
					break
				}
				c.System().Phys.Read(in, got[:m])
				reply := header.ICMPv4(got[:m])
				if m < header.ICMPv4MinimumSize || int(reply.Sequence()) != seq {
					continue // an old reply
				}
				c.Sync()
				rtt := c.LocalTime() - start
				r.OK = true
				r.RTTMicro = float64(rtt) / float64(sim.Microsecond)
				pr.res.Received++
				sum += rtt
				// Kept as it goes: a run stopped early has the mean so far.
				pr.res.AvgRTTMicro = float64(sum) / float64(pr.res.Received) / float64(sim.Microsecond)
				if m != n || reply.Type() != header.ICMPv4EchoReply || string(got[header.ICMPv4MinimumSize:m]) != string(msg[header.ICMPv4MinimumSize:]) {
					pr.res.Bad++
				}
				if pr.res.Received == 1 || r.RTTMicro < pr.res.MinRTTMicro {
					pr.res.MinRTTMicro = r.RTTMicro
				}
				pr.res.MaxRTTMicro = max(pr.res.MaxRTTMicro, r.RTTMicro)
				break
			}
		}
		pr.res.Replies = append(pr.res.Replies, r)
		if seq < pr.p.Count && pr.p.Interval > 0 {
			t.SleepFor(pr.p.Interval)
		}
	}
	pr.in.Close(t, fd)
}
