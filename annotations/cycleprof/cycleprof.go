// Package cycleprof records where a run's simulated cycles went, by the
// stack of modelled functions they were charged in, and writes them as a
// pprof profile (github.com/google/pprof/profile), so that `go tool
// pprof -top`, `-tree` and the flame graph of `-http` read a simulated
// machine as they read a Go program. The samples are simulated cycles,
// not host time.
//
// # Layer
//
// Observation only, beside annotations: a Recorder connects to a core's
// trace sources (cpu.Trace's Enter, Exit, Interrupt and Charged) and
// never charges, syncs or schedules, so a run with a recorder is the
// same run as one without. It is a package of its own so that the Tcl
// engine does not carry pprof's encoder, and so that the core, which may
// import only the simulator's lowest packages, does not either.
//
// # What a profile holds
//
// Every busy cycle of every watched core once (the core's cycles less
// its idle cycles), keyed by where it ran:
//
//   - the stack of modelled functions of the context running, outermost
//     first, under a root frame naming the context ("[pcA.udp-client]",
//     "[pcA.idle]"); a context switch changes the stack;
//   - an interrupt cuts the stack: its handler's functions, and the
//     deferred work run on its way out, stand under a root frame of
//     their own ("[irq 5]"), not under the function it interrupted, as
//     the core's layer attribution counts them apart from the
//     interrupted work;
//   - cycles charged with no function active stand on the root frame
//     itself (its flat cycles).
//
// Each sample carries two labels: "host", the watched core's host, and
// "layer", the layer the core's attribution counted the cycles to ("-"
// for none), so that the label totals are the core's layer totals. One
// profile holds every host of a run: hosts are told apart by the label
// (`go tool pprof -tagfocus host=pcA`, `-tagroot host`), and a function
// of the same name on two hosts is one function of the profile, which
// adds them up unless a host is chosen.
//
// Simplified: cycles charged inside an interrupt outside any function of
// its handler stand on the interrupt's root frame, while the core's
// attribution counts them to the interrupted function (its stack is one
// with the interrupted context's); their layer label is the core's.
// Addresses are the functions' start addresses in the simulated kernel
// text; there are no line numbers.
package cycleprof

import (
	"fmt"
	"io"

	"github.com/google/pprof/profile"

	"simkron/cpu"
)

// noLayer is the label of cycles counted to no layer, as the result's
// layer breakdowns name them.
const noLayer = "-"

// Recorder follows the cores it watches and holds their cycles by stack.
// Its zero value is ready to use. Like the simulation, it is not safe for
// use by more than one goroutine.
type Recorder struct {
	// Name names the profile's one mapping, the simulated kernel text
	// every location is in (pprof prints it as the File); "simkron" when
	// empty.
	Name string
	// Comments are written into the profile (`go tool pprof -comments`):
	// what ran, for a reader who has only the file.
	Comments []string
	hosts    []*host
}

// host is one watched core.
type host struct {
	name  string
	c     *cpu.CPU
	roots []*node
	// byName finds a root by its frame's name; contexts of one name
	// (a thread made again) share it.
	byName map[string]*node
	// ctxs holds each context's place; last and at cache the running
	// one's.
	ctxs map[*cpu.Context]*place
	last *cpu.Context
	at   *place
}

// place is where a context stands: the node of its innermost function
// (or its root), and beneath, the places of the work its interrupts
// interrupted.
type place struct {
	cur       *node
	preempted []*node
}

// node is one stack of functions: its innermost function (nil for a
// root, which names its context or interrupt), its caller's node, the
// calls made from it and the cycles charged in it, by layer.
type node struct {
	sym      *cpu.Symbol
	root     string
	parent   *node
	children []*node
	cycles   []layerCycles
}

type layerCycles struct {
	layer cpu.Layer
	n     int64
}

// Watch records the cycles of core c, of host name, from now on. It must
// be called before c runs anything: a function active before would end
// without having begun.
func (r *Recorder) Watch(name string, c *cpu.CPU) {
	h := &host{name: name, c: c, byName: map[string]*node{}, ctxs: map[*cpu.Context]*place{}}
	r.hosts = append(r.hosts, h)
	c.Trace.Enter.Connect(h.enter)
	c.Trace.Exit.Connect(h.exit)
	c.Trace.Interrupt.Connect(h.interrupt)
	c.Trace.Charged.Connect(h.charged)
}

// place returns the running context's place.
func (h *host) place() *place {
	x := h.c.Current()
	if x == h.last && h.at != nil {
		return h.at
	}
	p := h.ctxs[x]
	if p == nil {
		name := "(no context)"
		if x != nil {
			name = x.Name()
		}
		p = &place{cur: h.rootNamed("[" + name + "]")}
		h.ctxs[x] = p
	}
	h.last, h.at = x, p
	return p
}

// rootNamed returns the root of that name, made on first use.
func (h *host) rootNamed(name string) *node {
	n := h.byName[name]
	if n == nil {
		n = &node{root: name}
		h.byName[name] = n
		h.roots = append(h.roots, n)
	}
	return n
}

func (h *host) enter(s *cpu.Symbol) {
	p := h.place()
	p.cur = p.cur.child(s)
}

func (h *host) exit(s *cpu.Symbol) {
	p := h.place()
	if p.cur.sym != s {
		panic(fmt.Sprintf("cycleprof: %s: exit of %s in %s: the recorder missed the call's start (Watch after the core ran?)", h.name, s.Name, p.cur.name()))
	}
	p.cur = p.cur.parent
}

func (h *host) interrupt(e cpu.Interrupt) {
	p := h.place()
	if e.Entry {
		p.preempted = append(p.preempted, p.cur)
		p.cur = h.rootNamed(fmt.Sprintf("[irq %d]", e.Line))
		return
	}
	if len(p.preempted) == 0 {
		panic(fmt.Sprintf("cycleprof: %s: return from interrupt %d that was not seen taken", h.name, e.Line))
	}
	p.cur = p.preempted[len(p.preempted)-1]
	p.preempted = p.preempted[:len(p.preempted)-1]
}

func (h *host) charged(e cpu.Charged) {
	n := h.place().cur
	for i := range n.cycles {
		if n.cycles[i].layer == e.Layer {
			n.cycles[i].n += e.Cycles
			return
		}
	}
	n.cycles = append(n.cycles, layerCycles{e.Layer, e.Cycles})
}

// child returns the node of a call of s from n, made on first call.
func (n *node) child(s *cpu.Symbol) *node {
	for _, c := range n.children {
		if c.sym == s {
			return c
		}
	}
	c := &node{sym: s, parent: n}
	n.children = append(n.children, c)
	return c
}

// name is the node's frame's name.
func (n *node) name() string {
	if n.sym == nil {
		return n.root
	}
	return n.sym.Name
}

// Profile returns what was recorded as a pprof profile: one sample per
// stack, host and layer that had cycles, in the order they were first
// met, host by host; the same run gives the same profile. It reads each
// core first, so that the cycles charged and not yet counted are in it.
// Duration is the simulated time the first watched core's scheduler has
// reached.
func (r *Recorder) Profile() *profile.Profile {
	cycles := &profile.ValueType{Type: "cycles", Unit: "count"}
	p := &profile.Profile{
		SampleType:        []*profile.ValueType{cycles},
		DefaultSampleType: cycles.Type,
		PeriodType:        &profile.ValueType{Type: "cycles", Unit: "count"},
		Period:            1,
		Comments:          append([]string(nil), r.Comments...),
	}
	for _, h := range r.hosts {
		// A reading of the core counts what it has charged and not yet
		// counted (Trace.Charged): a run that stopped in the middle of
		// work.
		h.c.SymbolCycles()
	}
	if len(r.hosts) > 0 {
		p.DurationNanos = int64(r.hosts[0].c.Scheduler().Now()) / 1000
	}
	// One mapping holds every location: it has their functions, so pprof
	// looks for no binary to symbolise them with.
	text := &profile.Mapping{ID: 1, File: r.Name, HasFunctions: true}
	if text.File == "" {
		text.File = "simkron"
	}
	p.Mapping = []*profile.Mapping{text}
	type locKey struct {
		name string
		addr uint64
	}
	funcs := map[string]*profile.Function{}
	locs := map[locKey]*profile.Location{}
	location := func(n *node) *profile.Location {
		k := locKey{name: n.name()}
		if n.sym != nil {
			k.addr = uint64(n.sym.Addr)
		}
		if l := locs[k]; l != nil {
			return l
		}
		f := funcs[k.name]
		if f == nil {
			f = &profile.Function{ID: uint64(len(p.Function) + 1), Name: k.name, SystemName: k.name}
			funcs[k.name] = f
			p.Function = append(p.Function, f)
		}
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Mapping: text, Address: k.addr, Line: []profile.Line{{Function: f}}}
		text.Limit = max(text.Limit, k.addr+1)
		locs[k] = l
		p.Location = append(p.Location, l)
		return l
	}
	var walk func(h *host, n *node, stack []*profile.Location)
	walk = func(h *host, n *node, stack []*profile.Location) {
		stack = append(stack, location(n))
		for _, lc := range n.cycles {
			if lc.n == 0 {
				continue
			}
			layer := string(lc.layer)
			if layer == "" {
				layer = noLayer
			}
			// pprof lists a sample's stack innermost first.
			leafFirst := make([]*profile.Location, len(stack))
			for i, l := range stack {
				leafFirst[len(stack)-1-i] = l
			}
			p.Sample = append(p.Sample, &profile.Sample{
				Location: leafFirst,
				Value:    []int64{lc.n},
				Label:    map[string][]string{"host": {h.name}, "layer": {layer}},
			})
		}
		for _, c := range n.children {
			walk(h, c, stack)
		}
	}
	for _, h := range r.hosts {
		for _, root := range h.roots {
			walk(h, root, nil)
		}
	}
	return p
}

// Write writes the profile (Profile), gzipped as pprof reads it.
func (r *Recorder) Write(w io.Writer) error {
	return r.Profile().Write(w)
}
