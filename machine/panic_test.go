package machine_test

import (
	"errors"
	"strings"
	"testing"

	"simkron/machine"
	"simkron/sim"
)

// A panic inside the simulation (a simulator bug) does not escape
// Execute: the result so far comes back marked incomplete with the
// reason, and an InternalError holds the stack where the panic began,
// whether it was raised on a simulated context's stack (carried across
// the coroutine) or on the event loop's own.
func TestExecuteRecoversPanics(t *testing.T) {
	for _, tc := range []struct {
		name    string
		at      sim.Time // when the model breaks
		context bool     // on a simulated context's stack
	}{
		{"an event at the start", 0, true},
		{"an event while a thread waits", 2 * sim.Millisecond, true},
		{"the event loop", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := machine.New(smallExperiment(), machine.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var opt machine.Options
			if tc.context {
				r.Sched.Schedule(sim.NewEvent("broken model", func() { brokenModel() }), tc.at)
			} else {
				// Abort is asked on the event loop's stack.
				opt.Abort = func() error { brokenModel(); return nil }
			}
			res, err := r.Execute(opt)
			ie, ok := errors.AsType[*machine.InternalError](err)
			if !ok {
				t.Fatalf("err = %v, want an InternalError", err)
			}
			if res == nil || res.Complete || res.Incomplete != ie.Error() || !strings.HasPrefix(res.Incomplete, "internal error: broken: the model's invariant ...") {
				t.Fatalf("result %+v", res)
			}
			if len(res.Hosts) != 1 || res.SimTimePS != int64(tc.at) {
				t.Errorf("the result so far: %d hosts at %d ps", len(res.Hosts), res.SimTimePS)
			}
			if (ie.Context != "") != tc.context {
				t.Errorf("context %q", ie.Context)
			}
			if first, _, _ := strings.Cut(ie.Stack, "\n"); !strings.HasPrefix(first, "simkron/machine_test.brokenModel (") {
				t.Errorf("the stack does not start where the panic began:\n%s", ie.Stack)
			}
		})
	}
}

// brokenModel stands for a model whose invariant breaks.
func brokenModel() { panic("broken: the model's invariant\nsecond line") }
