// Package latency is the request/response latency sweep of the
// Linux/SimOS study, written once over a transport: a client sends
// messages of each size to an echo server on another host and waits for
// each to come back, and the simulator measures, per size, the send
// latency (the sending thread's cycles inside the send call) and the
// receive latency (from the arrival at the receiving card of the first
// frame of the message until the receive call that completes it
// returns), each split by layer, over both hosts' sends and receives.
// UDP (sendto/recvfrom) and TCP (send/recv) implement the transport here;
// other protocol paths join by implementing Transport. Layer APPL.
//
// The measurement is the simulator's: hooks on the measured calls'
// kernel symbols and an observer on each card; the programs read no
// clock. The send latency is the sending thread's own cycles inside the
// call (for a TCP message larger than the send buffer that includes the
// cycles of the call's later rounds, not the time spent waiting for
// ACKs), and its split by layer sums to it exactly. The receive latency
// runs from the arrival of the message's first frame at the card (or, if
// the core is busy then, from the end of the work it is doing) until the
// receive call returns; its split counts every cycle of the receiving
// host in that span (interrupts, softirqs, ACKs sent, the woken thread)
// by layer, with the time the core waits for the rest of the message —
// the wire and the card — counted as DMA, and sums to it exactly.
//
// The package also holds what the other measuring programs over IP (ttcp)
// share with the sweep: the host they run on and the hooks they measure
// through.
package latency

import (
	"fmt"

	"simkron/cpu"
	"simkron/stack/inet"
	"simkron/stack/kernel"
	"simkron/workload"
)

// Host is what a measuring program needs of a host.
type Host struct {
	Name   string
	Kernel *kernel.Kernel
	Inet   *inet.Stack
	// Observe installs an observer of the frames reaching the host's
	// card; observers installed earlier keep seeing them.
	Observe func(func(frame []byte))
}

// Card is what the measuring programs need of a host's network card: a
// way to watch the frames that reach it, when their last bit arrives.
// The observer only looks.
type Card interface {
	ObserveReceive(fn func(frame []byte))
}

// FindHost returns the host called name as the measuring programs see it:
// its kernel, its Internet protocols and its first card. role is the key
// that named the host, for errors.
func FindHost(env workload.Env, role, name string) (*Host, error) {
	wh, err := env.Host(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", role, err)
	}
	k, _ := workload.Find[*kernel.Kernel](wh)
	in, ok := workload.Find[*inet.Stack](wh)
	cards := workload.FindAll[Card](wh)
	if !ok || k == nil || len(cards) == 0 {
		return nil, fmt.Errorf("%s: host %q has no card with an IP address", role, name)
	}
	return &Host{Name: name, Kernel: k, Inet: in, Observe: cards[0].ObserveReceive}, nil
}

// Pair returns the two different hosts a two-party program names; roles
// are the keys that named them ("client", "server"), for errors.
func Pair(env workload.Env, roles, names [2]string) (hs [2]*Host, err error) {
	for i := range hs {
		if hs[i], err = FindHost(env, roles[i], names[i]); err != nil {
			return hs, err
		}
	}
	if hs[0].Name == hs[1].Name {
		return hs, fmt.Errorf("%s: the %s and the %s must be different hosts", roles[1], roles[0], roles[1])
	}
	return hs, nil
}

// Watch adds enter and exit (either may be nil) to the function-entry and
// exit hooks of c, after the ones already there: the simulator's
// measurements of calls, which the programs never see.
func Watch(c *cpu.CPU, enter, exit func(c *cpu.CPU, s *cpu.Symbol)) {
	chain := func(prev, f func(*cpu.CPU, *cpu.Symbol)) func(*cpu.CPU, *cpu.Symbol) {
		switch {
		case f == nil:
			return prev
		case prev == nil:
			return f
		}
		return func(c *cpu.CPU, s *cpu.Symbol) { prev(c, s); f(c, s) }
	}
	c.Hooks.Enter = chain(c.Hooks.Enter, enter)
	c.Hooks.Exit = chain(c.Hooks.Exit, exit)
}
