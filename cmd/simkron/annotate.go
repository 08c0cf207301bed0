package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"simkron/annotations"
	"simkron/config"
	"simkron/internal/infile"
	"simkron/machine"
	"simkron/report"
	"simkron/sim"
)

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// runAnnotations is the annotation engine of one run, or nil.
type runAnnotations struct {
	eng       *annotations.Engine
	scripts   []string
	finishErr error
}

// startAnnotations loads the experiment's scripts (relative to its file)
// and those given with --annotate, installs them on the built run, applies
// their `layer map` requests, and arranges for `sim exit` and for a script
// error to stop the run. A script that does not load is an error: nothing
// runs.
func startAnnotations(r *machine.Run, exp *machine.Experiment, extra []string, opt *machine.Options) (*runAnnotations, error) {
	var paths []string
	for _, p := range exp.Info.Annotations {
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(exp.Path), p)
		}
		paths = append(paths, p)
	}
	paths = append(paths, extra...)
	if len(paths) == 0 {
		return nil, nil
	}
	var sources []annotations.Source
	for i, p := range paths {
		text, err := infile.Read(p, infile.Script)
		if err != nil {
			if i < len(exp.Info.Annotations) {
				return nil, experimentKeyError(exp, i, err)
			}
			return nil, fmt.Errorf("simkron: --annotate %s: %v", p, pathErr(err))
		}
		sources = append(sources, annotations.Source{Name: p, Text: string(text)})
	}
	// `source` may read files beside the experiment.
	eng, err := annotations.New(r.AnnotationTarget(), sources, annotations.Options{
		Dir:      filepath.Dir(exp.Path),
		Commands: exp.Info.AnnotationCommands,
		Time:     time.Duration(exp.Info.AnnotationHostTime / sim.Nanosecond),
		RunTime:  time.Duration(exp.Info.AnnotationRunTime / sim.Nanosecond),
	})
	if err != nil {
		return nil, err
	}
	if err := eng.Install(); err != nil {
		return nil, err
	}
	if err := r.SetLayers(eng.LayerMap()); err != nil {
		return nil, fmt.Errorf("annotation layer map: %w", err)
	}
	// The result names each script relative to the experiment file, as
	// it holds every path, so that the same run from another folder
	// writes the same bytes.
	var names []string
	for _, p := range paths {
		names = append(names, relToExperiment(exp.Path, p))
	}
	a := &runAnnotations{eng: eng, scripts: names}
	opt.Abort = eng.Err
	opt.OnEnd = func() { a.finishErr = eng.Finish() }
	return a, nil
}

// relToExperiment is path p relative to the folder of the experiment file
// exp (p as it is when it has no such form).
func relToExperiment(exp, p string) string {
	dir, err1 := filepath.Abs(filepath.Dir(exp))
	abs, err2 := filepath.Abs(p)
	if err1 != nil || err2 != nil {
		return p
	}
	rel, err := filepath.Rel(dir, abs)
	if err != nil {
		return p
	}
	return filepath.ToSlash(rel)
}

// experimentKeyError places err, the failure to read the i-th script of
// [experiment] annotations, at that key of the experiment file.
func experimentKeyError(exp *machine.Experiment, i int, err error) error {
	msg := fmt.Sprintf("%s: %v", exp.Info.Annotations[i], pathErr(err))
	f, perr := config.Parse(exp.Path)
	if perr != nil {
		return fmt.Errorf("%s: experiment.annotations: %s", exp.Path, msg)
	}
	return f.Errorf([]string{"experiment", "annotations", strconv.Itoa(i)}, "%s", msg)
}

// record puts what the scripts produced into the result; a script error
// marks the result incomplete.
func (a *runAnnotations) record(res *report.Result) {
	if a == nil || res == nil {
		return
	}
	out := &report.Annotations{Scripts: a.scripts, Output: a.eng.Output()}
	for _, b := range a.eng.Buckets() {
		out.Buckets = append(out.Buckets, report.Bucket(b))
	}
	err := a.eng.Err()
	if err == nil {
		err = a.finishErr
	}
	if err != nil {
		out.Error = err.Error()
		if res.Complete {
			res.Complete = false
			res.Incomplete = "stopped: " + err.Error()
		}
	}
	res.Annotations = out
}
