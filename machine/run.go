package machine

import (
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"time"

	"simkron/annotations/cycleprof"
	"simkron/config"
	"simkron/cpu"
	"simkron/machine/part"
	"simkron/memory"
	"simkron/report"
	"simkron/sim"
	"simkron/stats"
	"simkron/workload"
)

// Version is simkron's version, recorded in every result.
const Version = "0.1.0"

// Options are the run-time choices that are not part of the experiment.
type Options struct {
	// Seed, when set, replaces the experiment's seed.
	Seed *uint64
	// Progress, when set, is called now and then with the simulated time
	// reached and the stop time. It must only report: it sees host time.
	Progress func(now, stop sim.Time)
	// Trace, when set, is connected to the event scheduler's trace source
	// (sim.Scheduler.Firing): it sees every event as it fires.
	Trace func(ev *sim.Event)
	// Abort, when set, is asked before every event whether the run must
	// stop (an annotation script failed); a non-nil error ends the run,
	// which is then reported incomplete with the error as the reason.
	Abort func() error
	// OnEnd, when set, runs when the simulation has stopped, before the
	// result is taken and the simulated contexts are ended (annotations'
	// `sim exit`).
	OnEnd func()
	// NoCapture records none of the experiment's pcap captures and cell
	// traces, for a run whose captures nothing will write: they are held
	// in memory until the run ends. The run is the same otherwise
	// (a capture only observes); Network.Captures then returns none.
	NoCapture bool
	// Interrupt, when set, ends a bridged run in order when it yields the
	// name of what interrupted it ("SIGINT"): the run stops, its results
	// are taken, and it is complete if its workload is a server with no
	// duration (workload.Server), incomplete otherwise.
	Interrupt <-chan string
	// CyclesProfile, when set, watches every host's core from the start
	// of the run (cycleprof.Recorder.Watch, under the host's name): it
	// records every busy cycle by the stack of modelled functions it ran
	// in, for a pprof profile of simulated cycles. It only observes.
	CyclesProfile *cycleprof.Recorder
	// Whole keeps the run in one island, on one event scheduler, for an
	// observer of every host on one time line (annotations: one Tcl
	// interpreter). A run with a Trace is whole too. See island.go.
	Whole bool
	// Cores, when set, are the threads the run's islands take while they
	// simulate, shared with other runs (a sweep's); nil: a pool of its
	// own, as many as Go runs at once (GOMAXPROCS).
	Cores *Cores
}

// Run is one simulation of an experiment, built and ready.
type Run struct {
	Exp *Experiment
	// Sched is the event scheduler of a run in one island; nil when the
	// run is in several, each with its own (island.go).
	Sched *sim.Scheduler
	Net   *Network
	Hosts []*Host
	// Workloads are the experiment's workloads in order ([workload] type,
	// then each of then), all prepared; the first is started with the
	// run, each next one once every host's threads have ended.
	Workloads []workload.Workload
	// phase is the index of the workload running; finished is set when
	// the last has ended on every host.
	phase    int
	finished bool
	// interrupted names what ended a bridged run from outside, if
	// anything did (Options.Interrupt).
	interrupted string
	seed        uint64
	// islands are the run's islands when it has several (island.go);
	// running is their shared state while the run executes, and end
	// the island whose event ended it.
	islands []*island
	running *islandRun
	end     *island
}

// New builds every host of exp and puts the workload in place.
func New(exp *Experiment, opt Options) (*Run, error) {
	seed := exp.Info.Seed
	if opt.Seed != nil {
		seed = *opt.Seed
	}
	r := &Run{Exp: exp, seed: seed}
	if len(exp.Hosts) == 0 {
		return nil, fmt.Errorf("the experiment has no [[host]]")
	}
	lay := islandsOf(exp, opt)
	groups := lay.islands
	if len(groups) == 1 {
		r.Sched = sim.NewScheduler(seed)
		r.Sched.Firing.Connect(opt.Trace)
		var err error
		if r.Net, err = newNetwork(r.Sched, exp, !opt.NoCapture); err != nil {
			return nil, err
		}
	} else {
		// Each island its own scheduler and its own instance of every
		// network, whose elements of other islands stay idle.
		r.Net = &Network{owner: lay.owner}
		for k := range groups {
			is := &island{index: k, sched: sim.NewScheduler(seed), run: r}
			var err error
			if is.net, err = newNetwork(is.sched, exp, !opt.NoCapture); err != nil {
				return nil, err
			}
			r.islands = append(r.islands, is)
			r.Net.apart = append(r.Net.apart, is.net)
		}
		r.Net.order = r.islands[0].net.order
		if err := r.link(exp, lay); err != nil {
			return nil, err
		}
	}
	names := map[string]bool{}
	for i := range exp.Hosts {
		hs := &exp.Hosts[i]
		if names[hs.Name] {
			return nil, fmt.Errorf("host %q defined twice", hs.Name)
		}
		names[hs.Name] = true
		if hs.Machine == nil {
			return nil, fmt.Errorf("host %q has no machine", hs.Name)
		}
		k, net := r.Sched, r.Net
		var is *island
		if r.islands != nil {
			is = r.islands[islandOf(groups, i)]
			k, net = is.sched, is.net
		}
		h, err := Build(k, net, hs, exp.Info.Detail)
		if err != nil {
			return nil, err
		}
		h.CPU.SetSyncQuantum(exp.Info.SyncQuantum)
		if opt.CyclesProfile != nil {
			opt.CyclesProfile.Watch(h.Name, h.CPU)
		}
		r.Hosts = append(r.Hosts, h)
		if is != nil {
			is.hosts = append(is.hosts, h)
		}
	}
	if exp.Info.Detail == memory.DetailFunctional && exp.Info.FullFrom > 0 {
		r.Sched.Schedule(sim.NewEvent("full detail", func() {
			for _, h := range r.Hosts {
				h.Sys.SetFull()
			}
		}), exp.Info.FullFrom)
	}
	for _, f := range part.Families() {
		if f.Connect != nil {
			f.Connect(r.Hosts)
		}
	}
	for _, name := range append([]string{exp.Workload.Type}, exp.Workload.Then...) {
		t, ok := workload.Lookup(name)
		if !ok {
			return nil, fmt.Errorf("workload %q is unknown (known: %s)", name, workload.List())
		}
		params := exp.Workload.Params[t.Name]
		if params == nil {
			params = t.Params()
		}
		w, err := t.New(runEnv{r}, params)
		if err != nil {
			return nil, fmt.Errorf("workload.%s: %w", t.Name, err)
		}
		_, ender := w.(workload.Ender)
		if _, server := w.(workload.Server); (ender || server) && r.islands != nil {
			panic(fmt.Sprintf("machine: workload %q declares Groups and is an Ender or a Server (see workload.Type.Groups)", name))
		}
		r.Workloads = append(r.Workloads, w)
	}
	if err := r.checkServers(); err != nil {
		return nil, err
	}
	r.Workloads[0].Start()
	var costErrs config.Errors
	seen := map[string]bool{}
	for _, h := range r.Hosts {
		if err := CheckCosts(h); err != nil {
			es, ok := err.(config.Errors)
			if !ok {
				return nil, err
			}
			// Hosts of one machine file share its [costs]: each line once.
			for _, e := range es {
				if k := e.File + "\x00" + e.Key; !seen[k] {
					seen[k] = true
					costErrs = append(costErrs, e)
				}
			}
		}
		if r.islands == nil {
			h.Env.OnIdle(r.hostDone)
		}
	}
	for _, is := range r.islands {
		for _, h := range is.hosts {
			h.Env.OnIdle(func() { r.running.idle(is) })
		}
	}
	if costErrs != nil {
		return nil, costErrs
	}
	if err := r.setLayers(exp); err != nil {
		return nil, err
	}
	return r, nil
}

// setLayers applies the experiment's [layers]; a name no host defines is
// an error at its line of the experiment file, when it came from one.
func (r *Run) setLayers(exp *Experiment) error {
	if exp.file == nil {
		return r.SetLayers(exp.Layers)
	}
	var errs config.Errors
	for _, name := range sortedKeys(exp.Layers) {
		if !r.setLayer(name, cpu.Layer(exp.Layers[name])) {
			errs = append(errs, exp.file.Errorf([]string{"layers", name}, "no host has a modelled function called %q (see simkron symbols %s)", name, exp.Path))
		}
	}
	if errs != nil {
		return errs
	}
	return nil
}

// host returns the host called name.
func (r *Run) host(name string) (*Host, error) {
	for _, h := range r.Hosts {
		if h.Name == name {
			return h, nil
		}
	}
	return nil, fmt.Errorf("no host %q", name)
}

// runEnv is the built experiment as workloads see it.
type runEnv struct{ r *Run }

var _ workload.Env = runEnv{}

func (e runEnv) Scheduler() *sim.Scheduler { return e.r.Sched }

func (e runEnv) Hosts() []workload.Host {
	out := make([]workload.Host, len(e.r.Hosts))
	for i, h := range e.r.Hosts {
		out[i] = hostView{h}
	}
	return out
}

func (e runEnv) Host(name string) (workload.Host, error) {
	h, err := e.r.host(name)
	if err != nil {
		return nil, err
	}
	return hostView{h}, nil
}

func (e runEnv) Params(name string) any {
	if p, ok := e.r.Exp.Workload.Params[name]; ok {
		return p
	}
	if t, ok := workload.Lookup(name); ok {
		return t.Params()
	}
	return nil
}

// hostView is a host as workloads see it: its name and its components
// (part.Host.Components), which they find by type.
type hostView struct{ h *Host }

func (v hostView) Name() string      { return v.h.Name }
func (v hostView) Components() []any { return v.h.Components() }

// hostDone runs when a host's last thread has ended: once every host's
// have, the next workload starts, or the run stops after the last; a
// workload.Ender that has Ended stops the run at once.
func (r *Run) hostDone() {
	if e, ok := r.Workloads[r.phase].(workload.Ender); ok && e.Ended() {
		// Over after a failure, though some programs still wait (a
		// server for a client that gave up): the run ends here.
		r.finish()
		return
	}
	for _, h := range r.Hosts {
		if h.Env.Busy() {
			return
		}
	}
	if r.phase+1 < len(r.Workloads) {
		r.phase++
		r.Workloads[r.phase].Start()
		return
	}
	r.finish()
}

// finish ends the run at this instant: the event that ended it is the last
// to fire, and no core runs on past the instant, into its idle loop or
// anything after the last thread's end, whatever other hosts have due
// (a core that would waits for the clock, and the run is over): where a
// run ends does not depend on how its hosts share schedulers
// (islandRun.idle does the same).
func (r *Run) finish() {
	r.finished = true
	r.Sched.Stop()
	r.Sched.SetHorizon(r.Sched.Now())
}

// Execute runs the simulation to the workload's end or the stop time and
// returns the result. A panic inside the simulation (a simulator bug) is
// recovered here, the last line of defence: the result so far is
// returned, marked incomplete with the reason "internal error: ...", with
// an *InternalError that holds the stack where the panic began.
func (r *Run) Execute(opt Options) (res *report.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = r.afterPanic(p, panicStack(p))
		}
	}()
	stop := r.Exp.Info.StopAt
	srv, until := r.server()
	stop = min(stop, until)
	const chunk = 1 << 16
	last := time.Now()
	var aborted error
	if r.islands != nil {
		if opt.Abort != nil || opt.OnEnd != nil || opt.Trace != nil {
			panic("machine: a run in islands with Options.Abort, OnEnd or Trace (annotations keep a run whole: Options.Whole)")
		}
		r.running = newIslandRun(r, stop, opt.cores())
		r.running.execute(opt.Progress)
		if f := r.running.final; f != nil {
			r.finished = true
			r.end = r.islands[f.island]
		}
		// One scheduler's clock stands where the run stopped for every
		// host (an idle core's cycles run to it).
		end := r.now()
		for _, is := range r.islands {
			is.sched.SetHorizon(sim.Never)
			is.sched.EndAt(end)
		}
		if ie := r.running.failed; ie != nil {
			res, err = r.afterInternal(ie)
			return res, err
		}
	} else if r.Bridged() {
		// Paced to the wall clock (bridge.go).
		if aborted = r.OpenBridges(); aborted == nil {
			r.interrupted, aborted = r.runPaced(opt, stop)
		}
	} else {
		if opt.Cores != nil {
			opt.Cores.take()
			defer opt.Cores.release()
		}
		for !r.finished && r.Sched.Next() <= stop && aborted == nil {
			if opt.Abort == nil {
				r.Sched.RunEventsUntil(chunk, stop)
			} else {
				n := 0
				r.Sched.RunWhile(func() bool {
					n++
					aborted = opt.Abort()
					return n <= chunk && r.Sched.Next() <= stop && aborted == nil
				})
			}
			if r.finished {
				break
			}
			if opt.Progress != nil && time.Since(last) > 200*time.Millisecond {
				last = time.Now()
				opt.Progress(r.Sched.Now(), stop)
			}
		}
	}
	if r.Sched != nil {
		r.Sched.SetHorizon(sim.Never) // set where the run ended (finish)
	}
	if aborted == nil {
		r.serverEnd(srv, until, r.interrupted)
	}
	if opt.OnEnd != nil {
		opt.OnEnd()
	}
	if aborted == nil && opt.Abort != nil {
		aborted = opt.Abort()
	}
	// The contexts are ended before the result is taken: what their
	// programs do on the way out (a client's deferred summing up) is in
	// the result, and nothing changes it after it is taken.
	r.Close()
	res, werr := r.result()
	if aborted != nil {
		res.Complete = false
		res.Incomplete = "stopped: " + aborted.Error()
	}
	if werr != nil && res.Complete {
		// A workload that cannot give its result did not end as it should.
		res.Complete = false
		res.Incomplete = firstError(werr).Error()
	}
	return res, werr
}

// InternalError is a panic inside the simulation: a simulator bug, never
// a problem of the user's input. Execute recovers it and returns the
// result so far with it.
type InternalError struct {
	Value any // what was raised
	// Context names the simulated context on whose stack it was raised,
	// if any: its program, or an event that fired while it waited (a
	// waiting context runs the due events itself).
	Context string
	// Stack is where it was raised, a frame a line:
	// "function (file:line)".
	Stack string
}

func (e *InternalError) Error() string {
	v := fmt.Sprint(e.Value)
	if first, _, cut := strings.Cut(v, "\n"); cut {
		v = first + " ..."
	}
	if e.Context != "" {
		return fmt.Sprintf("internal error: %s (in %s)", v, e.Context)
	}
	return "internal error: " + v
}

// afterPanic is Execute's end after a panic p raised at stack: the result
// so far, as much of it as can still be taken, marked incomplete, and the
// InternalError.
func (r *Run) afterPanic(p any, stack string) (*report.Result, error) {
	return r.afterInternal(newInternalError(p, stack))
}

// afterInternal is afterPanic with the InternalError made.
func (r *Run) afterInternal(ie *InternalError) (*report.Result, error) {
	var res *report.Result
	if guard(func() { res, _ = r.result() }) != nil {
		// The state the panic left cannot give even a part of the
		// result: what ran, and how far.
		res = &report.Result{Header: r.header()}
	}
	res.Complete = false
	res.Incomplete = ie.Error()
	guard(r.Close)
	return res, ie
}

// Recovered returns panic p, just recovered by the deferred function
// that calls it, as an InternalError with the stack where p began.
func Recovered(p any) *InternalError { return newInternalError(p, panicStack(p)) }

func newInternalError(p any, stack string) *InternalError {
	ie := &InternalError{Value: p, Stack: stack}
	if cp, ok := p.(*cpu.Panic); ok {
		ie.Value, ie.Context = cp.Value, cp.Context
	}
	return ie
}

// firstError returns the first of the errors err joins (errors.Join), or
// err.
func firstError(err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok && len(j.Unwrap()) > 0 {
		return j.Unwrap()[0]
	}
	return err
}

// guard runs f and returns what it panicked with, or nil.
func guard(f func()) (p any) {
	defer func() { p = recover() }()
	f()
	return nil
}

// panicStack returns the frames where panic p began, a line each: those
// it carries from a simulated context, else those of the goroutine that
// recovers it (called by that deferred function).
func panicStack(p any) string {
	var pcs []uintptr
	if cp, ok := p.(*cpu.Panic); ok {
		pcs = cp.Stack
	} else {
		pcs = make([]uintptr, 64)
		pcs = pcs[:runtime.Callers(3, pcs)]
	}
	var b strings.Builder
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		// The runtime's own frames (gopanic, sigpanic) say nothing of
		// where the bug is.
		if !strings.HasPrefix(f.Function, "runtime.") {
			fmt.Fprintf(&b, "%s (%s:%d)\n", f.Function, f.File, f.Line)
		}
		if !more {
			break
		}
	}
	return b.String()
}

// SetLayers moves modelled functions to other layers on every host (a
// name no host defines is an error). Call it before Execute.
func (r *Run) SetLayers(m map[string]string) error {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		if !r.setLayer(name, cpu.Layer(m[name])) {
			return fmt.Errorf("layers: no host has a modelled function called %q (see simkron symbols)", name)
		}
	}
	return nil
}

// setLayer moves the function name to layer l on every host that defines
// it, and reports whether one did.
func (r *Run) setLayer(name string, l cpu.Layer) bool {
	found := false
	for _, h := range r.Hosts {
		if h.Syms.SetLayer(name, l) == nil {
			found = true
		}
	}
	return found
}

// Close ends every simulated context of every host, releasing the
// goroutines behind them. Execute calls it before it takes the result.
func (r *Run) Close() {
	r.closeBridges()
	for _, h := range r.Hosts {
		h.CPU.Shutdown()
	}
}

func (r *Run) result() (*report.Result, error) {
	res := &report.Result{Header: r.header()}
	switch {
	case res.Complete:
	case r.interrupted != "":
		res.Incomplete = fmt.Sprintf("stopped by %s at %v before the workload ended", r.interrupted, r.now())
	default:
		res.Incomplete = fmt.Sprintf("stop_at %v reached before the workload ended", r.Exp.Info.StopAt)
	}
	// Each part is taken on its own: one that panics (a simulator bug)
	// is an InternalError among the errors, and the others are kept.
	var errs []error
	for _, h := range r.Hosts {
		errs = append(errs, resultPart(func() { res.Hosts = append(res.Hosts, hostResult(h)) }))
	}
	// The workloads that started, in order.
	told := false // the stop_at reason says a workload's too
	for _, w := range r.Workloads[:r.phase+1] {
		perr := resultPart(func() {
			wr, err := w.Result()
			errs = append(errs, err)
			for _, s := range wr.Sections {
				for _, o := range res.Sections {
					if o.Name == s.Name {
						errs = append(errs, fmt.Errorf("two workloads gave a result section %q", s.Name))
					}
				}
				res.Sections = append(res.Sections, report.Section{Name: s.Name, Value: s.Value})
			}
			res.Figures.Add(wr.Figures)
			switch {
			case wr.Incomplete == "":
			case res.Complete:
				res.Complete = false
				res.Incomplete = wr.Incomplete
			case !r.finished && !told:
				// stop_at came first: what the workload says of it too.
				res.Incomplete += "; " + wr.Incomplete
				told = true
			}
		})
		errs = append(errs, perr)
	}
	errs = append(errs, resultPart(func() {
		r.Net.report(res)
		r.bridgeResults(res)
	}))
	return res, errors.Join(errs...)
}

// resultPart runs f, one part of taking a result; a panic in it is
// returned as an InternalError.
func resultPart(f func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = newInternalError(p, panicStack(p))
		}
	}()
	f()
	return nil
}

// header says what ran and how far it got.
func (r *Run) header() report.Header {
	h := report.Header{
		Schema:      report.Schema,
		Version:     Version,
		Experiment:  r.Exp.Info.Name,
		Description: r.Exp.Info.Description,
		Seed:        r.seed,
		Detail:      r.detailName(),
		Complete:    r.finished,
		SimTimePS:   int64(r.now()),
		Events:      r.fired(),
		Workload:    strings.Join(append([]string{r.Exp.Workload.Type}, r.Exp.Workload.Then...), "+"),
	}
	h.Nondeterministic = r.nondeterminism()
	return h
}

// now is the simulated time the run has reached: its scheduler's; in
// islands, that of the island whose event ended the run, else the
// latest island's.
func (r *Run) now() sim.Time {
	switch {
	case r.islands == nil:
		return r.Sched.Now()
	case r.end != nil:
		return r.end.sched.Now()
	}
	var t sim.Time
	for _, is := range r.islands {
		t = max(t, is.sched.Now())
	}
	return t
}

// fired is how many events the run has fired, in every island.
func (r *Run) fired() uint64 {
	if r.islands == nil {
		return r.Sched.Fired()
	}
	var n uint64
	for _, is := range r.islands {
		n += is.sched.Fired()
	}
	return n
}

func hostResult(h *Host) report.HostResult {
	cs := h.CPU.Stats()
	out := report.HostResult{
		Name:        h.Name,
		Machine:     h.Spec.Machine.Name,
		Description: h.Spec.Machine.Description,
		ClockHz:     int64(h.Spec.CPU.Clock),
		CPU: report.CPU{
			Cycles: cs.Cycles, IdleCycles: cs.IdleCycles, Instructions: cs.Instructions,
			Interrupts: cs.Interrupts, Switches: cs.Switches, Traps: cs.Traps,
			IOAccesses: cs.IOAccesses, IOCycles: cs.IOCycles,
		},
		Memory: report.Memory{
			Size:         uint64(h.Sys.Phys.Size()),
			PagesTouched: h.Sys.Phys.PagesTouched(),
			Reads:        h.Sys.Cache.MemReads(),
			Writes:       h.Sys.Cache.MemWrites(),
		},
		GuestErrors: h.Sys.Guest.Count(),
	}
	h.Env.Report(&out)
	// Functional detail has no caches to count: the hierarchy is never
	// touched, and its zeros are not reported as measurements.
	for _, c := range h.Sys.Cache.Caches() {
		if h.Sys.Detail() != memory.DetailFull {
			break
		}
		p, s := c.Params(), c.Stats()
		out.Caches = append(out.Caches, report.Cache{
			Name: h.Name + "." + c.Name(), Size: uint64(p.Size), Line: uint64(p.Line), Assoc: p.Assoc,
			WritePolicy: p.WritePolicy.String(),
			ReadHits:    s.ReadHits, ReadMisses: s.ReadMisses, WriteHits: s.WriteHits, WriteMisses: s.WriteMisses,
			FetchHits: s.FetchHits, FetchMisses: s.FetchMisses, Writebacks: s.Writebacks,
		})
	}
	devs := map[string]part.Device{}
	for _, d := range h.Devices {
		devs[d.Name()] = d
	}
	types := map[string]*part.DeviceType{}
	for _, d := range h.Spec.Devices {
		types[d.Name], _ = part.LookupDevice(d.Type)
	}
	for _, m := range h.Sys.Devices.Mappings() {
		d := report.Device{Name: h.Name + "." + m.Name, Space: m.Space.String(), Base: uint64(m.Base), Size: m.Size}
		if m.Bus != nil {
			d.Bus = m.Bus.Name()
		}
		if dev, ok := devs[h.Name+"."+m.Name]; ok && types[m.Name] != nil {
			d.Counters = summary(types[m.Name].Summary, dev.Counters())
		}
		out.Devices = append(out.Devices, d)
	}
	for _, g := range h.Sys.Guest.Records() {
		out.GuestLog = append(out.GuestLog, g.String())
	}
	for _, c := range Counters(h) {
		out.Counters = append(out.Counters, report.Counter{Name: c.Name, Value: c.Value})
	}
	return out
}

// detailName is the result's detail field: empty for full detail, so that
// full-detail results stay as they were; "functional"; or after a
// functional warm-up "functional until T, then full" (or that the switch
// was not reached); with a sync quantum, that (or "full") followed by
// ", sync quantum Q".
func (r *Run) detailName() string {
	d := r.memoryDetail()
	if q := r.Exp.Info.SyncQuantum; q > 0 {
		if d == "" {
			d = memory.DetailFull.String()
		}
		d += fmt.Sprintf(", sync quantum %v", q)
	}
	return d
}

// memoryDetail is detailName without the sync quantum.
func (r *Run) memoryDetail() string {
	e := r.Exp.Info
	switch {
	case e.Detail == memory.DetailFull:
		return ""
	case e.FullFrom == 0:
		return e.Detail.String()
	case len(r.Hosts) > 0 && r.Hosts[0].Sys.Detail() == memory.DetailFunctional:
		return fmt.Sprintf("functional (the run ended before full_detail_from, %v)", e.FullFrom)
	}
	return fmt.Sprintf("functional until %v, then full", e.FullFrom)
}

// summary returns the counters of groups that names (relative to the
// device: "card.tx_frames") asks for, in its order; a name the groups do
// not have is left out.
func summary(names []string, groups []stats.Group) []report.Counter {
	have := map[string]uint64{}
	for _, c := range stats.WalkGroups("", groups) {
		have[c.Name] = c.Value
	}
	var out []report.Counter
	for _, n := range names {
		if v, ok := have[n]; ok {
			out = append(out, report.Counter{Name: n, Value: v})
		}
	}
	return out
}
