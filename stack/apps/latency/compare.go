package latency

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"simkron/report/shape"
	"simkron/sim"
	"simkron/stack/kernel"
	"simkron/workload"
)

// TransportType is a protocol path the compare workload can run: a name
// ("udp"), the port and timeout its sweep uses, and how to make its
// Transport for a sweep with parameters p (its own settings at their
// defaults). A protocol package registers its type with
// RegisterTransport in an init function.
type TransportType struct {
	Name    string
	Help    string
	Port    uint16
	Timeout sim.Time
	New     func(env workload.Env, p Params) (Transport, error)
	compat  compat
}

var transports = map[string]*TransportType{}

// ErrUnsupported, wrapped with the reason, is what a TransportType's New
// returns when the hosts cannot run its path (no such card or agent):
// compare leaves the path out and says why.
var ErrUnsupported = errors.New("not supported by these hosts")

// RegisterTransport adds a protocol path; a name taken twice is a
// simulator bug.
func RegisterTransport(t TransportType) {
	if _, dup := transports[t.Name]; dup {
		panic(fmt.Sprintf("latency: transport %q registered twice", t.Name))
	}
	transports[t.Name] = &t
}

// PathOrder is the order of the protocol paths the comparison runs by
// default, as the Linux/SimOS study sets them; paths not listed follow,
// sorted by name.
var PathOrder = []string{"udp", "tcp", "tp4", "via"}

// Transports returns the registered protocol paths' names, in PathOrder.
func Transports() []string {
	var out []string
	for n := range transports {
		out = append(out, n)
	}
	rank := func(n string) int {
		if i := slices.Index(PathOrder, n); i >= 0 {
			return i
		}
		return len(PathOrder)
	}
	sort.Slice(out, func(i, j int) bool {
		if ri, rj := rank(out[i]), rank(out[j]); ri != rj {
			return ri < rj
		}
		return out[i] < out[j]
	})
	return out
}

func init() {
	udp, tcp := DefaultUDPParams(), DefaultTCPParams()
	RegisterTransport(TransportType{Name: "udp", Help: "UDP/IP through sendto/recvfrom", Port: udp.Port, Timeout: udp.Timeout, compat: udpCompat,
		New: func(_ workload.Env, p Params) (Transport, error) { return UDP{UDPParams{p}}, nil }})
	RegisterTransport(TransportType{Name: "tcp", Help: "TCP/IP through send/recv, TCP_NODELAY", Port: tcp.Port, Timeout: tcp.Timeout,
		New: func(_ workload.Env, p Params) (Transport, error) {
			d := DefaultTCPParams()
			d.Params = p
			return TCP{d}, nil
		}})
	workload.Register(workload.Type{
		Name:   "compare",
		Help:   "the request/response sweep over several protocol paths on the same hosts, side by side with factors against a baseline",
		Params: func() any { p := DefaultCompareParams(); return &p },
		Hosts: func(params any) []workload.HostRef {
			p := params.(*CompareParams)
			return []workload.HostRef{{Key: "client", Name: p.Client}, {Key: "server", Name: p.Server}}
		},
		New: newCompare,
	})
}

// CompareParams configures the compare workload: [workload.compare].
type CompareParams struct {
	Client    string   `toml:"client" help:"host that sends each message and waits for its echo"`
	Server    string   `toml:"server" help:"host that echoes each message"`
	Protocols []string `toml:"protocols" help:"protocol paths, run in order on the same hosts: udp, tcp, and any other registered (simkron params lists them)"`
	Baseline  string   `toml:"baseline" help:"the protocol the factors are against (default: the first)"`
	Sizes     []int    `toml:"sizes" min:"4" max:"1048576" help:"message sizes in bytes"`
	Messages  int      `toml:"messages" min:"1" max:"1000000" help:"measured round trips per size"`
	Warmup    int      `toml:"warmup" min:"0" max:"1000" help:"round trips per size before measuring"`
}

// StudySizes are the Linux/SimOS study's message sizes.
var StudySizes = []int{4, 16, 64, 256, 1024, 1460, 2048, 4096, 8192, 16384, 32768}

// DefaultCompareParams compares UDP and TCP over the study's sizes.
func DefaultCompareParams() CompareParams {
	return CompareParams{Protocols: []string{"udp", "tcp"}, Sizes: slices.Clone(StudySizes), Messages: 20, Warmup: 2}
}

// Validate checks the protocols.
func (p CompareParams) Validate() error {
	if len(p.Protocols) == 0 {
		return fmt.Errorf("protocols: name at least one")
	}
	seen := map[string]bool{}
	for _, name := range p.Protocols {
		if transports[name] == nil {
			return fmt.Errorf("protocols: %q is not a protocol path (known: %s)", name, strings.Join(Transports(), ", "))
		}
		if seen[name] {
			return fmt.Errorf("protocols: %q twice", name)
		}
		seen[name] = true
	}
	if p.Baseline != "" && !seen[p.Baseline] {
		return fmt.Errorf("baseline: %q is not among the protocols", p.Baseline)
	}
	return nil
}

func newCompare(env workload.Env, params any) (workload.Workload, error) {
	p := *params.(*CompareParams)
	hs, err := Pair(env, [2]string{"client", "server"}, [2]string{p.Client, p.Server})
	if err != nil {
		return nil, err
	}
	w := &compare{p: p, sweeps: sweeps{oneThread: true}}
	for _, name := range p.Protocols {
		tt := transports[name]
		common := Params{Client: p.Client, Server: p.Server, Sizes: p.Sizes, Messages: p.Messages, Warmup: p.Warmup,
			Port: tt.Port, Timeout: tt.Timeout}
		tr, err := tt.New(env, common)
		if errors.Is(err, ErrUnsupported) && name != p.Baseline {
			w.skipped = append(w.skipped, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("protocols: %s: %w", name, err)
		}
		s, err := newSweep(common, tr, tt.compat, hs[0], hs[1])
		if err != nil {
			return nil, fmt.Errorf("protocols: %s: %w", name, err)
		}
		w.runs = append(w.runs, s)
		w.names = append(w.names, name)
	}
	if len(w.runs) == 0 {
		return nil, fmt.Errorf("protocols: the hosts support none of them (%s)", strings.Join(w.skipped, "; "))
	}
	return w, nil
}

// compare is the compare workload: the sweeps, one after another on the
// client's thread, and their comparison.
type compare struct {
	p CompareParams
	sweeps
	names   []string // of the paths run, as registered
	skipped []string // the paths left out, each with why
}

var _ workload.Workload = (*compare)(nil)

func (w *compare) Start() { w.sweeps.Start() }

func (w *compare) Result() (workload.Result, error) {
	res := w.sections()
	f := &res.Figures
	for _, s := range w.runs {
		f.Tables = append(f.Tables, s.Table())
	}
	f.Tables = append(f.Tables, w.layers(shape.Send), w.layers(shape.Receive), w.factors())
	f.Bars = append(f.Bars, w.bars())
	if len(w.skipped) > 0 {
		f.Text = "Not run, the hosts cannot:\n  " + strings.Join(w.skipped, "\n  ") + "\n"
	}
	return res, nil
}

// baseline returns the sweep the factors are against.
func (w *compare) baseline() *Sweep {
	if i := slices.Index(w.names, w.p.Baseline); i >= 0 {
		return w.runs[i]
	}
	return w.runs[0]
}

// factors sets each protocol's median send and receive latency and round
// trip beside the baseline's: factor = baseline / protocol, above 1 when
// the protocol is faster.
func (w *compare) factors() shape.Table {
	base := w.baseline()
	t := shape.Table{
		Title: fmt.Sprintf("protocols side by side (median cycles; round trip in us; factor = %s / protocol, above 1 when faster)", base.info.Name),
		Columns: append(shape.Cols("size", "protocol", "send", "recv"), shape.Column{Name: "rtt", Unit: "us"},
			shape.Column{Name: "send factor"}, shape.Column{Name: "recv factor"}, shape.Column{Name: "rtt factor"}),
	}
	ratio := func(a, b float64) string {
		if a <= 0 || b <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", a/b)
	}
	for i, size := range w.p.Sizes {
		b := base.rows[i]
		for _, s := range w.runs {
			r := s.rows[i]
			t.Rows = append(t.Rows, []string{fmt.Sprint(size), s.info.Name,
				fmt.Sprintf("%.0f", r.Send.Median), fmt.Sprintf("%.0f", r.Receive.Median), fmt.Sprintf("%.1f", r.RTTMicros),
				ratio(b.Send.Median, r.Send.Median), ratio(b.Receive.Median, r.Receive.Median), ratio(b.RTTMicros, r.RTTMicros)})
		}
	}
	return t
}

// layers sets the protocols' mean cycles by layer in direction dir side
// by side: a row per size and protocol, a column for every layer any of
// them has ("-" where a protocol never has it).
func (w *compare) layers(dir string) shape.Table {
	var bs []shape.Breakdown
	var has [][]string
	var all []string
	for _, s := range w.runs {
		b := shape.Breakdown{Direction: dir, Points: make([]shape.Point, len(w.p.Sizes))}
		for _, sb := range s.Breakdowns() {
			if sb.Direction == dir {
				b = sb
			}
		}
		bs = append(bs, b)
		has = append(has, b.LayerNames())
		for _, l := range has[len(has)-1] {
			if !slices.Contains(all, l) {
				all = append(all, l)
			}
		}
	}
	shape.SortLayers(all)
	t := shape.Table{Title: fmt.Sprintf("%s by layer, protocols side by side (mean cycles per message)", dir),
		Columns: shape.Cols(append(append([]string{"size", "protocol"}, all...), "total")...)}
	for i, size := range w.p.Sizes {
		for j, s := range w.runs {
			p := bs[j].Points[i]
			row := []string{fmt.Sprint(size), s.info.Name}
			var total float64
			for _, l := range all {
				if !slices.Contains(has[j], l) {
					row = append(row, "-")
					continue
				}
				total += p.Cycles(l)
				row = append(row, fmt.Sprintf("%.0f", p.Cycles(l)))
			}
			t.Rows = append(t.Rows, append(row, fmt.Sprintf("%.0f", total)))
		}
	}
	return t
}

// bars draws the protocols' send and receive latencies by layer side by
// side for each size, as the Linux/SimOS study's figures do.
func (w *compare) bars() shape.Bars {
	var names []string
	for _, s := range w.runs {
		names = append(names, s.info.Name)
	}
	c := shape.Bars{Name: "compare",
		Caption: "Mean cycles of each layer, stacked, for each message size: the protocols side by side (left to right " + strings.Join(names, ", ") + "), send and receive."}
	for _, dir := range []string{shape.Send, shape.Receive} {
		bp := shape.BarPlot{Title: dir + ": " + strings.Join(names, " | "), XLabel: "message size (bytes)", YLabel: "cycles per message"}
		for _, size := range w.p.Sizes {
			bp.Categories = append(bp.Categories, fmt.Sprint(size))
		}
		for _, s := range w.runs {
			g := shape.BarGroup{Label: s.info.Name}
			for _, b := range s.Breakdowns() {
				if b.Direction != dir {
					continue
				}
				for _, layer := range b.LayerNames() {
					part := shape.BarStack{Label: layer}
					for _, pt := range b.Points {
						part.Values = append(part.Values, pt.Cycles(layer))
					}
					g.Parts = append(g.Parts, part)
				}
			}
			bp.Groups = append(bp.Groups, g)
		}
		c.Plots = append(c.Plots, bp)
	}
	return c
}

// spawnOneThread runs every sweep's client in turn on one thread of the
// client host, each server on a thread of its own.
func spawnOneThread(runs []*Sweep) {
	server, client := runs[0].ends[1].Host, runs[0].ends[0].Host
	for _, s := range runs {
		server.Kernel.Spawn(s.name()+"echo", s.Serve)
	}
	client.Kernel.Spawn("sweep", func(t *kernel.Thread) {
		for _, s := range runs {
			s.Client(t)
		}
	})
}
