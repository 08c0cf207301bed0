package compare

import (
	"simkron/stack/apps/latency"
	"simkron/workload"
)

// Series is a protocol's echo series as its package registers it, once,
// with Register: as a workload of its own (type Name, its settings in
// [workload.Name]) and as a protocol the compare workload runs beside the
// others, with the comparison's settings and [workload.Name]'s own.
// P is the protocol's settings, a struct embedding latency.Params.
type Series[P any] struct {
	Name         string
	Help         string // the workload's
	ProtocolHelp string // the protocol's, in the compare workload's list
	Default      func() P
	// Common returns p's settings every series has: its latency.Params.
	Common func(p *P) *latency.Params
	// Routed says the series runs over IPv4: its hosts need a route to
	// each other.
	Routed bool
	// Reads, when set, names the other workloads' sections the workload
	// reads (workload.Type's Reads).
	Reads func(p *P) []string
	// Protocol makes the protocol of the checked settings p on env's
	// hosts. A protocol that finds its hosts itself (their families or
	// agents) returns them, client then server; otherwise the workload
	// finds them with latency.Pair. An error wrapping ErrUnsupported
	// says the hosts cannot run the protocol.
	Protocol func(env workload.Env, p P) (latency.Protocol, *[2]*latency.Endpoint, error)
	// Workload, when set, makes the workload of the series s (tcp's, which
	// may run the UDP series first); by default the series runs alone, its
	// client on a thread of its own (latency.Runs) or, with InTurn, on the
	// client host's one thread as the compare workload runs it
	// (latency.InTurn).
	Workload func(env workload.Env, p P, s *latency.Series) (workload.Workload, error)
	InTurn   bool
}

// Register registers the series s as its workload and as a protocol of
// the compare workload; a name taken twice is a simulator bug.
func Register[P any](s Series[P]) {
	workload.Register(workload.Type{
		Name:   s.Name,
		Help:   s.Help,
		Params: func() any { p := s.Default(); return &p },
		Hosts: func(p any) []workload.HostRef {
			refs := s.Common(p.(*P)).HostRefs()
			if s.Routed {
				refs = latency.Routed(refs)
			}
			return refs
		},
		Reads: func(p any) []string {
			if s.Reads == nil {
				return nil
			}
			return s.Reads(p.(*P))
		},
		New: func(env workload.Env, params any) (workload.Workload, error) { return s.newWorkload(env, *params.(*P)) },
	})
	RegisterProtocol(ProtocolType{Name: s.Name, Help: s.ProtocolHelp,
		New: func(env workload.Env, common latency.Params) (latency.Protocol, latency.Params, error) {
			p := *env.Params(s.Name).(*P)
			own := s.Common(&p)
			*own = common.WithOwn(*own)
			if err := validate(p); err != nil {
				return nil, *own, err
			}
			tr, _, err := s.Protocol(env, p)
			return tr, *own, err
		}})
}

// newWorkload makes the workload of the settings p.
func (s Series[P]) newWorkload(env workload.Env, p P) (workload.Workload, error) {
	if err := validate(p); err != nil {
		return nil, err
	}
	c := s.Common(&p)
	tr, ends, err := s.Protocol(env, p)
	if err != nil {
		return nil, err
	}
	if ends == nil {
		hs, err := latency.Pair(env, [2]string{"client", "server"}, [2]string{c.Client, c.Server})
		if err != nil {
			return nil, err
		}
		ends = &hs
	}
	series, err := latency.NewSeries(*c, tr, ends[0], ends[1])
	if err != nil {
		return nil, err
	}
	switch {
	case s.Workload != nil:
		return s.Workload(env, p, series)
	case s.InTurn:
		return latency.InTurn(series), nil
	}
	return &latency.Runs{Series: []*latency.Series{series}}, nil
}

// validate checks settings that have more to check than their fields'
// bounds, as loading a config does.
func validate(p any) error {
	if v, ok := p.(interface{ Validate() error }); ok {
		return v.Validate()
	}
	return nil
}
