package latency

import (
	"fmt"

	"simkron/report/shape"
	"simkron/stack/kernel"
	"simkron/workload"
)

func init() {
	workload.Register(workload.Type{
		Name:   "udp",
		Help:   "UDP echo latency sweep through sockets: send and receive cycles by layer per message size",
		Params: func() any { p := DefaultUDPParams(); return &p },
		Hosts:  func(p any) []workload.HostRef { return routed(p.(*UDPParams).HostRefs()) },
		New: func(env workload.Env, p any) (workload.Workload, error) {
			u := *p.(*UDPParams)
			s, err := newUDP(env, u)
			if err != nil {
				return nil, err
			}
			return &sweeps{runs: []*Sweep{s}}, nil
		},
	})
	workload.Register(workload.Type{
		Name:   "tcp",
		Help:   "TCP echo latency sweep through stream sockets, optionally after the UDP sweep on the same hosts (compare_udp)",
		Params: func() any { p := DefaultTCPParams(); return &p },
		Hosts:  func(p any) []workload.HostRef { return routed(p.(*TCPParams).HostRefs()) },
		Reads: func(p any) []string {
			if p.(*TCPParams).CompareUDP {
				return []string{"udp"}
			}
			return nil
		},
		New: newTCPWorkload,
	})
}

// HostRefs names the sweep's two hosts by their keys, for a
// workload.Type's Hosts: every sweep over a transport has these two, and
// they must be different hosts.
func (p Params) HostRefs() []workload.HostRef { return clientServer(p.Client, p.Server) }

func clientServer(client, server string) []workload.HostRef {
	return []workload.HostRef{{Key: "client", Name: client}, {Key: "server", Name: server, Peer: "client"}}
}

// routed marks the hosts of a sweep over IPv4 (UDP, TCP) as needing a
// route to each other.
func routed(refs []workload.HostRef) []workload.HostRef {
	for i := range refs {
		refs[i].Route = refs[i].Peer != ""
	}
	return refs
}

func newUDP(env workload.Env, p UDPParams) (*Sweep, error) {
	hs, err := Pair(env, [2]string{"client", "server"}, [2]string{p.Client, p.Server})
	if err != nil {
		return nil, err
	}
	return newSweep(p.Params, UDP{p}, udpCompat, hs[0], hs[1])
}

// newTCPWorkload prepares the TCP sweep and, when it asks for the
// comparison, the UDP sweep of [workload.udp] between the same hosts, run
// first on the client's one thread.
func newTCPWorkload(env workload.Env, params any) (workload.Workload, error) {
	p := *params.(*TCPParams)
	hs, err := Pair(env, [2]string{"client", "server"}, [2]string{p.Client, p.Server})
	if err != nil {
		return nil, err
	}
	tcp, err := newSweep(p.Params, TCP{p}, compat{}, hs[0], hs[1])
	if err != nil {
		return nil, err
	}
	if !p.CompareUDP {
		return &sweeps{runs: []*Sweep{tcp}}, nil
	}
	u := *env.Params("udp").(*UDPParams)
	u.Client, u.Server = p.Client, p.Server
	udp, err := newUDP(env, u)
	if err != nil {
		return nil, fmt.Errorf("compare_udp: %w", err)
	}
	return &sweeps{runs: []*Sweep{udp, tcp}, oneThread: true}, nil
}

// Sectioner is a Transport with a result section of its own (its
// programs' or agents' counters), reported after its sweep's rows.
type Sectioner interface {
	Section() workload.Section
}

// sweeps is the udp and tcp workloads: one or more sweeps between the
// same two hosts, in order.
type sweeps struct {
	runs []*Sweep
	// oneThread runs every sweep's client in turn on one thread of the
	// client host, each server on a thread of its own.
	oneThread bool
}

func (w *sweeps) Start() {
	if !w.oneThread {
		for _, s := range w.runs {
			s.Start()
		}
		return
	}
	server, client := w.runs[0].ends[1].Host, w.runs[0].ends[0].Host
	for _, s := range w.runs {
		server.Kernel.Spawn(s.name()+"echo", s.Serve)
	}
	client.Kernel.Spawn("sweep", func(t *kernel.Thread) {
		for _, s := range w.runs {
			s.Client(t)
		}
	})
}

var _ workload.Ender = (*sweeps)(nil)

// Ended reports whether the sweeps are over after a failure: every
// client has ended and one failed. A server may still wait for a client
// that gave up connecting (a TCP connect timed out, a VIA connect
// request): the run ends without it.
func (w *sweeps) Ended() bool {
	failed := false
	for _, s := range w.runs {
		if !s.done {
			return false
		}
		failed = failed || s.failed != ""
	}
	return failed
}

func (w *sweeps) Result() (workload.Result, error) {
	res := w.sections()
	for _, s := range w.runs {
		res.Figures.Tables = append(res.Figures.Tables, s.Table())
		for _, b := range s.Breakdowns() {
			res.Figures.Tables = append(res.Figures.Tables, shape.LayerTable(b))
		}
	}
	if len(w.runs) == 2 {
		res.Figures.Tables = append(res.Figures.Tables, Beside(w.runs[0], w.runs[1]))
	}
	return res, nil
}

// sections returns the result's sections (each sweep's rows), whether it
// is complete, and the breakdowns of every sweep, without tables.
func (w *sweeps) sections() workload.Result {
	var res workload.Result
	for _, s := range w.runs {
		// A run that stopped before the sweep ended: its rows are what
		// was measured by then.
		s.finish()
		name := s.name()
		res.Sections = append(res.Sections, workload.Section{Name: name, Value: s.rows})
		if x, ok := s.tr.(Sectioner); ok {
			res.Sections = append(res.Sections, x.Section())
		}
		if s.failed != "" && res.Incomplete == "" {
			res.Incomplete = name + " sweep: " + s.failed
		}
		res.Figures.Breakdowns = append(res.Figures.Breakdowns, s.Breakdowns()...)
	}
	return res
}
