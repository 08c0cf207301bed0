package annotations

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"modernc.org/tcl"
)

// Tcl return codes.
const (
	tclOK    = 0
	tclError = 1
)

// removed are commands of Tcl's safe interpreter that scripts do not get:
// they read host time or wait on the host's event loop, which would make
// output depend on the host. The safe interpreter already hides exec,
// open, socket, cd, file, glob, load, exit, source and their kin.
var removed = []string{"after", "vwait", "update", "clock", "time", "pid"}

// command is a Go command the sandbox sees under name.
type command struct {
	name string
	fn   func(e *Engine, args []string) (string, error)
}

var commands = []command{
	{"annotation", (*Engine).cmdAnnotation},
	{"source", (*Engine).cmdSource},
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
// which reaches the Go commands only through aliases.
func (e *Engine) newInterp() error {
	in, err := newTclInterp()
	if err != nil {
		return err
	}
	e.in = in
	if _, err := in.NewCommand("::simkron::text", func(_ any, in *tcl.Interp, _ []string) int {
		in.SetResult(e.pending)
		return tclOK
	}, nil, nil); err != nil {
		return err
	}
	setup := []string{
		"interp create -safe sandbox",
		"sandbox eval {namespace eval ::simkron {variable body; variable src; variable msg; variable opts}}",
		// Each load and each body run starts with a fresh budget: so many
		// more commands, and so much host time from now.
		fmt.Sprintf(`proc ::simkron::limit {} {
	interp limit sandbox commands -value [expr {[sandbox eval {info cmdcount}] + %d}]
	set ms [expr {[clock milliseconds] + %d}]
	interp limit sandbox time -seconds [expr {$ms / 1000}] -milliseconds [expr {$ms %% 1000}]
}`, e.opt.Commands, max(e.opt.Time.Milliseconds(), 1)),
	}
	for _, c := range removed {
		setup = append(setup, "sandbox hide "+c)
	}
	for _, c := range commands {
		fn := c.fn
		if _, err := in.NewCommand("::simkron::"+c.name, func(_ any, in *tcl.Interp, args []string) int {
			res, err := fn(e, args[1:])
			if err != nil {
				in.SetResult(err.Error())
				return tclError
			}
			in.SetResult(res)
			return tclOK
		}, nil, nil); err != nil {
			return err
		}
		setup = append(setup, fmt.Sprintf("interp alias sandbox %s {} ::simkron::%s", c.name, c.name))
	}
	for _, s := range setup {
		if _, err := in.Eval(s); err != nil {
			return fmt.Errorf("%s: %v", s, err)
		}
	}
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

// frameLine finds, from inside an aliased command, the line of the
// command being run in the script being loaded and that command's text:
// the innermost frame of type eval (the command itself, or the call site
// of the proc it is in). The query's own two frames are skipped.
const frameLine = `sandbox eval {apply {{} {
	set n [info frame]
	for {set i [expr {$n - 2}]} {$i >= 1} {incr i -1} {
		set f [info frame $i]
		if {[dict get $f type] eq "eval" && [dict exists $f line]} {
			return "[dict get $f line] [dict get $f cmd]"
		}
	}
	return 0
}}}`

// where returns the file and line of the command being run while loading,
// and the command's text.
func (e *Engine) where() (file string, line int, cmd string) {
	if len(e.files) > 0 {
		file = e.files[len(e.files)-1]
	}
	r, err := e.in.Eval(frameLine)
	if err != nil {
		return file, 0, ""
	}
	l, cmd, _ := strings.Cut(r, " ")
	line, _ = strconv.Atoi(l)
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
	b, err := os.ReadFile(path)
	if err != nil {
		return "", e.loadError(fmt.Errorf("source: %v", err))
	}
	if err := e.load(args[0], string(b)); err != nil {
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
	e.out.WriteString(args[0])
	if nl {
		e.out.WriteByte('\n')
	}
	return "", nil
}
