package machine

import (
	"io"

	"simkron/timeline"
	"simkron/trace"
	"simkron/workload"
)

// Timeline starts a trace of the run (simkron run --trace), written to w
// as the run goes, limited to win; Finish ends it once the run has
// ended. A window the run cannot reach (a span from after stop_at, a
// message the workload does not measure) is an error before anything
// runs. Call it after New and before Execute; the run is the same with
// it as without.
func (r *Run) Timeline(w io.Writer, win timeline.Window) (*timeline.Writer, error) {
	marks, err := r.messages(win)
	if err != nil {
		return nil, err
	}
	var hosts []timeline.Host
	for _, h := range r.Hosts {
		hosts = append(hosts, timeline.Host{Name: h.Name, CPU: h.CPU, Components: h.Components()})
	}
	return timeline.New(w, r.Sched, hosts, timeline.Options{Window: win, Marks: marks})
}

// CheckWindow says what Timeline would find wrong with win, before
// anything is written.
func (r *Run) CheckWindow(win timeline.Window) error {
	_, err := r.messages(win)
	return err
}

// messages checks win against the run and returns the marks of the
// workload whose messages the trace shows: the first that measures the
// window's message, or for a window of time the first that measures
// messages at all (nil when none does).
func (r *Run) messages(win timeline.Window) (*trace.Source[workload.Mark], error) {
	var kinds []workload.MessageKind
	var marks *trace.Source[workload.Mark]
	found := false
	for _, wl := range r.Workloads {
		m, ok := wl.(workload.Messages)
		if !ok {
			continue
		}
		ks := m.MessageKinds()
		kinds = append(kinds, ks...)
		if marks == nil || win.Message != nil && !found && win.Check(r.Exp.Info.StopAt, ks) == nil {
			marks = m.Marks()
			found = win.Message != nil && win.Check(r.Exp.Info.StopAt, ks) == nil
		}
	}
	if err := win.Check(r.Exp.Info.StopAt, kinds); err != nil {
		return nil, err
	}
	return marks, nil
}
