package cpu

import (
	"fmt"
	"math/bits"

	"simkron/sim"
)

// The interrupt controller: a request bit per line, a mask, and the level
// in service. A line numbered below the level in service may interrupt a
// handler (nesting by priority, line 0 highest); the core's enable flag
// blocks everything.
//
//	line ──► asserted (level) ─┐
//	         latched (edge)  ──┴─► requested & ^masked & (line < inService) & enabled ──► handler
type pic struct {
	lines     int
	asserted  uint32 // level-triggered lines currently driven
	latched   uint32 // edge requests not yet taken
	edge      uint32 // lines that are edge-triggered
	masked    uint32
	enabled   bool
	inService int // lowest line number in service; lines >= it wait
	depth     int
	handlers  []handler
	counts    []uint64
}

type handler struct {
	name string
	fn   func()
}

func (p *pic) init(n int) {
	p.lines = n
	p.enabled = true
	p.inService = 32
	p.handlers = make([]handler, n)
	p.counts = make([]uint64, n)
}

// next returns the line to take now, or -1.
func (p *pic) next(c *CPU) int {
	if !p.enabled {
		return -1
	}
	req := (p.asserted | p.latched) &^ p.masked
	if p.inService < 32 {
		req &= 1<<p.inService - 1
	}
	if req == 0 {
		return -1
	}
	return bits.TrailingZeros32(req)
}

// IRQ is a device model's view of its interrupt output: it drives the
// line high or low and knows nothing of the core behind it.
type IRQ interface{ Set(on bool) }

var _ IRQ = (*IRQLine)(nil)

// IRQLine is a device's interrupt output wired to one line of a core.
type IRQLine struct {
	c    *CPU
	n    int
	edge bool
}

// Line wires line n. Edge-triggered lines latch a request on Pulse;
// level-triggered lines request while Set(true).
func (c *CPU) Line(n int, edge bool) (*IRQLine, error) {
	if n < 0 || n >= c.pic.lines {
		return nil, fmt.Errorf("%s: irq %d out of range 0..%d", c.name, n, c.pic.lines-1)
	}
	if edge {
		c.pic.edge |= 1 << n
	}
	return &IRQLine{c: c, n: n, edge: edge}, nil
}

// Number returns the line number.
func (l *IRQLine) Number() int { return l.n }

// Set drives a level-triggered line.
func (l *IRQLine) Set(on bool) {
	p := &l.c.pic
	if on {
		p.asserted |= 1 << l.n
		l.c.poke()
		if l.c.Trace.Raise.Listened() {
			l.c.Trace.Raise.Fire(l.n)
		}
	} else {
		p.asserted &^= 1 << l.n
	}
}

// Pulse latches a request on an edge-triggered line.
func (l *IRQLine) Pulse() {
	l.c.pic.latched |= 1 << l.n
	l.c.poke()
	if l.c.Trace.Raise.Listened() {
		l.c.Trace.Raise.Fire(l.n)
	}
}

// poke arranges for the core to look at its requests once the current
// instant's device activity is done.
func (c *CPU) poke() {
	if !c.irqEv.Scheduled() {
		c.k.Schedule(c.irqEv, c.k.Now())
	}
}

// SetHandler installs the handler of line n (request_irq).
func (c *CPU) SetHandler(n int, name string, fn func()) {
	c.pic.handlers[n] = handler{name: name, fn: fn}
}

// InterruptCounts returns how many times each line was taken.
func (c *CPU) InterruptCounts() []uint64 { return c.pic.counts }

// InInterrupt reports whether a handler, or the deferred work on its way
// out, is running.
func (c *CPU) InInterrupt() bool { return c.pic.depth > 0 }

// irqEvent runs on the event side: if the core is waiting and a request is
// deliverable, the waiting context is resumed to take it.
func (c *CPU) irqEvent() {
	if c.dead || c.pic.next(c) < 0 {
		return
	}
	switch c.suspended {
	case reqWait:
		c.k.Cancel(c.wake)
	case reqHalt:
	default:
		return // not booted yet; taken at the first Sync
	}
	c.deliver = true
	c.deliverAt = c.k.Now()
	c.resume()
}

// takeInterrupt runs the pending handlers as if they had started at the
// cycle boundary at or after at, then puts the interrupted work back on
// top: its completion moves by exactly the handlers' cycles.
func (c *CPU) takeInterrupt(at sim.Time) {
	start := c.clock.Cycle(at)
	ahead := c.cycle - start
	if ahead < 0 { // the core was idle until now
		c.stats.IdleCycles -= ahead
		c.cycle = start
		ahead = 0
	}
	if c.halted {
		c.halted = false
		if c.Trace.Halt.Listened() {
			c.Trace.Halt.Fire(false)
		}
	}
	c.cycle = start
	c.taking = append(c.taking, start)
	if c.Trace.Taken.Listened() {
		c.Trace.Taken.Fire(Taken{At: start, Begin: true})
	}
	c.dispatch()
	c.taking = c.taking[:len(c.taking)-1]
	if c.Trace.Taken.Listened() {
		c.Trace.Taken.Fire(Taken{At: start, Delay: c.cycle - start})
	}
	c.cycle += ahead
}

// Taking returns the cycles at which the takings of interrupts in
// progress began (Trace.Taken), outermost first, in a slice valid until
// the core next runs.
func (c *CPU) Taking() []int64 { return c.taking }

// Taken is the core taking interrupt requests at a cycle, fired by
// Trace.Taken: at its beginning, and once the handlers are done with the
// cycles they took. Work the core had charged past At before (the lazy
// charging of the package doc) completes Delay cycles later than charged.
type Taken struct {
	At    int64 // the cycle the requests are taken at
	Begin bool
	Delay int64 // the handlers' cycles, at the end
}

// dispatch takes every deliverable request, highest priority first.
func (c *CPU) dispatch() {
	for {
		n := c.pic.next(c)
		if n < 0 {
			return
		}
		c.runHandler(n)
	}
}

func (c *CPU) runHandler(n int) {
	p := &c.pic
	p.latched &^= 1 << n
	h := p.handlers[n]
	if h.fn == nil {
		c.stats.Spurious++
		p.masked |= 1 << n
		c.sys.Guest.Report(c.k.Now(), c.name, "interrupt on line %d with no handler: line masked", n)
		return
	}
	c.stats.Interrupts++
	p.counts[n]++
	saved := p.inService
	p.inService = n
	c.settle()
	p.depth++
	c.active = append(c.active, ActiveInterrupt{Line: n, Base: len(c.cur.stack), Deferred: -1})
	if c.Trace.Interrupt.Listened() {
		c.Trace.Interrupt.Fire(Interrupt{Line: n, Entry: true})
	}
	c.chargeIRQ(c.p.IRQEntryCycles)
	h.fn()
	// Lowering the level is observable: requests that arrived while the
	// handler ran must be seen as pending, not as preempting it.
	c.Sync()
	p.inService = saved
	// Deferred work runs on the way out of the outermost interrupt, still
	// counted as interrupt time, with lower-priority lines open again.
	if p.depth == 1 && c.OnIRQExit != nil {
		c.active[len(c.active)-1].Deferred = len(c.cur.stack)
		if c.Trace.Deferred.Listened() {
			c.Trace.Deferred.Fire(true)
		}
		c.OnIRQExit()
		if c.Trace.Deferred.Listened() {
			c.Trace.Deferred.Fire(false)
		}
		c.active[len(c.active)-1].Deferred = -1
	}
	c.chargeIRQ(c.p.IRQExitCycles)
	c.settle()
	p.depth--
	c.active = c.active[:len(c.active)-1]
	if c.Trace.Interrupt.Listened() {
		c.Trace.Interrupt.Fire(Interrupt{Line: n})
	}
}

// chargeIRQ charges interrupt entry or exit inside IRQSymbol.
func (c *CPU) chargeIRQ(n int64) {
	if c.IRQSymbol == nil {
		// No layer rather than the interrupted code's.
		c.cycle += n
		c.noSym += n
		c.layerCycles[0] += n
		if c.Trace.Charged.Listened() {
			c.Trace.Charged.Fire(Charged{Cycles: n})
		}
		return
	}
	c.Enter(c.IRQSymbol)
	c.Charge(n)
	c.Exit(c.IRQSymbol)
}

// DisableInterrupts clears the core's enable flag (cli) and returns the
// previous state for RestoreInterrupts. Masking is observable: the core
// synchronises first.
func (c *CPU) DisableInterrupts() bool {
	c.Sync()
	was := c.pic.enabled
	c.pic.enabled = false
	return was
}

// RestoreInterrupts sets the enable flag to on (sti when on) and takes any
// request that became deliverable.
func (c *CPU) RestoreInterrupts(on bool) {
	c.Sync()
	c.pic.enabled = on
	if on {
		c.dispatch()
	}
}

// MaskLine masks or unmasks one line at the controller.
func (c *CPU) MaskLine(n int, masked bool) {
	c.Sync()
	if masked {
		c.pic.masked |= 1 << n
	} else {
		c.pic.masked &^= 1 << n
		c.dispatch()
	}
}

// ActiveInterrupt is an interrupt handler running on the core, as Active
// reports it.
type ActiveInterrupt struct {
	Line int
	// Base is how many frames the interrupted context's stack held at
	// the handler's entry: the handler's own frames are those above it.
	Base int
	// Deferred is, while the deferred work on the way out of the handler
	// runs (OnIRQExit), how many frames the stack held when it began; -1
	// otherwise.
	Deferred int
}

// Active returns the interrupt handlers running, outermost first, in a
// slice valid until the core next runs: for an observer that starts
// watching a core mid-run and must place the frames already on the
// running context's stack.
func (c *CPU) Active() []ActiveInterrupt { return c.active }

// HandlerName returns the name the handler of line n was installed under
// (SetHandler), "" when it has none.
func (c *CPU) HandlerName(n int) string {
	if n < 0 || n >= len(c.pic.handlers) {
		return ""
	}
	return c.pic.handlers[n].name
}
