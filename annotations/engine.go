package annotations

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"modernc.org/tcl"

	"simkron/cpu"
	"simkron/sim"
)

// Source is a script and the name it is reported under (its file name).
type Source struct {
	Name string
	Text string
}

// ScriptError is a Tcl error in a script, placed in its file.
type ScriptError struct {
	File string // Source.Name of the script, or the sourced file
	Line int    // line of the failing command in File
	// Annotation is the point whose body failed ("pc ip_rcv:START"),
	// empty for an error while the script loaded.
	Annotation string
	Msg        string // Tcl's message
	Info       string // Tcl's errorInfo (the stack of commands)
}

func (e *ScriptError) Error() string {
	if e.Annotation != "" {
		return fmt.Sprintf("%s:%d: annotation %s: %s", e.File, e.Line, e.Annotation, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// annotation is one body set on one point.
type annotation struct {
	id   int
	what string // "pc ip_rcv:START", for errors
	file string
	line int // line in file where the body's text starts
	run  string
	// cycle annotations: the period and the next multiple of it due.
	period int64
	next   int64
	nextAt sim.Time
}

// point is where a body runs: the host it sees and the time it happened.
type point struct {
	h     *hostState
	now   sim.Time
	frame []byte
	io    cpu.IOEvent
}

// hostState holds one host's annotations, indexed for cheap dispatch:
// a hook does a bounds check and a nil check when a symbol or line has no
// annotation.
type hostState struct {
	e    *Engine
	v    HostView
	prev cpu.Hooks
	// start and end are indexed by Symbol.Index(); nil where none is set.
	start, end [][]*annotation
	// exc holds per line [entry, exit] annotations; excAny those of any line.
	exc    [][2][]*annotation
	excAny [2][]*annotation
	frames map[string][]*annotation
	sends  map[string][]*annotation
	// io holds the register and string-transfer annotations by device
	// name and event (read, write, dmastart, dmaend).
	io map[string]map[string][]*annotation
}

func (h *hostState) hooksNeeded() bool {
	return len(h.start) > 0 || len(h.end) > 0 || len(h.exc) > 0 || len(h.excAny[0])+len(h.excAny[1]) > 0 || len(h.io) > 0
}

// ioEvent is a device-access hook: it names the access the way
// annotations do and fires those set on it.
func (h *hostState) ioEvent(c *cpu.CPU, ev cpu.IOEvent) {
	if h.prev.IO != nil {
		h.prev.IO(c, ev)
	}
	byEvent := h.io[ev.Device]
	if byEvent == nil {
		return
	}
	name := "read"
	switch {
	case ev.Block > 0 && ev.End:
		name = "dmaend"
	case ev.Block > 0:
		name = "dmastart"
	case ev.Write:
		name = "write"
	}
	if as := byEvent[name]; as != nil {
		h.e.fireAll(as, point{h: h, now: c.LocalTime(), io: ev})
	}
}

// Engine runs annotation scripts against one run. It is used from the
// simulation's goroutines one at a time, like the kernel.
type Engine struct {
	t     Target
	k     *sim.Kernel
	hosts []*hostState
	dir   string
	opt   Options

	in      *tcl.Interp
	pending string   // text handed to Tcl by ::simkron::text
	files   []string // scripts being loaded, innermost last
	loading bool
	loadErr *ScriptError
	nextID  int

	cycles    []*annotation
	nextCycle sim.Time
	exits     []*annotation
	prevTrace func(sim.Time, *sim.Event)

	cur    point
	active bool

	out      strings.Builder
	buckets  map[string]*bucket
	layerMap map[string]string

	err       error
	installed bool
	finished  bool
}

// Options configure an engine.
type Options struct {
	// Dir is the folder `source` may read from ("" forbids source).
	Dir string
	// Commands is the budget of Tcl commands of one script's load and of
	// one body's run (0: DefaultCommands). Going over it is a script
	// error.
	Commands int64
	// Time bounds the host time of one load or body run (0:
	// DefaultTime), for a loop that runs no command (`while 1 {}`): the
	// one limit on host time, which only ever stops a script that would
	// not end.
	Time time.Duration
}

// The default budget: far more than any annotation needs, little enough
// that a runaway script stops at once.
const (
	DefaultCommands = 10_000_000
	DefaultTime     = 500 * time.Millisecond
)

// New loads scripts, in order, into a fresh safe interpreter against run.
// An error in a script is a *ScriptError naming its file and line.
func New(run Target, scripts []Source, opt Options) (*Engine, error) {
	if opt.Commands <= 0 {
		opt.Commands = DefaultCommands
	}
	if opt.Time <= 0 {
		opt.Time = DefaultTime
	}
	e := &Engine{t: run, k: run.Kernel(), dir: opt.Dir, opt: opt, buckets: map[string]*bucket{},
		layerMap: map[string]string{}, nextCycle: sim.Never}
	for _, v := range run.Hosts() {
		e.hosts = append(e.hosts, &hostState{e: e, v: v, frames: map[string][]*annotation{}, sends: map[string][]*annotation{},
			io: map[string]map[string][]*annotation{}})
	}
	if len(e.hosts) == 0 {
		return nil, fmt.Errorf("annotations: the run has no host")
	}
	if err := e.newInterp(); err != nil {
		return nil, fmt.Errorf("annotations: %w", err)
	}
	e.loading = true
	for _, s := range scripts {
		if err := e.load(s.Name, s.Text); err != nil {
			e.Close()
			return nil, err
		}
	}
	e.loading = false
	return e, nil
}

// load evaluates one script's text at the interpreter's global level.
func (e *Engine) load(name, text string) error {
	e.files = append(e.files, name)
	defer func() { e.files = e.files[:len(e.files)-1] }()
	e.pending = text
	if _, err := e.in.Eval("sandbox eval [list set ::simkron::src [::simkron::text]]"); err != nil {
		return fmt.Errorf("annotations: %s: %v", name, err)
	}
	code, err := e.in.Eval("::simkron::limit; sandbox eval {catch $::simkron::src ::simkron::msg ::simkron::opts}")
	if err != nil {
		if se := e.overBudget(code, name, 1, ""); se != nil {
			return se
		}
		return fmt.Errorf("annotations: %s: %v", name, err)
	}
	if code != "1" {
		return nil
	}
	if e.loadErr != nil { // placed exactly by the command that failed
		err := e.loadErr
		e.loadErr = nil
		return err
	}
	line, msg, info := e.lastError()
	return &ScriptError{File: name, Line: line, Msg: msg, Info: info}
}

// overBudget returns the error of a load or body that went over its
// budget (msg is Tcl's result), placed at its line (the script's or the
// body's first line is first) with the command it was running; nil when
// msg is another error.
func (e *Engine) overBudget(msg, file string, first int, what string) *ScriptError {
	var limit string
	switch msg {
	case "command count limit exceeded":
		limit = fmt.Sprintf("ran more than %d Tcl commands", e.opt.Commands)
	case "time limit exceeded":
		limit = fmt.Sprintf("ran for more than %v of host time", e.opt.Time)
	default:
		return nil
	}
	info, _ := e.in.Eval("set ::errorInfo")
	// The innermost command, and the line of the script's (or body's)
	// own command the limit struck under.
	running := ""
	if _, rest, ok := strings.Cut(info, "while executing\n\""); ok {
		running, _, _ = strings.Cut(rest, "\n")
		running = strings.TrimSuffix(running, "\"")
	}
	line := first
	if i := strings.LastIndex(info, `("catch" body line `); i >= 0 {
		if n, err := strconv.Atoi(strings.TrimSuffix(strings.Fields(info[i+len(`("catch" body line `):])[0], ")")); err == nil {
			line = first + n - 1
		}
	}
	who := "the script"
	if what != "" {
		who = "the body"
	}
	m := fmt.Sprintf("annotation budget exceeded: %s %s (while running %q); the budget is [experiment] annotation_commands and annotation_host_time", who, limit, running)
	return &ScriptError{File: file, Line: line, Annotation: what, Msg: m, Info: info}
}

// lastError reads the error a catch in the sandbox stored.
func (e *Engine) lastError() (line int, msg, info string) {
	l, _ := e.in.Eval("sandbox eval {dict get $::simkron::opts -errorline}")
	line, _ = strconv.Atoi(l)
	msg, _ = e.in.Eval("sandbox eval {set ::simkron::msg}")
	info, _ = e.in.Eval("sandbox eval {dict get $::simkron::opts -errorinfo}")
	return line, msg, info
}

// Install puts the engine on the run's listener slots: the CPU hooks of
// hosts with pc or exc annotations, the frame observers of annotated
// cards and, when cycle annotations exist, the kernel's trace listener.
// Each previous listener is chained and still called first.
func (e *Engine) Install() error {
	if e.in == nil {
		return fmt.Errorf("annotations: install after the engine was closed")
	}
	if e.installed {
		return fmt.Errorf("annotations: installed twice")
	}
	e.installed = true
	for _, h := range e.hosts {
		if h.hooksNeeded() {
			c := h.v.CPU
			h.prev = c.Hooks
			c.Hooks.Enter = h.enter
			c.Hooks.Exit = h.exit
			c.Hooks.Interrupt = h.interrupt
			c.Hooks.IO = h.ioEvent
		}
		for _, dev := range sortedNames(h.frames) {
			as := h.frames[dev]
			h.v.Frames[dev](func(frame []byte) {
				e.fireAll(as, point{h: h, now: e.k.Now(), frame: frame})
			})
		}
		for _, dev := range sortedNames(h.sends) {
			as := h.sends[dev]
			h.v.Sends[dev](func(frame []byte) {
				e.fireAll(as, point{h: h, now: e.k.Now(), frame: frame})
			})
		}
	}
	if len(e.cycles) > 0 {
		e.prevTrace = e.t.Trace()
		e.updateNextCycle()
		e.k.SetTrace(e.trace)
	}
	return nil
}

func (h *hostState) enter(c *cpu.CPU, s *cpu.Symbol) {
	if h.prev.Enter != nil {
		h.prev.Enter(c, s)
	}
	if i := s.Index(); i < len(h.start) && h.start[i] != nil {
		h.e.fireAll(h.start[i], point{h: h, now: c.LocalTime()})
	}
}

func (h *hostState) exit(c *cpu.CPU, s *cpu.Symbol) {
	if h.prev.Exit != nil {
		h.prev.Exit(c, s)
	}
	if i := s.Index(); i < len(h.end) && h.end[i] != nil {
		h.e.fireAll(h.end[i], point{h: h, now: c.LocalTime()})
	}
}

func (h *hostState) interrupt(c *cpu.CPU, line int, entry bool) {
	if h.prev.Interrupt != nil {
		h.prev.Interrupt(c, line, entry)
	}
	k := 0
	if !entry {
		k = 1
	}
	if as := h.excAny[k]; as != nil {
		h.e.fireAll(as, point{h: h, now: c.LocalTime()})
	}
	if line < len(h.exc) && h.exc[line][k] != nil {
		h.e.fireAll(h.exc[line][k], point{h: h, now: c.LocalTime()})
	}
}

// trace is the kernel's listener: cycle annotations due at or before the
// event's time run before it fires.
func (e *Engine) trace(t sim.Time, ev *sim.Event) {
	if e.prevTrace != nil {
		e.prevTrace(t, ev)
	}
	if t >= e.nextCycle {
		e.runCycles(t)
	}
}

// runCycles fires every cycle annotation due at or before t, in time
// order (definition order at one instant).
func (e *Engine) runCycles(t sim.Time) {
	h := e.hosts[0]
	clock := h.v.CPU.Clock()
	for e.err == nil && e.in != nil {
		var a *annotation
		for _, c := range e.cycles {
			if c.nextAt <= t && (a == nil || c.nextAt < a.nextAt) {
				a = c
			}
		}
		if a == nil {
			break
		}
		at := a.nextAt
		a.next++
		a.nextAt = clock.Time(a.next * a.period)
		e.fire(a, point{h: h, now: at})
	}
	e.updateNextCycle()
}

func (e *Engine) updateNextCycle() {
	e.nextCycle = sim.Never
	if e.err != nil || e.in == nil {
		return
	}
	for _, c := range e.cycles {
		e.nextCycle = min(e.nextCycle, c.nextAt)
	}
}

func (e *Engine) fireAll(as []*annotation, p point) {
	for _, a := range as {
		if e.err != nil || e.in == nil {
			return
		}
		e.fire(a, p)
	}
}

// fire runs a's body at p. After the first error nothing runs.
func (e *Engine) fire(a *annotation, p point) {
	if e.err != nil || e.in == nil {
		return
	}
	saved, wasActive := e.cur, e.active
	e.cur, e.active = p, true
	code, err := e.in.Eval(a.run)
	e.cur, e.active = saved, wasActive
	switch {
	case err != nil: // over its budget, or the sandbox itself failed
		if se := e.overBudget(code, a.file, a.line, a.what); se != nil {
			e.err = se
		} else {
			e.err = &ScriptError{File: a.file, Line: a.line, Annotation: a.what, Msg: code}
		}
	case code == "1":
		line, msg, info := e.lastError()
		e.err = &ScriptError{File: a.file, Line: a.line + max(line, 1) - 1, Annotation: a.what, Msg: msg, Info: info}
	default:
		return
	}
	e.nextCycle = sim.Never
}

// Finish runs the cycle annotations due up to the kernel's time and then
// the `sim exit` annotations, closes the interpreter and returns the first
// script error of the run, if any. Output, Buckets and LayerMap stay
// readable.
func (e *Engine) Finish() error {
	if e.finished {
		return e.err
	}
	e.finished = true
	if e.in != nil && e.err == nil {
		if len(e.cycles) > 0 {
			e.runCycles(e.k.Now())
		}
		e.fireAll(e.exits, point{h: e.hosts[0], now: e.k.Now()})
	}
	e.Close()
	return e.err
}

// Close releases the interpreter; bodies no longer run. Finish calls it.
func (e *Engine) Close() {
	if e.in != nil {
		e.in.Close()
		e.in = nil
	}
	e.nextCycle = sim.Never
}

// Err returns the error of the first body that failed during the run (a
// *ScriptError), or nil.
func (e *Engine) Err() error { return e.err }

// Output returns everything the scripts printed with puts, in order.
func (e *Engine) Output() string { return e.out.String() }

// LayerMap returns the `layer map SYMBOL LAYER` requests the scripts made:
// symbol name to layer, for the built-in layer attribution.
func (e *Engine) LayerMap() map[string]string { return maps.Clone(e.layerMap) }

// sortedNames returns m's keys in order, so that observers are installed
// in the same order every run.
func sortedNames(m map[string][]*annotation) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
