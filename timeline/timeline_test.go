package timeline_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/annotations"
	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/report"
	"simkron/sim"
	"simkron/timeline"
	"simkron/workload"
)

const studyConfig = "../configs/simos-study.toml"

// traced is one run, and its trace when it had one.
type traced struct {
	res    *report.Result
	hash   uint64 // of every event's time and name
	events int
	trace  []byte
	writer *timeline.Writer
}

// runTraced runs exp with a trace limited to win (nil: no trace), and
// with the annotation scripts given, hashing the event trace.
func runTraced(t testing.TB, exp *machine.Experiment, win *timeline.Window, scripts ...annotations.Source) traced {
	t.Helper()
	return runWatched(t, exp, win, nil, scripts...)
}

// runWatched is runTraced with watch called on the built run before it
// runs: a test's own listeners.
func runWatched(t testing.TB, exp *machine.Experiment, win *timeline.Window, watch func(*machine.Run), scripts ...annotations.Source) traced {
	t.Helper()
	var out traced
	tr := machinetest.NewEventTrace()
	opt := machine.Options{NoCapture: true, Trace: tr.Fire}
	r, err := machine.New(exp, opt)
	if err != nil {
		t.Fatal(err)
	}
	if watch != nil {
		watch(r)
	}
	var file bytes.Buffer
	if win != nil {
		if out.writer, err = r.Timeline(&file, *win); err != nil {
			r.Close()
			t.Fatal(err)
		}
	}
	var eng *annotations.Engine
	if len(scripts) > 0 {
		eng, err = annotations.New(r.AnnotationTarget(), scripts, annotations.Options{})
		if err != nil {
			r.Close()
			t.Fatal(err)
		}
		t.Cleanup(eng.Close)
		if err := eng.Install(); err != nil {
			t.Fatal(err)
		}
		if out.writer != nil {
			eng.SetTrace(out.writer)
		}
	}
	out.res, err = r.Execute(opt)
	if err != nil {
		t.Fatal(err)
	}
	if eng != nil {
		if err := eng.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if out.writer != nil {
		if err := out.writer.Finish(); err != nil {
			t.Fatal(err)
		}
		out.trace = file.Bytes()
	}
	out.hash, out.events = tr.Sum(), tr.Events
	return out
}

// study is the Linux/SimOS study over some of its protocols, with
// sizes and messages (nil, 0: the study's).
func study(t testing.TB, protocols []string, sizes []int64, messages int) *machine.Experiment {
	t.Helper()
	b := machinetest.Edit(t, studyConfig).Set("workload.compare.protocols", protocols).
		Delete("workload.compare.baseline").Delete("workload.compare.study")
	for _, p := range []string{"tcp", "via"} {
		if !slices.Contains(protocols, p) {
			b.Delete("workload." + p)
		}
	}
	if sizes != nil {
		b.Set("workload.compare.sizes", sizes)
	}
	if messages > 0 {
		b.Set("workload.compare.messages", messages).Set("workload.compare.warmup", 1)
	}
	return b.Experiment()
}

func resultJSON(t testing.TB, res *report.Result) string {
	t.Helper()
	var b bytes.Buffer
	if err := res.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func window(t testing.TB, s string) *timeline.Window {
	t.Helper()
	w, err := timeline.ParseWindow(s)
	if err != nil {
		t.Fatal(err)
	}
	return &w
}

// The trace of one UDP echo on the Linux/SimOS study's machines: well
// formed, its slices nest on every thread (Read refuses slices that
// overlap without nesting and async slices that never end), and the
// layer slices of each of the message's four measurements sum, layer by
// layer, to what the workload reports for it; each host's slices between
// the window's edges sum to its core's counters. With and without the
// trace, the event trace and the result are the same, and two traces of
// the same run are the same bytes.
func TestTraceOfOneMessage(t *testing.T) {
	exp := study(t, []string{"udp"}, []int64{64, 1024}, 4)
	plain := runTraced(t, exp, nil)
	w := window(t, "message=udp:1024:3")
	a := runTraced(t, exp, w)
	b := runTraced(t, exp, w)
	if a.hash != plain.hash || a.events != plain.events {
		t.Errorf("event trace: %d events hashing to %x with the trace, %d to %x without", a.events, a.hash, plain.events, plain.hash)
	}
	if d := cmp.Diff(resultJSON(t, plain.res), resultJSON(t, a.res)); d != "" {
		t.Errorf("the result changed with the trace (-without +with):\n%s", d)
	}
	if !bytes.Equal(a.trace, b.trace) {
		t.Error("two traces of the same run differ")
	}
	var generic struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if err := json.Unmarshal(a.trace, &generic); err != nil {
		t.Fatalf("the trace is not JSON: %v", err)
	}
	if int64(len(generic.TraceEvents)) <= a.writer.Events() {
		t.Errorf("%d events in the file, %d written besides metadata", len(generic.TraceEvents), a.writer.Events())
	}
	tr, err := timeline.Read(a.trace)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Window != "message=udp:1024:3" {
		t.Errorf("window %q", tr.Window)
	}
	var measures []string
	for _, h := range tr.Hosts {
		for _, m := range h.Measures {
			measures = append(measures, m.Name)
			if len(m.Layers) < 4 {
				t.Errorf("%s: only the layers %v", m.Name, m.Layers)
			}
		}
	}
	want := []string{"udp:1024:3 send mipsA", "udp:1024:3 receive mipsA", "udp:1024:3 receive mipsB", "udp:1024:3 send mipsB"}
	if d := cmp.Diff(want, measures, sortStrings); d != "" {
		t.Errorf("measurements (-want +got):\n%s", d)
	}
	for _, m := range tr.Check() {
		t.Error(m)
	}
	// One frame each way, from the sender's card to the receiver's.
	var frames []string
	for _, f := range tr.Frames {
		frames = append(frames, f.Sender+">"+f.Receiver)
		if f.To <= f.From || f.Bytes < 1024 {
			t.Errorf("frame %+v", f)
		}
	}
	if d := cmp.Diff([]string{"mipsA>mipsB", "mipsB>mipsA"}, frames); d != "" {
		t.Errorf("frames (-want +got):\n%s", d)
	}
	for _, what := range []string{`"ph":"s"`, `"ph":"f"`, `"cat":"dma"`, `"name":"cache misses"`, `"name":"raise irq 3 (eth0)"`, `"cat":"UDP"`, `"name":"halt"`} {
		if !bytes.Contains(a.trace, []byte(what)) {
			t.Errorf("the trace has no %s", what)
		}
	}
}

var sortStrings = cmp.Transformer("sort", func(xs []string) []string { return slices.Sorted(slices.Values(xs)) })

// A trace of the whole study, UDP and TCP over every size: every
// measurement sums exactly to what the workload reports, every host's
// slices to its core's counters. (VIA's largest sends are left out: the
// workload counts there an interrupt's exit cycles that the core charges
// after the send's end, Check's doc says when.)
func TestTraceOfAStudy(t *testing.T) {
	if testing.Short() {
		t.Skip("a whole study")
	}
	exp := study(t, []string{"udp", "tcp"}, nil, 3)
	plain := runTraced(t, exp, nil)
	a := runTraced(t, exp, &timeline.Window{})
	if a.hash != plain.hash || resultJSON(t, a.res) != resultJSON(t, plain.res) {
		t.Error("the run changed with a trace of all of it")
	}
	tr, err := timeline.Read(a.trace)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, h := range tr.Hosts {
		n += len(h.Measures)
	}
	// Two sizes of eleven... every size, both protocols, four each.
	if want := 2 * 11 * 3 * 4; n != want {
		t.Errorf("%d measurements, want %d", n, want)
	}
	for _, m := range tr.Check() {
		t.Error(m)
	}
}

// atmIP is configs/atm-ip.toml's UDP and TCP sweeps cut to sizes and a
// few messages, without its TP4 sweep.
func atmIP(t testing.TB, sizes []int64) *machine.Experiment {
	t.Helper()
	return machinetest.Edit(t, "../configs/atm-ip.toml").Delete("workload.then").Delete("workload.tp4").
		Set("workload.tcp.sizes", sizes).Set("workload.udp.sizes", sizes).
		Set("workload.tcp.messages", 3).Set("workload.tcp.warmup", 1).
		Set("workload.udp.messages", 3).Set("workload.udp.warmup", 1).Experiment()
}

// A window that opens while a host's core is taking an interrupt (its
// handler running, the core having waited for the event clock): the
// calls the window opens with are not the work the interrupt delays, and
// the host's slices still sum to its core's counters. The TCP messages
// of configs/atm-ip.toml open their windows so on the server, whose core
// takes a cell's interrupt as the client sends.
func TestWindowOpensDuringAnInterrupt(t *testing.T) {
	exp := atmIP(t, []int64{1024, 16384})
	for _, w := range []string{"message=tcp:16384:1", "message=tcp:16384:2", "message=tcp:16384:3"} {
		tr, err := timeline.Read(runTraced(t, exp, window(t, w)).trace)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range tr.Check() {
			if strings.HasSuffix(m.What, ": the window") {
				t.Errorf("%s: %v", w, m)
			}
		}
	}
}

// A window of time holds what happened in it; one that the run never
// reaches leaves a file with no event, and says so.
func TestTimeWindows(t *testing.T) {
	exp := study(t, []string{"udp"}, []int64{64}, 2)
	a := runTraced(t, exp, window(t, "30us:80us"))
	tr, err := timeline.Read(a.trace)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range tr.Hosts {
		if len(h.Atoms) == 0 {
			t.Fatalf("host %s: nothing in the window", h.Name)
		}
		first, last := h.Atoms[0].From, h.Atoms[len(h.Atoms)-1].To
		if first < int64(30*sim.Microsecond) || last > int64(81*sim.Microsecond) {
			t.Errorf("host %s: atoms from %v to %v, outside the window", h.Name, sim.Time(first), sim.Time(last))
		}
	}
	for _, m := range tr.Check() {
		t.Error(m)
	}

	r, err := machine.New(exp, machine.Options{NoCapture: true})
	if err != nil {
		t.Fatal(err)
	}
	var file bytes.Buffer
	w, err := r.Timeline(&file, *window(t, "59s:60s"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Execute(machine.Options{}); err != nil {
		t.Fatal(err)
	}
	err = w.Finish()
	if err == nil || !strings.Contains(err.Error(), "59s:60s was never reached (the run ended at") {
		t.Errorf("a window after the run's end: %v", err)
	}
	if _, rerr := timeline.Read(file.Bytes()); rerr != nil || w.Events() != 0 {
		t.Errorf("the empty trace: %v, %d events", rerr, w.Events())
	}
}

// Annotations' trace commands put their events on the timeline, at the
// body's host and time, within the window.
func TestAnnotationEvents(t *testing.T) {
	exp := study(t, []string{"udp"}, []int64{64}, 3)
	script := annotations.Source{Name: "probe.tcl", Text: `
set n 0
annotation set pc udp_sendmsg:START {
	global n
	incr n
	trace instant "my probe"
	trace counter sends $n
}
`}
	a := runTraced(t, exp, window(t, "message=udp:64:2"), script)
	plain := runTraced(t, exp, nil)
	if a.hash != plain.hash {
		t.Error("the event trace changed")
	}
	if got := bytes.Count(a.trace, []byte(`"name":"my probe"`)); got != 2 {
		t.Errorf("%d instants, want 2 (the message's send and its echo)", got)
	}
	if !bytes.Contains(a.trace, []byte(`"ph":"C","name":"sends","cat":"annotation"`)) {
		t.Error("no counter track of the script's")
	}
}

func TestParseWindow(t *testing.T) {
	for _, c := range []struct {
		in, want, err string
	}{
		{in: "1ms:2ms", want: "1ms:2ms"},
		{in: "1.5us:2.25us", want: "1.5us:2.25us"},
		{in: "message=udp:1024:3", want: "message=udp:1024:3"},
		{in: "message=UDP:64:1", want: "message=udp:64:1"},
		{in: "2ms:1ms", err: `"2ms:1ms": TO (1ms) is not after FROM (2ms)`},
		{in: "1ms", err: `"1ms": want FROM:TO`},
		{in: "1ms:x", err: `"1ms:x": TO: `},
		{in: "message=udp:1024", err: "want message=PROTOCOL:SIZE:N"},
		{in: "message=udp:big:3", err: `the size "big" is not a positive number of bytes`},
		{in: "message=udp:1024:0", err: `N "0" is not a positive number`},
		{in: "message=:1:1", err: "want message=PROTOCOL:SIZE:N"},
	} {
		w, err := timeline.ParseWindow(c.in)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.in, err, c.err)
			}
		case err != nil:
			t.Errorf("%q: %v", c.in, err)
		case w.String() != c.want:
			t.Errorf("%q: %q, want %q", c.in, w.String(), c.want)
		}
	}
}

func TestWindowCheck(t *testing.T) {
	kinds := []workload.MessageKind{{Protocol: "udp", Size: 64, Count: 20}, {Protocol: "udp", Size: 1024, Count: 20}, {Protocol: "tcp", Size: 64, Count: 20}}
	for _, c := range []struct {
		win, err string
		kinds    []workload.MessageKind
	}{
		{win: "1ms:2ms"},
		{win: "59s:61s"},
		{win: "60s:61s", err: "the window begins at or after the run's stop time (stop_at 60s)"},
		{win: "message=udp:1024:20", kinds: kinds},
		{win: "message=udp:1024:21", kinds: kinds, err: "the workload measures 20 messages of 1024 bytes over udp, not 21"},
		{win: "message=udp:1000:1", kinds: kinds, err: "no udp messages of 1000 bytes (its sizes: 64, 1024)"},
		{win: "message=via:64:1", kinds: kinds, err: "no via messages (its protocols: udp, tcp)"},
		{win: "message=udp:64:1", err: "the workload measures no messages one by one"},
	} {
		err := window(t, c.win).Check(60*sim.Second, c.kinds)
		if (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %v, want %q", c.win, err, c.err)
		}
	}
}
