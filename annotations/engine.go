package annotations

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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
	Line int    // line of the failing command in File, 0 if unknown
	// Annotation is the point whose body failed ("pc ip_rcv:START"),
	// empty for an error while the script loaded.
	Annotation string
	Msg        string // Tcl's message, or the engine's for a limit
	Info       string // Tcl's errorInfo (the stack of commands)
}

func (e *ScriptError) Error() string {
	at := e.File
	if e.Line > 0 {
		at = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Annotation != "" {
		return fmt.Sprintf("%s: annotation %s: %s", at, e.Annotation, e.Msg)
	}
	return fmt.Sprintf("%s: %s", at, e.Msg)
}

// annotation is one body set on one point.
type annotation struct {
	id   int
	what string // "pc ip_rcv:START", for errors
	file string
	line int    // line in file where the body's text starts
	body tclObj // the body, compiled by Tcl the first time it runs
	run  func() // runs the body on the interpreter's goroutine
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
	e *Engine
	v HostView
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

// ioEvent is a listener of the core's device accesses: it names the
// access the way annotations do and fires those set on it.
func (h *hostState) ioEvent(ev cpu.IOEvent) {
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
		h.e.fireAll(as, point{h: h, now: h.v.CPU.LocalTime(), io: ev})
	}
}

// Engine runs annotation scripts against one run. It is used from the
// simulation's goroutines one at a time, like the kernel; the Tcl
// interpreter itself runs on a goroutine of the engine's own (see call).
type Engine struct {
	t     Target
	k     *sim.Scheduler
	hosts []*hostState
	dir   string
	opt   Options

	in  *tcl.Interp // the master, which only the engine evaluates in
	tcl *child      // the sandbox, where scripts run

	files   []string // scripts being loaded, innermost last
	paths   []string // their absolute paths, for `source` cycles
	loading bool
	loadErr *ScriptError
	nextID  int
	all     []*annotation

	cycles    []*annotation
	nextCycle sim.Time
	exits     []*annotation

	cur    point
	active bool
	// timeline is where `trace instant` and `trace counter` write (SetTrace).
	timeline Trace

	out      strings.Builder
	buckets  map[string]*bucket
	layerMap map[string]string
	goBytes  int64 // what out and buckets hold

	budget
	runTime time.Duration // host time of every load and body so far (call)

	// The interpreter's goroutine and its watchdog (call).
	jobs   chan func()
	done   chan struct{}
	timer  *time.Timer
	result *ScriptError // the error of the job that just ended
	// stuckKind is the limit of the job call abandoned.
	stuckKind limitKind
	// The budget of the next body, set before call.
	nextKind    limitKind
	nextAllowed time.Duration
	aborted     *tclAbort // a Tcl_Panic of the job that just ended
	// mu guards the machine from a goroutine the engine has abandoned:
	// the commands of bodies hold it and give up once abandoned is set.
	mu        sync.Mutex
	abandoned atomic.Bool
	dead      bool // the interpreter is never to be used again
	closed    bool

	err       error
	installed bool
	finished  bool
}

// budget is what the load or body running has used of its limits,
// counted in Go on the interpreter's goroutine: nothing a script
// redefines changes it.
type budget struct {
	limit    limitKind     // which limit the time allowed comes from
	allowed  time.Duration // host time the load or body may take
	started  time.Time
	commands int64   // Tcl commands it has run
	breach   *breach // the limit it went over, nil while within them
}

type limitKind int

const (
	limitCommands limitKind = iota + 1
	limitTime               // annotation_host_time of one load or body
	limitRunTime            // annotation_run_time of the whole run
	limitMemory
	limitStuck // one command still running past backstop
)

// breach is a limit gone over, and how far.
type breach struct {
	kind   limitKind
	amount int64 // bytes held, for limitMemory
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
	// DefaultTime). Tcl checks it between commands; a single command
	// still running well past Time is abandoned (see Engine.call).
	Time time.Duration
	// RunTime bounds the host time of every load and body of the run
	// together (0: DefaultRunTime).
	RunTime time.Duration
	// Memory is the ceiling of what the annotations hold: what Tcl's
	// allocator has handed out to the interpreters, and the output and
	// bucket values kept in Go (0: DefaultMemory).
	Memory int64
	// Output caps what the scripts print (0: DefaultOutput).
	Output int
}

// The defaults: far more than any annotation needs, little enough that a
// runaway script stops soon and the machine keeps its memory.
const (
	DefaultCommands = 10_000_000
	DefaultTime     = 500 * time.Millisecond
	DefaultRunTime  = 10 * time.Minute
	DefaultMemory   = 256 << 20
	DefaultOutput   = 1 << 20
)

// checkEvery is how many commands may run between two of the engine's
// checks of the command budget and of the memory (the first of Tcl's own
// checks, before a command it invokes or every 64 bytecode instructions,
// after so many commands). Checking at every one of Tcl's checks costs a
// script that is all Tcl (a thousand commands a body) 15% more host
// time, every 100 commands 5%; at the end of each load and body both are
// checked once more.
const checkEvery = 100

// New loads scripts, in order, into a fresh safe interpreter against run.
// An error in a script is a *ScriptError naming its file and line.
func New(run Target, scripts []Source, opt Options) (*Engine, error) {
	if opt.Commands <= 0 {
		opt.Commands = DefaultCommands
	}
	if opt.Time <= 0 {
		opt.Time = DefaultTime
	}
	if opt.RunTime <= 0 {
		opt.RunTime = DefaultRunTime
	}
	if opt.Memory <= 0 {
		opt.Memory = DefaultMemory
	}
	if opt.Output <= 0 {
		opt.Output = DefaultOutput
	}
	e := &Engine{t: run, k: run.Scheduler(), dir: opt.Dir, opt: opt, buckets: map[string]*bucket{},
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
		if err := e.loadTop(s.Name, s.Text); err != nil {
			e.Close()
			return nil, err
		}
	}
	e.loading = false
	return e, nil
}

// loadTop loads one script given to New, under a budget of its own.
func (e *Engine) loadTop(name, text string) error {
	allowed, kind := e.allowance()
	if allowed <= 0 {
		return &ScriptError{File: name, Msg: e.breachText(&breach{kind: limitRunTime}, "", "the script")}
	}
	e.result, e.loadErr = nil, nil
	ok := e.call(func() {
		e.arm(allowed, kind)
		err := e.loadScript(name, name, text)
		e.disarm()
		if e.breach != nil && err == nil { // found by disarm
			err = e.breachError(name, 0, "")
		}
		e.result = asScriptError(name, err)
	}, allowed, kind)
	switch {
	case !ok:
		return &ScriptError{File: name, Msg: e.breachText(&breach{kind: limitStuck}, "", "the script")}
	case e.aborted != nil:
		return e.abortError(name, 1, "")
	case e.result != nil:
		return e.result
	}
	return nil
}

// asScriptError returns err as a *ScriptError of file, or nil.
func asScriptError(file string, err error) *ScriptError {
	if err == nil {
		return nil
	}
	var se *ScriptError
	if errors.As(err, &se) {
		return se
	}
	return &ScriptError{File: file, Msg: err.Error()}
}

// loadScript evaluates one script's text (name, read from path) at the
// sandbox's global level, on the interpreter's goroutine (for New, or for
// `source` while a script loads).
func (e *Engine) loadScript(name, path, text string) error {
	abs, _ := filepath.Abs(path)
	if p, err := filepath.EvalSymlinks(abs); err == nil {
		abs = p
	}
	e.files = append(e.files, name)
	e.paths = append(e.paths, abs)
	defer func() {
		e.files = e.files[:len(e.files)-1]
		e.paths = e.paths[:len(e.paths)-1]
	}()
	obj, err := e.tcl.newObj(text)
	if err != nil {
		return fmt.Errorf("annotations: %s: %v", name, err)
	}
	defer e.tcl.free(obj)
	code, msg := e.tcl.eval(obj)
	if code != tclError {
		return nil
	}
	line, info, _ := e.tcl.returnOptions(code)
	if e.loadErr != nil { // placed exactly by the command, or the sourced file, that failed
		err := e.loadErr
		e.loadErr = nil
		return err
	}
	if e.breach != nil {
		return e.breachError(name, line, info)
	}
	return &ScriptError{File: name, Line: line, Msg: msg, Info: info}
}

// allowance is the host time the next load or body may take, and the
// limit it comes from.
func (e *Engine) allowance() (time.Duration, limitKind) {
	left := e.opt.RunTime - e.runTime
	if left < e.opt.Time {
		return left, limitRunTime
	}
	return e.opt.Time, limitTime
}

// arm starts a load's or a body's budget (on the interpreter's goroutine).
func (e *Engine) arm(allowed time.Duration, kind limitKind) {
	e.started = time.Now()
	e.allowed, e.limit = allowed, kind
	e.commands = 0
	e.breach = nil
	e.tcl.setCommands(0)
	e.tcl.limitCommands(int32(min(checkEvery, e.opt.Commands)))
	e.tcl.limitTime(e.started.Add(allowed))
}

// disarm ends a load's or a body's budget: what it used is counted, and
// the time and the memory are checked once more (it may have ended
// before Tcl's next check).
func (e *Engine) disarm() {
	took := time.Since(e.started)
	if e.breach != nil {
		return
	}
	e.commands += int64(e.tcl.commands())
	e.tcl.setCommands(0)
	switch {
	case e.commands > e.opt.Commands:
		e.breach = &breach{kind: limitCommands}
	case took > e.allowed:
		e.breach = &breach{kind: e.limit}
	default:
		if m := e.memoryUsed(); m > e.opt.Memory {
			e.breach = &breach{kind: limitMemory, amount: m}
		}
	}
}

// commandLimit is called by Tcl, on the interpreter's goroutine, when the
// commands allowed since the last check have run: it counts them, checks
// the budget and the memory, and allows more, or leaves the limit
// exceeded so that Tcl stops the script with an error no catch can hold
// (the limit stays exceeded: every later check fails again).
func (e *Engine) commandLimit() {
	if e.breach != nil {
		return
	}
	used := e.commands + int64(e.tcl.commands())
	if used > e.opt.Commands {
		e.breach = &breach{kind: limitCommands}
		return
	}
	if m := e.memoryUsed(); m > e.opt.Memory {
		e.breach = &breach{kind: limitMemory, amount: m}
		return
	}
	e.commands = used
	e.tcl.setCommands(0)
	e.tcl.limitCommands(int32(min(checkEvery, e.opt.Commands-used)))
}

// timeLimit is called by Tcl when the time allowed has passed: the limit
// stays exceeded.
func (e *Engine) timeLimit() {
	if e.breach == nil {
		e.breach = &breach{kind: e.limit}
	}
}

// breachText says which limit b is and what it is set by; who is "the
// script" or "the body", running the command Tcl was in.
func (e *Engine) breachText(b *breach, running, who string) string {
	var what, by string
	switch b.kind {
	case limitCommands:
		what = fmt.Sprintf("%s ran more than %d Tcl commands", who, e.opt.Commands)
		by = "[experiment] annotation_commands"
	case limitTime:
		what = fmt.Sprintf("%s ran for more than %v of host time", who, e.opt.Time)
		by = "[experiment] annotation_host_time"
	case limitRunTime:
		what = fmt.Sprintf("the annotations of this run took more than %v of host time in all", e.opt.RunTime)
		by = "[experiment] annotation_run_time"
	case limitMemory:
		what = fmt.Sprintf("the annotations held %s, over their memory ceiling of %s", bytesText(b.amount), bytesText(e.opt.Memory))
		by = "the ceiling"
	case limitStuck:
		what = fmt.Sprintf("%s ran for more than %v of host time, and one command was still running at %v: the interpreter was abandoned", who, e.opt.Time, backstop(e.opt.Time))
		by = "[experiment] annotation_host_time"
		if e.stuckKind == limitRunTime {
			what = fmt.Sprintf("the annotations of this run took more than %v of host time in all, and one command was still running past that: the interpreter was abandoned", e.opt.RunTime)
			by = "[experiment] annotation_run_time"
		}
	}
	if running != "" {
		what += fmt.Sprintf(" (while running %q)", running)
	}
	if b.kind == limitMemory {
		return "annotation budget exceeded: " + what
	}
	return "annotation budget exceeded: " + what + "; the budget is " + by
}

// breachError is the error of a load or body that went over a limit: at
// line of file (the line Tcl's return options give, 0 for the first
// line), with the innermost command errorInfo shows.
func (e *Engine) breachError(file string, line int, info string) *ScriptError {
	running := ""
	if _, rest, ok := strings.Cut(info, "while executing\n\""); ok {
		running, _, _ = strings.Cut(rest, "\n")
		running = strings.TrimSuffix(running, "\"")
	}
	return &ScriptError{File: file, Line: max(line, 1), Msg: e.breachText(e.breach, running, "the script"), Info: info}
}

// abortError is the error of a load or body during which Tcl panicked:
// in file, the body's (or the script's) first line being first, unless
// the panic happened in a file being sourced.
func (e *Engine) abortError(file string, first int, what string) *ScriptError {
	a := e.aborted
	line := first
	switch {
	case a.file != "" && a.file != file:
		file, line = a.file, a.line
	case a.line > 0:
		line = first + a.line - 1
	}
	msg := "Tcl gave up: " + a.msg
	if a.cmd != "" {
		msg += fmt.Sprintf(" (while running %q)", firstLine(a.cmd))
	}
	msg += "; the annotation interpreter was stopped"
	return &ScriptError{File: file, Line: line, Annotation: what, Msg: msg}
}

func firstLine(s string) string {
	if l, _, ok := strings.Cut(s, "\n"); ok {
		return l + " ..."
	}
	return s
}

// call runs fn on the interpreter's goroutine and waits for it, at most
// backstop(allowed), and counts the time it took against the run's
// budget. Tcl stops a script at its time limit between commands; a single
// command that runs longer (a big-number conversion, a pathological
// regular expression) cannot be interrupted, so the engine gives up on
// it: the goroutine is left to finish the command on its own, the
// interpreter is never used again, and call returns false.
func (e *Engine) call(fn func(), allowed time.Duration, kind limitKind) bool {
	e.aborted = nil
	start := time.Now()
	defer func() { e.runTime += time.Since(start) }()
	e.jobs <- fn
	e.timer.Reset(backstop(allowed))
	select {
	case <-e.done:
		e.timer.Stop()
		if e.aborted != nil {
			e.dead = true
		}
		return true
	case <-e.timer.C:
		e.stuckKind = kind
		e.mu.Lock()
		e.abandoned.Store(true)
		e.mu.Unlock()
		e.dead = true
		close(e.jobs)
		return false
	}
}

// backstop is how long call waits for a job allowed so much host time:
// twice as long, and a tenth of a second more, so that Tcl's own limit,
// which stops a script cleanly, always comes first when it can.
func backstop(allowed time.Duration) time.Duration { return 2*allowed + 100*time.Millisecond }

// serve runs the interpreter's jobs. A Tcl_Panic during one is
// recovered and recorded (aborted); the interpreter is then dead.
func (e *Engine) serve() {
	for fn := range e.jobs {
		e.protected(fn)
		e.done <- struct{}{}
	}
}

func (e *Engine) protected(fn func()) {
	defer func() {
		if r := recover(); r != nil {
			a, ok := r.(tclAbort)
			if !ok {
				panic(r)
			}
			e.aborted = &a
		}
	}()
	fn()
}

// Install connects the engine to the run's trace sources: the cores' of
// hosts with pc, exc or device annotations, the annotated cards' frames
// and, when cycle annotations exist, the event scheduler's. A listener
// connected before it is still called first.
func (e *Engine) Install() error {
	if e.closed {
		return fmt.Errorf("annotations: install after the engine was closed")
	}
	if e.installed {
		return fmt.Errorf("annotations: installed twice")
	}
	e.installed = true
	for _, h := range e.hosts {
		if h.hooksNeeded() {
			c := h.v.CPU
			c.Trace.Enter.Connect(h.enter)
			c.Trace.Exit.Connect(h.exit)
			c.Trace.Interrupt.Connect(h.interrupt)
			c.Trace.IO.Connect(h.ioEvent)
		}
		for _, dev := range sortedNames(h.frames) {
			as := h.frames[dev]
			h.v.Frames[dev].Connect(func(frame []byte) {
				e.fireAll(as, point{h: h, now: e.k.Now(), frame: frame})
			})
		}
		for _, dev := range sortedNames(h.sends) {
			as := h.sends[dev]
			h.v.Sends[dev].Connect(func(frame []byte) {
				e.fireAll(as, point{h: h, now: e.k.Now(), frame: frame})
			})
		}
	}
	if len(e.cycles) > 0 {
		e.updateNextCycle()
		e.k.Firing.Connect(e.trace)
	}
	return nil
}

func (h *hostState) enter(s *cpu.Symbol) {
	if i := s.Index(); i < len(h.start) && h.start[i] != nil {
		h.e.fireAll(h.start[i], point{h: h, now: h.v.CPU.LocalTime()})
	}
}

func (h *hostState) exit(s *cpu.Symbol) {
	if i := s.Index(); i < len(h.end) && h.end[i] != nil {
		h.e.fireAll(h.end[i], point{h: h, now: h.v.CPU.LocalTime()})
	}
}

func (h *hostState) interrupt(ev cpu.Interrupt) {
	c, line := h.v.CPU, ev.Line
	k := 0
	if !ev.Entry {
		k = 1
	}
	if as := h.excAny[k]; as != nil {
		h.e.fireAll(as, point{h: h, now: c.LocalTime()})
	}
	if line < len(h.exc) && h.exc[line][k] != nil {
		h.e.fireAll(h.exc[line][k], point{h: h, now: c.LocalTime()})
	}
}

// trace is a listener of the event scheduler: cycle annotations due at or
// before the event's time run before it fires.
func (e *Engine) trace(ev *sim.Event) {
	if t := ev.When(); t >= e.nextCycle {
		e.runCycles(t)
	}
}

// runCycles fires every cycle annotation due at or before t, in time
// order (definition order at one instant).
func (e *Engine) runCycles(t sim.Time) {
	h := e.hosts[0]
	clock := h.v.CPU.Clock()
	for e.err == nil && !e.dead {
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
	if e.err != nil || e.dead {
		return
	}
	for _, c := range e.cycles {
		e.nextCycle = min(e.nextCycle, c.nextAt)
	}
}

func (e *Engine) fireAll(as []*annotation, p point) {
	for _, a := range as {
		if e.err != nil || e.dead {
			return
		}
		e.fire(a, p)
	}
}

// fire runs a's body at p. After the first error nothing runs.
func (e *Engine) fire(a *annotation, p point) {
	if e.err != nil || e.dead {
		return
	}
	saved, wasActive := e.cur, e.active
	e.cur, e.active = p, true
	e.err = e.runBody(a)
	e.cur, e.active = saved, wasActive
	if e.err != nil {
		e.nextCycle = sim.Never
	}
}

// runBody runs a's body on the interpreter's goroutine under a budget of
// its own, and returns its error.
func (e *Engine) runBody(a *annotation) error {
	allowed, kind := e.allowance()
	if allowed <= 0 {
		return &ScriptError{File: a.file, Line: a.line, Annotation: a.what, Msg: e.breachText(&breach{kind: limitRunTime}, "", "the body")}
	}
	e.result = nil
	e.nextKind, e.nextAllowed = kind, allowed
	switch {
	case !e.call(a.run, allowed, kind):
		return &ScriptError{File: a.file, Line: a.line, Annotation: a.what, Msg: e.breachText(&breach{kind: limitStuck}, "", "the body")}
	case e.aborted != nil:
		return e.abortError(a.file, a.line, a.what)
	case e.result != nil:
		return e.result
	}
	return nil
}

// bodyJob is a.run: the body's evaluation on the interpreter's goroutine.
func (e *Engine) bodyJob(a *annotation) {
	e.arm(e.nextAllowed, e.nextKind)
	code, msg := e.tcl.eval(a.body)
	var line int
	var info string
	if code == tclError {
		line, info, _ = e.tcl.returnOptions(code)
	}
	e.disarm()
	at := a.line + max(line, 1) - 1
	switch {
	case e.breach != nil:
		se := e.breachError(a.file, at, info)
		se.Annotation = a.what
		se.Msg = strings.Replace(se.Msg, "the script", "the body", 1)
		e.result = se
	case code == tclError:
		e.result = &ScriptError{File: a.file, Line: at, Annotation: a.what, Msg: msg, Info: info}
	}
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
	if !e.dead && e.err == nil {
		if len(e.cycles) > 0 {
			e.runCycles(e.k.Now())
		}
		e.fireAll(e.exits, point{h: e.hosts[0], now: e.k.Now()})
	}
	e.Close()
	return e.err
}

// closeTime bounds the deletion of the interpreters.
const closeTime = 5 * time.Second

// Close releases the interpreters; bodies no longer run. Finish calls it.
// An interpreter the engine gave up on (a command that did not return, a
// Tcl panic) is not deleted but left to the garbage of the process.
func (e *Engine) Close() {
	e.nextCycle = sim.Never
	if e.closed {
		return
	}
	e.closed = true
	if e.tcl == nil {
		return
	}
	if !e.dead {
		e.call(func() {
			for _, a := range e.all {
				e.tcl.free(a.body)
			}
			e.in.Close()
		}, closeTime, limitTime)
	}
	if !e.abandoned.Load() {
		close(e.jobs)
	}
	e.dead = true
	unregister(e)
}

// Err returns the error of the first body that failed during the run (a
// *ScriptError), or nil.
func (e *Engine) Err() error { return e.err }

// Output returns everything the scripts printed with puts, in order.
func (e *Engine) Output() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.out.String()
}

// LayerMap returns the `layer map SYMBOL LAYER` requests the scripts made:
// symbol name to layer, for the built-in layer attribution.
func (e *Engine) LayerMap() map[string]string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return maps.Clone(e.layerMap)
}

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
