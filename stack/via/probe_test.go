package via_test

// The latency measurement of the study's sweeps (VIA, UDP, TCP alike) on
// the hand-built hosts of these tests, kept apart from the programs: the
// programs tell the probe where a call begins and ends and which message
// is on its way; the probe reads the core's counters, which observes only.
// The same definitions run in the latency sweep's workloads
// (stack/apps/latency with send_span = "host" and receive_busy, VIA's
// transport in stack/apps/vpingpong), whose numbers these agree with.
//
//	send     the host's cycles from the program's call of the send
//	         (VipPostSend, sendto, send) to its return, by layer: the
//	         calling thread's, and the interrupts and deferred work that
//	         ran meanwhile; idle cycles (waiting) count as DMA.
//	receive  from the arrival at the card of the message's first frame
//	         (or, if the core is busy then, the end of the work it is
//	         doing) until the receive call that completes the message
//	         returns (VipRecvWait, recvfrom, the recv giving its last
//	         byte), by layer, idle counted as DMA ("with wire": the wait
//	         for later frames is in it); "host" is the same without the
//	         idle cycles: the receiving CPU's busy cycles.

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/stat"

	"simkron/cpu"
	"simkron/stack/header"
)

// sample is one measured call.
type sample = call

// series holds a protocol's samples per size.
type series struct {
	send, recv map[int][]sample
}

// probe measures one host's sends and receives for the sweep.
type probe struct {
	h       *host
	sweep   *sweep
	matches func(f []byte) bool // is f a frame of the protocol being measured?
	arrival *cpu.Account
}

// sweep is the state the programs share with the probes: which protocol
// and size is on the wire, and whether it counts.
type sweep struct {
	proto    string
	size     int
	measured bool
	results  map[string]*series
}

func newSweep() *sweep { return &sweep{results: map[string]*series{}} }

func (s *sweep) series() *series {
	r := s.results[s.proto]
	if r == nil {
		r = &series{send: map[int][]sample{}, recv: map[int][]sample{}}
		s.results[s.proto] = r
	}
	return r
}

func newProbe(h *host, s *sweep) *probe {
	p := &probe{h: h, sweep: s}
	h.onFrame = append(h.onFrame, p.frame)
	return p
}

func (p *probe) now() cpu.Account { return p.h.c.AccountAt(p.h.c.LocalTime()) }

// frame marks the arrival of a message's first frame.
func (p *probe) frame(f []byte) {
	if p.arrival == nil && p.matches != nil && p.matches(f) {
		a := p.h.c.AccountAt(p.h.k.Now())
		p.arrival = &a
	}
}

// sent records a send call that began at start.
func (p *probe) sent(start cpu.Account) {
	if p.sweep.measured {
		r := p.sweep.series()
		r.send[p.sweep.size] = append(r.send[p.sweep.size], between(start, p.now()))
	}
}

// received records the end of a message's receive.
func (p *probe) received() {
	a := p.arrival
	p.arrival = nil
	if a != nil && p.sweep.measured {
		r := p.sweep.series()
		r.recv[p.sweep.size] = append(r.recv[p.sweep.size], between(*a, p.now()))
	}
}

// Frame matchers.
func viaData(f []byte) bool {
	if len(f) < header.EthernetHeaderLen+header.VIAHeaderLen || header.Ethernet(f).Type() != header.EtherTypeVIA {
		return false
	}
	return header.VIA(f[header.EthernetHeaderLen:]).Type() == header.VIATypeData
}

func ipProto(f []byte, proto uint8, port uint16, data bool) bool {
	if len(f) < header.EthernetHeaderLen+header.IPv4MinimumSize || header.Ethernet(f).Type() != header.EtherTypeIPv4 {
		return false
	}
	ip := header.IPv4(f[header.EthernetHeaderLen:])
	if !ip.IsValid(len(ip)) || ip.Protocol() != proto {
		return false
	}
	if ip.FragmentOffset() != 0 {
		return proto == header.IPv4ProtocolUDP // a later UDP fragment (Linux sends them first)
	}
	switch proto {
	case header.IPv4ProtocolUDP:
		u := header.UDP(ip.Payload())
		return u.IsValid(len(u)) && (u.DstPort() == port || u.SrcPort() == port)
	case header.IPv4ProtocolTCP:
		tc := header.TCP(ip.Payload())
		return tc.IsValid() && (tc.DstPort() == port || tc.SrcPort() == port) && (!data || len(tc.Payload()) > 0)
	}
	return false
}

// stats of a sample set, by layer.
type layerMedians struct {
	Total, Host float64
	Layers      map[string]float64
	N           int
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return stat.Quantile(0.5, stat.Empirical, s, nil)
}

func medians(ss []sample) layerMedians {
	m := layerMedians{Layers: map[string]float64{}, N: len(ss)}
	var tot, host []float64
	by := map[string][]float64{}
	names := map[string]bool{}
	for _, s := range ss {
		for l := range s.layers {
			names[l] = true
		}
	}
	for _, s := range ss {
		tot = append(tot, float64(s.cycles))
		host = append(host, float64(s.cycles-s.idle))
		for l := range names {
			by[l] = append(by[l], float64(s.layers[l]))
		}
	}
	m.Total, m.Host = median(tot), median(host)
	for l, v := range by {
		m.Layers[l] = median(v)
	}
	return m
}

// table renders the medians of one protocol, one row per size.
func table(title string, sizes []int, cols []string, get func(size int) layerMedians, host bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (median cycles)\n%8s", title, "size")
	for _, c := range cols {
		fmt.Fprintf(&b, " %8s", c)
	}
	fmt.Fprintf(&b, " %9s", "total")
	if host {
		fmt.Fprintf(&b, " %9s", "host")
	}
	b.WriteString("\n")
	for _, n := range sizes {
		m := get(n)
		fmt.Fprintf(&b, "%8d", n)
		for _, c := range cols {
			fmt.Fprintf(&b, " %8.0f", m.Layers[c])
		}
		fmt.Fprintf(&b, " %9.0f", m.Total)
		if host {
			fmt.Fprintf(&b, " %9.0f", m.Host)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// layersSeen returns the layers present in a protocol's samples, in the
// study's order first, then the rest sorted.
func layersSeen(r *series, order []string) []string {
	seen := map[string]bool{}
	for _, m := range []map[int][]sample{r.send, r.recv} {
		for _, ss := range m {
			for _, s := range ss {
				for l := range s.layers {
					seen[l] = true
				}
			}
		}
	}
	var out []string
	for _, l := range order {
		if seen[l] {
			out = append(out, l)
			delete(seen, l)
		}
	}
	var rest []string
	for l := range seen {
		rest = append(rest, l)
	}
	sort.Strings(rest)
	return append(out, rest...)
}
