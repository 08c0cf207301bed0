package annotations

import (
	"slices"
	"strings"
	"time"

	"modernc.org/libc"
	"modernc.org/tcl"
	lib "modernc.org/tcl/lib"
)

// Sandbox is what e's sandbox holds, read from the master: every command
// of every namespace (walked recursively), the hidden commands, the
// aliases and the global variables, each sorted.
type Sandbox struct {
	Commands, Hidden, Aliases, Globals []string
}

func Inspect(e *Engine) (Sandbox, error) {
	var s Sandbox
	var err error
	e.call(func() {
		for _, q := range []struct {
			script string
			out    *[]string
		}{
			{"::simkron::commands ::", &s.Commands},
			{"sandbox hidden", &s.Hidden},
			{"interp aliases sandbox", &s.Aliases},
			{"sandbox eval {info globals}", &s.Globals},
		} {
			var r string
			if r, err = e.in.Eval("join [" + q.script + "] \\n"); err != nil {
				return
			}
			*q.out = strings.Split(r, "\n")
			if r == "" {
				*q.out = nil
			}
			slices.Sort(*q.out)
		}
	}, time.Minute, limitTime)
	return s, err
}

// Commands lists the commands the engine adds to the sandbox, sorted.
func Commands() []string {
	out := []string{"source"}
	for _, c := range commands {
		out = append(out, c.name)
	}
	slices.Sort(out)
	return out
}

// AddPanicCommand gives e's sandbox a command `tclpanic` that calls
// Tcl_Panic, as Tcl does where it cannot go on.
func AddPanicCommand(e *Engine) error {
	var err error
	e.call(func() {
		if _, err = e.in.NewCommand("::simkron::tclpanic", func(_ any, in *tcl.Interp, _ []string) int {
			msg, _ := libc.CString("cannot go on: %s")
			arg, _ := libc.CString("a test")
			va := libc.VaList(in.TLS().Alloc(16), arg)
			lib.XTcl_Panic(in.TLS(), msg, va)
			return tclOK
		}, nil, nil); err != nil {
			return
		}
		_, err = e.in.Eval("interp alias sandbox tclpanic {} ::simkron::tclpanic")
	}, time.Minute, limitTime)
	return err
}
