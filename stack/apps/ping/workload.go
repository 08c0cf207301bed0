package ping

import (
	"fmt"
	"strings"

	"simkron/report/shape"
	"simkron/stack/inet"
	"simkron/stack/kernel"
	"simkron/workload"
)

func init() {
	workload.Register(workload.Type{
		Name:   "ping",
		Help:   "ICMP echo requests from one host to another, timed from sendto() to the reply",
		Params: func() any { p := DefaultParams(); return &p },
		Hosts: func(params any) []workload.HostRef {
			p := params.(*Params)
			return []workload.HostRef{{Key: "from", Name: p.From}, {Key: "to", Name: p.To, Peer: "from", Route: true}}
		},
		New: func(env workload.Env, params any) (workload.Workload, error) {
			p := *params.(*Params)
			var ks [2]*kernel.Kernel
			var ins [2]*inet.Stack
			for i, role := range []string{"from", "to"} {
				name := [2]string{p.From, p.To}[i]
				h, err := env.Host(name)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", role, err)
				}
				ks[i], _ = workload.Find[*kernel.Kernel](h)
				var ok bool
				if ins[i], ok = workload.Find[*inet.Stack](h); !ok {
					return nil, fmt.Errorf("host %q has no card with an IP address", name)
				}
			}
			return New(p, ks[0], ins[0], ins[1].Addr()), nil
		},
	})
}

// Result returns the summary and its text, as ping(8) prints it.
func (pr *Program) Result() (workload.Result, error) {
	p := pr.res
	var b strings.Builder
	fmt.Fprintf(&b, "PING %s -> %s: %d data bytes\n", p.From, p.To, p.Size)
	for _, rp := range p.Replies {
		if rp.OK {
			fmt.Fprintf(&b, "  icmp_seq=%d time=%.1f us\n", rp.Seq, rp.RTTMicro)
		} else {
			fmt.Fprintf(&b, "  icmp_seq=%d no reply\n", rp.Seq)
		}
	}
	fmt.Fprintf(&b, "  %d sent, %d received, %d bad; rtt min/avg/max = %.1f/%.1f/%.1f us\n",
		p.Sent, p.Received, p.Bad, p.MinRTTMicro, p.AvgRTTMicro, p.MaxRTTMicro)
	return workload.Result{
		Sections: []workload.Section{{Name: "ping", Value: p}},
		Figures:  shape.Figures{Text: b.String()},
	}, nil
}
