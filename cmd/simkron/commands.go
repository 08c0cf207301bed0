package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"simkron/config"
	"simkron/machine"
	"simkron/machine/part"
	"simkron/report"
	"simkron/report/shape"
	"simkron/sim"
	"simkron/stats"
	"simkron/workload"
)

func cmdVersion(e *env, args []string) int {
	fs := newFlags(e, "version", "", "Print simkron's version.")
	if _, stop, st := parseFlags(e, fs, args); stop {
		return st
	}
	fmt.Fprintf(e.stdout, "simkron %s (result schema %s)\n", machine.Version, report.Schema)
	return exitOK
}

// seedFlag is an optional uint64 flag.
type seedFlag struct{ v *uint64 }

func (s *seedFlag) String() string {
	if s.v == nil {
		return ""
	}
	return strconv.FormatUint(*s.v, 10)
}

func (s *seedFlag) Set(v string) error {
	n, err := strconv.ParseUint(v, 0, 64)
	if err != nil {
		return fmt.Errorf("want a non-negative integer")
	}
	s.v = &n
	return nil
}

func cmdRun(e *env, args []string) int {
	fs := newFlags(e, "run", "CONFIG", `Run the experiment in CONFIG (a TOML experiment file) and print a summary.
With --out, also write DIR/result.json (the machine-readable result),
DIR/summary.txt and DIR/SEGMENT.pcap for each segment with pcap = true;
all are byte-identical for the same config and seed.
Nothing is written when the config is invalid.

Workloads ([workload] type = "NAME", configured in [workload.NAME]):
`+workloadHelp())
	var seed seedFlag
	fs.Var(&seed, "seed", "master seed of every random stream (default: the experiment's seed)")
	out := fs.String("out", "", "directory for result.json, summary.txt and pcap captures (created if missing)")
	quiet := fs.Bool("q", false, "do not print the summary on standard output")
	var annotate listFlag
	fs.Var(&annotate, "annotate", "run a Tcl annotation script `FILE` with the experiment (repeatable)")
	var sets listFlag
	fs.Var(&sets, "set", "set a key of the experiment, `KEY=VALUE` (as simkron sweep's, one value; \"machine.KEY\" in every host's machine file; repeatable)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the simulation (go tool pprof) to `FILE`")
	memProfile := fs.String("memprofile", "", "write a heap profile, taken when the simulation ends, to `FILE`")
	cyclesProfile := cyclesProfileFlag(fs)
	traceF := addTraceFlags(fs)
	jobs := fs.Int("j", runtime.NumCPU(), "islands of the experiment (hosts no network joins; with [experiment] linked, hosts joined only by a switch) simulated at once, each on its own thread; the result is the same at any -j")
	rest, stop, st := parseFlags(e, fs, args)
	if stop {
		return st
	}
	if err := checkCyclesProfileFlag(fs); err != nil {
		fmt.Fprintf(e.stderr, "simkron run: %v\n", err)
		return exitUsage
	}
	if *jobs < 1 {
		fmt.Fprintf(e.stderr, "simkron run: -j %d: at least one island must run at a time\n", *jobs)
		return exitUsage
	}
	if emptyFlag(fs, "out") != "" {
		fmt.Fprintf(e.stderr, "simkron run: --out '': an empty folder name (leave --out out to write nothing)\n")
		return exitUsage
	}
	tr, ok := traceF.check(e, "run", fs)
	if !ok {
		return exitUsage
	}
	if len(rest) != 1 {
		fmt.Fprintf(e.stderr, "simkron run: want exactly one CONFIG, got %d arguments\n", len(rest))
		return exitUsage
	}
	overrides, err := parseSets(sets)
	if err != nil {
		fmt.Fprintf(e.stderr, "simkron run: %v\n", err)
		return exitUsage
	}
	exp, err := machine.LoadExperimentWith(rest[0], overrides)
	if err != nil {
		fmt.Fprintf(e.stderr, "%v\n", err)
		return exitUsage
	}
	return runExperiment(e, "run", rest[0], exp, runOptions{seed: seed.v, out: *out, quiet: *quiet,
		annotate: annotate, cpuProfile: *cpuProfile, memProfile: *memProfile, cyclesProfile: *cyclesProfile, trace: tr, jobs: *jobs})
}

// emptyFlag returns the first of the named flags given on the command
// line with an empty value (--out ""), or "": for a flag whose empty
// value means "not given", an empty one given is a mistake (a variable
// that was not set), to be refused rather than taken for the default.
func emptyFlag(fs *cmdFlags, names ...string) string {
	var found string
	fs.Visit(func(f *flag.Flag) {
		if found == "" && slices.Contains(names, f.Name) && f.Value.String() == "" {
			found = f.Name
		}
	})
	return found
}

// runOptions are the choices of a run besides its experiment.
type runOptions struct {
	seed                   *uint64
	out                    string
	quiet                  bool
	annotate               []string
	cpuProfile, memProfile string
	// cyclesProfile is --cycles-profile's file (profileflag.go).
	cyclesProfile string
	// trace is the run's timeline (--trace), nil for none.
	trace *traceRun
	// jobs is how many islands may simulate at once (0: as many as the
	// machine has cores).
	jobs int
	// files are written into out with the results.
	files []outFile
}

// outFile is a file of a run's results.
type outFile struct {
	name string
	data []byte
}

// runExperiment builds, runs and reports the loaded experiment exp (from
// file path) as command cmd: what simkron run does after loading.
func runExperiment(e *env, cmd, path string, exp *machine.Experiment, o runOptions) int {
	e.log.WithField("config", path).Debugf("loaded experiment %q with %d hosts", exp.Info.Name, len(exp.Hosts))
	// Without --out no capture is written: none is recorded. Annotations
	// (one Tcl interpreter) and the timeline (one time line of every
	// host) keep the run in one island.
	jobs := o.jobs
	if jobs == 0 {
		jobs = runtime.NumCPU()
	}
	opt := machine.Options{Seed: o.seed, NoCapture: o.out == "", Cores: machine.NewCores(jobs),
		Whole: len(exp.Info.Annotations) > 0 || len(o.annotate) > 0 || o.trace != nil}
	watchCycles(o, &opt)
	r, err := machine.New(exp, opt)
	if err != nil {
		fmt.Fprintf(e.stderr, "%v\n", inFile(path, err))
		return exitUsage
	}
	if err := o.trace.checkRun(r); err != nil {
		r.Close()
		fmt.Fprintf(e.stderr, "simkron %s: %v\n", cmd, err)
		return exitUsage
	}
	ann, err := startAnnotations(r, exp, o.annotate, &opt)
	if err != nil {
		r.Close()
		fmt.Fprintf(e.stderr, "%v\n", err)
		return exitUsage
	}
	if r.Bridged() {
		// The TAPs are the user's environment: a device that cannot be
		// had is bad input, found before anything runs.
		if err := r.OpenBridges(); err != nil {
			r.Close()
			fmt.Fprintf(e.stderr, "%v\n", inFile(path, err))
			return exitUsage
		}
		var stop func()
		opt.Interrupt, stop = interrupts()
		defer stop()
	}
	if o.out != "" {
		if err := prepareOut(o.out); err != nil {
			r.Close()
			fmt.Fprintf(e.stderr, "simkron %s: --out %v\n", cmd, err)
			return exitUsage
		}
	}
	for _, p := range []string{o.cpuProfile, o.memProfile} {
		if p != "" {
			if err := checkOutput(p); err != nil {
				r.Close()
				fmt.Fprintf(e.stderr, "simkron %s: profile %v\n", cmd, err)
				return exitUsage
			}
		}
	}
	if err := checkCyclesProfile(o); err != nil {
		r.Close()
		fmt.Fprintf(e.stderr, "simkron %s: %v\n", cmd, err)
		return exitUsage
	}
	// The last check before the run: the timeline's file is made.
	if err := o.trace.start(r, ann); err != nil {
		r.Close()
		fmt.Fprintf(e.stderr, "simkron %s: %v\n", cmd, err)
		return exitUsage
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			r.Close()
			o.trace.abandon()
			fmt.Fprintf(e.stderr, "simkron %s: --cpuprofile %s: %v\n", cmd, o.cpuProfile, pathErr(err))
			return exitUsage
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	start := time.Now()
	if e.stderrTTY {
		opt.Progress = func(now, stopAt sim.Time) {
			if time.Since(start) > time.Second {
				fmt.Fprintf(e.stderr, "\rsimulated %v of at most %v   ", now, stopAt)
			}
		}
	}
	res, runErr := r.Execute(opt)
	traceErr := o.trace.finish(e)
	// From here on the run has happened: whatever fails, its results so
	// far are written, marked incomplete, and the exit status is 1.
	if p := guard(func() { ann.record(res) }); p != nil {
		runErr = errors.Join(runErr, p)
		markIncomplete(res, p)
	}
	elapsed := time.Since(start)
	if e.stderrTTY && elapsed > time.Second {
		fmt.Fprintf(e.stderr, "\r%60s\r", "")
	}
	fields := map[string]any{
		"host_seconds": fmt.Sprintf("%.3f", elapsed.Seconds()),
		"events":       res.Events,
		"events_per_s": fmt.Sprintf("%.0f", float64(res.Events)/max(elapsed.Seconds(), 1e-9)),
		// Host facts, like the time: in the log, not the result, which
		// is the same at any -j.
		"islands": r.Islands(),
		"linked":  r.Linked(),
		"threads": r.Threads(opt.Cores),
	}
	if r.Linked() > 0 {
		fields["linked_windows"] = r.LinkedWindows()
	}
	if peak, ok := peakRSS(); ok {
		fields["host_peak_rss_mb"] = fmt.Sprintf("%.1f", float64(peak)/1e6)
	}
	e.log.WithFields(fields).Info("simulation finished")
	res.NonFinite = res.FindNonFinite()
	var summary bytes.Buffer
	if p := guard(func() { report.WriteSummary(&summary, res) }); p != nil {
		runErr = errors.Join(runErr, p)
		markIncomplete(res, p)
		summary.Reset()
		fmt.Fprintf(&summary, "simkron %s  experiment %q  seed %d\nsimulated %v in %d events, INCOMPLETE: %s\n",
			res.Version, res.Experiment, res.Seed, sim.Time(res.SimTimePS), res.Events, res.Incomplete)
	}
	if !o.quiet {
		e.stdout.Write(summary.Bytes())
	}
	var writeErr error
	if o.out != "" {
		if writeErr = writeResults(o.out, res, summary.Bytes(), r.Net.Captures(), o.files...); writeErr == nil {
			e.log.Debugf("wrote %s", o.out)
		}
	}
	var profErr error
	if o.memProfile != "" {
		profErr = writeHeapProfile(o.memProfile)
	}
	if err := writeCyclesProfile(o, opt, res); err != nil {
		profErr = errors.Join(profErr, err)
	}
	// The first line of standard error says what matters most.
	status := exitOK
	written := "written to " + o.out
	if o.out == "" {
		written = "in the summary above"
	}
	if ie, ok := errors.AsType[*machine.InternalError](runErr); ok {
		fmt.Fprintf(e.stderr, "simkron %s: %v; the results so far are %s, marked incomplete. This is a bug in simkron: "+
			"please report it with the trace below.\n%s", cmd, ie, written, ie.Stack)
		status = exitFailed
	} else if runErr != nil {
		fmt.Fprintf(e.stderr, "simkron %s: %v\n", cmd, runErr)
		status = exitFailed
	} else if !res.Complete {
		fmt.Fprintf(e.stderr, "simkron %s: %s\n", cmd, res.Incomplete)
		status = exitFailed
	}
	if writeErr != nil {
		fmt.Fprintf(e.stderr, "simkron %s: %v\n", cmd, writeErr)
		status = exitFailed
	}
	if profErr != nil {
		fmt.Fprintf(e.stderr, "simkron %s: %v\n", cmd, profErr)
		status = exitFailed
	}
	if traceErr != nil {
		fmt.Fprintf(e.stderr, "simkron %s: %v\n", cmd, traceErr)
		status = exitFailed
	}
	warnRealtime(e.stderr, cmd, res)
	if len(res.NonFinite) > 0 {
		fmt.Fprintf(e.stderr, "simkron %s: warning: %d %s not a finite number (NaN or infinite), written as null in result.json: %s\n",
			cmd, len(res.NonFinite), plural(len(res.NonFinite), "value is", "values are"), strings.Join(res.NonFinite, ", "))
	}
	return status
}

// peakRSS returns the most memory the process has had resident, in
// bytes (Linux's VmHWM; false elsewhere): host figures for -v alone.
func peakRSS() (uint64, bool) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}

// guard runs f and returns what it panicked with as an internal error
// (a simkron bug), or nil.
func guard(f func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = machine.Recovered(p)
		}
	}()
	f()
	return nil
}

// markIncomplete marks res incomplete because of err, unless it is so
// already.
func markIncomplete(res *report.Result, err error) {
	if res.Complete {
		res.Complete = false
		res.Incomplete = err.Error()
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// writeHeapProfile writes the heap profile (live and allocated objects
// since the start) to path.
func writeHeapProfile(path string) error {
	runtime.GC()
	var b bytes.Buffer
	if err := pprof.Lookup("allocs").WriteTo(&b, 0); err != nil {
		return err
	}
	return writeFileAtomic(path, b.Bytes())
}

// prepareOut makes sure the results can be written to dir before the run
// starts: it creates the folder if missing and writes (and removes) a
// file in it. The error names dir as the user gave it.
func prepareOut(dir string) error {
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return fmt.Errorf("%s: is a file, not a folder", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%s: %v", dir, pathErr(err))
	}
	f, err := os.CreateTemp(dir, ".simkron-*")
	if err != nil {
		return fmt.Errorf("%s: cannot write there: %v", dir, pathErr(err))
	}
	f.Close()
	return os.Remove(f.Name())
}

// pathErr returns the cause of a path error, without the path (which
// may be a temporary file the user never named).
func pathErr(err error) error {
	if pe, ok := errors.AsType[*os.PathError](err); ok {
		return pe.Err
	}
	return err
}

// writeResults writes the result files, each through a temporary file so
// that a failed run never leaves half a file.
func writeResults(dir string, res *report.Result, summary []byte, captures []machine.Capture, more ...outFile) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("writing %s: %v", dir, pathErr(err))
	}
	js, jsErr := resultJSON(res)
	files := []outFile{{"summary.txt", summary}}
	if js != nil {
		files = append([]outFile{{"result.json", js}}, files...)
	}
	files = append(files, more...)
	for _, c := range captures {
		files = append(files, outFile{c.FileName(), c.Data})
	}
	for _, f := range files {
		path := filepath.Join(dir, f.name)
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, f.data, 0o644); err != nil {
			return fmt.Errorf("writing %s: %v", path, pathErr(err))
		}
		if err := os.Rename(tmp, path); err != nil {
			return fmt.Errorf("writing %s: %v", path, pathErr(err))
		}
	}
	if jsErr != nil {
		return fmt.Errorf("writing %s: %v", filepath.Join(dir, "result.json"), jsErr)
	}
	return nil
}

// inFile prefixes an error of building the experiment in file path with
// the path, unless it names its files and lines already (config.Errors:
// a [costs] name no function has, at its line of the machine file).
func inFile(path string, err error) error {
	if _, ok := errors.AsType[config.Errors](err); ok {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}

// resultJSON returns res as result.json holds it. A result that cannot
// be encoded in full (a simkron bug: a workload's section JSON cannot
// hold) is still written: without the workload's sections and figures,
// then with the header alone, marked incomplete with the reason; the
// error says what could not be written.
func resultJSON(res *report.Result) ([]byte, error) {
	var b bytes.Buffer
	err := res.WriteJSON(&b)
	if err == nil {
		return b.Bytes(), nil
	}
	reduced := *res
	reduced.Complete = false
	reduced.Incomplete = fmt.Sprintf("the result could not be written in full (%v): its sections and figures are left out", err)
	if res.Incomplete != "" {
		reduced.Incomplete += "; before that: " + res.Incomplete
	}
	reduced.Sections, reduced.Figures = nil, shape.Figures{}
	for _, r := range []report.Result{reduced, {Header: reduced.Header}} {
		b.Reset()
		if r.WriteJSON(&b) == nil {
			return b.Bytes(), err
		}
	}
	return nil, err
}

// loadAny reads an experiment file, or a machine file when the file has a
// [machine] table and no [experiment].
func loadAny(path string) (exp *machine.Experiment, spec *machine.Spec, err error) {
	f, err := config.Parse(path)
	if err != nil {
		return nil, nil, err
	}
	if f.Has("machine") && !f.Has("experiment") {
		spec, err = machine.LoadMachine(path)
		return nil, spec, err
	}
	exp, err = machine.LoadExperiment(path)
	return exp, nil, err
}

func cmdValidate(e *env, args []string) int {
	fs := newFlags(e, "validate", "FILE...", `Check experiment and machine files. Every problem is reported with its file,
line and key; the exit status is 2 if any file has one. An experiment is
also built (hosts assembled, devices mapped, annotation scripts loaded)
without running it.`)
	rest, stop, st := parseFlags(e, fs, args)
	if stop {
		return st
	}
	if len(rest) == 0 {
		fmt.Fprintf(e.stderr, "simkron validate: name at least one FILE\n")
		return exitUsage
	}
	status := exitOK
	for _, path := range rest {
		exp, _, err := loadAny(path)
		if err == nil && exp != nil {
			var r *machine.Run
			// Built as run builds it: whole when annotated.
			r, err = machine.New(exp, machine.Options{Whole: len(exp.Info.Annotations) > 0})
			if err != nil {
				err = inFile(path, err)
			} else {
				// The experiment's annotation scripts load too.
				var ann *runAnnotations
				if ann, err = startAnnotations(r, exp, nil, &machine.Options{}); ann != nil {
					ann.eng.Close()
				}
			}
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "%v\n", err)
			var es config.Errors
			if errors.As(err, &es) && len(es) > 1 {
				fmt.Fprintf(e.stderr, "%s: %d problems\n", path, len(es))
			}
			status = exitUsage
			continue
		}
		fmt.Fprintf(e.stdout, "%s: ok\n", path)
	}
	return status
}

func cmdParams(e *env, args []string) int {
	fs := newFlags(e, "params", "[KEY...]", `List every parameter of machine files ([cpu], [cache], [[device]] ...) and
experiment files, with type, default, range and meaning. With KEY, only
the parameters whose key contains one of the KEYs (in any case), under
their tables' headings:

  simkron params mtu
  simkron params cache.l2 workload.udp`)
	words, stop, st := parseFlags(e, fs, args)
	if stop {
		return st
	}
	for _, w := range words {
		if strings.TrimSpace(w) == "" {
			fmt.Fprintf(e.stderr, "simkron params: an empty KEY (simkron params with no KEY lists every parameter)\n")
			return exitUsage
		}
	}
	match := func(key string) bool {
		if len(words) == 0 {
			return true
		}
		for _, w := range words {
			if strings.Contains(strings.ToLower(key), strings.ToLower(w)) {
				return true
			}
		}
		return false
	}
	secs := paramSections()
	var shown []paramSection
	for _, s := range secs {
		var ps []config.Param
		for _, p := range s.params {
			if match(p.Key) {
				ps = append(ps, p)
			}
		}
		if len(ps) > 0 || (s.params == nil && match(s.key)) {
			s.params = ps
			shown = append(shown, s)
		}
	}
	if len(shown) == 0 {
		fmt.Fprintf(e.stderr, "simkron params: no parameter's key contains %s (simkron params with no KEY lists every parameter)\n",
			strings.Join(quoteAll(words), " or "))
		return exitUsage
	}
	w := e.stdout
	for i, s := range shown {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, s.heading)
		if len(s.params) > 0 {
			fmt.Fprintln(w)
			if err := config.WriteParams(w, s.params); err != nil {
				fmt.Fprintf(e.stderr, "simkron params: %v\n", err)
				return exitFailed
			}
		}
	}
	return exitOK
}

func cmdCounters(e *env, args []string) int {
	fs := newFlags(e, "counters", "[NAME...]", `List every counter a host reports in result.json (hosts[].counters), with
its meaning: its core's, its environment's, its protocol families' and
each device model's with its drivers', named as in the result
(HOST.cpu0.cycles, HOST.kernel.syscalls, HOST.DEVICE.card.tx_frames). Each
is declared once, by a tag on its component's stats struct. With NAME,
only the counters whose name contains one of the NAMEs (in any case):

  simkron counters tcp
  simkron counters card.rx wire`)
	words, stop, st := parseFlags(e, fs, args)
	if stop {
		return st
	}
	for _, w := range words {
		if strings.TrimSpace(w) == "" {
			fmt.Fprintf(e.stderr, "simkron counters: an empty NAME (simkron counters with no NAME lists every counter)\n")
			return exitUsage
		}
	}
	match := func(name string) bool {
		if len(words) == 0 {
			return true
		}
		for _, w := range words {
			if strings.Contains(strings.ToLower(name), strings.ToLower(w)) {
				return true
			}
		}
		return false
	}
	var b strings.Builder
	shown := 0
	for _, s := range counterSections() {
		var cs []stats.Counter
		for _, c := range s.counters {
			if match(c.Name) {
				cs = append(cs, c)
			}
		}
		if len(cs) == 0 {
			continue
		}
		if shown > 0 {
			b.WriteString("\n")
		}
		shown++
		fmt.Fprintf(&b, "%s\n\n", s.heading)
		tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tHELP")
		for _, c := range cs {
			fmt.Fprintf(tw, "%s\t%s\n", c.Name, c.Help)
		}
		tw.Flush()
	}
	if shown == 0 {
		fmt.Fprintf(e.stderr, "simkron counters: no counter's name contains %s (simkron counters with no NAME lists every counter)\n",
			strings.Join(quoteAll(words), " or "))
		return exitUsage
	}
	if _, err := io.WriteString(e.stdout, b.String()); err != nil {
		fmt.Fprintf(e.stderr, "simkron counters: %v\n", err)
		return exitFailed
	}
	return exitOK
}

// counterSection is a part's counters under a heading.
type counterSection struct {
	heading  string
	counters []stats.Counter
}

// counterSections lists every counter a host can report, by part: the
// core, the environments, the families, the device models (with each
// environment's driver of them), as result.json names them under a host.
func counterSections() []counterSection {
	describe := func(prefix string, gs []stats.Group) []stats.Counter {
		var out []stats.Counter
		for _, g := range gs {
			out = append(out, stats.Describe(stats.Join(prefix, g.Name), g.Value)...)
		}
		return out
	}
	secs := []counterSection{{heading: "Every host: its core", counters: describe("HOST", machine.CoreCounters())}}
	for _, env := range part.Environments() {
		secs = append(secs, counterSection{heading: fmt.Sprintf("Hosts that run the %s environment ([%s]): %s", env.Name, env.Section.Key, env.Section.Help),
			counters: describe("HOST", env.Counters)})
	}
	for _, f := range part.Families() {
		secs = append(secs, counterSection{heading: fmt.Sprintf("Hosts that run the %s family ([%s]): %s", f.Name, f.Section.Key, f.Section.Help),
			counters: describe("HOST", f.Counters)})
	}
	for _, t := range part.DeviceTypes() {
		cs := describe("HOST.DEVICE", t.Counters)
		for _, d := range part.Drivers(t.Name) {
			cs = append(cs, describe("HOST.DEVICE", d.Counters)...)
		}
		secs = append(secs, counterSection{heading: fmt.Sprintf("Devices of type = %q (DEVICE is the [[device]] name): %s", t.Name, t.Help), counters: cs})
	}
	return secs
}

// paramSection is a table of simkron params under its heading; a
// section without parameters is a note, shown when its key matches.
type paramSection struct {
	heading string
	key     string // for a note: what a KEY must match to show it
	params  []config.Param
}

// paramSections lists every parameter, by table, in the order simkron
// params prints them: machine files (their own tables, then each part's),
// devices, experiment files (their own tables, each network
// technology's, and each host's bindings of its cards), workloads.
func paramSections() []paramSection {
	spec := machine.DefaultSpec()
	d := machine.DefaultDevice()
	secs := []paramSection{{heading: "Machine files (configs/machines/*.toml)", params: config.Params("", &spec)}}
	for _, sec := range part.Sections() {
		secs = append(secs, paramSection{heading: fmt.Sprintf("[%s]: %s", sec.Key, sec.Help), params: config.Params(sec.Key, sec.Defaults())})
	}
	secs = append(secs, paramSection{heading: "[[device]] entries", params: config.Params("device[]", &d)})
	for _, t := range machine.DeviceTypes() {
		secs = append(secs, paramSection{heading: fmt.Sprintf("[device.params] of type = %q: %s", t.Name, t.Help),
			params: config.Params("device[].params", t.Defaults())})
		if t.DriverDefaults != nil {
			secs = append(secs, paramSection{heading: fmt.Sprintf("[device.driver] of type = %q: the kernel's driver", t.Name),
				params: config.Params("device[].driver", t.DriverDefaults())})
		}
	}
	exp := machine.DefaultExperiment()
	secs = append(secs, paramSection{heading: "Experiment files", params: config.Params("", &exp)})
	for _, t := range part.Technologies() {
		ps := append(config.Params("", t.Tables()), config.Params("host[]", t.Bindings())...)
		secs = append(secs, paramSection{heading: fmt.Sprintf("Experiment files: %s (%s)", t.Name, t.Help), params: ps})
	}
	for _, sec := range part.Sections() {
		if sec.HostOverride != nil {
			secs = append(secs, paramSection{heading: fmt.Sprintf("[host.%s]: keys of the machine file's [%s], for that host only", sec.Key, sec.Key), key: "host." + sec.Key})
		}
	}
	for _, t := range workload.Types() {
		secs = append(secs, paramSection{heading: fmt.Sprintf("[workload.%s] (type = %q): %s", t.Name, t.Name, t.Help),
			params: config.Params("workload."+t.Name, t.Params())})
	}
	return secs
}

// quoteAll quotes each of ws for a message.
func quoteAll(ws []string) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = strconv.Quote(w)
	}
	return out
}

// workloadHelp lists the registered workloads, a line each.
func workloadHelp() string {
	var b strings.Builder
	for _, t := range workload.Types() {
		fmt.Fprintf(&b, "  %-9s %s\n", t.Name, t.Help)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func loadExperimentHosts(e *env, name string, args []string, summary string) (*machine.Run, int) {
	fs := newFlags(e, name, "CONFIG", summary)
	rest, stop, st := parseFlags(e, fs, args)
	if stop {
		return nil, st
	}
	if len(rest) != 1 {
		fmt.Fprintf(e.stderr, "simkron %s: want exactly one CONFIG\n", name)
		return nil, exitUsage
	}
	exp, err := machine.LoadExperiment(rest[0])
	if err != nil {
		fmt.Fprintf(e.stderr, "%v\n", err)
		return nil, exitUsage
	}
	r, err := machine.New(exp, machine.Options{})
	if err != nil {
		fmt.Fprintf(e.stderr, "%v\n", inFile(rest[0], err))
		return nil, exitUsage
	}
	return r, exitOK
}

func cmdSymbols(e *env, args []string) int {
	return perHost(e, "symbols", args, `List every modelled function of each host of the experiment: name, layer,
code address, code size, instructions per call, and why. Annotation scripts
name these symbols; [costs] in a machine file overrides the instructions.`,
		func(h *machine.Host) { h.Syms.WriteTable(e.stdout) })
}

func cmdDevices(e *env, args []string) int {
	return perHost(e, "devices", args, `Print the device registry of each host of the experiment: the address ranges
of its devices in each space, and the bus that reaches them.`,
		func(h *machine.Host) { h.Sys.Devices.WriteTable(e.stdout) })
}

// perHost builds the experiment named in args and prints show for each
// host under a heading.
func perHost(e *env, name string, args []string, summary string, show func(h *machine.Host)) int {
	r, st := loadExperimentHosts(e, name, args, summary)
	if r == nil {
		return st
	}
	for i, h := range r.Hosts {
		if i > 0 {
			fmt.Fprintln(e.stdout)
		}
		fmt.Fprintf(e.stdout, "host %s (%s)\n", h.Name, h.Spec.Machine.Name)
		show(h)
	}
	return exitOK
}
