package via_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/stack/apps/compare"
	"simkron/stack/apps/via"
)

// studyWith writes the study's experiment with old replaced by new beside
// its machine file and loads it.
func studyWith(t *testing.T, edits ...string) (*machine.Experiment, error) {
	t.Helper()
	return machine.LoadExperiment(studyFile(t, edits...))
}

// studyFile writes the study's config with edits into a temporary folder
// and returns its path.
func studyFile(t *testing.T, edits ...string) string {
	t.Helper()
	b, err := os.ReadFile(studyConfig)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(text, edits[i]) {
			t.Fatalf("%q not in the study's config", edits[i])
		}
		text = strings.Replace(text, edits[i], edits[i+1], 1)
	}
	abs, err := filepath.Abs("../../../configs/machines/simos-mipsy.toml")
	if err != nil {
		t.Fatal(err)
	}
	text = strings.ReplaceAll(text, `machine = "machines/simos-mipsy.toml"`, `machine = "`+abs+`"`)
	p := filepath.Join(t.TempDir(), "e.toml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Bad settings are reported at their key before anything runs.
func TestParamsChecked(t *testing.T) {
	for _, c := range []struct{ old, new, want string }{
		{"warmup = 2\nsend_span = \"dma\"", "warmup = 2\nsend_span = \"host\"", `workload.compare.send_span: "host" is neither "thread" nor "dma"`},
		{"\nreceive_span = \"dma\"", "\nreceive_span = \"busy\"", `workload.compare.receive_span: "busy" is neither "arrival" nor "dma"`},
		{`slots = 4`, "slots = 4\nsend_span = \"all\"", `workload.via.send_span: "all" is neither "thread" nor "dma"`},
		{`protocols = ["udp", "tcp", "via"]`, `protocols = ["udp", "tp5"]`, `protocols: "tp5" is not a protocol`},
		{`study = "linux-simos"`, `study = "linux-mips"`, `workload.compare.study: "linux-mips" is not a study simkron knows (known: linux-simos)`},
		{`protocols = ["udp", "tcp", "via"]`, `protocols = ["udp", "udp"]`, `protocols: "udp" twice`},
		{`reliability = "unreliable"`, `reliability = "sometimes"`, `reliability: "sometimes" is neither`},
		{`slots = 4`, `slots = 0`, `workload.via.slots`},
		{`server = "mipsB"`, `server = "mipsC"`, `workload.compare.server: no [[host]] is called "mipsC"`},
	} {
		_, err := studyWith(t, c.old, c.new)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", c.new, err, c.want)
		}
	}
}

// A host whose machine runs no VIA agent is refused with the reason when
// VIA is the comparison's baseline; otherwise VIA is left out, and the
// result says why.
func TestNoAgent(t *testing.T) {
	const why = `host "mipsB" runs no VIA agent on a card`
	exp, err := studyWith(t)
	if err != nil {
		t.Fatal(err)
	}
	machinetest.VIAParams(exp.Hosts[1].Machine).Enabled = false
	_, err = machine.New(exp, machine.Options{})
	if err == nil || !strings.Contains(err.Error(), "protocols: via: server: not supported by these hosts: "+why) {
		t.Fatalf("got %v", err)
	}
	exp, err = studyWith(t, `baseline = "via"`, `baseline = "udp"`)
	if err != nil {
		t.Fatal(err)
	}
	machinetest.VIAParams(exp.Hosts[1].Machine).Enabled = false
	p := exp.Workload.Params["compare"].(*compare.Params)
	p.Sizes, p.Messages = []int{64}, 2
	r, err := machine.New(exp, machine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute(machine.Options{})
	if err != nil || !res.Complete {
		t.Fatalf("run: %v %s", err, res.Incomplete)
	}
	if !strings.Contains(res.Figures.Text, "via: server: not supported by these hosts: "+why) || len(res.Sections) != 2 {
		t.Errorf("sections %d, text %q", len(res.Sections), res.Figures.Text)
	}
}

// The via workload runs on reliable-delivery VIs too, with the same
// messages and no error, and reports VIA's tables alone.
func TestReliable(t *testing.T) {
	// The workload is chosen as on a command line (--set), which leaves
	// the file's other workloads' sections alone.
	exp, err := machine.LoadExperimentWith(studyFile(t,
		`reliability = "unreliable"`, "reliability = \"reliable\"\nclient = \"mipsA\"\nserver = \"mipsB\""),
		[]machine.Override{{Key: "workload.type", Value: "via", Origin: "--set workload.type=via"}})
	if err != nil {
		t.Fatal(err)
	}
	p := exp.Workload.Params["via"].(*via.Params)
	p.Sizes, p.Messages = []int{4, 4096}, 3
	r, err := machine.New(exp, machine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute(machine.Options{})
	if err != nil || !res.Complete {
		t.Fatalf("run: %v %s", err, res.Incomplete)
	}
	var names []string
	for _, s := range res.Sections {
		names = append(names, s.Name)
	}
	if strings.Join(names, " ") != "via vpingpong" {
		t.Errorf("sections %v, want via and vpingpong", names)
	}
	st := study{res: res, run: r}
	for _, row := range st.rows(t, "via") {
		if row.Messages != 3 || row.Lost != 0 {
			t.Errorf("%d B: %d messages, %d lost", row.Size, row.Messages, row.Lost)
		}
	}
	for _, h := range r.Hosts {
		if s := machinetest.VIA(h).Stats(); s.ConnBroken != 0 || s.DropRecvQEmpty != 0 {
			t.Errorf("%s: %+v", h.Name, s)
		}
	}
	for _, tb := range res.Figures.Tables {
		if strings.HasPrefix(tb.Title, "factors") {
			t.Errorf("factors without a series to compare with")
		}
	}
}

// The UDP and TCP series check send_span too.
func TestSendSpanChecked(t *testing.T) {
	_, err := studyWith(t, "nodelay = true", "nodelay = true\nsend_span = \"all\"")
	if err == nil || !strings.Contains(err.Error(), `workload.tcp.send_span: "all" is neither`) {
		t.Errorf("got %v", err)
	}
}
