// Package timeline writes what the simulated machines did as a timeline
// in the Trace Event Format, the JSON that Perfetto (ui.perfetto.dev) and
// Chromium's trace viewer (chrome://tracing) read, and reads such a
// trace back (read.go) to sum its slices by layer and to draw one
// message's waterfall (waterfall.go).
//
// # Layer
//
// An observer, like the annotations: it connects to the trace sources of
// the cores (calls, interrupts, switches, halts, deferred work), the
// cards (frames sent and received, DMA) and the workload (its measured
// messages), and never touches the model, so that a run with a trace is
// the same run as one without (the tests hash the event trace and
// compare every result byte). It is a package of its own because it
// joins what no model package may see at once (cores, cards, workloads)
// and writes a file format no report is made of; machine attaches it to a
// built run.
//
// # What the trace holds
//
// One process per host and one per network (an Ethernet segment, an ATM
// switch). In a host's process:
//
//   - a thread "cpuN" that shows what the core ran: a slice per stretch
//     of a context (a thread, the idle loop), interrupt handlers ("irq 3
//     (nic0)") nested in it, the deferred work on their way out
//     ("softirq") nested in those; instants where a device requested a
//     line ("raise irq 3") and where the request was delivered;
//   - a thread per execution context: each kernel thread (a system call
//     is its thread's, nested under its own slices, as Linux shows it),
//     the idle loop (with "halt" slices where the core waited for an
//     interrupt), each interrupt line's handler, and the deferred work
//     run on the way out of interrupts ("softirq": the kernel's softirqs
//     and the timers they run); deferred work a thread runs itself stays
//     on that thread;
//   - on those, a slice per call of every modelled function, nested as
//     the calls were, with the function's layer as its category (the
//     layer its cycles count in: a library routine's is its caller's);
//   - a thread per card direction ("nic0 tx", "nic0 rx") with a slice per
//     frame for its time on the wire (an ATM card's AAL5 PDU from its
//     first cell's first bit to its last cell's last bit on the line; a
//     thread more where PDUs of two VCs overlap), and flow arrows from
//     each frame's transmission to its reception at every card that
//     received it;
//   - async slices for each burst of a card's DMA engine, and for each
//     measurement of a message the workload made, with the layers it
//     reported and the spans it counted (its args);
//   - counter tracks: each cache's misses since the window opened,
//     sampled at switches, halts and interrupts; the length of every
//     queue a component of the host fires as a gauge (trace.Gauged: the
//     device transmit queues and the receive backlog, the sockets'
//     receive queues and TCP's backlogs) at each change; and what
//     annotation scripts emit (trace counter).
//
// A network's process (an Ethernet segment, an ATM switch, a loop-back
// cable) holds an async slice per frame, from the moment its card handed
// it to the network (a PDU's first cell's first bit) to its arrival at a
// card (its last cell's last bit).
//
// Times are the simulated picoseconds, written as microseconds with up
// to six decimals (the format's unit): exact. A host's core charges work
// lazily and an interrupt that arrives meanwhile pushes the completion of
// the work charged ahead back by its handler's cycles (package cpu); the
// trace does the same, holding a call's times until the event clock has
// passed them and moving those after an interrupt's arrival by its
// handler's cycles, so that on each host at each instant one thing runs,
// and a host's slices sum, layer by layer, to its core's counters.
//
// The file is written as the run goes (nothing is kept but the calls in
// progress and the frames on the wire), in the order events become
// final, and its bytes depend only on the config, the seed and the
// window.
//
// # Simplifications
//
// Device register accesses are not shown one by one (the calls that make
// them are), nor an ATM PDU's cells (the link's cell trace has them); a
// card's Ethernet frame slice lasts its serialisation at the wire's rate,
// queueing in a switch not shown. A queue's length is the model's as its
// code left it: an interrupt taken while the core ran ahead of the event
// clock is placed before the work charged ahead but runs after it in the
// model, and the length it leaves counts that work.
package timeline

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"simkron/card"
	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
	"simkron/trace"
	"simkron/workload"
)

// Host is what the writer watches of one host: its core and the
// components it was built with (its cards among them).
type Host struct {
	Name       string
	CPU        *cpu.CPU
	Components []any
}

// Options are a trace's choices.
type Options struct {
	Window Window
	// Marks is the workload's source of message marks, nil when it
	// measures no messages one by one (workload.Messages).
	Marks *trace.Source[workload.Mark]
}

// Writer writes one run's trace to a file as the run goes.
type Writer struct {
	out   *bufio.Writer
	err   error
	k     *sim.Scheduler
	opt   Options
	hosts []*host
	nets  []*network
	// state: before the window, in it, after it.
	opened, closed bool
	events         int64
	written        bool   // an event has been written
	nextID         uint64 // async slices' and flows' ids
	buf            []byte
	offTicker      func()
	offMarks       func()
	// windowEnd is when the window closed (a span's end, when the first
	// event after it closed it).
	windowEnd sim.Time
}

// New starts a trace of the hosts' run on scheduler k, written to w, and
// connects what opens its window: the workload's marks for a message
// window, the scheduler for a span of time; a window of the whole run
// opens at once. It writes the file's header. Nothing of the run changes.
// The caller checks the window against the run first (Window.Check).
func New(w io.Writer, k *sim.Scheduler, hosts []Host, opt Options) (*Writer, error) {
	if opt.Window.Message != nil && opt.Marks == nil {
		return nil, fmt.Errorf("the workload measures no messages one by one (a window of time, FROM:TO, works for any)")
	}
	t := &Writer{out: bufio.NewWriterSize(w, 64<<10), k: k, opt: opt}
	for i, h := range hosts {
		t.hosts = append(t.hosts, newHost(t, i+1, h))
	}
	for _, h := range t.hosts {
		for _, c := range h.cards {
			if c.net == "" {
				continue
			}
			link := c.c.Link()
			i := slices.IndexFunc(t.nets, func(n *network) bool { return n.name == c.net && n.link == link })
			if i < 0 {
				i = len(t.nets)
				t.nets = append(t.nets, &network{name: c.net, link: link, pid: len(t.hosts) + 1 + i})
			}
			c.network = t.nets[i]
			t.nets[i].cards++
		}
	}
	t.header()
	switch {
	case opt.Window.Message != nil:
		t.offMarks = opt.Marks.Connect(t.mark)
	default:
		if opt.Marks != nil {
			t.offMarks = opt.Marks.Connect(t.mark)
		}
		if opt.Window.To > 0 {
			t.offTicker = k.Firing.Connect(t.tick)
		} else {
			t.open()
		}
	}
	return t, nil
}

// header writes the file's opening and the processes' names.
func (t *Writer) header() {
	t.out.WriteString(`{"displayTimeUnit":"ns","otherData":{"generator":"simkron","window":`)
	t.out.Write(appendString(nil, t.opt.Window.String()))
	t.out.WriteString("},\n\"traceEvents\":[\n")
	for _, h := range t.hosts {
		t.meta(h.pid, 0, "process_name", h.name)
		t.metaSort(h.pid, 0, "process_sort_index", h.pid)
	}
	for _, n := range t.nets {
		t.meta(n.pid, 0, "process_name", n.name)
		t.metaSort(n.pid, 0, "process_sort_index", n.pid)
	}
}

func (t *Writer) meta(pid, tid int, what, name string) {
	t.emit(&event{ph: phMetadata, name: what, pid: pid, tid: tid, args: string(members(nil).str("name", name))})
}

func (t *Writer) metaSort(pid, tid int, what string, i int) {
	t.emit(&event{ph: phMetadata, name: what, pid: pid, tid: tid, args: string(members(nil).int("sort_index", int64(i)))})
}

// emit writes one event.
func (t *Writer) emit(e *event) {
	if t.err != nil {
		return
	}
	t.buf = t.buf[:0]
	if t.written {
		t.buf = append(t.buf, ",\n"...)
	}
	t.written = true
	t.buf = appendEvent(t.buf, e)
	if _, err := t.out.Write(t.buf); err != nil {
		t.err = err
	}
	if e.ph != phMetadata {
		t.events++
	}
}

// Events returns how many events (metadata aside) have been written.
func (t *Writer) Events() int64 { return t.events }

// newID returns a fresh id for an async slice or a flow.
func (t *Writer) newID() uint64 {
	t.nextID++
	return t.nextID
}

// tick watches the event clock for a time window.
func (t *Writer) tick(*sim.Event) {
	now := t.k.Now()
	if !t.opened && now >= t.opt.Window.From {
		t.open()
	}
	if t.opened && !t.closed && now >= t.opt.Window.To {
		t.close()
	}
}

// mark follows the workload's messages: the chosen one's begin opens a
// message window and its end closes it; measurements inside the window
// are written.
func (t *Writer) mark(m workload.Mark) {
	want := t.opt.Window.Message
	switch m.Kind {
	case workload.MarkBegin:
		if want != nil && !t.opened && m.Message == *want {
			t.open()
		}
	case workload.MarkMeasured:
		if h := t.inWindow(m.Host); h != nil && !t.closed {
			h.measure(m)
		}
	case workload.MarkEnd:
		if want != nil && t.opened && !t.closed && m.Message == *want {
			t.close()
		}
	}
}

func (t *Writer) host(name string) *host {
	for _, h := range t.hosts {
		if h.name == name {
			return h
		}
	}
	return nil
}

// open opens the window: every host's state is read from its core (the
// calls in progress begin at the window's start) and the listeners are
// connected.
func (t *Writer) open() {
	t.opened = true
	for _, h := range t.hosts {
		h.open()
	}
}

// close closes the window. Each host's part ends once its core has
// caught up with the event clock (at once, as a rule): its counters then
// hold no work an interrupt could still delay, and the slices can be
// summed against them.
func (t *Writer) close() {
	t.closed = true
	t.windowEnd = t.k.Now()
	if to := t.opt.Window.To; to > 0 && to < t.windowEnd {
		t.windowEnd = to // the first event after it closed it
	}
	if t.offTicker != nil {
		t.offTicker()
	}
	if t.offMarks != nil {
		t.offMarks()
	}
	for _, h := range t.hosts {
		h.closing = true
		h.tryClose()
	}
}

// ErrEmpty is wrapped by Finish's error for a window the run never
// reached.
var ErrEmpty = errors.New("the trace's window matched nothing")

// Finish ends the trace once the run has ended: a window still open is
// closed where the run stopped, and the file's end is written and
// flushed. Its error says what went wrong: writing, or a window the run
// never reached (ErrEmpty; the file then holds only its header).
func (t *Writer) Finish() error {
	var empty error
	switch {
	case !t.opened:
		empty = fmt.Errorf("%w: %s was never reached (the run ended at %v); the file holds no event", ErrEmpty, t.opt.Window, t.k.Now())
		if t.offTicker != nil {
			t.offTicker()
		}
		if t.offMarks != nil {
			t.offMarks()
		}
	case !t.closed:
		t.close()
	}
	for _, h := range t.hosts {
		if t.opened && !h.closed {
			h.close() // the run ended before its core caught up
		}
	}
	if t.err == nil {
		_, t.err = t.out.WriteString("\n]}\n")
	}
	if t.err == nil {
		t.err = t.out.Flush()
	}
	if t.err != nil {
		return t.err
	}
	return empty
}

// host is the writer's state of one host.
type host struct {
	t     *Writer
	name  string
	pid   int
	c     *cpu.CPU
	clock sim.Clock
	cards []*cardState
	// gauged are the host's components with gauges (queue lengths).
	gauged []trace.Gauged
	// tracks by what they show, and all of them in the order they were
	// made (tid order).
	tids     int
	tracks   []*track
	names    map[string]bool
	overview *track
	contexts map[*cpu.Context]*track
	irqs     map[int]*track
	softirq  *track
	// flow is the stack of tracks the core's calls go to now: the
	// running context's, then an interrupt handler's for each running,
	// then the deferred work's.
	flow []*track
	// pending holds the records whose cycles may still move (see the
	// package doc), in the order they were made, from head on.
	pending []record
	head    int
	// taking holds the takings of interrupts in progress, outermost
	// first (taken); seq numbers the records and calls begun.
	taking []takenMark
	seq    uint64
	// caches and their misses when the window opened, and last sampled.
	caches    []*memory.Cache
	missBase  []uint64
	missLast  []uint64
	halted    bool
	frameBufs []cpu.Frame
	// cur is the context running.
	cur *cpu.Context
	// opened is the cycle the window opened at; readOpen says that the
	// core's counters are still to be read for the window's opening.
	opened   int64
	readOpen bool
	// closing says the window has ended, closed that the host's part of
	// it has; off disconnects the host's listeners.
	closing, closed bool
	off             []func()
}

// takenMark is interrupts being taken at cycle at: records numbered seq
// and after were made since.
type takenMark struct {
	at  int64
	seq uint64
}

// track is one thread of a host's process, with its calls in progress.
type track struct {
	tid  int
	name string
	open []openSlice
}

type openSlice struct {
	name, cat string
	begin     int64 // cycles
	seq       uint64
}

// record is an event whose times are the host's core cycles: written
// once the event clock has passed them.
type record struct {
	e        event
	from, to int64 // cycles; to is from for an instant
	seq      uint64
	// pieces are a measurement's spans, which move with the record and
	// are written as its args' pieces; reading says to write the record's
	// cycle as its args' cycle.
	pieces  []workload.Piece
	reading bool
}

func newHost(t *Writer, pid int, h Host) *host {
	s := &host{t: t, name: h.Name, pid: pid, c: h.CPU, clock: h.CPU.Clock(),
		contexts: map[*cpu.Context]*track{}, irqs: map[int]*track{}, names: map[string]bool{}}
	for _, comp := range h.Components {
		if c, ok := comp.(card.Card); ok {
			s.cards = append(s.cards, newCard(s, c))
		}
		if g, ok := comp.(trace.Gauged); ok {
			s.gauged = append(s.gauged, g)
		}
	}
	if sys := h.CPU.System(); sys.Cache != nil && sys.Detail() == memory.DetailFull {
		s.caches = sys.Cache.Caches()
	}
	return s
}

// newTrack makes a thread of the host's process, named name, or name
// and a number when a thread has that name already (two contexts of one
// name: a workload's thread and the next one's).
func (h *host) newTrack(name string) *track {
	if h.names[name] {
		for i := 2; ; i++ {
			if n := fmt.Sprintf("%s (%d)", name, i); !h.names[n] {
				name = n
				break
			}
		}
	}
	h.names[name] = true
	h.tids++
	tr := &track{tid: h.tids, name: name}
	h.tracks = append(h.tracks, tr)
	h.t.meta(h.pid, tr.tid, "thread_name", name)
	h.t.metaSort(h.pid, tr.tid, "thread_sort_index", tr.tid)
	return tr
}

// short is a name of the host's without the host's prefix.
func (h *host) short(name string) string { return strings.TrimPrefix(name, h.name+".") }

func (h *host) contextTrack(x *cpu.Context) *track {
	tr, ok := h.contexts[x]
	if !ok {
		name := "no context" // a core not started
		if x != nil {
			name = h.short(x.Name())
		}
		tr = h.newTrack(name)
		h.contexts[x] = tr
	}
	return tr
}

// irqName is an interrupt line's name on the tracks.
func (h *host) irqName(line int) string {
	if n := h.c.HandlerName(line); n != "" {
		return fmt.Sprintf("irq %d (%s)", line, h.short(n))
	}
	return fmt.Sprintf("irq %d", line)
}

func (h *host) irqTrack(line int) *track {
	tr, ok := h.irqs[line]
	if !ok {
		tr = h.newTrack(h.irqName(line))
		h.irqs[line] = tr
	}
	return tr
}

func (h *host) softirqTrack() *track {
	if h.softirq == nil {
		h.softirq = h.newTrack(softirqName)
	}
	return h.softirq
}

// Names of the tracks and slices that are not a context's or a call's.
const (
	softirqName = "softirq"
	haltName    = "halt"
	catCPU      = "cpu"    // the overview's slices
	catHalted   = "halted" // a halt slice
	catNone     = "-"      // a call whose cycles count in no layer
	catQueue    = "queue"  // a gauge's counter track
)

// now returns the event clock in the core's cycles.
func (h *host) now() int64 { return h.clock.Cycle(h.t.k.Now()) }

// layerCat is the category of a call counting in layer l.
func layerCat(l cpu.Layer) string {
	if l == cpu.LayerInherit {
		return catNone
	}
	return string(l)
}

// open reads the host's state when the window opens and connects its
// listeners.
func (h *host) open() {
	c := h.c
	at := h.now()
	h.opened = at
	// Interrupts being taken now (their handlers running, below) delay
	// the work charged past them before the window; the calls the window
	// opens with begin at its start, and are not that work: their
	// records come after the takings' marks.
	for _, at := range c.Taking() {
		h.taking = append(h.taking, takenMark{at: at, seq: h.seq + 1})
	}
	h.overview = h.newTrack(h.short(c.Name()))
	// Every context's calls in progress; the running one's split among
	// the interrupt handlers and deferred work running on its stack.
	for _, x := range c.Contexts() {
		tr := h.contextTrack(x)
		h.frameBufs = x.AppendFrames(h.frameBufs[:0])
		if x != c.Current() {
			h.openFrames(tr, h.frameBufs, at)
			continue
		}
		h.flow = append(h.flow[:0], tr)
		h.cur = x
		h.overview.push(h, h.short(x.Name()), catCPU, at)
		lo := 0
		for _, a := range c.Active() {
			h.openFrames(h.top(), h.frameBufs[lo:a.Base], at)
			lo = a.Base
			itr := h.irqTrack(a.Line)
			h.flow = append(h.flow, itr)
			h.overview.push(h, itr.name, catCPU, at)
			if a.Deferred >= 0 {
				h.openFrames(itr, h.frameBufs[lo:a.Deferred], at)
				lo = a.Deferred
				h.flow = append(h.flow, h.softirqTrack())
				h.overview.push(h, softirqName, catCPU, at)
			}
		}
		h.openFrames(h.top(), h.frameBufs[lo:], at)
		if c.Halted() {
			h.halted = true
			h.top().push(h, haltName, catHalted, at)
		}
	}
	h.missBase = h.misses(h.missBase[:0])
	h.missLast = slices.Clone(h.missBase)
	h.sampleCounters(at, true)
	h.readOpen = true
	h.flush()
	h.off = append(h.off,
		c.Trace.Enter.Connect(h.enter),
		c.Trace.Exit.Connect(h.exit),
		c.Trace.Interrupt.Connect(h.interrupt),
		c.Trace.Switch.Connect(h.switched),
		c.Trace.Raise.Connect(h.raise),
		c.Trace.Halt.Connect(h.halt),
		c.Trace.Deferred.Connect(h.deferred),
		c.Trace.Taken.Connect(h.taken),
	)
	for _, cs := range h.cards {
		cs.connect()
	}
	for _, g := range h.gauged {
		h.off = append(h.off, g.Gauges().Connect(h.gauge))
	}
}

// openFrames opens the calls fs in progress on tr, begun (as the trace
// sees them) at cycle at.
func (h *host) openFrames(tr *track, fs []cpu.Frame, at int64) {
	for _, f := range fs {
		tr.push(h, f.Symbol.Name, layerCat(f.Layer), at)
	}
}

// windowReading writes the core's counters at an edge of the window, for
// a reader that sums the host's slices between the edges. The opening's
// is read once the core has no work charged past the event clock (the
// first moment it is caught up), since an interrupt that arrives before
// the end of such work would run before it in time but after it in the
// counters.
func (h *host) windowReading(name string, at int64) {
	a := h.c.AccountAt(h.clock.Time(at))
	m := members(nil).int("idle", a.Idle)
	var ls members
	for _, l := range a.Layers {
		ls = ls.int(layerCat(l.Layer), l.Cycles)
	}
	m = m.raw("layers", append(append([]byte{'{'}, ls...), '}'))
	m = m.int("clock_hz", int64(h.clock.Frequency()))
	h.record(record{e: event{ph: phInstant, name: name, cat: catCPU, pid: h.pid, tid: h.overview.tid, scope: 't', args: string(m)}, from: max(at, a.Cycle), to: max(at, a.Cycle), reading: true})
}

// caughtUp reports whether the core has no work charged past the event
// clock and takes no interrupts.
func (h *host) caughtUp() bool { return h.c.Cycles() <= h.now() && len(h.taking) == 0 }

// tryClose closes the host's part of a window that has ended, once its
// core has caught up.
func (h *host) tryClose() {
	if h.closing && !h.closed && h.caughtUp() {
		h.close()
	}
}

// close ends the host's part of the window: what is in progress ends at
// the window's end, or where the core's work has reached past it, every
// record held is written and the listeners are disconnected.
func (h *host) close() {
	h.closed = true
	for _, off := range h.off {
		off()
	}
	h.off = nil
	end := max(h.clock.Cycle(h.t.windowEnd), h.c.Cycles())
	for _, tr := range h.tracks {
		for len(tr.open) > 0 {
			tr.pop(h, end)
		}
	}
	h.sampleCounters(end, true)
	if h.readOpen {
		// Never caught up: the opening's reading is taken here, which
		// leaves the window no cycle to sum.
		h.readOpen = false
		h.windowReading("window opens", end)
	}
	h.windowReading("window closes", end)
	h.flushAll()
	for _, cs := range h.cards {
		cs.close()
	}
}

// top is the track the core's calls go to now.
func (h *host) top() *track {
	if len(h.flow) == 0 {
		// Before the first switch: the running context's.
		h.flow = append(h.flow, h.contextTrack(h.c.Current()))
	}
	return h.flow[len(h.flow)-1]
}

func (tr *track) push(h *host, name, cat string, at int64) {
	h.seq++
	tr.open = append(tr.open, openSlice{name: name, cat: cat, begin: at, seq: h.seq})
}

// pop ends the innermost call in progress on tr at cycle at.
func (tr *track) pop(h *host, at int64) {
	n := len(tr.open)
	if n == 0 {
		return
	}
	s := tr.open[n-1]
	tr.open = tr.open[:n-1]
	h.record(record{e: event{ph: phComplete, name: s.name, cat: s.cat, pid: h.pid, tid: tr.tid}, from: s.begin, to: max(at, s.begin), seq: s.seq})
}

// popNamed ends the innermost call called name on tr: the innermost
// one, unless the window opened inside a call the trace did not see
// begin.
func (tr *track) popNamed(h *host, name string, at int64) {
	for i := len(tr.open) - 1; i >= 0; i-- {
		if tr.open[i].name == name {
			for len(tr.open) > i {
				tr.pop(h, at)
			}
			return
		}
	}
}

// record holds r until the event clock has passed its cycles, then writes
// it; records made before it are written first.
func (h *host) record(r record) {
	if r.seq == 0 {
		h.seq++
		r.seq = h.seq
	}
	h.pending = append(h.pending, r)
	h.flush()
}

// flush writes the records the event clock has passed, in order; while
// interrupts are being taken, none past the cycle they were taken at
// (their end may still move them).
func (h *host) flush() {
	now := h.now()
	if h.readOpen && h.c.Cycles() <= now && len(h.taking) == 0 {
		// The core has caught up with the event clock: its counters now
		// hold no work that an interrupt could still delay (see
		// windowReading).
		h.readOpen = false
		h.windowReading("window opens", now)
	}
	if h.closing && !h.closed {
		h.tryClose()
		if h.closed {
			return
		}
	}
	for _, m := range h.taking {
		now = min(now, m.at)
	}
	for h.head < len(h.pending) && h.pending[h.head].to <= now {
		h.write(&h.pending[h.head])
		h.head++
	}
	h.compact()
}

// flushAll writes every record held.
func (h *host) flushAll() {
	for h.head < len(h.pending) {
		h.write(&h.pending[h.head])
		h.head++
	}
	h.compact()
}

func (h *host) compact() {
	if h.head == len(h.pending) {
		h.pending, h.head = h.pending[:0], 0
	} else if h.head > 1024 && h.head > len(h.pending)/2 {
		n := copy(h.pending, h.pending[h.head:])
		clear(h.pending[n:])
		h.pending, h.head = h.pending[:n], 0
	}
}

// write writes a record, its cycles as the core's clock's times.
func (h *host) write(r *record) {
	e := r.e
	e.ts = int64(h.clock.Time(r.from))
	switch {
	case r.reading:
		e.args = string(members(nil).int("cycle", r.from)) + "," + e.args
	case r.pieces != nil:
		e.args += "," + string(piecesArg(h, r.pieces))
	}
	switch e.ph {
	case phComplete:
		e.dur = int64(h.clock.Time(r.to)) - e.ts
	case phAsyncBegin:
		h.t.emit(&e)
		e.ph, e.ts, e.args = phAsyncEnd, int64(h.clock.Time(r.to)), ""
	}
	h.t.emit(&e)
}

// shift moves every cycle after start of what was recorded or begun
// from the record numbered from to before the one numbered to by d
// cycles: an interrupt taken at start, after the core had charged work
// past it, delays that work by its handler's cycles (cpu's
// takeInterrupt).
func (h *host) shift(start, d int64, from, to uint64) {
	if d == 0 {
		return
	}
	in := func(seq uint64) bool { return seq >= from && seq < to }
	for i := h.head; i < len(h.pending); i++ {
		r := &h.pending[i]
		if !in(r.seq) {
			continue
		}
		if r.from > start {
			r.from += d
		}
		if r.to > start {
			r.to += d
		}
		for j := range r.pieces {
			p := &r.pieces[j]
			if p.From > start {
				p.From += d
			}
			if p.To > start {
				p.To += d
			}
		}
	}
	move := func(tr *track) {
		if tr == nil {
			return
		}
		for i := range tr.open {
			if s := &tr.open[i]; in(s.seq) && s.begin > start {
				s.begin += d
			}
		}
	}
	move(h.overview)
	for _, tr := range h.contexts {
		move(tr)
	}
	for _, tr := range h.irqs {
		move(tr)
	}
	move(h.softirq)
}

// The core's listeners.

func (h *host) enter(s *cpu.Symbol) {
	h.top().push(h, s.Name, layerCat(h.c.Layer()), h.c.Cycles())
}

func (h *host) exit(s *cpu.Symbol) {
	h.top().popNamed(h, s.Name, h.c.Cycles())
	h.flush()
}

func (h *host) interrupt(ev cpu.Interrupt) {
	at := h.c.Cycles()
	if ev.Entry {
		tr := h.irqTrack(ev.Line)
		h.flow = append(h.flow, tr)
		h.overview.push(h, tr.name, catCPU, at)
		h.instant(h.overview, "deliver "+tr.name, "irq", at)
		h.sampleCounters(at, false)
		return
	}
	if len(h.flow) > 1 {
		h.flow = h.flow[:len(h.flow)-1]
	}
	h.overview.pop(h, at)
	h.flush()
}

// taken follows the core taking interrupts while it waited for the event
// clock: once the handlers are done, what was made before and lies past
// the cycle they were taken at moves by their cycles. What was made
// before an enclosing taking of interrupts is left to that one, whose
// delay holds this one's.
func (h *host) taken(ev cpu.Taken) {
	if ev.Begin {
		h.taking = append(h.taking, takenMark{at: ev.At, seq: h.seq + 1})
		return
	}
	n := len(h.taking)
	if n == 0 {
		return // begun before the window
	}
	m := h.taking[n-1]
	h.taking = h.taking[:n-1]
	var from uint64
	if n > 1 {
		from = h.taking[n-2].seq
	}
	h.shift(m.at, ev.Delay, from, m.seq)
	h.flush()
}

func (h *host) switched(x *cpu.Context) {
	at := h.c.Cycles()
	for len(h.overview.open) > 0 {
		h.overview.pop(h, at)
	}
	// A context that ended leaves its last calls (the kernel's schedule
	// on its way out) in progress for good: they end here.
	if h.cur != nil && h.cur.Done() {
		if tr := h.contexts[h.cur]; tr != nil {
			for len(tr.open) > 0 {
				tr.pop(h, at)
			}
		}
	}
	h.cur = x
	tr := h.contextTrack(x)
	h.flow = append(h.flow[:0], tr)
	h.overview.push(h, tr.name, catCPU, at)
	h.sampleCounters(at, false)
	h.flush()
}

func (h *host) raise(line int) {
	h.instant(h.overview, "raise "+h.irqName(line), "irq", h.now())
}

func (h *host) halt(on bool) {
	at := h.c.Cycles()
	if on {
		h.halted = true
		h.top().push(h, haltName, catHalted, at)
		h.sampleCounters(at, false)
		return
	}
	if h.halted {
		h.halted = false
		h.top().popNamed(h, haltName, at)
	}
	h.flush()
}

func (h *host) deferred(on bool) {
	at := h.c.Cycles()
	if on {
		h.flow = append(h.flow, h.softirqTrack())
		h.overview.push(h, softirqName, catCPU, at)
		return
	}
	if len(h.flow) > 1 {
		h.flow = h.flow[:len(h.flow)-1]
	}
	h.overview.pop(h, at)
	h.flush()
}

// instant records an instant event on tr at cycle at.
func (h *host) instant(tr *track, name, cat string, at int64) {
	h.record(record{e: event{ph: phInstant, name: name, cat: cat, pid: h.pid, tid: tr.tid, scope: 't'}, from: at, to: at})
}

// misses appends each cache's misses so far to dst.
func (h *host) misses(dst []uint64) []uint64 {
	for _, c := range h.caches {
		s := c.Stats()
		dst = append(dst, s.ReadMisses+s.WriteMisses+s.FetchMisses)
	}
	return dst
}

// sampleCounters writes the caches' misses since the window opened, when
// they changed since last written, or always at the window's edges
// (edge).
func (h *host) sampleCounters(at int64, edge bool) {
	if len(h.caches) == 0 {
		return
	}
	changed := edge
	for i, c := range h.caches {
		s := c.Stats()
		if v := s.ReadMisses + s.WriteMisses + s.FetchMisses; v != h.missLast[i] {
			h.missLast[i], changed = v, true
		}
	}
	if !changed {
		return
	}
	var m members
	for i, c := range h.caches {
		m = m.int(h.short(c.Name()), int64(h.missLast[i]-h.missBase[i]))
	}
	h.record(record{e: event{ph: phCounter, name: "cache misses", cat: "memory", pid: h.pid, args: string(m)}, from: at, to: at})
}

// gauge writes a queue's length as a counter track of the host's, at the
// cycle the core has charged to (a gauge changes in the code the core
// runs).
func (h *host) gauge(g trace.Gauge) {
	at := h.c.Cycles()
	h.record(record{e: event{ph: phCounter, name: g.Name, cat: catQueue, pid: h.pid, args: string(members(nil).int(g.Unit, g.Value))}, from: at, to: at})
}

// measure writes a measurement of a message at the host as an async
// slice over its pieces, with what the workload reported.
func (h *host) measure(mk workload.Mark) {
	m := mk.Measure
	if m == nil || len(m.Pieces) == 0 {
		return
	}
	from, to := m.Pieces[0].From, m.Pieces[0].To
	for _, p := range m.Pieces {
		from, to = min(from, p.From), max(to, p.To)
	}
	if from < h.opened {
		return // begun before the window: its slices are not all here
	}
	var ls members
	for _, l := range m.Layers {
		ls = ls.float(l.Layer, l.Cycles)
	}
	args := members(nil).str("message", mk.Message.String()).str("direction", m.Direction).
		raw("layers", append(append([]byte{'{'}, ls...), '}'))
	if m.IdleAsDMA {
		args = args.raw("idle_as_dma", []byte("true"))
	}
	name := fmt.Sprintf("%s %s %s", mk.Message, m.Direction, h.name)
	// The pieces are in the core's cycles as its counters read them: the
	// record moves with the calls it spans.
	h.record(record{e: event{ph: phAsyncBegin, name: name, cat: "measure", pid: h.pid, tid: h.overview.tid, id: h.t.newID(), args: string(args)}, from: from, to: to, pieces: slices.Clone(m.Pieces)})
}

// piecesArg is a measurement's pieces as its args' member.
func piecesArg(h *host, pieces []workload.Piece) members {
	var ps []byte
	for i, p := range pieces {
		if i > 0 {
			ps = append(ps, ',')
		}
		pm := members(nil).int("from", p.From).int("to", p.To).str("count", p.Count.String())
		if p.Context != "" {
			pm = pm.str("context", h.short(p.Context))
		}
		ps = append(append(append(ps, '{'), pm...), '}')
	}
	return members(nil).raw("pieces", append(append([]byte{'['}, ps...), ']'))
}

// Instant puts an instant event called name on host's timeline at at:
// annotations' `trace instant` (the writer is their annotations.Trace).
// Outside the window it does nothing.
func (t *Writer) Instant(host, name string, at sim.Time) {
	if h := t.inWindow(host); h != nil {
		h.instant(h.overview, name, "annotation", h.clock.Cycle(at))
	}
}

// Counter sets host's counter track called name to v at at:
// annotations' `trace counter`. Outside the window it does nothing.
func (t *Writer) Counter(host, name string, v float64, at sim.Time) {
	if h := t.inWindow(host); h != nil {
		c := h.clock.Cycle(at)
		h.record(record{e: event{ph: phCounter, name: name, cat: "annotation", pid: h.pid, args: string(members(nil).float("value", v))}, from: c, to: c})
	}
}

// inWindow returns the host called name while its part of the window is
// open.
func (t *Writer) inWindow(name string) *host {
	if h := t.host(name); h != nil && t.opened && !h.closed {
		return h
	}
	return nil
}
