package ttcp_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/report"
	_ "simkron/stack/apps"
	"simkron/stack/apps/ttcp"
	"simkron/workload"
)

// switchConfig is the 10 MB transfer between two R4000s on a switch.
var switchConfig = machinetest.Config("examples/ttcp-switch-r4000.toml")

// run builds exp with opt, runs it and returns its result and how many
// islands it ran in.
func run(t *testing.T, exp *machine.Experiment, opt machine.Options) (*report.Result, int) {
	t.Helper()
	r, err := machine.New(exp, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	res, err := r.Execute(opt)
	if err != nil {
		t.Fatal(err)
	}
	return res, r.Islands()
}

func runs(t *testing.T, res *report.Result) []ttcp.Result {
	t.Helper()
	var rs []ttcp.Result
	if err := res.Section("ttcp", &rs); err != nil {
		t.Fatal(err)
	}
	return rs
}

// The workload declares that its two programs share nothing: each of
// its hosts is a group of its own, and it is not an Ender (which a run
// in islands refuses).
func TestGroupsPutHostsApart(t *testing.T) {
	wt, ok := workload.Lookup("ttcp")
	if !ok || wt.Groups == nil {
		t.Fatal("ttcp is not registered with Groups")
	}
	exp := machinetest.Edit(t, switchConfig).Experiment()
	var names []string
	for _, h := range exp.Hosts {
		names = append(names, h.Name)
	}
	p := exp.Workload.Params["ttcp"].(*ttcp.Params)
	groups := wt.Groups(p, names)
	in := map[string]int{}
	for g, hs := range groups {
		for _, h := range hs {
			if _, twice := in[h]; twice {
				t.Errorf("host %q in two groups: %v", h, groups)
			}
			in[h] = g
		}
	}
	gt, okT := in[p.Transmitter]
	gr, okR := in[p.Receiver]
	if !okT || !okR || gt == gr {
		t.Errorf("groups %v: want the transmitter %q and the receiver %q each in a group of its own", groups, p.Transmitter, p.Receiver)
	}
	r, err := machine.New(exp, machine.Options{NoCapture: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, ender := r.Workloads[0].(workload.Ender); ender {
		t.Error("ttcp is a workload.Ender: a run in islands refuses it")
	}
}

// A transfer between two hosts on a switch arrives whole, and the run
// that may simulate the hosts apart gives what the whole run gives (but
// for the simulator's own counts). Under go test -race, once the hosts of
// a switch are simulated apart, it fails if the transmitter's and the
// receiver's programs touch common mutable state.
func TestSwitchTransfer(t *testing.T) {
	exp := machinetest.Edit(t, switchConfig).Set("workload.ttcp.case[0].writes", 200).Experiment()
	whole, _ := run(t, exp, machine.Options{Whole: true, NoCapture: true})
	apart, islands := run(t, exp, machine.Options{Cores: machine.NewCores(2), NoCapture: true})
	t.Logf("%d islands", islands)
	if !apart.Complete {
		t.Fatalf("incomplete: %s", apart.Incomplete)
	}
	rs := runs(t, apart)
	if len(rs) != 1 {
		t.Fatalf("%d runs, want 1", len(rs))
	}
	r := rs[0]
	if r.Bytes != 200*8192 || r.Corrupt != 0 || r.Error != "" || r.Seconds <= 0 || r.TxSeconds <= 0 {
		t.Errorf("%d bytes, %d corrupt, %.3f s (transmitter %.3f s), error %q; want %d bytes, none corrupt",
			r.Bytes, r.Corrupt, r.Seconds, r.TxSeconds, r.Error, 200*8192)
	}
	if !strings.HasPrefix(r.Verdict, "streaming") || r.DataSegments == 0 || len(r.Pattern) == 0 || len(r.Progress) == 0 {
		t.Errorf("verdict %q, %d data segments, %d pattern rows, %d progress points", r.Verdict, r.DataSegments, len(r.Pattern), len(r.Progress))
	}
	// The merged trace is in time order, and its ACKs acknowledge the
	// data before them: the two sides' numbers are relative to the
	// right initial sequence numbers.
	var high uint32
	for i, e := range r.Pattern {
		if i > 0 && e.DeltaMS < 0 {
			t.Errorf("pattern row %d goes back in time: %+v", i, e)
		}
		switch e.Dir {
		case "data":
			high = max(high, e.Seq+uint32(e.Len))
		case "ack":
			if e.Seq != 0 || e.Ack > high || e.Ack == 0 {
				t.Errorf("pattern row %d: %+v after data up to %d", i, e, high)
			}
		}
	}
	if diff := cmp.Diff(machinetest.ModelOnly(t, whole), machinetest.ModelOnly(t, apart)); diff != "" {
		t.Errorf("the run that may split differs from the whole run (-whole +split):\n%s", diff)
	}
}

// Two hosts that no network joins are simulated apart, each on its own
// goroutine, today: the transmitter's connect finds nobody and fails
// after its SYNs (127 s), the receiver gives up waiting by itself, and
// the run ends with both, reporting the transmitter's failure, as the
// whole run does. Under go test -race this runs both programs and their
// cards' observers at once.
func TestHostsApartFail(t *testing.T) {
	b := machinetest.Edit(t, switchConfig).
		Append("segment", map[string]any{"name": "sw1", "rate": "10Mbps", "mode": "switch", "pcap": false}).
		Set("host[1].nic[0].segment", "sw1").Set("experiment.stop_at", "300s")
	exp := b.Experiment()
	whole, _ := run(t, exp, machine.Options{Whole: true, NoCapture: true})
	var first string
	for _, cores := range []int{1, 2} {
		apart, islands := run(t, exp, machine.Options{Cores: machine.NewCores(cores), NoCapture: true})
		if islands != 2 {
			t.Fatalf("%d islands, want 2", islands)
		}
		if apart.Complete || !strings.Contains(apart.Incomplete, `ttcp run "10MB": r4kA: connect: ETIMEDOUT`) {
			t.Errorf("complete %v, %q; want the transmitter's connect to time out", apart.Complete, apart.Incomplete)
		}
		if at := float64(apart.SimTimePS) / 1e12; at < 127 || at > 128 {
			t.Errorf("the run ended at %.3f s, want at the connect's failure (127 s)", at)
		}
		got := machinetest.ModelOnly(t, apart)
		if diff := cmp.Diff(machinetest.ModelOnly(t, whole), got); diff != "" {
			t.Errorf("%d threads: islands differ from the whole run (-whole +islands):\n%s", cores, diff)
		}
		if first != "" && got != first {
			t.Errorf("%d threads: result differs from 1 thread's", cores)
		}
		first = got
	}
}
