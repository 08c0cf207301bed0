package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"simkron/internal/infile"
	"simkron/machine"
	"simkron/report"
	"simkron/timeline"
)

// The run's timeline (package timeline): --trace FILE writes it, limited
// by --trace-window. Every check that can be made before the run is made
// before it (exit status 2, nothing written); the file is written as the
// run goes, under a temporary name renamed into place at the end.

// traceFlags are the timeline's flags of a command.
type traceFlags struct {
	path, window *string
}

func addTraceFlags(fs *cmdFlags) *traceFlags {
	return &traceFlags{
		path:   fs.String("trace", "", "write the run's timeline to `FILE` in the Trace Event Format (Perfetto, chrome://tracing): every context, call, interrupt, DMA and frame"),
		window: fs.String("trace-window", "", "limit --trace to `WINDOW`: a span of simulated time FROM:TO (1ms:2ms), or message=PROTOCOL:SIZE:N, the round trip of the Nth measured message of SIZE bytes over PROTOCOL (message=udp:1024:3)"),
	}
}

// traceRun is a run's timeline as the flags ask for it, nil for none.
type traceRun struct {
	path   string
	window timeline.Window
	file   *os.File
	w      *timeline.Writer
}

// check reads the flags (after parsing): the window's syntax, a window
// without a file, a file that cannot be written. It prints what is wrong
// and returns false then.
func (f *traceFlags) check(e *env, cmd string, fs *cmdFlags) (*traceRun, bool) {
	if emptyFlag(fs, "trace") != "" {
		fmt.Fprintf(e.stderr, "simkron %s: --trace '': an empty file name (leave --trace out to write no timeline)\n", cmd)
		return nil, false
	}
	if *f.path == "" {
		if *f.window != "" {
			fmt.Fprintf(e.stderr, "simkron %s: --trace-window %s: a window for no trace (give --trace FILE)\n", cmd, *f.window)
			return nil, false
		}
		return nil, true
	}
	t := &traceRun{path: *f.path}
	if *f.window != "" {
		w, err := timeline.ParseWindow(*f.window)
		if err != nil {
			fmt.Fprintf(e.stderr, "simkron %s: --trace-window %v\n", cmd, err)
			return nil, false
		}
		t.window = w
	}
	if err := checkTracePath(t.path); err != nil {
		fmt.Fprintf(e.stderr, "simkron %s: --trace %v\n", cmd, err)
		return nil, false
	}
	return t, true
}

// checkTracePath makes sure the trace can be written at path before
// anything is: path is not a folder, and its folder exists and takes a
// new file, or can be made (as --out's is: in the first folder above it
// that exists, a new file can be written). Nothing is left behind.
func checkTracePath(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s: is a folder", path)
	}
	dir := filepath.Dir(path)
	for {
		fi, err := os.Stat(dir)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%s: cannot write there: %s is not a folder", path, dir)
			}
			break
		}
		// Not there, or below a file: look further up.
		if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) || filepath.Dir(dir) == dir {
			return fmt.Errorf("%s: cannot write there: %v", path, pathErr(err))
		}
		dir = filepath.Dir(dir)
	}
	f, err := os.CreateTemp(dir, ".simkron-*")
	if err != nil {
		return fmt.Errorf("%s: cannot write there: %v", path, pathErr(err))
	}
	f.Close()
	return os.Remove(f.Name())
}

// checkRun checks the window against the built run: a span after its
// stop time, a message its workload does not measure.
func (t *traceRun) checkRun(r *machine.Run) error {
	if t == nil {
		return nil
	}
	if err := r.CheckWindow(t.window); err != nil {
		return fmt.Errorf("--trace-window %s: %w", t.window, err)
	}
	return nil
}

// start opens the file (a temporary one beside it) and attaches the
// timeline to the run, and to the annotations' trace commands.
func (t *traceRun) start(r *machine.Run, ann *runAnnotations) error {
	if t == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(t.path), 0o755); err != nil {
		return fmt.Errorf("--trace %s: cannot write there: %v", t.path, pathErr(err))
	}
	f, err := os.CreateTemp(filepath.Dir(t.path), "."+filepath.Base(t.path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("--trace %s: cannot write there: %v", t.path, pathErr(err))
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("--trace %s: %v", t.path, pathErr(err))
	}
	w, err := r.Timeline(f, t.window)
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("--trace-window %s: %w", t.window, err)
	}
	t.file, t.w = f, w
	if ann != nil {
		ann.eng.SetTrace(w)
	}
	return nil
}

// abandon removes the file of a run that did not start.
func (t *traceRun) abandon() {
	if t != nil && t.file != nil {
		t.file.Close()
		os.Remove(t.file.Name())
		t.file = nil
	}
}

// finish ends the timeline once the run has ended and puts the file in
// place: also when its window matched nothing (the file then holds no
// event), which is the error returned.
func (t *traceRun) finish(e *env) error {
	if t == nil || t.file == nil {
		return nil
	}
	err := t.w.Finish()
	empty := errors.Is(err, timeline.ErrEmpty)
	if cerr := t.file.Close(); err == nil || empty && cerr != nil {
		err = cerr
	}
	if err == nil || empty {
		if rerr := os.Rename(t.file.Name(), t.path); rerr != nil {
			err = rerr
		}
	}
	if err != nil && !empty {
		os.Remove(t.file.Name())
	}
	t.file = nil
	if err != nil {
		return fmt.Errorf("--trace %s: %v", t.path, pathErr(err))
	}
	e.log.WithField("events", t.w.Events()).Debugf("wrote the timeline to %s", t.path)
	return nil
}

// addReportTraceFlag is simkron report's --trace: a trace to draw as the
// report's waterfall.
func addReportTraceFlag(fs *cmdFlags) *string {
	return fs.String("trace", "", "draw the timeline in `FILE` (simkron run --trace, best of one message: --trace-window message=...) as a waterfall: in the html page, or as the svg chart \"waterfall\"")
}

// waterfallOption reads the trace --trace names into opt's waterfall: for
// the html and svg formats only.
func waterfallOption(fs *cmdFlags, path string, opt *report.Options) error {
	if emptyFlag(fs, "trace") != "" {
		return fmt.Errorf("--trace '': an empty file name")
	}
	if path == "" {
		return nil
	}
	if opt.Format != report.FormatHTML && opt.Format != report.FormatSVG {
		return fmt.Errorf("--trace %s: a waterfall is drawn in the html and svg formats, not %s", path, opt.Format)
	}
	if opt.Format == report.FormatSVG && opt.Chart != "" && opt.Chart != report.ChartWaterfall {
		return fmt.Errorf("--trace %s: draws the chart waterfall, not %s", path, opt.Chart)
	}
	data, err := infile.Read(path, infile.Result)
	if err != nil {
		return fmt.Errorf("--trace %s: %v", path, pathErr(err))
	}
	tr, err := timeline.Read(data)
	if err != nil {
		return fmt.Errorf("--trace %s: %v", path, err)
	}
	wf := tr.Waterfall()
	if len(wf.Rows) == 0 || wf.To <= wf.From {
		return fmt.Errorf("--trace %s: the trace holds nothing to draw (its window %q matched no work)", path, tr.Window)
	}
	opt.Waterfall = wf
	return nil
}
