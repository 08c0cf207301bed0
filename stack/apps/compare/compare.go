// Package compare is the workload "compare": the echo latency series
// (package latency) over several protocols between the same two
// hosts, one after another, set side by side: the latencies' medians by
// layer, factors against a baseline, and a published study's statements
// checked against the results. A protocol's package registers its series
// (Register: its own workload and its protocol here at once), and a
// study's its statements (RegisterStudy), in an init function. Layer APPL.
package compare

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"simkron/report/shape"
	"simkron/stack/apps/latency"
	"simkron/workload"
)

// ProtocolType is a protocol the compare workload can run. Register
// makes one of each series; RegisterProtocol adds one that is no
// workload of its own (a test's).
type ProtocolType struct {
	Name string // "udp": in protocols lists and [workload.NAME]
	Help string
	// New makes the protocol's latency.Protocol for a series with the comparison's
	// settings p (hosts, sizes, counts, what the latencies count); the
	// protocol's own settings (its port, timeout and the rest) are those of
	// its workload's section [workload.NAME] when it has one, its
	// defaults otherwise. It returns the latency.Protocol and the series'
	// Params: p with the protocol's port and timeout. An error wrapping
	// ErrUnsupported says the hosts cannot run the protocol.
	New func(env workload.Env, p latency.Params) (latency.Protocol, latency.Params, error)
}

// ErrUnsupported, wrapped with the reason, is what a ProtocolType's New
// returns when the hosts cannot run its protocol (no such card, agent or
// socket family): compare leaves the protocol out and says why.
var ErrUnsupported = errors.New("not supported by these hosts")

var protocols = map[string]*ProtocolType{}

// RegisterProtocol adds a protocol; a name taken twice is a
// simulator bug.
func RegisterProtocol(t ProtocolType) {
	if _, dup := protocols[t.Name]; dup {
		panic(fmt.Sprintf("compare: protocol %q registered twice", t.Name))
	}
	protocols[t.Name] = &t
}

// ProtocolOrder is the order of the protocols the comparison runs by
// default: the Linux/SimOS study's three as it sets them, then TP4 (so
// that running it changes none of the study's figures); protocols not listed
// follow, sorted by name.
var ProtocolOrder = []string{"udp", "tcp", "via", "tp4"}

// Protocols returns the registered protocols' names, in ProtocolOrder.
func Protocols() []string {
	var out []string
	for n := range protocols {
		out = append(out, n)
	}
	rank := func(n string) int {
		if i := slices.Index(ProtocolOrder, n); i >= 0 {
			return i
		}
		return len(ProtocolOrder)
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
	workload.Register(workload.Type{
		Name:   "compare",
		Help:   "the request/response echo latency over a series of message sizes for several protocols on the same hosts, side by side: medians by layer, factors against a baseline",
		Params: func() any { p := DefaultParams(); return &p },
		Hosts: func(params any) []workload.HostRef {
			p := params.(*Params)
			// The protocols over IP need the route when both hosts have
			// addresses; those without run only the others.
			return latency.Routed(latency.Params{Client: p.Client, Server: p.Server}.HostRefs())
		},
		// Each protocol's own settings are its workload's section.
		Reads: func(params any) []string { return params.(*Params).Protocols },
		New:   newCompare,
	})
}

// Params configures the compare workload: [workload.compare].
type Params struct {
	Client      string   `toml:"client" help:"host that sends each message and waits for its echo"`
	Server      string   `toml:"server" help:"host that echoes each message"`
	Protocols   []string `toml:"protocols" nonempty:"true" help:"protocols, run in order on the same hosts (default: every registered one, those the hosts cannot run left out with the reason); each protocol's own settings are its [workload.NAME]'s"`
	Baseline    string   `toml:"baseline" help:"the protocol the factors are against (default: VIA when it runs, as the Linux/SimOS study gives VIA's improvement factors over the others; otherwise the first)"`
	Sizes       []int    `toml:"sizes" nonempty:"true" min:"4" max:"1048576" help:"message sizes in bytes"`
	Messages    int      `toml:"messages" min:"1" max:"1000000" help:"measured round trips per size"`
	Warmup      int      `toml:"warmup" min:"0" max:"1000" help:"round trips per size before measuring"`
	SendSpan    string   `toml:"send_span" help:"what a send's latency counts, for every protocol: \"dma\" (the Linux/SimOS study's, the default: until the message has left host memory) or \"thread\" (the call's own cycles); see [workload.udp] send_span"`
	ReceiveSpan string   `toml:"receive_span" help:"what a receive's latency counts, for every protocol: \"dma\" (the Linux/SimOS study's, the default: without the wait for the wire) or \"arrival\" (from the first frame's arrival, every cycle); see [workload.udp] receive_span"`
	Split       int      `toml:"split" min:"0" max:"1048576" help:"the factors' means are over the sizes up to split bytes and over those above it (0: the client's IP MTU, 1500 without IP)"`
	Study       string   `toml:"study" help:"a published study whose statements about these results the report checks against them, each said to hold or not (\"linux-simos\": the Linux/SimOS study's; \"\": none)"`
}

// Study is a published study's statements about the results of a
// comparison (its layer shapes, which protocol is faster where), each
// checked against what the series measured. A protocol package registers
// its study with RegisterStudy.
type Study struct {
	Name   string // "linux-simos": the value of [workload.compare] study
	Source string // where the statements come from, for the report
	// Check returns the statements, each checked against rows: the series'
	// rows by protocol ("udp", "tcp", "via"), any of which may be
	// missing, with the comparison's split between small and large
	// messages.
	Check func(rows map[string][]latency.Row, split int) []Statement
}

// Statement is one published statement and what the model gives.
type Statement struct {
	Claim string // what the study says
	Model string // what the model gives, in figures
	Holds bool
}

var studies = map[string]*Study{}

// RegisterStudy adds a study; a name taken twice is a simulator bug.
func RegisterStudy(s Study) {
	if _, dup := studies[s.Name]; dup {
		panic(fmt.Sprintf("compare: study %q registered twice", s.Name))
	}
	studies[s.Name] = &s
}

// DefaultParams compares every registered protocol over the study's
// sizes, with the study's definitions of the latencies.
func DefaultParams() Params {
	return Params{Protocols: Protocols(), Sizes: latency.StudySizes(latency.FullFrameTCP), Messages: 20, Warmup: 2,
		SendSpan: latency.SpanDMA, ReceiveSpan: latency.SpanDMA}
}

// Validate checks the protocols.
func (p Params) Validate() error {
	if err := (latency.Params{SendSpan: p.SendSpan, ReceiveSpan: p.ReceiveSpan}).Validate(); err != nil {
		return err
	}
	if len(p.Protocols) == 0 {
		return fmt.Errorf("protocols: name at least one")
	}
	seen := map[string]bool{}
	for _, name := range p.Protocols {
		if protocols[name] == nil {
			return fmt.Errorf("protocols: %q is not a protocol (known: %s)", name, strings.Join(Protocols(), ", "))
		}
		if seen[name] {
			return fmt.Errorf("protocols: %q twice", name)
		}
		seen[name] = true
	}
	if p.Baseline != "" && !seen[p.Baseline] {
		return fmt.Errorf("baseline: %q is not among the protocols", p.Baseline)
	}
	if p.Study != "" && studies[p.Study] == nil {
		var known []string
		for n := range studies {
			known = append(known, n)
		}
		sort.Strings(known)
		return fmt.Errorf("study: %q is not a study simkron knows (known: %s)", p.Study, strings.Join(known, ", "))
	}
	return nil
}

func newCompare(env workload.Env, params any) (workload.Workload, error) {
	p := *params.(*Params)
	var hs [2]*latency.Endpoint
	for i, r := range [2]struct{ role, name string }{{"client", p.Client}, {"server", p.Server}} {
		h, err := latency.FindCardHost(env, r.role, r.name)
		if err != nil {
			return nil, err
		}
		hs[i] = h
	}
	if hs[0].Name == hs[1].Name {
		return nil, fmt.Errorf("server: the client and the server must be different hosts")
	}
	w := &compare{p: p, Runs: latency.Runs{OneThread: true}, split: p.Split}
	if w.split == 0 {
		w.split = 1500
		if hs[0].Inet != nil {
			w.split = hs[0].Inet.Params().MTU
		}
	}
	common := latency.Params{Client: p.Client, Server: p.Server, Sizes: p.Sizes, Messages: p.Messages, Warmup: p.Warmup,
		SendSpan: p.SendSpan, ReceiveSpan: p.ReceiveSpan}
	for _, name := range p.Protocols {
		tt := protocols[name]
		tr, sp, err := tt.New(env, common)
		if err == nil && !tr.Info().NoIP {
			for _, h := range hs {
				if h.Inet == nil {
					err = fmt.Errorf("%w: host %q has no IP address", ErrUnsupported, h.Name)
					break
				}
			}
		}
		if errors.Is(err, ErrUnsupported) && name != p.Baseline {
			w.skipped = append(w.skipped, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("protocols: %s: %w", name, err)
		}
		s, err := latency.NewSeries(sp, tr, hs[0], hs[1])
		if err != nil {
			return nil, fmt.Errorf("protocols: %s: %w", name, err)
		}
		s.KeepSamples() // for the medians by layer
		w.Series = append(w.Series, s)
		w.names = append(w.names, name)
	}
	if len(w.Series) == 0 {
		return nil, fmt.Errorf("protocols: the hosts support none of them (%s)", strings.Join(w.skipped, "; "))
	}
	return w, nil
}

// compare is the compare workload: the series, one after another on the
// client's thread, and their comparison.
type compare struct {
	p Params
	latency.Runs
	split   int      // bytes: the factors' means below and above
	names   []string // of the paths run, as registered
	skipped []string // the paths left out, each with why
}

var _ workload.Workload = (*compare)(nil)

func (w *compare) Start() { w.Runs.Start() }

func (w *compare) Result() (workload.Result, error) {
	res := w.Sections()
	f := &res.Figures
	f.Tables = append(f.Tables, w.settings())
	for _, s := range w.Series {
		f.Tables = append(f.Tables, s.Table())
	}
	for _, dir := range w.dirs() {
		f.Tables = append(f.Tables, MedianTable(dir, w.Series...))
	}
	f.Tables = append(f.Tables, w.factors(), w.factorMeans())
	if st := studies[w.p.Study]; st != nil {
		f.Tables = append(f.Tables, w.statements(st))
	}
	f.Bars = append(f.Bars, w.bars())
	f.Charts = append(f.Charts, MedianChart("medians", w.Series...))
	if len(w.skipped) > 0 {
		f.Text = "Not run, the hosts cannot:\n  " + strings.Join(w.skipped, "\n  ") + "\n"
	}
	return res, nil
}

// settings says what the comparison measured and on what: the definitions
// of its latencies and the network between its hosts, defaults included.
func (w *compare) settings() shape.Table {
	s := w.Series[0]
	t := shape.Table{Title: "compare: what the latencies are and where they were measured", Columns: shape.Cols("what", "used"), Prose: true}
	send, recv := "thread", "arrival"
	if s.Params().SendSpan == latency.SpanDMA {
		send = "dma"
	}
	if s.Params().ReceiveSpan == latency.SpanDMA {
		recv = "dma"
	}
	client, server := s.Hosts()
	t.Rows = append(t.Rows,
		[]string{"send", fmt.Sprintf("send_span = %q: %s", send, s.SendWhat())},
		[]string{"receive", fmt.Sprintf("receive_span = %q: %s", recv, s.RecvWhat())},
		[]string{"round trip", "the client's time from entering the send call to the return of the receive call bringing the echo"},
		[]string{"baseline", w.baseline().Info().Name},
		[]string{"client", w.label(client)},
		[]string{"server", w.label(server)},
	)
	return t
}

// label names a host of the comparison with what its card is plugged
// into.
func (w *compare) label(h *latency.Endpoint) string {
	if h.Network == nil || h.Network() == "" {
		return h.Name
	}
	return h.Name + " on " + h.Network()
}

// statements checks a study's statements against the series' rows.
func (w *compare) statements(st *Study) shape.Table {
	rows := map[string][]latency.Row{}
	for i, s := range w.Series {
		rows[w.names[i]] = s.Rows()
	}
	t := shape.Table{Title: "the study's statements against the model (published: " + st.Source + ")",
		Columns: shape.Cols("statement", "holds", "the model"), Prose: true}
	for _, x := range st.Check(rows, w.split) {
		h := "no"
		if x.Holds {
			h = "yes"
		}
		t.Rows = append(t.Rows, []string{x.Claim, h, x.Model})
	}
	return t
}

// dirs are the directions the series measured.
func (w *compare) dirs() []string { return []string{shape.Send, shape.Receive} }

// defaultBaseline is the baseline when none is given and it runs: the
// study's improvement factors are VIA's over the other protocols.
const defaultBaseline = "via"

// baseline returns the series the factors are against.
func (w *compare) baseline() *latency.Series {
	b := w.p.Baseline
	if b == "" {
		b = defaultBaseline
	}
	if i := slices.Index(w.names, b); i >= 0 {
		return w.Series[i]
	}
	return w.Series[0]
}

// metric is a latency the tables compare: a row's median send or
// receive, or its mean round trip.
type metric struct {
	name string
	get  func(r latency.Row) (float64, bool)
}

var metrics = []metric{
	{"send", func(r latency.Row) (float64, bool) { return r.Send.Median, r.Send.N > 0 }},
	{"receive", func(r latency.Row) (float64, bool) { return r.Receive.Median, r.Receive.N > 0 }},
}

var rtt = metric{"rtt", func(r latency.Row) (float64, bool) { return r.RTTMicros, r.Messages > 0 }}

// compared returns the metrics the factors use.
func (w *compare) compared() []metric { return append(slices.Clone(metrics), rtt) }

// factor returns a's value over b's, false when either is missing.
func factor(m metric, a, b latency.Row) (float64, bool) {
	x, ok := m.get(a)
	y, okb := m.get(b)
	if !ok || !okb || y <= 0 {
		return 0, false
	}
	return x / y, true
}

// factors sets, per size, each protocol's median latencies and round trip
// beside the baseline's: factor = protocol / baseline, the times the
// baseline's latency the protocol takes (below 1 when it is faster).
func (w *compare) factors() shape.Table {
	base := w.baseline()
	ms := w.compared()
	t := shape.Table{
		Title:   fmt.Sprintf("protocols side by side (median cycles; round trip in us; factor = protocol / %s: below 1 when faster)", base.Info().Name),
		Columns: shape.Cols("size", "protocol"),
	}
	for _, m := range ms {
		c := shape.Column{Name: m.name, Group: "latency"}
		if m.name == "rtt" {
			c.Unit = "us"
		}
		t.Columns = append(t.Columns, c)
	}
	for _, m := range ms {
		t.Columns = append(t.Columns, shape.Column{Name: m.name + " factor", Group: "factor = protocol / " + base.Info().Name})
	}
	t.Columns[2].Doc = "send and receive: the median latency in cycles as the table \"compare: what the latencies are\" defines them; rtt: the mean round trip"
	for i, size := range w.p.Sizes {
		b := base.Rows()[i]
		for _, s := range w.Series {
			r := s.Rows()[i]
			row := []string{fmt.Sprint(size), s.Info().Name}
			for _, m := range ms {
				v, _ := m.get(r)
				if m.name == "rtt" {
					row = append(row, fmt.Sprintf("%.1f", v))
				} else {
					row = append(row, fmt.Sprintf("%.0f", v))
				}
			}
			for _, m := range ms {
				f, ok := factor(m, r, b)
				row = append(row, formatFactor(f, ok))
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}

func formatFactor(f float64, ok bool) string {
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.2f", f)
}

// factorMeans gives each protocol's factors against the baseline as
// means over the sizes up to the split and over those above it: with a
// fast protocol as the baseline, the other protocols' factors are its
// improvement over them, as the Linux/SimOS study gives VIA's.
func (w *compare) factorMeans() shape.Table {
	base := w.baseline()
	t := shape.Table{
		Title: fmt.Sprintf("factors against %s (protocol / %s), mean over the sizes up to %d B and above", base.Info().Name, base.Info().Name, w.split),
		Columns: []shape.Column{{Name: "protocol"}, {Name: "latency"},
			{Name: fmt.Sprintf("<= %d B", w.split)}, {Name: fmt.Sprintf("> %d B", w.split)}},
		Prose: true,
	}
	for _, s := range w.Series {
		if s == base {
			continue
		}
		for _, m := range w.compared() {
			var sum [2]float64
			var n [2]int
			for i, size := range w.p.Sizes {
				f, ok := factor(m, s.Rows()[i], base.Rows()[i])
				if !ok {
					continue
				}
				k := 0
				if size > w.split {
					k = 1
				}
				sum[k] += f
				n[k]++
			}
			row := []string{s.Info().Name, m.name}
			for k := range 2 {
				row = append(row, formatFactor(sum[k]/float64(max(n[k], 1)), n[k] > 0))
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}

// MedianTable sets the medians by layer of several series side by side in
// one direction (shape.Send or shape.Receive): a row per size
// and series, a column per layer any of them has, in stack order ("-"
// where a series never has the layer), and the median total. The series
// must keep their samples.
func MedianTable(dir string, runs ...*latency.Series) shape.Table {
	meds := make([][][]latency.LayerCost, len(runs))
	tots := make([][]float64, len(runs))
	sampled := make([][]int, len(runs))
	has := make([][]string, len(runs))
	var layers []string
	for i, s := range runs {
		meds[i], tots[i] = s.LayerMedians(dir)
		sampled[i] = s.Sampled(dir)
		for _, row := range meds[i] {
			for _, l := range row {
				if !slices.Contains(has[i], l.Layer) {
					has[i] = append(has[i], l.Layer)
				}
			}
		}
		for _, l := range has[i] {
			if !slices.Contains(layers, l) {
				layers = append(layers, l)
			}
		}
	}
	shape.SortLayers(layers)
	what := "send: " + runs[0].SendWhat()
	if dir == shape.Receive {
		what = "receive: " + runs[0].RecvWhat()
	}
	t := shape.Table{
		Title:   fmt.Sprintf("%s by layer, protocols side by side (median cycles per message; %s; each layer's median, and the median total, which they need not add up to)", dir, what),
		Columns: shape.Cols(append(append([]string{"size", "protocol"}, layers...), "total")...),
	}
	t.Columns[len(t.Columns)-1].Doc = "the median of the total latency (\"-\": no message of the size measured)"
	for si, size := range runs[0].Params().Sizes {
		for i, s := range runs {
			if si >= len(meds[i]) {
				continue
			}
			row := []string{fmt.Sprint(size), s.Info().Name}
			for _, l := range layers {
				if !slices.Contains(has[i], l) {
					row = append(row, "-")
					continue
				}
				var c float64
				for _, lc := range meds[i][si] {
					if lc.Layer == l {
						c = lc.Cycles
					}
				}
				row = append(row, fmt.Sprintf("%.0f", c))
			}
			total := "-" // no message of the size measured: the run stopped first
			if sampled[i][si] > 0 {
				total = fmt.Sprintf("%.0f", tots[i][si])
			}
			t.Rows = append(t.Rows, append(row, total))
		}
	}
	return t
}

// has reports whether s measured metric m at any size.
func has(s *latency.Series, m metric) bool {
	for _, r := range s.Rows() {
		if _, ok := m.get(r); ok {
			return true
		}
	}
	return false
}

// MedianChart draws the series' median latencies against message size:
// a plot per direction a series measured (send, receive), a line per
// series; its caption names the plots drawn.
func MedianChart(name string, runs ...*latency.Series) shape.Chart {
	ch := shape.Chart{Name: name}
	var drawn []string
	for _, m := range metrics {
		p := shape.Plot{Title: m.name, XLabel: "message size (log scale)", YLabel: "median cycles", XLog: true}
		for _, s := range runs {
			if !has(s, m) {
				continue
			}
			l := shape.Line{Label: s.Info().Name, Marks: true}
			for _, r := range s.Rows() {
				if v, ok := m.get(r); ok {
					l.Points = append(l.Points, shape.XY{X: float64(r.Size), Y: v})
				}
			}
			p.Lines = append(p.Lines, l)
		}
		if len(p.Lines) > 0 {
			ch.Plots = append(ch.Plots, p)
			what := runs[0].SendWhat()
			if m.name == "receive" {
				what = runs[0].RecvWhat()
			}
			drawn = append(drawn, fmt.Sprintf("%s (%s)", m.name, what))
		}
	}
	ch.Caption = fmt.Sprintf("Median latency in cycles against message size, a line per protocol, %s: %s.",
		plural(len(drawn), "one plot", fmt.Sprintf("%d plots", len(drawn))), strings.Join(drawn, "; "))
	return ch
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// bars draws the protocols' send and receive latencies by layer (means,
// which stack to the mean latency) side by side for each size, as the
// Linux/SimOS study's figures do: a plot per direction, a group of bars
// (a protocol) per size.
func (w *compare) bars() shape.Bars {
	var names []string
	for _, s := range w.Series {
		names = append(names, s.Info().Name)
	}
	c := shape.Bars{Name: "compare",
		Caption: "Mean cycles per message of each layer, stacked, for each message size: the protocols' bars side by side (left to right " +
			strings.Join(names, ", ") + "), a plot for send and one for receive."}
	for _, dir := range []string{shape.Send, shape.Receive} {
		bp := shape.BarPlot{Title: dir, XLabel: "message size", YLabel: "mean cycles per message"}
		for _, size := range w.p.Sizes {
			bp.Categories = append(bp.Categories, shape.SizeLabel(size))
		}
		for _, s := range w.Series {
			g := shape.BarGroup{Label: s.Info().Name}
			for _, b := range s.Breakdowns() {
				if b.Direction != dir {
					continue
				}
				for _, layer := range b.LayerNames() {
					part := shape.BarStack{Label: layer}
					// A size the run stopped before has no point: 0.
					k := 0
					for _, size := range w.p.Sizes {
						v := 0.0
						if k < len(b.Points) && b.Points[k].Size == size {
							v = b.Points[k].Cycles(layer)
							k++
						}
						part.Values = append(part.Values, v)
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
