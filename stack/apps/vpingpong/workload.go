package vpingpong

import (
	"fmt"
	"slices"

	"simkron/report/shape"
	"simkron/sim"
	"simkron/stack/apps/latency"
	"simkron/stack/inet"
	"simkron/stack/kernel"
	"simkron/stack/via"
	"simkron/workload"
)

func init() {
	workload.Register(workload.Type{
		Name:   "via",
		Help:   "VIA latency sweep (M-VIA's vpingpong over the VIPL): send and receive cycles by layer per message size, optionally after the UDP and TCP sweeps on the same hosts with the improvement factors of VIA (compare)",
		Params: func() any { p := DefaultParams(); return &p },
		Hosts: func(p any) []workload.HostRef {
			q := p.(*Params)
			return []workload.HostRef{{Key: "client", Name: q.Client}, {Key: "server", Name: q.Server}}
		},
		New: newWorkload,
	})
}

// Params configures the VIA sweep: [workload.via].
type Params struct {
	latency.Params
	Slots       int      `toml:"slots" min:"1" max:"256" help:"receive descriptors each program keeps posted (vpingpong pre-posts its receives; a message that finds none is dropped, or breaks a reliable connection)"`
	Reliability string   `toml:"reliability" help:"the VIs' reliability level: \"unreliable\" (VIA's native level on Ethernet) or \"reliable\" (reliable delivery: a lost or unexpected message breaks the connection)"`
	Compare     []string `toml:"compare" help:"sweeps to run first between the same hosts, in order (\"udp\", \"tcp\"), each with its own [workload.NAME] settings but this section's client and server; then tables of the three side by side and the improvement factors of VIA below and above the MTU"`
}

// DefaultParams sweeps the Linux/SimOS study's sizes (via.md sec. 5: up
// to 32 KB, M-VIA's data buffer) with four receives posted.
func DefaultParams() Params {
	return Params{
		Params: latency.Params{
			Sizes:    []int{4, 16, 64, 256, 1024, 2048, 4096, 8192, 16384, 32768},
			Messages: 20, Warmup: 2, Port: 7, Timeout: sim.Second, SendSpan: latency.SpanThread,
		},
		Slots: 4, Reliability: "unreliable",
	}
}

// Validate checks what the field bounds cannot.
func (p Params) Validate() error {
	if err := p.Params.Validate(); err != nil {
		return err
	}
	switch p.Reliability {
	case "unreliable", "reliable":
	default:
		return fmt.Errorf("reliability: %q is neither \"unreliable\" nor \"reliable\"", p.Reliability)
	}
	for i, c := range p.Compare {
		if c != "udp" && c != "tcp" {
			return fmt.Errorf("compare: %q is not a sweep to compare with (udp, tcp)", c)
		}
		if slices.Index(p.Compare, c) != i {
			return fmt.Errorf("compare: %q is named twice", c)
		}
	}
	return nil
}

// findHost returns the host called name as the sweep sees it: its kernel,
// its VIA agent, its first card (and its Internet protocols when it has
// them, for the sweeps compared).
func findHost(env workload.Env, role, name string) (*latency.Host, *via.Agent, error) {
	wh, err := env.Host(name)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", role, err)
	}
	k, _ := workload.Find[*kernel.Kernel](wh)
	a, ok := workload.Find[*via.Agent](wh)
	cards := workload.FindAll[latency.Card](wh)
	if k == nil || !ok || len(cards) == 0 {
		return nil, nil, fmt.Errorf("%s: host %q runs no VIA agent on a card (its machine file needs [via] enabled = true)", role, name)
	}
	in, _ := workload.Find[*inet.Stack](wh)
	return &latency.Host{Name: name, Kernel: k, Inet: in, Observe: cards[0].ObserveReceive, Link: latency.LinkEthernet}, a, nil
}

func newWorkload(env workload.Env, params any) (workload.Workload, error) {
	p := *params.(*Params)
	client, ca, err := findHost(env, "client", p.Client)
	if err != nil {
		return nil, err
	}
	server, sa, err := findHost(env, "server", p.Server)
	if err != nil {
		return nil, err
	}
	if client.Name == server.Name {
		return nil, fmt.Errorf("server: the client and the server must be different hosts")
	}
	tr := &Transport{p: p, agents: map[string]*via.Agent{client.Name: ca, server.Name: sa}}
	var runs []*latency.Sweep
	for _, name := range p.Compare {
		s, err := latency.SweepOf(env, name, p.Client, p.Server)
		if err != nil {
			return nil, fmt.Errorf("compare: %s: %w", name, err)
		}
		runs = append(runs, s)
	}
	s, err := latency.NewSweep(p.Params, tr, client, server)
	if err != nil {
		return nil, err
	}
	runs = append(runs, s)
	mtu := ca.Nics()[0].MTU()
	return &study{inner: latency.InTurn(runs...), runs: runs, tr: tr, mtu: mtu}, nil
}

// study is the via workload: the sweeps compared, then VIA's, in turn.
type study struct {
	inner workload.Workload
	runs  []*latency.Sweep // VIA's last
	tr    *Transport
	mtu   int
}

func (w *study) Start() { w.inner.Start() }

// Result is each sweep's result and, with sweeps compared, the study's
// tables and chart after them.
func (w *study) Result() (workload.Result, error) {
	res, err := w.inner.Result()
	sec := Section{Programs: w.tr.stats}
	for _, h := range []string{w.runs[0].Params().Client, w.runs[0].Params().Server} {
		sec.Agents = append(sec.Agents, AgentStats{Host: h, Stats: w.tr.agents[h].Stats()})
	}
	res.Sections = append(res.Sections, workload.Section{Name: "vpingpong", Value: sec})
	if len(w.runs) < 2 {
		return res, err
	}
	v := w.runs[len(w.runs)-1]
	f := &res.Figures
	f.Tables = append(f.Tables, latency.MedianTable(shape.Send, w.runs...), latency.MedianTable(shape.Receive, w.runs...))
	if v.Params().ReceiveBusy {
		f.Tables = append(f.Tables, latency.MedianTable(latency.DirBusy, w.runs...))
	}
	perSize, summary := latency.Factors(w.mtu, v, w.runs[:len(w.runs)-1]...)
	f.Tables = append(f.Tables, perSize, summary)
	f.Charts = append(f.Charts, latency.MedianChart("study", w.runs...))
	return res, err
}
