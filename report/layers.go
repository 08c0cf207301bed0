package report

import (
	"slices"
	"strings"

	"simkron/cpu"
	"simkron/stack/apps/latency"
)

// layerOrder is the order layers appear in tables, CSV rows and stacked
// bars: from the application down the stack to the device, then the
// kernel work that belongs to no protocol, as in the Linux/SimOS study's
// latency breakdowns. Layers not listed follow, sorted by name.
var layerOrder = []cpu.Layer{
	cpu.LayerAPPL,
	cpu.LayerPRES, cpu.LayerSES, cpu.LayerTRANS, cpu.LayerTP4,
	cpu.LayerTCP, cpu.LayerUDP,
	cpu.LayerCLNS, cpu.LayerIP,
	cpu.LayerLLC, cpu.LayerMAC,
	cpu.LayerDEV, cpu.LayerDMA,
	cpu.LayerKERN, cpu.LayerIDLE,
}

// layerRank returns where layer sorts: its place in layerOrder, or after
// all of them.
func layerRank(layer string) int {
	for i, l := range layerOrder {
		if string(l) == layer {
			return i
		}
	}
	return len(layerOrder)
}

// sortLayers sorts layer names into the fixed order.
func sortLayers(ls []string) {
	slices.SortFunc(ls, func(a, b string) int {
		if ra, rb := layerRank(a), layerRank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
}

// Directions of a breakdown.
const (
	dirSend    = "send"
	dirReceive = "receive"
)

// breakdown is one protocol's cycles by layer in one direction, a point
// per message size: the data behind the layer tables, the CSV and the
// charts.
type breakdown struct {
	protocol  string // "MAC", "UDP", "TCP"
	direction string // dirSend or dirReceive
	sizeName  string // heading of the size column: "size", "payload"
	unit      string // what the cycles are per: "message", "frame"
	what      string // what the cycles cover, for the table's title
	points    []point
}

// point is one message size of a breakdown.
type point struct {
	size   int
	layers []layerCycles // in the result's order
	// summary is the measured latency, when the workload records one.
	summary *latency.Summary
}

type layerCycles struct {
	layer  string
	cycles float64
}

// cycles returns the point's cycles in layer, 0 when it has none.
func (p point) cycles(layer string) float64 {
	for _, l := range p.layers {
		if l.layer == layer {
			return l.cycles
		}
	}
	return 0
}

// total returns the point's mean latency: the measured mean when there is
// a summary, else the sum of its layers.
func (p point) total() float64 {
	if p.summary != nil {
		return p.summary.Mean
	}
	var t float64
	for _, l := range p.layers {
		t += l.cycles
	}
	return t
}

// layers returns the layers any point of b has, in the fixed order.
func (b breakdown) layers() []string {
	var ls []string
	for _, p := range b.points {
		for _, l := range p.layers {
			if !slices.Contains(ls, l.layer) {
				ls = append(ls, l.layer)
			}
		}
	}
	sortLayers(ls)
	return ls
}

// label names the breakdown in legends: "UDP send".
func (b breakdown) label() string { return b.protocol + " " + b.direction }

// breakdowns returns r's per-layer measurements: MAC frames, then UDP
// and TCP messages, each send then receive; directions with no layer at
// all are left out.
func breakdowns(r *Result) []breakdown {
	var bs []breakdown
	add := func(b breakdown) {
		for _, p := range b.points {
			if len(p.layers) > 0 {
				bs = append(bs, b)
				return
			}
		}
	}
	for _, dir := range []string{dirSend, dirReceive} {
		b := breakdown{protocol: "MAC", direction: dir, sizeName: "payload", unit: "frame",
			what: "the sending host's work for each frame"}
		if dir == dirReceive {
			b.what = "the receiving host's work for each frame"
		}
		for _, m := range r.Mac {
			ls := m.Send
			if dir == dirReceive {
				ls = m.Receive
			}
			p := point{size: m.Size}
			for _, l := range ls {
				p.layers = append(p.layers, layerCycles{l.Layer, l.CyclesPerFrame})
			}
			b.points = append(b.points, p)
		}
		add(b)
	}
	for _, sw := range sweeps(r) {
		for _, dir := range []string{dirSend, dirReceive} {
			b := breakdown{protocol: sw.protocol, direction: dir, sizeName: "size", unit: "message",
				what: "the sending thread's cycles inside " + sw.send}
			if dir == dirReceive {
				b.what = "all of the receiving host's cycles from the first frame's arrival to " + sw.recv + " returning"
			}
			for _, u := range sw.rows {
				ls, sum := u.SendLayers, u.Send
				if dir == dirReceive {
					ls, sum = u.RecvLayers, u.Receive
				}
				p := point{size: u.Size}
				if sum.N > 0 {
					p.summary = &sum
				}
				for _, l := range ls {
					p.layers = append(p.layers, layerCycles{l.Layer, l.Cycles})
				}
				b.points = append(b.points, p)
			}
			add(b)
		}
	}
	return bs
}

// sweep is one protocol's latency sweep in a result.
type sweep struct {
	protocol   string
	send, recv string // the calls measured
	rows       []latency.Row
}

// sweeps returns r's latency sweeps that have rows: UDP, then TCP.
func sweeps(r *Result) []sweep {
	var out []sweep
	if len(r.UDP) > 0 {
		out = append(out, sweep{"UDP", "sendto", "recvfrom", r.UDP})
	}
	if len(r.TCP) > 0 {
		out = append(out, sweep{"TCP", "send", "recv", r.TCP})
	}
	return out
}
