// Package cpu models a processor core as simkron charges it: a cycle
// counter driven by the cost of what the simulated software does, execution
// contexts that take turns on the core, and an interrupt controller.
//
// # Execution model
//
// Simulated software is ordinary Go code that runs on the core through a
// Context: a coroutine (iter.Pull) with its own Go stack, so a thread can
// block in a system call and resume later. Interrupt handlers and deferred
// work run to completion on the stack of whichever context they interrupt,
// as they do on a real kernel stack.
//
// Work is charged lazily: Charge and friends only advance the core's cycle
// counter, which may run ahead of the event clock. Before anything another
// component can observe (a device access, masking or unmasking interrupts,
// switching context) the software calls Sync, which lets the event clock
// catch up with the core. Events due in between fire first; an interrupt
// among them runs its handler at its own arrival time and pushes the
// completion of the interrupted work back by exactly the handler's cycles.
// When no event is due, Sync costs a comparison. A sync quantum
// (SetSyncQuantum, off unless asked for) relaxes this for device accesses
// only, trading exactness for fewer hand-overs. A context that waits (a
// slow Sync, a halt) runs the due events itself, on its own stack
// (sim.Scheduler.RunNested), rather than switching back to the event side
// and being switched in again: the same events fire in the same order,
// with two coroutine switches fewer a wait. Likewise a context switch
// resumes the new context from the old one's stack (drive), so that a
// thread switched back to the context that ran it hands back with one
// coroutine switch.
//
// Simplifications: one core per host; no pipeline or superscalar model (a
// single CPI for non-memory work); instruction fetch is charged per code
// line of the straight-line code a call runs (its instructions, from the
// function's start; stall cycles only); interrupt priorities are
// fixed by line number, lower numbers first, like a single 8259.
package cpu

import (
	"fmt"
	"iter"
	"math/bits"
	"runtime"

	"simkron/memory"
	"simkron/sim"
	"simkron/trace"
)

// ContextKind says what a context is for.
type ContextKind uint8

// Context kinds.
const (
	KindThread ContextKind = iota
	KindIdle
)

// Context is an execution context with its own stack: a thread, or the
// core's idle loop.
type Context struct {
	cpu   *CPU
	name  string
	kind  ContextKind
	next  func() (struct{}, bool)
	stop  func()
	yield func(struct{}) bool
	// stack holds the active symbols, innermost last. Interrupt handlers
	// push onto the stack of the context they interrupt.
	stack []frame
	// cycles counts the cycles charged while this context ran outside
	// interrupts: its own work, which a measurement of it wants.
	cycles int64
	// layerCycles splits cycles by layer, indexed like the core's layers.
	layerCycles []int64
	done        bool
	// driving is set while the context has resumed another of the core's
	// contexts from its own stack (CPU.drive) and waits for it to hand
	// back: it cannot be resumed itself until then.
	driving bool
	// Data belongs to the kernel (its thread structure).
	Data any
}

// Name returns the context's name.
func (x *Context) Name() string { return x.name }

// Kind returns the context's kind.
func (x *Context) Kind() ContextKind { return x.kind }

// Cycles returns the cycles charged to the context's own work, excluding
// interrupt handlers and deferred work that ran on its stack.
func (x *Context) Cycles() int64 {
	x.cpu.settle()
	return x.cycles
}

// Done reports whether the context's body has ended.
func (x *Context) Done() bool { return x.done }

// frame is one active call: its symbol, with the symbol's index and the
// layer index it counts in resolved at entry, so that charging a cycle
// reads one entry.
type frame struct {
	sym   *Symbol
	index int
	layer int
}

type reqKind uint8

const (
	reqNone   reqKind = iota
	reqWait           // waiting until c.wake (slow Sync)
	reqHalt           // idle until an interrupt
	reqSwitch         // run c.cur, which Switch made current, instead
)

type request struct {
	kind reqKind // reqWait or reqHalt: suspended in wait; reqSwitch
}

// errStopped unwinds a context's stack when the simulation shuts it down.
type errStopped struct{}

// Panic is a panic raised in a context (a simulator bug), as it reaches
// whoever resumed the context: the coroutine's own stack is gone by then,
// so the panic carries where it began.
type Panic struct {
	Value   any       // what was raised
	Context string    // the context it was raised in: "cpu0.udp-client"
	Stack   []uintptr // program counters from where it was raised outward
}

func (p *Panic) Error() string { return fmt.Sprintf("in context %s: %v", p.Context, p.Value) }

// callers returns the program counters of the stack of its caller's
// caller, for a deferred function that recovered a panic: from the frame
// that raised it outward.
func callers() []uintptr {
	pcs := make([]uintptr, 64)
	return pcs[:runtime.Callers(3, pcs)]
}

// Stats counts what the core did.
type Stats struct {
	Cycles       int64  `stat:"cycles" help:"cycles since boot, idle included"`
	IdleCycles   int64  `stat:"idle_cycles" help:"cycles the core spent halted with nothing to run"`
	Instructions int64  `stat:"instructions" help:"instructions charged (cycles are these times the CPI, plus the memory stalls)"`
	Interrupts   uint64 `stat:"interrupts" help:"interrupt handlers run"`
	Spurious     uint64 `stat:"spurious" help:"interrupts raised on a line with no handler (masked)"`
	Switches     uint64 `stat:"switches" help:"context switches"`
	Traps        uint64 `stat:"traps" help:"system-call traps taken"`
	SyncsFast    uint64 `stat:"syncs_fast" help:"synchronisations with the event clock that found nothing due (no yield)"`
	SyncsSlow    uint64 `stat:"syncs_slow" help:"synchronisations that yielded to the event scheduler"`
	SyncsEarly   uint64 `stat:"syncs_early" help:"device accesses made ahead of the event clock, within the sync quantum"`
	WaitsNested  uint64 `stat:"waits_nested" help:"waits (slow Syncs, halts) that ran the event loop on the context's stack"`
	IOAccesses   uint64 `stat:"io_accesses" help:"bus accesses to device registers (each word of a string transfer one)"`
	IOCycles     int64  `stat:"io_cycles" help:"cycles spent on bus accesses to devices"`
}

// Trace holds the core's trace sources (package trace): the edges of its
// execution a listener can watch. Listeners only look: they must not
// charge, sync or touch the model. A listener that needs the core's time
// reads it from the core it connected to (LocalTime).
type Trace struct {
	// Enter fires when a call of a modelled function starts (Enter), its
	// frame pushed, before its fetch and instructions are charged; Exit
	// when it ends (Exit), its cycles counted, before its frame is popped.
	Enter, Exit trace.Source[*Symbol]
	// Interrupt fires when a handler is entered, before the entry is
	// charged, and when it has returned, after the exit is charged.
	Interrupt trace.Source[Interrupt]
	// IO fires at every device access: a register read or write once it
	// is done, and a string transfer (insw/outsw) at its start and its
	// end.
	IO trace.Source[IOEvent]
	// Switch fires when a context starts running on the core: at Start,
	// and at each switch once the new context is current.
	Switch trace.Source[*Context]
	// Raise fires when a device requests an interrupt line: a level
	// line driven high (each time), an edge line pulsed. The handler's
	// entry (Interrupt) is the request delivered.
	Raise trace.Source[int]
	// Halt fires true when the core halts with nothing to run (at the
	// cycle it halts) and false when an interrupt wakes it (at the
	// interrupt's cycle, before the handler's entry).
	Halt trace.Source[bool]
	// Deferred fires true before the deferred work on the way out of the
	// outermost interrupt (OnIRQExit) and false after it.
	Deferred trace.Source[bool]
	// Taken fires when the core takes interrupt requests that arrived
	// while it waited for the event clock: before the first handler's
	// entry, and once the handlers are done (package doc: the work
	// charged ahead is delayed by their cycles). Handlers run without
	// it when interrupts are unmasked, or a request is pending as the
	// core would halt: it has caught up with the event clock then, and
	// they delay nothing.
	Taken trace.Source[Taken]
	// Charged fires as cycles charged are counted to the innermost
	// active function and its layer (the layer attribution): every busy
	// cycle once, in batches, each before the function, the context or
	// the interrupt level it ran in changes, so that a listener that
	// follows Enter, Exit and Interrupt knows where each batch ran. The
	// batches sum to the core's cycles less its idle cycles.
	Charged trace.Source[Charged]
}

// Charged is a batch of cycles counted, fired by Trace.Charged: charged
// while Symbol (nil: none) was the innermost active function on the
// running context's stack, in Layer (LayerInherit: none). Interrupt
// entry and exit with no IRQSymbol are batches of their own with neither.
type Charged struct {
	Cycles int64
	Symbol *Symbol
	Layer  Layer
}

// Interrupt is an interrupt handler's entry or return, fired by
// Trace.Interrupt.
type Interrupt struct {
	Line  int
	Entry bool // true on entry, false on return
}

// IOEvent is one device access, fired by Trace.IO.
type IOEvent struct {
	Device string // the mapping's name ("nic0")
	Offset uint64 // from the device's base
	Size   int    // bytes of a register access, or of one bus cycle in a string
	Write  bool
	Value  uint64 // read or written (register accesses)
	Block  int    // bytes of a string transfer; 0 for a register access
	End    bool   // a string transfer's end
}

// CPU is one core.
type CPU struct {
	k     *sim.Scheduler
	name  string
	p     Params
	clock sim.Clock
	sys   *memory.System
	cpi   int64 // milli-cycles per instruction
	// cpiWhole is the cycles per instruction when that is a whole number
	// (cpi a multiple of 1000), else 0.
	cpiWhole int64
	rem      int64 // carried fraction of a cycle, in milli-cycles

	cycle int64 // cycles since boot, idle included
	// owed is the cycles charged that settle has not yet attributed.
	owed  int64
	stats Stats

	cur      *Context
	contexts []*Context // every context made, for Shutdown
	dead     bool       // shut down: events for the core are ignored
	// noAttribution turns off the per-symbol and per-layer counting (to
	// measure what it costs); timing is the same either way.
	noAttribution bool
	ioBuf         []byte // reused by string transfers
	// quantum is how far ahead of the event clock a device access may be
	// made without catching up (SetSyncQuantum); 0: never.
	quantum sim.Time
	// bus is the bus table of the mapping last accessed, in buses (or
	// of none). buses has room for a few devices from the start, so that
	// the first accesses to them allocate nothing.
	bus       *busCost
	buses     []busCost
	req       request
	suspended reqKind // what cur is suspended in, seen from the event side
	// nest is the nested event loop cur waits in (wait), while nesting.
	nest      sim.Nest
	nesting   bool
	halted    bool // in halt, waiting for an interrupt
	wake      *sim.Event
	irqEv     *sim.Event
	deliver   bool
	deliverAt sim.Time

	pic pic

	// symCycles holds self cycles per symbol index; noSym collects cycles
	// charged with no symbol active.
	symCycles []int64
	noSym     int64
	// self, when enabled, splits symCycles by layer (selfcycles.go).
	self *selfTable
	// fetchMemo remembers each symbol's code lines in the I-cache.
	fetchMemo []memory.FetchMemo
	// icache is the hierarchy whose I-cache line size (1<<ishift) and
	// hit latency (ihit) fetchLines last read.
	icache *memory.Hierarchy
	ishift uint8
	ihit   int64
	// Layer attribution: every cycle goes to the innermost active
	// symbol's layer (a symbol of LayerInherit takes its caller's).
	// layerCycles is indexed like layers; index 0 is "no layer".
	layers      []Layer
	layerIndex  map[Layer]int
	layerCycles []int64
	sym         []symState // per symbol index

	// OnIRQExit runs when the outermost interrupt handler returns, with
	// interrupts enabled: the kernel's deferred work (bottom halves). It
	// must guard itself against re-entry from nested interrupts.
	OnIRQExit func()
	// OnContextEnd runs when a context's body returns; it must switch
	// away (the kernel's thread exit).
	OnContextEnd func(x *Context)
	// IRQSymbol, when set, is active while interrupt entry and exit are
	// charged, so that their cycles have a layer (the kernel's).
	IRQSymbol *Symbol
	// Trace holds the core's trace sources; SymbolTrace those of one
	// function's calls.
	Trace Trace

	// active holds the interrupt handlers running, outermost first;
	// taking the cycles the takings of interrupts in progress began at.
	// (Last, so that the fields the hot paths read keep their places.)
	active []ActiveInterrupt
	taking []int64
}

// New returns a core named name ("hostA.cpu0") that reaches memory and
// devices through sys.
func New(k *sim.Scheduler, name string, p Params, sys *memory.System) (*CPU, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if p.Lines <= 0 || p.Lines > 32 {
		return nil, fmt.Errorf("%s: irq_lines %d out of range 1..32", name, p.Lines)
	}
	c := &CPU{k: k, name: name, p: p, clock: sim.NewClock(p.Clock), sys: sys, cpi: p.cpiMilli()}
	if c.cpi%1000 == 0 {
		c.cpiWhole = c.cpi / 1000
	}
	c.bus, c.buses = &busCost{}, make([]busCost, 0, 4)
	c.wake = sim.NewEvent(name+".resume", c.resume)
	c.irqEv = sim.NewEventPriority(name+".irq", sim.PriorityLate, c.irqEvent)
	c.pic.init(p.Lines)
	c.layers = []Layer{LayerInherit}
	c.layerIndex = map[Layer]int{LayerInherit: 0}
	c.layerCycles = make([]int64, 1, 16)
	return c, nil
}

// Name returns the core's name.
func (c *CPU) Name() string { return c.name }

// Params returns the core's parameters.
func (c *CPU) Params() Params { return c.p }

// Clock returns the core's clock.
func (c *CPU) Clock() sim.Clock { return c.clock }

// Scheduler returns the event scheduler.
func (c *CPU) Scheduler() *sim.Scheduler { return c.k }

// System returns the memory side of the host.
func (c *CPU) System() *memory.System { return c.sys }

// Cycles returns the cycle counter: every cycle since boot, idle included.
// It may be ahead of the event clock while work is charged lazily.
func (c *CPU) Cycles() int64 { return c.cycle }

// LocalTime returns the time the charged work reaches.
func (c *CPU) LocalTime() sim.Time { return c.clock.Time(c.cycle) }

// Stats returns the core's counters.
func (c *CPU) Stats() Stats {
	s := c.stats
	s.Cycles = c.cycle
	return s
}

// Current returns the running context.
func (c *CPU) Current() *Context { return c.cur }

// Symbol returns the innermost active symbol, or nil.
func (c *CPU) Symbol() *Symbol {
	if c.cur == nil || len(c.cur.stack) == 0 {
		return nil
	}
	return c.cur.stack[len(c.cur.stack)-1].sym
}

// Layer returns the layer the innermost active symbol's cycles count in
// (a symbol of LayerInherit takes its caller's), LayerInherit when none
// is active: the layer a cycle charged now is attributed to.
func (c *CPU) Layer() Layer {
	if c.cur == nil || len(c.cur.stack) == 0 {
		return LayerInherit
	}
	return c.layers[c.cur.stack[len(c.cur.stack)-1].layer]
}

// Halted reports whether the core is halted, waiting for an interrupt.
func (c *CPU) Halted() bool { return c.halted }

// Contexts returns every context made on the core that has not ended, in
// the order they were made.
func (c *CPU) Contexts() []*Context {
	var out []*Context
	for _, x := range c.contexts {
		if !x.done {
			out = append(out, x)
		}
	}
	return out
}

// Frame is an active call as Context.AppendFrames reports it: its
// symbol, and the layer its cycles count in.
type Frame struct {
	Symbol *Symbol
	Layer  Layer
}

// AppendFrames appends the context's active calls, outermost first, to
// dst and returns it. Interrupt handlers running on the context's stack
// are among them (CPU.Active says where they begin).
func (x *Context) AppendFrames(dst []Frame) []Frame {
	for _, f := range x.stack {
		dst = append(dst, Frame{Symbol: f.sym, Layer: x.cpu.layers[f.layer]})
	}
	return dst
}

// SymbolCycles returns the self cycles charged while symbol index i was
// innermost, and the cycles charged with no symbol active.
func (c *CPU) SymbolCycles() (bySymbol []int64, none int64) {
	c.settle()
	return c.symCycles, c.noSym
}

// NewContext creates a context that will run body. It does not run until
// the core switches to it (or Start names it).
func (c *CPU) NewContext(name string, kind ContextKind, body func(x *Context)) *Context {
	x := &Context{cpu: c, name: name, kind: kind}
	seq := func(yield func(struct{}) bool) {
		x.yield = yield
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(errStopped); ok {
					return
				}
				// The panic goes on to whoever resumed the context, on
				// another stack: it carries this one's frames with it.
				if _, ok := r.(*Panic); !ok {
					r = &Panic{Value: r, Context: x.name, Stack: callers()}
				}
				panic(r)
			}
		}()
		body(x)
		x.done = true
		if c.OnContextEnd != nil {
			c.OnContextEnd(x)
		}
		panic(fmt.Sprintf("cpu: %s: context %s ended without switching away", c.name, x.name))
	}
	x.next, x.stop = iter.Pull(seq)
	x.layerCycles = make([]int64, len(c.layers))
	c.contexts = append(c.contexts, x)
	return x
}

// Start makes x the running context at the current time. It is called
// once, at boot, from outside any context.
func (c *CPU) Start(x *Context) {
	if c.cur != nil {
		panic(fmt.Sprintf("cpu: %s started twice", c.name))
	}
	c.settle()
	c.cur = x
	c.cycle = max(c.cycle, c.clock.Cycle(c.k.Now()))
	c.k.Schedule(c.wake, c.k.Now())
	if c.Trace.Switch.Listened() {
		c.Trace.Switch.Fire(x)
	}
}

// Shutdown unwinds every context of the core, ending their coroutines
// (and the goroutines behind them); a simulation that ends with threads
// still blocked calls it so that nothing of it stays reachable. The core
// cannot run afterwards.
func (c *CPU) Shutdown() {
	// Dead first: the unwinding stacks' deferred exits must not run.
	c.dead = true
	for _, x := range c.contexts {
		x.stop()
	}
	c.contexts = nil
	c.k.Cancel(c.wake)
	c.k.Cancel(c.irqEv)
}

// resume runs the current context until it suspends in a wait or a halt,
// following switches. It runs on the event side: an event's handler, on
// the main stack or in a nested run on another context's stack. When the
// current context waits in a nested run of its own, the wait just ends.
func (c *CPU) resume() {
	if c.dead {
		return
	}
	if c.nesting {
		c.k.Release(&c.nest)
		return
	}
	for {
		if !c.next() {
			return
		}
	}
}

// next resumes the current context and returns when it, or a context it
// resumed in turn (drive), hands back: false when the core waits (a wait
// or a halt), true when the context to run has changed (Switch set it)
// and is to be resumed by whoever called next.
func (c *CPU) next() bool {
	c.req = request{}
	if _, ok := c.cur.next(); !ok {
		panic(fmt.Sprintf("cpu: %s: context %s ended", c.name, c.cur.name))
	}
	switch c.req.kind {
	case reqWait, reqHalt:
		return false
	case reqSwitch:
		return true
	}
	panic(fmt.Sprintf("cpu: %s: context %s yielded without a request", c.name, c.cur.name))
}

// drive runs the core from x's stack once x has stopped being the current
// context (Switch), and returns when x is current again. A switch to a
// context that is suspended resumes it from here, with one coroutine
// switch, rather than handing back to the event side and being resumed
// from there (two): an idle loop that runs a thread and is switched back
// to by it costs two switches instead of four. A switch to a context
// that is itself driving, beneath x, and a wait, go on to whoever resumed
// x, as they would have without drive.
func (c *CPU) drive(x *Context) {
	for c.cur != x {
		if c.cur.driving {
			c.yieldFrom(x, request{kind: reqSwitch})
			continue
		}
		x.driving = true
		switched := c.next()
		x.driving = false
		if !switched {
			// The core waits: so does x, for whoever resumed it, until
			// a switch makes it current again.
			c.yieldFrom(x, c.req)
		}
	}
}

// suspend hands control to the event side with request r and returns when
// the context is resumed.
func (c *CPU) suspend(r request) { c.yieldFrom(c.cur, r) }

// yieldFrom hands control from x to whoever resumed it, with request r,
// and returns when x is resumed.
func (c *CPU) yieldFrom(x *Context, r request) {
	c.req = r
	if !x.yield(struct{}{}) {
		panic(errStopped{})
	}
	c.suspended = reqNone
}

// wait suspends the running context until the core is resumed: kind
// reqWait until c.wake, which it schedules at until, or reqHalt until an
// interrupt. The context runs the event loop itself while it waits
// (sim.Scheduler.RunNested), and hands back to the event side only when the
// loop must stop or a context waiting beneath it is resumed.
func (c *CPU) wait(kind reqKind, until sim.Time) {
	c.suspended = kind
	if kind == reqWait {
		c.k.Schedule(c.wake, until)
	}
	c.nesting = true
	woken := c.k.RunNested(&c.nest)
	c.nesting = false
	if woken {
		c.stats.WaitsNested++
	} else {
		c.suspend(request{kind: kind})
	}
	c.suspended = reqNone
}

// Charge adds n cycles of work to the running context. Only the cycle
// counter moves at once; the attribution (symbol, layer, context) of the
// cycles charged since the last change of who is charged is made by
// settle, which runs before that changes and before any reading.
func (c *CPU) Charge(n int64) {
	c.cycle += n
	c.owed += n
}

// settle attributes the cycles charged since it last ran to the innermost
// active symbol, its layer and, outside interrupts, the running context.
// It must run before any of those changes (Enter, Exit, a switch, an
// interrupt's entry and exit, SetAttribution, EnableSelfCycles) and before
// the counters are read.
func (c *CPU) settle() {
	if c.owed != 0 {
		c.attribute()
	}
}

// attribute is settle with cycles owed.
func (c *CPU) attribute() {
	n := c.owed
	c.owed = 0
	x := c.cur
	if c.Trace.Charged.Listened() {
		c.fireCharged(x, n)
	}
	if c.noAttribution {
		if c.pic.depth == 0 && x != nil {
			x.cycles += n
		}
		return
	}
	li := 0
	if x != nil && len(x.stack) > 0 {
		f := &x.stack[len(x.stack)-1]
		c.symCycles[f.index] += n
		li = f.layer
		if c.self != nil {
			c.addSelf(f.sym, li, n)
		}
	} else {
		c.noSym += n
	}
	c.layerCycles[li] += n
	if c.pic.depth == 0 && x != nil {
		x.cycles += n
		x.layerCycles[li] += n
	}
}

// fireCharged fires Trace.Charged for n cycles of x's innermost frame,
// out of attribute's line.
//
//go:noinline
func (c *CPU) fireCharged(x *Context, n int64) {
	ev := Charged{Cycles: n}
	if x != nil && len(x.stack) > 0 {
		f := &x.stack[len(x.stack)-1]
		ev.Symbol, ev.Layer = f.sym, c.layers[f.layer]
	}
	c.Trace.Charged.Fire(ev)
}

// Exec charges n instructions at the core's CPI.
func (c *CPU) Exec(n int64) {
	c.stats.Instructions += n
	if c.cpiWhole != 0 { // no fraction to carry: c.rem stays 0
		c.Charge(n * c.cpiWhole)
		return
	}
	m := n*c.cpi + c.rem
	q := m / 1000
	c.rem = m - q*1000
	c.Charge(q)
}

// Sync lets the event clock catch up with the charged work. Interrupts that
// arrive meanwhile are taken at their arrival time and delay the work.
func (c *CPU) Sync() {
	for {
		t := c.clock.Time(c.cycle)
		if t < c.k.Now() {
			panic(fmt.Sprintf("cpu: %s: local time %v behind the clock %v", c.name, t, c.k.Now()))
		}
		if c.k.AdvanceTo(t) {
			c.stats.SyncsFast++
			return
		}
		c.stats.SyncsSlow++
		c.wait(reqWait, t)
		if !c.deliver {
			return
		}
		c.deliver = false
		c.takeInterrupt(c.deliverAt)
	}
}

// SetSyncQuantum lets the core make a device access (a register access
// or a string transfer) up to q ahead of the event clock when catching up
// would mean running events first: the device then sees the access at the
// event clock's time, up to q early, and the events due in between fire
// after it. This trades exactness for host time: most such catching up is
// two hosts whose interrupt handlers run at the same instants handing
// over at every register access. An access with nothing due before it
// still catches up exactly, and nothing else the core does (masking,
// switching, halting) is made early. q = 0, the default, is exact.
func (c *CPU) SetSyncQuantum(q sim.Time) {
	if q < 0 {
		panic(fmt.Sprintf("cpu: %s: negative sync quantum %v", c.name, q))
	}
	c.quantum = q
}

// early reports whether a device access may be made now without Sync
// (each access asks c.quantum == 0 || !c.early() before it syncs):
// nothing is due before the core's time (the clock is then moved to it,
// as Sync would), or the core is less than the quantum ahead.
func (c *CPU) early() bool {
	t := c.clock.Time(c.cycle)
	if c.k.AdvanceTo(t) {
		c.stats.SyncsFast++
		return true
	}
	if t-c.k.Now() < c.quantum {
		c.stats.SyncsEarly++
		return true
	}
	return false
}

// Switch saves the running context and runs to instead, charging a
// context switch. It returns when the old context is switched back in.
func (c *CPU) Switch(to *Context) {
	if to == c.cur {
		return
	}
	if to.done {
		panic(fmt.Sprintf("cpu: %s: switch to ended context %s", c.name, to.name))
	}
	c.Charge(c.p.SwitchCycles)
	c.Sync()
	c.stats.Switches++
	x := c.cur
	c.settle()
	c.cur = to
	if c.Trace.Switch.Listened() {
		c.Trace.Switch.Fire(to)
	}
	c.drive(x)
}

// Halt idles the core until an interrupt has been taken. It is the idle
// loop's body; it returns after the handlers (and deferred work) ran.
func (c *CPU) Halt() {
	c.Sync()
	c.halt()
}

// halt is Halt once the core has caught up.
func (c *CPU) halt() {
	if c.pic.next(c) >= 0 {
		c.dispatch()
		return
	}
	if !c.pic.enabled {
		c.sys.Guest.Report(c.k.Now(), c.name, "halt with interrupts disabled: the core stops for good")
	}
	if c.Trace.Halt.Listened() {
		c.Trace.Halt.Fire(true)
	}
	c.halted = true
	c.wait(reqHalt, 0)
	c.deliver = false
	c.takeInterrupt(c.deliverAt)
}

// HaltUnless is Halt for an idle loop that must not sleep past work an
// interrupt made ready: when the catching up at its start takes an
// interrupt after which ready reports true (a handler made a thread
// runnable), it returns at once instead of halting until the next
// interrupt. Otherwise it is Halt.
func (c *CPU) HaltUnless(ready func() bool) {
	taken := c.stats.Interrupts
	c.Sync()
	if c.stats.Interrupts != taken && ready() {
		return
	}
	c.halt()
}

// Trap charges a system-call trap and return.
func (c *CPU) Trap() {
	c.stats.Traps++
	c.Charge(c.p.TrapCycles)
}

// Enter starts a call of s: its instructions are charged and its code is
// fetched through the instruction cache.
func (c *CPU) Enter(s *Symbol) {
	x := c.cur
	if s.index >= len(c.symCycles) {
		c.growSymbols(s.index)
	}
	st := &c.sym[s.index]
	li := st.layer
	if li == -2 {
		li = c.resolveLayer(s.Layer)
		st.layer = li
	}
	if li < 0 { // inherit the caller's layer
		li = 0
		if n := len(x.stack); n > 0 {
			li = x.stack[n-1].layer
		}
	}
	c.settle()
	x.stack = append(x.stack, frame{sym: s, index: s.index, layer: li})
	if c.Trace.Enter.Listened() {
		c.Trace.Enter.Fire(s)
	}
	if w := st.watch; w != nil && w.Enter.Listened() {
		w.Enter.Fire(s)
	}
	// The stall cycles of fetching the code the call runs: its
	// instructions taken as straight-line code from its start (4 bytes
	// each), at most the function's size, one fetch per line.
	if h := c.sys.Cache; h != nil {
		if h != st.fetchFor || h != c.icache {
			c.fetchLines(s, st, h)
		}
		if n := st.fetchLines; n != 0 {
			cost, ok := c.sys.FetchFunctional(n)
			if !ok {
				if s.index >= len(c.fetchMemo) {
					c.growMemos(s.index)
				}
				cost = c.sys.FetchLinesMemo(st.fetchStart, n, &c.fetchMemo[s.index])
			}
			if stall := cost - int64(n)*c.ihit; stall != 0 {
				c.Charge(stall)
			}
		}
	}
	c.Exec(s.Instructions)
}

// Exit ends the call of s, which must be the innermost active symbol.
func (c *CPU) Exit(s *Symbol) {
	if c.dead {
		return // a context being unwound by Shutdown
	}
	x := c.cur
	n := len(x.stack)
	if n == 0 || x.stack[n-1].sym != s {
		panic(fmt.Sprintf("cpu: %s: exit %s does not match the active symbol %v", c.name, s.Name, c.Symbol()))
	}
	// Settled before the listeners hear of the exit, so that the call's
	// last cycles are counted (Trace.Charged) while it is known active.
	c.settle()
	if c.Trace.Exit.Listened() {
		c.Trace.Exit.Fire(s)
	}
	if w := c.sym[s.index].watch; w != nil && w.Exit.Listened() {
		w.Exit.Fire(s)
	}
	x.stack = x.stack[:n-1]
}

// symState is what a core keeps of one symbol.
type symState struct {
	layer int          // its layer index, -1 inherit, -2 not yet resolved
	watch *SymbolTrace // SymbolTrace's sources, or nil
	// A call fetches fetchLines I-cache lines from fetchStart, as the
	// method fetchLines worked out for the hierarchy fetchFor.
	fetchFor   *memory.Hierarchy
	fetchStart memory.Addr
	fetchLines uint64
}

// SymbolTrace holds the trace sources of one modelled function's calls
// on a core: Enter and Exit fire where the core's Trace.Enter and
// Trace.Exit do, for that function's calls alone, so that a listener on
// one function costs the calls of the others nothing.
type SymbolTrace struct {
	Enter, Exit trace.Source[*Symbol]
}

// SymbolTrace returns the trace sources of s's calls on c, made on first
// use.
func (c *CPU) SymbolTrace(s *Symbol) *SymbolTrace {
	if s.index >= len(c.symCycles) {
		c.growSymbols(s.index)
	}
	w := c.sym[s.index].watch
	if w == nil {
		w = &SymbolTrace{}
		c.sym[s.index].watch = w
	}
	return w
}

// growSymbols makes room in the per-symbol tables for symbol index i and
// a few more. It is kept out of line: Enter, which calls it once per
// symbol, runs on every call.
//
//go:noinline
func (c *CPU) growSymbols(i int) {
	// Twice the room at least, so that a table's symbols, entered one by
	// one, copy the tables a few times only.
	n := max(i+64, 2*len(c.symCycles))
	c.symCycles = append(c.symCycles, make([]int64, n-len(c.symCycles))...)
	for len(c.sym) < len(c.symCycles) {
		c.sym = append(c.sym, symState{layer: -2})
	}
}

// growMemos makes room in fetchMemo for symbol index i, as growSymbols
// does for the other tables: only a core whose calls fetch through the
// I-cache's memo (full detail) needs one.
//
//go:noinline
func (c *CPU) growMemos(i int) {
	n := max(i+1, len(c.symCycles))
	c.fetchMemo = append(c.fetchMemo, make([]memory.FetchMemo, n-len(c.fetchMemo))...)
}

// resolveLayer returns the counter index of layer l, or -1 for inherit.
// Like growSymbols, it is kept out of Enter's line.
//
//go:noinline
func (c *CPU) resolveLayer(l Layer) int {
	if l == LayerInherit {
		return -1
	}
	i, ok := c.layerIndex[l]
	if !ok {
		i = len(c.layers)
		c.layers = append(c.layers, l)
		c.layerIndex[l] = i
		c.layerCycles = append(c.layerCycles, 0)
		// Every context counts every layer: grow them all now so that
		// Charge never has to.
		for _, x := range c.contexts {
			x.layerCycles = append(x.layerCycles, 0)
		}
	}
	return i
}

// LayerCycles returns the cycles of the context's own work (interrupts
// excluded) by layer, in the core's layer order.
func (x *Context) LayerCycles() []LayerCycles { return x.AppendLayerCycles(nil) }

// AppendLayerCycles appends LayerCycles to dst and returns it: with
// dst[:0] of a kept buffer, a reading allocates nothing.
func (x *Context) AppendLayerCycles(dst []LayerCycles) []LayerCycles {
	x.cpu.settle()
	for i, l := range x.cpu.layers {
		dst = append(dst, LayerCycles{Layer: l, Cycles: x.layerCycles[i]})
	}
	return dst
}

// Account is a consistent reading of a core's counters at an instant.
type Account struct {
	Cycle  int64         // the cycle the reading stands at
	Layers []LayerCycles // cycles charged by layer up to Cycle
	Idle   int64         // cycles halted up to Cycle
}

// AccountAt reads the counters for an observer at event time at. A halted
// core's idle time up to at is counted as idle; a core whose charged work
// runs past at is read at the end of that work (Cycle is then later than
// at). Between two readings, Cycle advances by exactly the layers' cycles
// plus the idle cycles.
func (c *CPU) AccountAt(at sim.Time) Account {
	var a Account
	c.AccountInto(&a, at)
	return a
}

// AccountInto is AccountAt into a, reusing the array of a.Layers: a
// reading allocates nothing once the array is large enough.
func (c *CPU) AccountInto(a *Account, at sim.Time) {
	a.Cycle, a.Layers, a.Idle = c.cycle, c.AppendLayerCycles(a.Layers[:0]), c.stats.IdleCycles
	if now := c.clock.Cycle(at); now > c.cycle {
		a.Idle += now - c.cycle
		a.Cycle = now
	}
}

// CopyTo copies the reading a into dst, reusing dst's array.
func (a Account) CopyTo(dst *Account) {
	dst.Cycle, dst.Idle = a.Cycle, a.Idle
	dst.Layers = append(dst.Layers[:0], a.Layers...)
}

// LayerCycles is the cycles charged to one layer.
type LayerCycles struct {
	Layer  Layer
	Cycles int64
}

// SetAttribution turns the built-in per-symbol and per-layer cycle
// counting on (the default) or off. It observes only: the simulation runs
// the same either way.
func (c *CPU) SetAttribution(on bool) {
	c.settle()
	c.noAttribution = !on
}

// LayerCycles returns the cycles charged to each layer so far, in the
// order the layers were first entered; cycles with no symbol active are
// under LayerInherit ("").
func (c *CPU) LayerCycles() []LayerCycles { return c.AppendLayerCycles(nil) }

// AppendLayerCycles appends LayerCycles to dst and returns it.
func (c *CPU) AppendLayerCycles(dst []LayerCycles) []LayerCycles {
	c.settle()
	for i, l := range c.layers {
		dst = append(dst, LayerCycles{Layer: l, Cycles: c.layerCycles[i]})
	}
	return dst
}

// Call runs fn as a call of s.
func (c *CPU) Call(s *Symbol, fn func()) {
	c.Enter(s)
	fn()
	c.Exit(s)
}

// fetchLines works out which lines of h's I-cache a call of s fetches: the
// lines at start, start+line, ... below the end of its code. It runs once
// per symbol and hierarchy.
//
//go:noinline
func (c *CPU) fetchLines(s *Symbol, st *symState, h *memory.Hierarchy) {
	if h != c.icache {
		// The I-cache's geometry, read once per hierarchy.
		p := h.L1I().Params()
		c.icache, c.ihit = h, p.HitLatency
		c.ishift = uint8(bits.TrailingZeros64(uint64(p.Line)))
	}
	line := memory.Addr(1) << (c.ishift & 63)
	start := s.Addr &^ (line - 1)
	end := s.Addr + memory.Addr(min(s.CodeBytes, 4*max(s.Instructions, 1)))
	st.fetchFor, st.fetchStart, st.fetchLines = h, start, 0
	if end > start {
		st.fetchLines = uint64(end-start-1)>>(c.ishift&63) + 1
	}
}
