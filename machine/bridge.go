package machine

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"simkron/config"
	"simkron/ethersim"
	"simkron/report"
	"simkron/sim"
	"simkron/workload"
)

// Bridges to real hosts: a [[segment.bridge]] joins its segment to a
// Linux TAP device (ethersim.Bridge), so that a real host on the TAP's
// side reaches the simulated hosts and they reach it. A run with a bridge
// is paced to the wall clock (sim.Pacer): its simulated time never runs
// ahead of it, and it is marked non-deterministic in its result. A run
// without one builds no bridge and no pacer and runs exactly as before.
//
// New builds a bridge without its TAP; OpenBridges opens the TAPs (the
// one step that touches the host's network, and whose failures are the
// user's environment: no device, no permission, a name taken). Only
// simkron run runs a bridged experiment: sweep, compare and calibrate
// refuse one (RefuseBridges).

// BridgeSpec is one [[segment.bridge]]: the TAP device the segment is
// bridged to.
type BridgeSpec struct {
	TAP string `toml:"tap" help:"Linux TAP device the segment is bridged to, in simkron's network namespace (at most 15 characters: letters, digits, '.', '-', '_'); created if absent, which needs CAP_NET_ADMIN; simkron never configures its addresses or routes"`
	ethersim.BridgeParams
}

// SetDefaults fills a new [[segment.bridge]] with a queue of 1000 frames.
func (b *BridgeSpec) SetDefaults() { b.BridgeParams = ethersim.DefaultBridgeParams() }

// Validate checks the TAP's name.
func (b BridgeSpec) Validate() error {
	if err := ethersim.ValidTAPName(b.TAP); err != nil {
		return config.Fieldf("tap", "%v", err)
	}
	return nil
}

// pacerInbox bounds the frames from real hosts waiting for the simulation
// (sim.Pacer's inbox), per bridge: at 10 Mbit/s about a quarter of a
// second of minimum-size frames, beyond which the simulation is too far
// behind to be worth feeding.
const pacerInbox = 4096

// pacedBudget is the most events a paced run fires between looks at the
// wall clock, its arrivals and a signal: well under a millisecond of the
// host's time.
const pacedBudget = 4096

// bridge is one built bridge.
type bridge struct {
	*ethersim.Bridge
	segment, tap string
	// key is its tap key in the experiment file.
	key []string
}

// checkBridges finds what no single key can: a TAP bridged twice, and a
// bridge on an ATM link or switch, which carries cells (checked before
// the file's unknown keys, so that it is said plainly).
func checkBridges(f *config.File, e *Experiment) config.Errors {
	var errs config.Errors
	type where struct {
		segment string
		line    int
	}
	taps := map[string]where{}
	for i, sg := range e.Segments {
		for j, b := range sg.Bridges {
			key := []string{"segment", strconv.Itoa(i), "bridge", strconv.Itoa(j), "tap"}
			if b.TAP == "" {
				continue // Validate said so
			}
			if w, dup := taps[b.TAP]; dup {
				errs = append(errs, f.Errorf(key, "TAP %q is already bridged to segment %q (line %d): one TAP device carries one bridge", b.TAP, w.segment, w.line))
				continue
			}
			taps[b.TAP] = where{sg.Name, f.Line(key...)}
		}
	}
	return errs
}

// bridgesOnATM refuses a bridge table under an ATM link or switch, and
// marks it used so that it is not reported again as an unknown key.
func bridgesOnATM(f *config.File) config.Errors {
	var errs config.Errors
	for _, table := range []string{"atm_link", "atm_switch"} {
		for _, i := range f.Keys(table) {
			if !f.Has(table, i, "bridge") {
				continue
			}
			f.MarkUsed(table, i, "bridge")
			errs = append(errs, f.Errorf([]string{table, i, "bridge"},
				"an ATM %s carries cells, not Ethernet frames, and cannot be bridged: a bridge joins an Ethernet [[segment]] to a TAP device (put it under a [[segment]])", strings.TrimPrefix(table, "atm_")))
		}
	}
	return errs
}

// RefuseBridges returns an error at the first bridge of exp, for a
// command that cannot run a bridged experiment, or nil when it has none.
func RefuseBridges(exp *Experiment, command string) error {
	for i, sg := range exp.Segments {
		if len(sg.Bridges) == 0 {
			continue
		}
		msg := fmt.Sprintf("segment %q is bridged to TAP %s: a bridged run is paced to the wall clock and exchanges frames with real hosts; run it with simkron run (%s cannot)", sg.Name, sg.Bridges[0].TAP, command)
		if exp.file == nil {
			return fmt.Errorf("%s", msg)
		}
		return config.Errors{exp.file.Errorf([]string{"segment", strconv.Itoa(i), "bridge"}, "%s", msg)}
	}
	return nil
}

// addBridges attaches the bridges of seg, the i-th [[segment]], without
// their TAPs.
func (n *Network) addBridges(seg *ethersim.Segment, s SegmentSpec, i int) error {
	for j, b := range s.Bridges {
		br, err := seg.AttachBridge("bridge."+b.TAP, b.BridgeParams)
		if err != nil {
			return fmt.Errorf("segment %q: %w", s.Name, err)
		}
		n.bridges = append(n.bridges, &bridge{Bridge: br, segment: s.Name, tap: b.TAP,
			key: []string{"segment", strconv.Itoa(i), "bridge", strconv.Itoa(j), "tap"}})
	}
	return nil
}

// Bridged reports whether the run has a bridge to real hosts.
func (r *Run) Bridged() bool { return len(r.Net.bridges) > 0 }

// OpenBridges opens the TAP devices of the run's bridges (in the calling
// thread's network namespace) and starts their readers. Its errors are
// the user's environment (no tun driver, no permission, a name another
// device's or in use), found before anything runs, each at its tap key
// of the experiment file; on an error every TAP opened is closed again.
func (r *Run) OpenBridges() error {
	if !r.Bridged() || r.Net.pacer != nil {
		return nil
	}
	taps := make([]*ethersim.TAP, 0, len(r.Net.bridges))
	for _, b := range r.Net.bridges {
		t, err := ethersim.OpenTAP(b.tap)
		if err != nil {
			for _, o := range taps {
				o.Close()
			}
			if f := r.Exp.file; f != nil {
				return config.Errors{f.Errorf(b.key, "%v", err)}
			}
			return fmt.Errorf("segment %q: %w", b.segment, err)
		}
		taps = append(taps, t)
	}
	r.Net.pacer = sim.NewPacer(r.K, pacerInbox*len(r.Net.bridges))
	for i, b := range r.Net.bridges {
		b.Open(taps[i], r.Net.pacer)
	}
	return nil
}

// closeBridges closes the TAPs (a TAP simkron created vanishes).
func (r *Run) closeBridges() {
	for _, b := range r.Net.bridges {
		b.Close()
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
		for _, b := range r.Net.bridges {
			if err := b.ReadErr(); err != nil && aborted == nil {
				aborted = fmt.Errorf("segment %q: the real side was lost: %w", b.segment, err)
			}
		}
		if opt.Progress != nil && time.Since(last) > 200*time.Millisecond {
			last = time.Now()
			opt.Progress(r.K.Now(), stop)
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
	if interrupted == "" && !(until <= r.Exp.Info.StopAt && r.K.Next() > until) {
		return // stop_at came first
	}
	if srv.Stopped(interrupted, r.K.Now()) {
		r.finished = true
	}
}

// nondeterminism says why a bridged run's result depends on more than
// its config and seed; "" for any other run.
func (r *Run) nondeterminism() string {
	if !r.Bridged() {
		return ""
	}
	var names []string
	for _, b := range r.Net.bridges {
		names = append(names, fmt.Sprintf("segment %s to TAP %s", b.segment, b.tap))
	}
	return "bridged to real hosts (" + strings.Join(names, ", ") + "): their frames arrive when the wall clock says, and simulated time was paced to it"
}

// bridgeResults are the run's bridges and pacing for its result (none
// without a bridge).
func (r *Run) bridgeResults() (bridges []report.Bridge, rt *report.Realtime) {
	if !r.Bridged() {
		return nil, nil
	}
	for _, b := range r.Net.bridges {
		st := b.Stats()
		rb := report.Bridge{Segment: b.segment, TAP: b.tap, Read: st.Read, Pending: st.Pending,
			InFrames: st.InFrames, InBytes: st.InBytes, OutFrames: st.OutFrames, OutBytes: st.OutBytes,
			DroppedBehind: st.DroppedBehind, DroppedQueue: st.DroppedQueue, Oversized: st.Oversized, Runts: st.Runts,
			Aborted: st.Aborted, BadFCS: st.BadFCS, WriteErrors: st.WriteErrors, QueuePeak: st.QueuePeak}
		for _, err := range []error{b.ReadErr(), b.WriteErr()} {
			if err != nil && rb.Error == "" {
				rb.Error = err.Error()
			}
		}
		bridges = append(bridges, rb)
	}
	rt = &report.Realtime{TolerancePS: int64(sim.LagTolerance), Interrupted: r.interrupted}
	if p := r.Net.pacer; p != nil {
		ps := p.Stats()
		rt.MaxLagPS, rt.BehindPS = int64(ps.MaxLag), int64(ps.Behind)
		rt.Arrivals, rt.BehindArrivals, rt.MaxInboxWaitPS = ps.Delivered, ps.BehindArrivals, int64(ps.MaxInboxWait)
	}
	return bridges, rt
}
