package latency

import (
	"simkron/report/shape"
	"simkron/stack/kernel"
	"simkron/workload"
)

// HostRefs names the series' two hosts by their keys, for a
// workload.Type's Hosts: every series over a protocol has these two, and
// they must be different hosts.
func (p Params) HostRefs() []workload.HostRef {
	return []workload.HostRef{{Key: "client", Name: p.Client}, {Key: "server", Name: p.Server, Peer: "client"}}
}

// WithOwn returns the comparison's settings p with the port and timeout
// of a protocol's own section: the Params a compare.ProtocolType's New
// returns.
func (p Params) WithOwn(own Params) Params {
	p.Port, p.Timeout = own.Port, own.Timeout
	return p
}

// Routed marks the hosts of a series over IPv4 (UDP, TCP) as needing a
// route to each other.
func Routed(refs []workload.HostRef) []workload.HostRef {
	for i := range refs {
		refs[i].Route = refs[i].Peer != ""
	}
	return refs
}

// Sectioner is a Protocol with a result section of its own (its
// programs' or agents' counters), reported after its series' rows.
type Sectioner interface {
	Section() workload.Section
}

// Runs is a workload of one or more series between the same two hosts,
// in order: the udp and tcp workloads, and what the compare workload
// runs.
type Runs struct {
	Series []*Series
	// OneThread runs every series' client in turn on one thread of the
	// client host, each server on a thread of its own.
	OneThread bool
}

// InTurn returns a workload that runs the series between the same two
// hosts one after another, each client in turn on one thread of the
// client host (each server on a thread of its own from the start), and
// reports each series' section, tables and breakdowns in that order.
func InTurn(runs ...*Series) workload.Workload { return &Runs{Series: runs, OneThread: true} }

// Start starts the series.
func (w *Runs) Start() {
	if !w.OneThread {
		for _, s := range w.Series {
			s.Start()
		}
		return
	}
	server, client := w.Series[0].ends[1].Host, w.Series[0].ends[0].Host
	for _, s := range w.Series {
		server.Kernel.Spawn(s.name()+"echo", s.Serve)
	}
	// The thread keeps the name it had when a series was called a sweep:
	// its name is in every trace.
	client.Kernel.Spawn("sweep", func(t *kernel.Thread) {
		for _, s := range w.Series {
			s.Client(t)
		}
	})
}

var _ workload.Ender = (*Runs)(nil)

// Ended reports whether the series are over after a failure: every
// client has ended and one failed. A server may still wait for a client
// that gave up connecting (a TCP connect timed out, a VIA connect
// request): the run ends without it.
func (w *Runs) Ended() bool {
	failed := false
	for _, s := range w.Series {
		if !s.done {
			return false
		}
		failed = failed || s.failed != ""
	}
	return failed
}

// Result returns each series' section, table and breakdowns, and, for
// two series, their latencies side by side.
func (w *Runs) Result() (workload.Result, error) {
	res := w.Sections()
	for _, s := range w.Series {
		res.Figures.Tables = append(res.Figures.Tables, s.Table())
		for _, b := range s.Breakdowns() {
			res.Figures.Tables = append(res.Figures.Tables, shape.LayerTable(b))
		}
	}
	if len(w.Series) == 2 {
		res.Figures.Tables = append(res.Figures.Tables, Beside(w.Series[0], w.Series[1]))
	}
	return res, nil
}

// Sections returns the result's sections (each series' rows), whether it
// is complete, and the breakdowns of every series, without tables.
func (w *Runs) Sections() workload.Result {
	var res workload.Result
	for _, s := range w.Series {
		// A run that stopped before the series ended: its rows are what
		// was measured by then.
		s.finish()
		name := s.name()
		res.Sections = append(res.Sections, workload.Section{Name: name, Value: s.rows})
		if x, ok := s.tr.(Sectioner); ok {
			res.Sections = append(res.Sections, x.Section())
		}
		if s.failed != "" && res.Incomplete == "" {
			// Results keep the word they had when a series was called a
			// sweep, as the series' table title does.
			res.Incomplete = name + " sweep: " + s.failed
		}
		res.Figures.Breakdowns = append(res.Figures.Breakdowns, s.Breakdowns()...)
	}
	return res
}
