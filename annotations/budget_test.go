package annotations_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"simkron/annotations"
	"simkron/machine"
)

// A script that never ends stops at its budget with its file, line and
// the command it was running, whether it loops running commands (the
// command budget) or running none (the host-time bound), while loading or
// in a body.
func TestBudgetStopsRunawayScripts(t *testing.T) {
	opt := annotations.Options{Commands: 100_000, Time: 200 * time.Millisecond}
	for _, tc := range []struct {
		name, text string
		line       int
		what       string // the annotation, "" while loading
		msg        string
	}{
		{"load, commands", "set a 1\nwhile 1 {\n\tincr a\n}\n", 2, "", `the script ran more than 100000 Tcl commands (while running "while 1 {")`},
		{"load, no command", "# nothing\n\nwhile 1 {}\n", 3, "", "the script ran for more than 200ms of host time"},
		{"body, commands", "annotation set pc ip_rcv:START {\n\tset x 0\n\twhile 1 { incr x }\n}\n", 3, "pc ip_rcv:START", `the body ran more than 100000 Tcl commands (while running "while 1 { incr x }")`},
		{"body, no command", "annotation set pc udp_sendmsg:END {\n\twhile 1 {}\n}\n", 2, "pc udp_sendmsg:END", "the body ran for more than 200ms of host time"},
		{"body, in a proc", "proc spin {} { while 1 { set y 1 } }\nannotation set pc ip_rcv:END {\n\tset z 1\n\tspin\n}\n", 4, "pc ip_rcv:END", `more than 100000 Tcl commands (while running "set y 1 ")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := machine.New(loadUDP(t, []int{64}, 1), machine.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			e, err := annotations.New(r.AnnotationTarget(), script("spin.tcl", tc.text), opt)
			if tc.what == "" {
				checkBudgetError(t, err, tc.line, tc.what, tc.msg)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			if err := e.Install(); err != nil {
				t.Fatal(err)
			}
			mopt := machine.Options{Abort: e.Err}
			res, err := r.Execute(mopt)
			if err != nil {
				t.Fatal(err)
			}
			checkBudgetError(t, e.Err(), tc.line, tc.what, tc.msg)
			// The run stops at the error; what it measured so far is kept,
			// marked incomplete.
			if res.Complete || !strings.Contains(res.Incomplete, "annotation budget exceeded") || len(res.Hosts) != 2 {
				t.Errorf("result complete=%v %q", res.Complete, res.Incomplete)
			}
		})
	}
}

func checkBudgetError(t *testing.T, err error, line int, what, msg string) {
	t.Helper()
	var se *annotations.ScriptError
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T), want a *ScriptError", err, err)
	}
	if se.File != "spin.tcl" || se.Line != line || se.Annotation != what ||
		!strings.HasPrefix(se.Msg, "annotation budget exceeded: ") || !strings.Contains(se.Msg, msg) {
		t.Errorf("error %q (line %d, annotation %q), want spin.tcl:%d %q: ...%s...", se.Error(), se.Line, se.Annotation, line, what, msg)
	}
}
