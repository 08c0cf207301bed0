package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"simkron/stack/apps/compare"
	"simkron/stack/apps/latency"
	"simkron/workload"
)

// A protocol no host supports, for the tests of leaving one out.
func init() {
	compare.RegisterProtocol(compare.ProtocolType{Name: "nothing", Help: "a path of the tests that no host has",
		New: func(_ workload.Env, p latency.Params) (latency.Protocol, latency.Params, error) {
			return nil, p, fmt.Errorf("%w: no card for it", compare.ErrUnsupported)
		}})
}

// A path the hosts cannot run is left out with its reason; the baseline
// cannot be, nor can every path.
func TestCompareLeavesOutUnsupported(t *testing.T) {
	m := "../../configs/machines/r4000.toml"
	st, stdout, stderr := simkron(t, "compare", m, "--protocols", "udp,nothing", "--sizes", "64", "--messages", "2")
	if st != exitOK || !strings.Contains(stdout, "Not run, the hosts cannot:\n  nothing: not supported by these hosts: no card for it") {
		t.Errorf("exit %d, %s\n%s", st, stderr, stdout)
	}
	for _, args := range [][]string{{"--protocols", "nothing"}, {"--protocols", "udp,nothing", "--baseline", "nothing"}} {
		st, _, stderr := simkron(t, append([]string{"compare", "-q", m}, args...)...)
		if st != exitUsage || !strings.Contains(stderr, "nothing") {
			t.Errorf("%v: exit %d, %s", args, st, stderr)
		}
	}
}

// readRaw decodes a result.json into its top-level keys.
func readRaw(t *testing.T, path string) map[string]json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// compare on an experiment runs its workload's hosts; with the
// experiment's own sweeps' settings (its definitions of the latencies, the
// sweeps' defaults, given by --set since compare's are the study's), each
// protocol's rows are those of the experiment's UDP-then-TCP run, byte for
// byte: the comparison runs the same exchange.
func TestCompareExperimentMatchesItsSweeps(t *testing.T) {
	dir := t.TempDir()
	cmp, own := filepath.Join(dir, "compare"), filepath.Join(dir, "own")
	st, stdout, stderr := simkron(t, "compare", "../../configs/tcp-r4000.toml", "--protocols", "udp,tcp", "--out", cmp,
		"--set", "workload.compare.send_span=thread", "--set", "workload.compare.receive_span=arrival")
	if st != exitOK {
		t.Fatalf("compare exited %d: %s", st, stderr)
	}
	if st, _, stderr := simkron(t, "run", "-q", "../../configs/tcp-r4000.toml", "--out", own); st != exitOK {
		t.Fatalf("run exited %d: %s", st, stderr)
	}
	a, b := readRaw(t, filepath.Join(cmp, "result.json")), readRaw(t, filepath.Join(own, "result.json"))
	for _, k := range []string{"udp", "tcp", "sim_time_ps"} {
		if !bytes.Equal(a[k], b[k]) {
			t.Errorf("compare's %s differs from the experiment's own run", k)
		}
	}
	for _, want := range []string{"send by layer, protocols side by side", "receive by layer, protocols side by side",
		"factor = protocol / UDP", "host pcA"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(cmp, "experiment.toml")); err == nil {
		t.Error("an experiment's comparison wrote experiment.toml: the experiment is the user's file")
	}
}

// compareRows reads the factors table of a result: by size and protocol,
// the median send, receive and round trip and the three factors.
func compareRows(t *testing.T, res map[string]json.RawMessage) map[[2]string][]float64 {
	t.Helper()
	var fig struct {
		Tables []struct {
			Title string     `json:"title"`
			Rows  [][]string `json:"rows"`
		} `json:"tables"`
	}
	if err := json.Unmarshal(res["figures"], &fig); err != nil {
		t.Fatal(err)
	}
	out := map[[2]string][]float64{}
	for _, tb := range fig.Tables {
		if !strings.HasPrefix(tb.Title, "protocols side by side") {
			continue
		}
		for _, r := range tb.Rows {
			var v []float64
			for _, c := range r[2:] {
				f, err := strconv.ParseFloat(c, 64)
				if err != nil {
					t.Fatalf("row %v: %v", r, err)
				}
				v = append(v, f)
			}
			out[[2]string{r[0], r[1]}] = v
		}
	}
	if len(out) == 0 {
		t.Fatal("no side-by-side table")
	}
	return out
}

// compare on a machine file builds two of its hosts; the experiment it
// writes runs to the same result; the factors are each protocol's medians
// over the baseline's.
func TestCompareMachineFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "cmp")
	st, _, stderr := simkron(t, "compare", "-q", "../../configs/machines/r4000.toml", "--protocols", "udp,tcp",
		"--sizes", "4B-64B", "--messages", "5", "--baseline", "tcp", "--out", out)
	if st != exitOK {
		t.Fatalf("compare exited %d: %s", st, stderr)
	}
	res := readRaw(t, filepath.Join(out, "result.json"))
	rows := compareRows(t, res)
	var sizes []string
	for k := range rows {
		if k[1] == "UDP" {
			sizes = append(sizes, k[0])
		}
	}
	if len(sizes) != 5 { // 4, 8, 16, 32, 64
		t.Errorf("--sizes 4B-64B ran %d sizes, want 5", len(sizes))
	}
	for _, size := range sizes {
		u, c := rows[[2]string{size, "UDP"}], rows[[2]string{size, "TCP"}]
		if c[3] != 1 || c[4] != 1 || c[5] != 1 {
			t.Errorf("size %s: the baseline's factors are %v, want 1", size, c[3:])
		}
		for i := range 3 {
			if got, want := u[3+i], u[i]/c[i]; got < want-0.006 || got > want+0.006 {
				t.Errorf("size %s: UDP factor %d is %.2f, want UDP/TCP = %.3f", size, i, got, want)
			}
		}
		if u[0] >= c[0] || u[2] >= c[2] {
			t.Errorf("size %s: UDP send %v and round trip %v not below TCP's %v, %v", size, u[0], u[2], c[0], c[2])
		}
	}
	// The experiment written beside the result runs to the same bytes.
	again := filepath.Join(dir, "again")
	if st, _, stderr := simkron(t, "run", "-q", filepath.Join(out, "experiment.toml"), "--out", again); st != exitOK {
		t.Fatalf("run of the written experiment exited %d: %s", st, stderr)
	}
	a, _ := os.ReadFile(filepath.Join(out, "result.json"))
	b, _ := os.ReadFile(filepath.Join(again, "result.json"))
	if !bytes.Equal(a, b) {
		t.Error("the written experiment runs to another result")
	}
	// The HTML report draws the side-by-side bars.
	if st, html, stderr := simkron(t, "report", "--format", "html", filepath.Join(out, "result.json")); st != exitOK || !strings.Contains(html, "chart-compare") {
		t.Errorf("report exited %d without the compare chart: %s", st, stderr)
	}
}

func TestParseSizes(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []any
		err  bool
	}{
		{"4B-32KiB", []any{int64(4), int64(8), int64(16), int64(32), int64(64), int64(128), int64(256), int64(512),
			int64(1024), int64(2048), int64(4096), int64(8192), int64(16384), int64(32768)}, false},
		{"100-1000", []any{int64(100), int64(200), int64(400), int64(800), int64(1000)}, false},
		{"4,1KiB,1460", []any{int64(4), int64(1024), int64(1460)}, false},
		{"64", []any{int64(64)}, false},
		{"1KiB-4B", nil, true},
		{"0-16", nil, true},
		{"4,big", nil, true},
	} {
		got, err := parseSizes(c.in)
		if (err != nil) != c.err || !c.err && !reflect.DeepEqual(got, c.want) {
			t.Errorf("parseSizes(%q) = %v, %v; want %v (error %v)", c.in, got, err, c.want, c.err)
		}
	}
}

// Bad input is exit 2 with a message naming what is wrong, and nothing
// is written.
func TestCompareBadInput(t *testing.T) {
	dir := t.TempDir()
	noNIC := filepath.Join(dir, "bare.toml")
	m, err := os.ReadFile("../../configs/machines/r4000.toml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(m)
	i := strings.Index(text, "# An NE2000")
	j := strings.Index(text, "[costs]")
	if i < 0 || j < i {
		t.Fatal("r4000.toml no longer has its NE2000 before [costs]")
	}
	if err := os.WriteFile(noNIC, []byte(text[:i]+text[j:]), 0o644); err != nil {
		t.Fatal(err)
	}
	machineFile := "../../configs/machines/r4000.toml"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{machineFile, "--protocols", "udp,smoke"}, `"smoke" is not a protocol (known: udp, tcp`},
		{[]string{machineFile, "--protocols", "udp,udp"}, `"udp" twice`},
		{[]string{machineFile, "--baseline", "tcp", "--protocols", "udp"}, `baseline: "tcp" is not among the protocols`},
		{[]string{machineFile, "--sizes", "4KiB-4B"}, "--sizes 4KiB-4B: want 0 < LO <= HI"},
		{[]string{machineFile, "--sizes", "2"}, "r4000.toml as two hosts: --sizes 2: workload.compare.sizes[0]: 2 is below the minimum 4"},
		{[]string{machineFile, "--messages", "0"}, "--messages 0: workload.compare.messages: 0 is below the minimum 1"},
		{[]string{machineFile, "--set", "machine.cpu.clokc=1GHz"}, `--set machine.cpu.clokc=1GHz: cpu.clokc: unknown key (did you mean "clock"?)`},
		{[]string{machineFile, "--set", "machine.clok.hz=1"}, "--set machine.clok.hz=1: clok: unknown key"},
		{[]string{machineFile, "--set", "novalue"}, `--set "novalue": want KEY=VALUE`},
		{[]string{noNIC}, "has no network device"},
		{[]string{"../../configs/quickstart.toml"}, "no two hosts with an IPv4 address"},
		{[]string{filepath.Join(dir, "missing.toml")}, "missing.toml"},
	} {
		out := filepath.Join(dir, "out")
		st, _, stderr := simkron(t, append([]string{"compare", "-q", "--out", out}, c.args...)...)
		if st != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("compare %v: exit %d, %q; want exit %d and %q", c.args, st, stderr, exitUsage, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("compare %v wrote %s", c.args, out)
			os.RemoveAll(out)
		}
	}
}

// Every machine file with a network card compares on its card: the
// NE2000s on a shared 10 Mbit/s segment (TP4 too: [iso] is on), the
// study's bus-master NICs on a gigabit switch (TP4 and VIA), the
// DECstations' ATM cards through a switch (UDP and TCP; TP4 too, over
// CLNP over AAL5, when the machine enables [iso]).
func TestCompareEveryMachine(t *testing.T) {
	for _, c := range []struct {
		machine string
		set     []string
		paths   []string
	}{
		{"i486dx33", nil, []string{"UDP", "TCP", "TP4"}},
		{"r4000", nil, []string{"UDP", "TCP", "TP4"}},
		{"simos-mipsy", nil, []string{"UDP", "TCP", "TP4", "VIA"}},
		{"ds5000-200", nil, []string{"UDP", "TCP"}},
		{"ds5000-25", nil, []string{"UDP", "TCP"}},
		{"ds5000-200", []string{"--set", "machine.iso.enabled=true"}, []string{"UDP", "TCP", "TP4"}},
		{"ds5000-25", []string{"--set", "machine.iso.enabled=true"}, []string{"UDP", "TCP", "TP4"}},
	} {
		out := filepath.Join(t.TempDir(), c.machine)
		args := append([]string{"compare", "-q", "../../configs/machines/" + c.machine + ".toml", "--protocols", "udp,tcp,tp4,via",
			"--sizes", "64,4096", "--messages", "2", "--out", out}, c.set...)
		st, _, stderr := simkron(t, args...)
		if st != exitOK {
			t.Errorf("%s: exit %d: %s", c.machine, st, stderr)
			continue
		}
		rows := compareRows(t, readRaw(t, filepath.Join(out, "result.json")))
		var got []string
		for _, p := range []string{"UDP", "TCP", "TP4", "VIA"} {
			if _, ok := rows[[2]string{"4096", p}]; ok {
				got = append(got, p)
			}
		}
		if !reflect.DeepEqual(got, c.paths) {
			t.Errorf("%s %v: compared %v, want %v", c.machine, c.set, got, c.paths)
		}
	}
}

// run --set changes keys of the experiment and its machine files; a bad
// one names itself, exit 2.
func TestRunSet(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r")
	st, _, stderr := simkron(t, "run", "-q", "../../configs/udp-r4000.toml", "--set", "workload.udp.sizes=[64]",
		"--set", "workload.udp.messages=2", "--set", "machine.cpu.clock=50MHz", "--out", out)
	if st != exitOK {
		t.Fatalf("exit %d: %s", st, stderr)
	}
	res := readRaw(t, filepath.Join(out, "result.json"))
	var rows []struct {
		Size     int `json:"size"`
		Messages int `json:"messages"`
	}
	if err := json.Unmarshal(res["udp"], &rows); err != nil || len(rows) != 1 || rows[0].Size != 64 || rows[0].Messages != 2 {
		t.Errorf("rows %+v (%v)", rows, err)
	}
	if !bytes.Contains(res["hosts"], []byte(`"clock_hz": 50000000,`)) {
		t.Errorf("the machine files' clock was not set: %.200s", res["hosts"])
	}
	st, _, stderr = simkron(t, "run", "-q", "../../configs/udp-r4000.toml", "--set", "workload.udp.mesages=2")
	if st != exitUsage || !strings.Contains(stderr, `--set workload.udp.mesages=2: workload.udp.mesages: unknown key (did you mean "messages"?)`) {
		t.Errorf("exit %d: %s", st, stderr)
	}
}

// compare on the Linux/SimOS study's machine file, with no flag, is the
// study's experiment (configs/simos-study.toml): its network, its
// definitions of the latencies, its sizes, counts and TCP settings, its
// baseline. Every figure the two share — each protocol's rows (latencies,
// layers, round trips) and the factors of UDP and TCP against VIA — is the
// same; compare runs TP4 after the study's three, and says what it used.
func TestCompareStudyMachineIsTheStudy(t *testing.T) {
	dir := t.TempDir()
	cmp, study := filepath.Join(dir, "compare"), filepath.Join(dir, "study")
	st, stdout, stderr := simkron(t, "compare", "../../configs/machines/simos-mipsy.toml", "--out", cmp)
	if st != exitOK {
		t.Fatalf("compare exited %d: %s", st, stderr)
	}
	if st, _, stderr := simkron(t, "run", "-q", "../../configs/simos-study.toml", "--out", study); st != exitOK {
		t.Fatalf("run exited %d: %s", st, stderr)
	}
	a, b := readRaw(t, filepath.Join(cmp, "result.json")), readRaw(t, filepath.Join(study, "result.json"))
	for _, k := range []string{"udp", "tcp", "via"} {
		if len(b[k]) == 0 || !bytes.Equal(a[k], b[k]) {
			t.Errorf("compare's %s rows differ from the study's", k)
		}
	}
	if len(a["tp4"]) == 0 {
		t.Error("compare ran no TP4 after the study's three")
	}
	ca, cb := compareRows(t, a), compareRows(t, b)
	n := 0
	for k, v := range cb {
		if !reflect.DeepEqual(ca[k], v) {
			t.Errorf("%v: compare %v, the study %v", k, ca[k], v)
		}
		n++
	}
	if n != 3*11 {
		t.Errorf("the study's side-by-side table has %d rows, want 33 (3 protocols, 11 sizes)", n)
	}
	for _, want := range []string{`send_span = "dma"`, `receive_span = "dma"`, "baseline    VIA",
		"hostA on lan0: 1Gbps switch, 1us switch latency, 100ns propagation", "factor = protocol / VIA"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("compare's output lacks %q", want)
		}
	}
}
