package annotations

import (
	"fmt"
	"math"
	"strconv"

	"simkron/sim"
)

// Trace is where the scripts' `trace instant NAME` and `trace counter
// NAME V` put their events: the run's timeline (simkron run --trace),
// beside the machine's own. Without one (SetTrace not called, or nil)
// both commands do nothing, so that a script written for traces runs
// without one.
type Trace interface {
	// Instant marks the moment at on host's timeline with name.
	Instant(host, name string, at sim.Time)
	// Counter sets host's counter track name to v at at.
	Counter(host, name string, v float64, at sim.Time)
}

// SetTrace gives the engine the timeline its scripts' trace commands
// write to. Call it before the run.
func (e *Engine) SetTrace(t Trace) { e.timeline = t }

// cmdTrace implements `trace instant NAME` and `trace counter NAME V`,
// at the body's host and time (`now`). Tcl's own trace subcommands
// (add, remove, info) never reach it.
func (e *Engine) cmdTrace(args []string) (string, error) {
	if len(args) == 0 {
		return "", fmt.Errorf(`wrong # args: should be "trace instant NAME" or "trace counter NAME VALUE"`)
	}
	sub := args[0]
	want := 2
	if sub == "counter" {
		want = 3
	}
	if len(args) != want {
		if sub == "counter" {
			return "", fmt.Errorf(`wrong # args: should be "trace counter NAME VALUE"`)
		}
		return "", fmt.Errorf(`wrong # args: should be "trace instant NAME"`)
	}
	p, err := e.here("trace "+sub, nil, 0)
	if err != nil {
		return "", err
	}
	name := args[1]
	if name == "" || len(name) > maxTraceName {
		return "", fmt.Errorf("trace %s: a name of 1 to %d bytes, not %d", sub, maxTraceName, len(name))
	}
	var v float64
	if sub == "counter" {
		v, err = strconv.ParseFloat(args[2], 64)
		if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
			return "", fmt.Errorf("trace counter %s: %q is not a finite number", name, args[2])
		}
	}
	if e.timeline == nil {
		return "", nil
	}
	if sub == "counter" {
		e.timeline.Counter(p.h.v.Name, name, v, p.now)
	} else {
		e.timeline.Instant(p.h.v.Name, name, p.now)
	}
	return "", nil
}

// maxTraceName bounds the name of a trace event a script makes: every
// event carries it.
const maxTraceName = 256
