package annotations

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"modernc.org/tcl"

	"simkron/internal/infile"
)

// Tcl return codes.
const (
	tclOK    = 0
	tclError = 1
)

// command is a Go command the sandbox sees under name.
type command struct {
	name string
	fn   func(e *Engine, args []string) (string, error)
}

var commands = []command{
	{"annotation", (*Engine).cmdAnnotation},
	{"puts", (*Engine).cmdPuts},
	{"cycles", (*Engine).cmdCycles},
	{"now", (*Engine).cmdNow},
	{"host", (*Engine).cmdHost},
	{"cpu", (*Engine).cmdCPU},
	{"symbol", (*Engine).cmdSymbol},
	{"symbols", (*Engine).cmdSymbols},
	{"layer", (*Engine).cmdLayer},
	{"frame", (*Engine).cmdFrame},
	{"io", (*Engine).cmdIO},
	{"dev", (*Engine).cmdDev},
	{"mem", (*Engine).cmdMem},
	{"stat", (*Engine).cmdStat},
	{"bucket", (*Engine).cmdBucket},
}

// newInterp makes the master interpreter, which holds the Go commands
// under ::simkron, and its safe child "sandbox", where scripts run and
// which reaches the Go commands only through aliases; then starts the
// goroutine the interpreters run on from then on.
func (e *Engine) newInterp() error {
	in, err := newTclInterp()
	if err != nil {
		return err
	}
	e.in = in
	catchPanics(in.TLS())
	if err := e.setupSandbox(in); err != nil {
		in.Close()
		return err
	}
	add := func(name string, fn func(e *Engine, args []string) (string, error), locked bool) error {
		_, err := in.NewCommand("::simkron::"+name, func(_ any, in *tcl.Interp, args []string) int {
			if locked {
				// The machine is read under the lock, and only while
				// the engine waits for the body.
				e.mu.Lock()
				defer e.mu.Unlock()
			}
			if e.abandoned.Load() {
				in.SetResult("annotations: the engine gave up on this interpreter")
				return tclError
			}
			res, err := fn(e, args[1:])
			if err != nil {
				in.SetResult(err.Error())
				return tclError
			}
			in.SetResult(res)
			return tclOK
		}, nil, nil)
		if err != nil {
			return err
		}
		if _, err := in.Eval(fmt.Sprintf("interp alias sandbox %s {} ::simkron::%s", name, name)); err != nil {
			return tclErr("alias "+name, in, err)
		}
		return nil
	}
	for _, c := range commands {
		if err := add(c.name, c.fn, true); err != nil {
			in.Close()
			return err
		}
	}
	// `trace instant` and `trace counter` reach the engine through
	// ::trace's guard (sandbox.go), not an alias of their own.
	if _, err := in.NewCommand("::simkron::trace", func(_ any, in *tcl.Interp, args []string) int {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.abandoned.Load() {
			in.SetResult("annotations: the engine gave up on this interpreter")
			return tclError
		}
		res, err := e.cmdTrace(args[1:])
		if err != nil {
			in.SetResult(err.Error())
			return tclError
		}
		in.SetResult(res)
		return tclOK
	}, nil, nil); err != nil {
		in.Close()
		return err
	}
	// source evaluates a script: commands of that script take the lock
	// themselves.
	if err := add("source", (*Engine).cmdSource, false); err != nil {
		in.Close()
		return err
	}
	c, err := openChild(in, "sandbox")
	if err != nil {
		in.Close()
		return err
	}
	e.tcl = c
	c.id = register(e)
	c.handlers()
	e.jobs = make(chan func())
	e.done = make(chan struct{}, 1)
	e.timer = time.NewTimer(time.Hour)
	e.timer.Stop()
	go e.serve()
	return nil
}

var libraryOnce sync.Once

// newTclInterp makes a bare interpreter. The first tcl.NewInterp of a
// process unpacks Tcl's script library (6 MB) into a temporary folder it
// never removes, unless TCL_LIBRARY is set. The engine needs none of
// that library (no package, no clock, no init.tcl), so TCL_LIBRARY is set
// to a folder that does not exist for that first call only.
func newTclInterp() (*tcl.Interp, error) {
	var in *tcl.Interp
	var err error
	libraryOnce.Do(func() {
		if _, set := os.LookupEnv("TCL_LIBRARY"); set {
			in, err = tcl.NewInterp()
			return
		}
		os.Setenv("TCL_LIBRARY", filepath.Join(os.TempDir(), "simkron-annotations-no-tcl-library"))
		in, err = tcl.NewInterp()
		os.Unsetenv("TCL_LIBRARY")
	})
	if in != nil || err != nil {
		return in, err
	}
	return tcl.NewInterp()
}

// where returns the file and line of the command being run while loading,
// and the command's text.
func (e *Engine) where() (file string, line int, cmd string) {
	if len(e.files) > 0 {
		file = e.files[len(e.files)-1]
	}
	line, cmd = e.tcl.frame()
	return file, line, cmd
}

// loadError records an error found by a command while a script loads,
// placed at the command's line, and returns it for Tcl.
func (e *Engine) loadError(err error) error {
	if e.loadErr == nil {
		file, line, _ := e.where()
		e.loadErr = &ScriptError{File: file, Line: line, Msg: err.Error()}
	}
	return err
}

// cmdSource implements `source FILE` for files under the engine's folder:
// the file is read here and evaluated in the sandbox at global level.
func (e *Engine) cmdSource(args []string) (string, error) {
	if len(args) != 1 {
		return "", errors.New(`wrong # args: should be "source fileName"`)
	}
	if e.active {
		return "", errors.New("source: only while scripts load, not in an annotation body")
	}
	path, err := e.inside(args[0])
	if err != nil {
		return "", e.loadError(err)
	}
	abs, _ := filepath.Abs(path) // inside resolved its links
	if i := slices.Index(e.paths, abs); i >= 0 {
		return "", e.loadError(fmt.Errorf("source %s: %s is already being loaded (%s sources %s), and sourcing it again would never end",
			args[0], e.files[i], strings.Join(e.files[i:], " sources "), args[0]))
	}
	b, err := infile.Read(path, infile.Script)
	if err != nil {
		return "", e.loadError(fmt.Errorf("source: %v", err))
	}
	if err := e.loadScript(args[0], path, string(b)); err != nil {
		var se *ScriptError
		if e.loadErr == nil && errors.As(err, &se) {
			e.loadErr = se
		}
		return "", err
	}
	return "", nil
}

// inside resolves name against the engine's folder and refuses anything
// that leaves it, symbolic links included.
func (e *Engine) inside(name string) (string, error) {
	if e.dir == "" {
		return "", fmt.Errorf("source %s: no folder is open to scripts", name)
	}
	root, err := filepath.Abs(e.dir)
	if err != nil {
		return "", fmt.Errorf("source %s: %v", name, err)
	}
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return "", fmt.Errorf("source %s: %v", name, err)
	}
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	if p, err := filepath.EvalSymlinks(path); err == nil {
		path = p
	}
	rel, err := filepath.Rel(root, filepath.Clean(path))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("source %s: %s lies outside the scripts' folder %s", name, filepath.Clean(path), root)
	}
	return path, nil
}

// cmdPuts implements `puts ?-nonewline? ?channelId? string` into Output.
func (e *Engine) cmdPuts(args []string) (string, error) {
	nl := true
	if len(args) > 1 && args[0] == "-nonewline" {
		nl = false
		args = args[1:]
	}
	switch {
	case len(args) == 2 && (args[0] == "stdout" || args[0] == "stderr"):
		args = args[1:]
	case len(args) == 2:
		return "", fmt.Errorf("can not find channel named %q", args[0])
	case len(args) != 1:
		return "", errors.New(`wrong # args: should be "puts ?-nonewline? ?channelId? string"`)
	}
	n := len(args[0])
	if nl {
		n++
	}
	if e.out.Len()+n > e.opt.Output {
		return "", fmt.Errorf("puts: the annotations' output would pass its cap of %s (%d bytes printed so far, %d more asked for); print less, or gather values with bucket",
			bytesText(int64(e.opt.Output)), e.out.Len(), n)
	}
	e.out.WriteString(args[0])
	if nl {
		e.out.WriteByte('\n')
	}
	e.goBytes += int64(n)
	return "", nil
}
