package tp4_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/report"
	_ "simkron/stack/apps"
)

// pair returns an experiment of two hosts of the machine file running
// workload (its [workload] tables), each [[host]] given the keys of
// each (a key path within the host, as "iso.enabled") with their values.
func pair(t testing.TB, machineFile, workload string, each map[string]any) *machine.Experiment {
	t.Helper()
	text, err := machine.PairExperiment(machineFile, "machines/"+machineFile[strings.LastIndex(machineFile, "/")+1:], "tp4", "two hosts", workload)
	if err != nil {
		t.Fatal(err)
	}
	b := machinetest.EditText(t, "../../../configs/tp4-test.toml", string(text))
	for _, k := range slices.Sorted(maps.Keys(each)) {
		for i := range 2 {
			b.Set(fmt.Sprintf("host[%d].%s", i, k), each[k])
		}
	}
	return b.Experiment()
}

func run(t testing.TB, exp *machine.Experiment) *report.Result {
	t.Helper()
	r, err := machine.New(exp, machine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute(machine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete {
		t.Fatalf("incomplete: %s", res.Incomplete)
	}
	return res
}

// row is a series row as the result has it.
type row struct {
	Size, Packets, Messages, Lost, Corrupt int
	Send                                   struct{ N int }          `json:"send_cycles"`
	Receive                                struct{ N int }          `json:"receive_cycles"`
	SendLayers                             []struct{ Layer string } `json:"send_layers"`
	RecvLayers                             []struct{ Layer string } `json:"receive_layers"`
}

func section(t testing.TB, res *report.Result, name string) json.RawMessage {
	t.Helper()
	for _, s := range res.Sections {
		if s.Name == name {
			b, err := json.Marshal(s.Value)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	t.Fatalf("no section %q", name)
	return nil
}

// The TP4 series between two 486DX-33 PCs: every message echoed, none lost
// or corrupt, each measured once each way at both hosts, a message of n
// octets in ceil(n / 1015) DTs (a 1 KiB TPDU less the DT's header and
// checksum parameter), and its send and receive split over the ISO
// layers.
func TestSeries(t *testing.T) {
	res := run(t, pair(t, "../../../configs/machines/i486dx33.toml", `[workload]
type = "tp4"
[workload.tp4]
client = "hostA"
server = "hostB"
sizes = [4, 1015, 1016, 8192]
messages = 10
warmup = 1
`, nil))
	var rows []row
	if err := json.Unmarshal(section(t, res, "tp4"), &rows); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		want := max(1, (r.Size+1014)/1015)
		if r.Messages != 10 || r.Lost != 0 || r.Corrupt != 0 || r.Packets != want || r.Send.N != 20 || r.Receive.N != 20 {
			t.Errorf("%d B: %+v, want 10 messages in %d DTs, each measured at both hosts", r.Size, r, want)
		}
		for _, ls := range [][]struct{ Layer string }{r.SendLayers, r.RecvLayers} {
			have := map[string]bool{}
			for _, l := range ls {
				have[l.Layer] = true
			}
			for _, l := range []string{"TP4", "CLNS", "LLC"} {
				if !have[l] {
					t.Errorf("%d B: no %s in %v", r.Size, l, ls)
				}
			}
		}
	}
}

// A host without the ISO family is left out of a comparison with the
// reason. With TP4 beside them, UDP's and TCP's medians are what they are
// without it: TP4's server waits for its connection from the start (its
// socket, bind, listen and accept run as the comparison starts, on the
// server), which leaves that host's caches a little different for the
// protocols before it, and may move their mean round trips by a few cycles;
// its buffer is taken at its turn.
func TestCompare(t *testing.T) {
	wl := func(protocols string) string {
		return fmt.Sprintf("[workload]\ntype = \"compare\"\n[workload.compare]\nclient = \"hostA\"\nserver = \"hostB\"\nprotocols = %s\nsizes = [64, 2048]\nmessages = 5\nwarmup = 1\n", protocols)
	}
	type medians struct {
		Size    int
		Send    struct{ Median float64 } `json:"send_cycles"`
		Receive struct{ Median float64 } `json:"receive_cycles"`
	}
	for _, m := range []string{"../../../configs/machines/r4000.toml", "../../../configs/machines/i486dx33.toml"} {
		with := run(t, pair(t, m, wl(`["udp", "tcp", "tp4"]`), nil))
		without := run(t, pair(t, m, wl(`["udp", "tcp"]`), nil))
		for _, s := range []string{"udp", "tcp"} {
			var a, b []medians
			if err := json.Unmarshal(section(t, with, s), &a); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(section(t, without, s), &b); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Errorf("%s: the %s medians differ with TP4 in the comparison: %v and %v", m, s, a, b)
			}
		}
	}
	none := run(t, pair(t, "../../../configs/machines/r4000.toml", wl(`["udp", "tp4"]`), map[string]any{"iso.enabled": false}))
	if want := `tp4: not supported by these hosts: host "hostA" has no ISO socket family ([iso] in its machine file)`; !strings.Contains(none.Figures.Text, want) {
		t.Errorf("text %q lacks %q", none.Figures.Text, want)
	}
}
