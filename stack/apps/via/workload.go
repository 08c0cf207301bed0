package via

import (
	"fmt"
	"sort"

	"simkron/sim"
	"simkron/stack/apps/compare"
	"simkron/stack/apps/latency"
	mvia "simkron/stack/via"
	"simkron/workload"
)

func init() {
	compare.Register(compare.Series[Params]{
		Name:         "via",
		Help:         "VIA echo latency over a series of message sizes (M-VIA's vpingpong over the VIPL): send and receive cycles by layer per size; the compare workload sets it beside UDP and TCP",
		ProtocolHelp: "VIA through the VIPL (VipPostSend/VipRecvWait), M-VIA's agent on the hosts' cards ([workload.via]'s slots, reliability)",
		Default:      DefaultParams,
		Common:       func(p *Params) *latency.Params { return &p.Params },
		Protocol:     newProtocol,
		InTurn:       true,
	})
}

// Params configures the VIA series: [workload.via].
type Params struct {
	latency.Params
	Slots       int    `toml:"slots" min:"1" max:"256" help:"receive descriptors each program keeps posted (vpingpong pre-posts its receives; a message that finds none is dropped, or breaks a reliable connection)"`
	Reliability string `toml:"reliability" help:"the VIs' reliability level: \"unreliable\" (VIA's native level on Ethernet) or \"reliable\" (reliable delivery: a lost or unexpected message breaks the connection)"`
}

// DefaultParams measures the Linux/SimOS study's sizes without a full
// frame's size (docs/reference/via.md sec. 5: up to 32 KB, M-VIA's data
// buffer) with four receives posted.
func DefaultParams() Params {
	return Params{
		Params: latency.Params{
			Sizes:    latency.StudySizes(0),
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
	return nil
}

// findHost returns the host called name as the series sees it (its kernel,
// its first card, its Internet protocols when it has them) and its VIA
// agent; a host without an agent is an error wrapping
// compare.ErrUnsupported.
func findHost(env workload.Env, role, name string) (*latency.Endpoint, *mvia.Agent, error) {
	h, err := latency.FindCardHost(env, role, name)
	if err != nil {
		return nil, nil, err
	}
	wh, _ := env.Host(name)
	a, ok := workload.Find[*mvia.Agent](wh)
	if !ok {
		return nil, nil, fmt.Errorf("%s: %w: host %q runs no VIA agent on a card (its machine file needs [via] enabled = true)", role, compare.ErrUnsupported, name)
	}
	return h, a, nil
}

// newProtocol finds the hosts of p and their agents.
func newProtocol(env workload.Env, p Params) (latency.Protocol, *[2]*latency.Endpoint, error) {
	client, ca, err := findHost(env, "client", p.Client)
	if err != nil {
		return nil, nil, err
	}
	server, sa, err := findHost(env, "server", p.Server)
	if err != nil {
		return nil, nil, err
	}
	if client.Name == server.Name {
		return nil, nil, fmt.Errorf("server: the client and the server must be different hosts")
	}
	for _, h := range []*latency.Endpoint{client, server} {
		h.Kernel.Symbols().Define(defSend)
		h.Kernel.Symbols().Define(defRecv)
	}
	return &Protocol{p: p, agents: map[string]*mvia.Agent{client.Name: ca, server.Name: sa}}, &[2]*latency.Endpoint{client, server}, nil
}

// Section is the protocol's result beside the series' rows, under the
// name "vpingpong": what the programs counted and each host's agent
// counters.
func (tr *Protocol) Section() workload.Section {
	sec := SectionValue{Programs: tr.stats}
	var hosts []string
	for h := range tr.agents {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	for _, h := range hosts {
		sec.Agents = append(sec.Agents, AgentStats{Host: h, Stats: tr.agents[h].Stats()})
	}
	return workload.Section{Name: "vpingpong", Value: sec}
}
