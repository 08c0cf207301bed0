package machine

import (
	"fmt"
	"strings"
	"time"

	"simkron/config"
	"simkron/machine/part"
	"simkron/report"
	"simkron/sim"
	"simkron/workload"
)

// Runs bridged to real hosts: a network that exchanges frames with real
// hosts (part.Paced: Ethernet's [[segment.bridge]], a TAP device) makes
// its run paced to the wall clock (sim.Pacer): simulated time never runs
// ahead of it, and the result is marked non-deterministic. A run without
// one builds no pacer and runs exactly as before. Only simkron run runs a
// bridged experiment: sweep, compare and calibrate refuse one
// (RefuseBridges).

// pacedBudget is the most events a paced run fires between looks at the
// wall clock, its arrivals and a signal: well under a millisecond of the
// host's time.
const pacedBudget = 4096

// RefuseBridges returns an error at the first bridge to real hosts of
// exp, for a command that cannot run a bridged experiment, or nil when
// it has none.
func RefuseBridges(exp *Experiment, command string) error {
	for _, t := range part.Technologies() {
		if t.Refuse == nil {
			continue
		}
		p := t.Refuse(exp.tables(t), command)
		if p == nil {
			continue
		}
		if exp.file == nil {
			return fmt.Errorf("%s", p.Msg)
		}
		return config.Errors{exp.file.Errorf(p.Key, "%s", p.Msg)}
	}
	return nil
}

// Bridged reports whether the run has a bridge to real hosts.
func (r *Run) Bridged() bool { return len(r.Net.paced()) > 0 }

// OpenBridges opens the run's bridges to real hosts (the TAP devices, in
// the calling thread's network namespace) and starts their readers. Its
// errors are the user's environment (no tun driver, no permission, a
// name another device's or in use), found before anything runs, each at
// its key of the experiment file; on an error every one opened is closed
// again.
func (r *Run) OpenBridges() error {
	ps := r.Net.paced()
	if len(ps) == 0 || r.Net.pacer != nil {
		return nil
	}
	inbox := 0
	for _, p := range ps {
		inbox += p.Inbox()
	}
	pacer := sim.NewPacer(r.Sched, inbox)
	for i, p := range ps {
		if err := p.Open(pacer); err != nil {
			for _, o := range ps[:i] {
				o.Close()
			}
			return err
		}
	}
	r.Net.pacer = pacer
	return nil
}

// closeBridges closes the run's bridges.
func (r *Run) closeBridges() {
	for _, p := range r.Net.paced() {
		p.Close()
	}
}

// server returns the run's workload when it is a Server (and then the
// only one), and the simulated time its run is over.
func (r *Run) server() (workload.Server, sim.Time) {
	if len(r.Workloads) != 1 {
		return nil, sim.Never
	}
	s, ok := r.Workloads[0].(workload.Server)
	if !ok {
		return nil, sim.Never
	}
	return s, s.Until()
}

// checkServers refuses a Server among several workloads: it runs until
// stopped, so nothing could follow it.
func (r *Run) checkServers() error {
	if len(r.Workloads) < 2 {
		return nil
	}
	names := append([]string{r.Exp.Workload.Type}, r.Exp.Workload.Then...)
	for i, w := range r.Workloads {
		if _, ok := w.(workload.Server); ok {
			return fmt.Errorf("workload %q serves until the run is stopped and must run alone (it cannot be one of type and then)", names[i])
		}
	}
	return nil
}

// runPaced is Execute's loop for a bridged run: the pacer drives the
// kernel up to stop, and a name on opt.Interrupt (a signal) ends the run
// in order. It returns what interrupted the run ("" if nothing did), and
// the error that aborted it, if any.
func (r *Run) runPaced(opt Options, stop sim.Time) (interrupted string, aborted error) {
	p := r.Net.pacer
	done := make(chan struct{})
	quit := make(chan struct{})
	defer close(quit)
	var why string
	if opt.Interrupt != nil {
		go func() {
			select {
			case why = <-opt.Interrupt:
				close(done)
			case <-quit:
			}
		}()
	}
	p.SetStop(done)
	budget := uint64(pacedBudget)
	if opt.Abort != nil {
		budget = 1 // an annotation's failure stops the run at the next event
	}
	last := time.Now()
	for !r.finished && aborted == nil && p.Step(stop, budget) {
		if opt.Abort != nil {
			aborted = opt.Abort()
		}
		for _, n := range r.Net.paced() {
			if err := n.Err(); err != nil && aborted == nil {
				aborted = err
			}
		}
		if opt.Progress != nil && time.Since(last) > 200*time.Millisecond {
			last = time.Now()
			opt.Progress(r.Sched.Now(), stop)
		}
	}
	select {
	case <-done:
		if !r.finished {
			interrupted = why
		}
	default:
	}
	return interrupted, aborted
}

// serverEnd tells a server workload how the run ended, when it ended
// without finishing: at the server's Until, or interrupted. It marks the
// run finished when that is the server's proper end.
func (r *Run) serverEnd(srv workload.Server, until sim.Time, interrupted string) {
	if srv == nil || r.finished {
		return
	}
	if interrupted == "" && !(until <= r.Exp.Info.StopAt && r.Sched.Next() > until) {
		return // stop_at came first
	}
	if srv.Stopped(interrupted, r.Sched.Now()) {
		r.finished = true
	}
}

// nondeterminism says why a bridged run's result depends on more than
// its config and seed; "" for any other run.
func (r *Run) nondeterminism() string {
	var names []string
	for _, p := range r.Net.paced() {
		names = append(names, p.Nondeterminism()...)
	}
	if len(names) == 0 {
		return ""
	}
	return "bridged to real hosts (" + strings.Join(names, ", ") + "): their frames arrive when the wall clock says, and simulated time was paced to it"
}

// bridgeResults adds the run's bridges and pacing to its result (nothing
// without a bridge).
func (r *Run) bridgeResults(res *report.Result) {
	ps := r.Net.paced()
	if len(ps) == 0 {
		return
	}
	for _, p := range ps {
		p.ReportPaced(res)
	}
	rt := &report.Realtime{TolerancePS: int64(sim.LagTolerance), Interrupted: r.interrupted}
	if p := r.Net.pacer; p != nil {
		ps := p.Stats()
		rt.MaxLagPS, rt.BehindPS = int64(ps.MaxLag), int64(ps.Behind)
		rt.Arrivals, rt.BehindArrivals, rt.MaxInboxWaitPS = ps.Delivered, ps.BehindArrivals, int64(ps.MaxInboxWait)
	}
	res.Realtime = rt
}

// tables returns the experiment's tables of technology t (empty ones when
// the experiment was built in code without them).
func (e *Experiment) tables(t *part.Technology) any {
	if v := e.Networks[t.Name]; v != nil {
		return v
	}
	return t.Tables()
}
