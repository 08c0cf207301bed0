package machine_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"simkron/config"
	"simkron/cpu"
	"simkron/machine"
)

const goodMachine = `[machine]
name = "m"

[cpu]
clock = "33MHz"
cpi = 1.5
irq_lines = 16

[memory]
size = "16MiB"

[cache.l1]
size = "8KiB"
line = "16B"
assoc = 4
hit_latency = 1
write_policy = "write-back"
write_allocate = true

[[bus]]
name = "isa"
access_time = "1us"
width = 2

[[device]]
name = "timer0"
type = "timer"
space = "io"
base = 0x40
bus = "isa"
irq = 0
[device.params]
hz = 100
`

const goodExperiment = `[experiment]
name = "e"

[[host]]
name = "a"
machine = "m.toml"

[workload]
type = "membench"
[workload.membench]
max_size = "4KiB"
`

// edit returns text with the first occurrence of old replaced by new, and
// fails the test if old is missing.
func edit(t *testing.T, text, old, new string) string {
	t.Helper()
	if !strings.Contains(text, old) {
		t.Fatalf("%q not in the config", old)
	}
	return strings.Replace(text, old, new, 1)
}

func write(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Every way a machine or experiment file can be wrong is an error that
// names the file, the line and the key.
func TestConfigErrors(t *testing.T) {
	extraDevice := `
[[device]]
name = "timer1"
type = "timer"
space = "io"
base = 0x50
bus = "isa"
irq = 1
`
	tests := []struct {
		name       string
		machine    string // edits of goodMachine: old -> new
		old, new   string
		experiment bool   // edit the experiment instead
		want       string // substring of the error
	}{
		{name: "unknown key", old: "cpi = 1.5", new: "cpi = 1.5\nclok = \"1MHz\"", want: "m.toml:7: cpu.clok: unknown key"},
		{name: "unknown key suggestion", old: "cpi = 1.5", new: "cpi = 1.5\nclok = \"1MHz\"", want: `did you mean "clock"`},
		{name: "wrong type", old: `clock = "33MHz"`, new: "clock = 33", want: "m.toml:5: cpu.clock:"},
		{name: "bad unit", old: `clock = "33MHz"`, new: `clock = "33MHZ"`, want: "m.toml:5: cpu.clock:"},
		{name: "below range", old: "cpi = 1.5", new: "cpi = 0.01", want: "m.toml:6: cpu.cpi:"},
		{name: "above range", old: "irq_lines = 16", new: "irq_lines = 64", want: "m.toml:7: cpu.irq_lines:"},
		{name: "cache line not power of two", old: `line = "16B"`, new: `line = "24B"`, want: "m.toml:14: cache.l1.line:"},
		{name: "unknown write policy", old: `"write-back"`, new: `"write-around"`, want: "m.toml:17: cache.l1.write_policy:"},
		{name: "unknown device type", old: `type = "timer"`, new: `type = "tmr"`, want: `m.toml:27: device[0].type: unknown device type "tmr"`},
		{name: "unknown device param", old: "hz = 100", new: "hz = 100\nfreq = 3", want: "m.toml:34: device[0].params.freq: unknown key"},
		{name: "device param range", old: "hz = 100", new: "hz = 0", want: "m.toml:33: device[0].params.hz:"},
		{name: "undefined bus", old: `bus = "isa"`, new: `bus = "pci"`, want: `m.toml:30: device[0].bus: bus "pci" is not defined`},
		{name: "irq beyond lines", old: "irq = 0", new: "irq = 20", want: "m.toml:31: device[0].irq: line 20 does not exist"},
		{name: "overlapping devices", old: "hz = 100", new: "hz = 100\n" + strings.Replace(strings.Replace(extraDevice, "0x50", "0x48", 1), "irq = 1", "irq = 2", 1), want: `device[1].base: io range [0x48, 0x60) of "timer1" overlaps [0x40, 0x58) of "timer0"`},
		{name: "shared irq", old: "hz = 100", new: "hz = 100\n" + strings.Replace(extraDevice, "irq = 1", "irq = 0", 1), want: `device[1].irq: line 0 is already used by device "timer0"`},
		{name: "duplicate device", old: "hz = 100", new: "hz = 100\n" + strings.Replace(extraDevice, "timer1", "timer0", 1), want: `device[1].name: device "timer0" is defined twice`},
		{name: "no cache", old: "[cache.l1]", new: "[cachex]", want: "m.toml:12: cachex: unknown key"},
		{name: "heap too large", old: `size = "16MiB"`, new: `size = "2MiB"`, want: "kernel.heap_size:"},
		{name: "syntax error", old: "cpi = 1.5", new: "cpi = = 1.5", want: "m.toml:6"},
		{name: "missing machine name", old: `name = "m"`, new: `description = "x"`, want: "m.toml:1: machine.name: a machine needs a name"},
		{name: "unknown workload", experiment: true, old: `type = "membench"`, new: `type = "x25"`, want: `e.toml:9: workload.type: unknown workload "x25"`},
		{name: "missing machine file", experiment: true, old: `"m.toml"`, new: `"nope.toml"`, want: "nope.toml"},
		{name: "bad host name", experiment: true, old: `name = "a"`, new: `name = "a b"`, want: `e.toml:5: host[0].name:`},
		{name: "workload validate", experiment: true, old: `max_size = "4KiB"`, new: `max_size = "32B"`, want: "e.toml:10: workload.membench: min_size"},
		{name: "unknown experiment key", experiment: true, old: `name = "e"`, new: "name = \"e\"\nsed = 3", want: "e.toml:3: experiment.sed: unknown key"},
		{name: "unknown detail", experiment: true, old: `name = "e"`, new: "name = \"e\"\ndetail = \"fast\"", want: `e.toml:3: experiment.detail: detail "fast": want "full" or "functional"`},
		{name: "functional without costs", experiment: true, old: `name = "e"`, new: "name = \"e\"\ndetail = \"functional\"", want: "e.toml:3: experiment.detail: functional: machine file " + "%DIR%/m.toml (host a) has no [functional] section: run `simkron calibrate %DIR%/e.toml`"},
		{name: "warm-up without functional detail", experiment: true, old: `name = "e"`, new: "name = \"e\"\nfull_detail_from = \"1s\"", want: "e.toml:3: experiment.full_detail_from: ends a functional warm-up, but the experiment's detail is full"},
		{name: "functional cost range", old: "[[bus]]", new: "[functional]\nread = -1\n\n[[bus]]", want: "m.toml:21: functional.read:"},
		{name: "negative cost", old: "[[bus]]", new: "[costs]\nip_output = -5000\n\n[[bus]]", want: "m.toml:21: costs.ip_output: -5000 is below the minimum 0"},
		{name: "cost past the maximum", old: "[[bus]]", new: "[costs]\n\"bcopy.word\" = 9223372036854775807\n\n[[bus]]", want: `m.toml:21: costs."bcopy.word": 9223372036854775807 is above the maximum 10000`},
		{name: "nan", old: "cpi = 1.5", new: "cpi = nan", want: "m.toml:6: cpu.cpi: expected a finite number, got float nan"},
		{name: "infinite", old: "[[bus]]", new: "[functional]\nread = inf\nwrite = 1\ncopy = 1\nfetch = 0\n\n[[bus]]", want: "m.toml:21: functional.read: expected a finite number, got float inf"},
		{name: "long name", experiment: true, old: `name = "a"`, new: `name = "` + strings.Repeat("a", 65) + `"`, want: `e.toml:5: host[0].name: name "aaaaaaaaaaaaaaaa"… is 65 characters long; a name has at most 64`},
		{name: "empty list", experiment: true, old: `max_size = "4KiB"`, new: "max_size = \"4KiB\"\nops = []", want: "e.toml:12: workload.membench.ops: is empty: give at least one value"},
		{name: "section of a workload that does not run", experiment: true, old: `max_size = "4KiB"`, new: "max_size = \"4KiB\"\n[workload.tcp]\nnodelay = true", want: `e.toml:12: workload.tcp: configures the tcp workload, which does not run (type = "membench")`},
		{name: "seed out of range", experiment: true, old: `name = "e"`, new: "name = \"e\"\nseed = 99999999999999999999", want: "e.toml:3: experiment.seed: 99999999999999999999 is out of range"},
		{name: "functional cost missing", old: "[[bus]]", new: "[functional]\nread = 1\nwrite = 1\nfetch = 0\n\n[[bus]]", want: "m.toml:20: functional: functional.copy is missing: give all four costs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			m, e := goodMachine, goodExperiment
			if tc.experiment {
				e = edit(t, e, tc.old, tc.new)
			} else {
				m = edit(t, m, tc.old, tc.new)
			}
			write(t, dir, "m.toml", m)
			p := write(t, dir, "e.toml", e)
			_, err := machine.LoadExperiment(p)
			if err == nil {
				t.Fatalf("no error; want one containing %q", tc.want)
			}
			if want := strings.ReplaceAll(tc.want, "%DIR%", dir); !strings.Contains(err.Error(), want) {
				t.Errorf("error:\n%v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

func TestGoodConfigLoads(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "m.toml", goodMachine)
	exp, err := machine.LoadExperiment(write(t, dir, "e.toml", goodExperiment))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := machine.New(exp, machine.Options{}); err != nil {
		t.Fatal(err)
	}
}

// Several problems in one file are all reported, in line order.
func TestConfigErrorsAllReported(t *testing.T) {
	dir := t.TempDir()
	m := edit(t, goodMachine, "cpi = 1.5", "cpi = 0.01")
	m = edit(t, m, "hz = 100", "hz = 100\nbogus = 1")
	m = edit(t, m, `clock = "33MHz"`, `clock = "fast"`)
	write(t, dir, "m.toml", m)
	_, err := machine.LoadExperiment(write(t, dir, "e.toml", goodExperiment))
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	i1, i2, i3 := strings.Index(msg, "cpu.clock"), strings.Index(msg, "cpu.cpi"), strings.Index(msg, "params.bogus")
	if i1 < 0 || i2 < 0 || i3 < 0 || !(i1 < i2 && i2 < i3) {
		t.Errorf("want all three problems in line order, got:\n%s", msg)
	}
}

// Ten mistakes spread over an experiment and two machine files are all
// reported in one run, each with its file, line and key, sorted; a
// machine file that does not exist is reported at the line naming it.
func TestEveryProblemAtOnce(t *testing.T) {
	dir := t.TempDir()
	m1 := edit(t, edit(t, goodMachine, `clock = "33MHz"`, `clok = "33MHz"`), "irq = 0", "irq = 40")
	m2 := edit(t, goodMachine, `[cache.l1]
size = "8KiB"`, `[cache.l1]
size = "7KiB"`)
	m2 = edit(t, m2, `name = "isa"`, `name = "is a"`)
	write(t, dir, "m1.toml", m1)
	write(t, dir, "m2.toml", m2)
	exp := `[experiment]
name = "e"
sed = 3

[[segment]]
name = "lan0"

[[host]]
name = "a"
machine = "m1.toml"

[[host]]
name = "b"
machine = "m2.toml"
[[host.nic]]
device = "nic0"
segment = "lan9"
mac = "03:00:00:00:00:01"

[[host]]
name = "c"
machine = "nosuch.toml"

[workload]
type = "membnch"
[workload.membench]
max_size = "64MiB"
`
	p := write(t, dir, "e.toml", exp)
	_, err := machine.LoadExperiment(p)
	if err == nil {
		t.Fatal("no error")
	}
	want := []string{
		p + ":3: experiment.sed: unknown key (did you mean \"seed\"?)",
		p + ":17: host[1].nic[0].segment: segment \"lan9\" is not defined",
		p + ":18: host[1].nic[0].mac: 03:00:00:00:00:01 is a group address",
		p + ":22: host[2].machine: nosuch.toml: no such file or directory",
		p + ":25: workload.type: unknown workload \"membnch\" (did you mean \"membench\"? known: ",
		p + ":27: workload.membench.max_size: 64MiB is above the maximum 16MiB",
		filepath.Join(dir, "m1.toml") + ":5: cpu.clok: unknown key (did you mean \"clock\"?)",
		filepath.Join(dir, "m1.toml") + ":31: device[0].irq: 40 is above the maximum 31",
		filepath.Join(dir, "m2.toml") + ":13: cache.l1.size: 7KiB is not a power of two",
		filepath.Join(dir, "m2.toml") + ":21: bus[0].name: name \"is a\" may hold only letters",
		filepath.Join(dir, "m2.toml") + ":30: device[0].bus: bus \"isa\" is not defined",
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Errorf("%d problems, want %d:\n%s", len(lines), len(want), err)
	}
	for _, w := range want {
		found := false
		for _, l := range lines {
			found = found || strings.HasPrefix(l, w)
		}
		if !found {
			t.Errorf("no problem %q in:\n%s", w, err)
		}
	}
	if !slices.IsSortedFunc(lines, func(a, b string) int { return cmpFileLine(a, b) }) {
		t.Errorf("problems not sorted:\n%s", err)
	}
}

// cmpFileLine orders "file:line: ..." messages by file, then line.
func cmpFileLine(a, b string) int {
	fa, ra, _ := strings.Cut(a, ":")
	fb, rb, _ := strings.Cut(b, ":")
	if fa != fb {
		return strings.Compare(fa, fb)
	}
	la, _, _ := strings.Cut(ra, ":")
	lb, _, _ := strings.Cut(rb, ":")
	na, _ := strconv.Atoi(la)
	nb, _ := strconv.Atoi(lb)
	return na - nb
}

// What only the built hosts can show — a [costs] or [layers] name that no
// modelled function has — is reported at its line of the file that gives
// it: the machine file's for [costs], the experiment's for [layers].
func TestBuildErrorsAtLine(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "m.toml", edit(t, goodMachine, "[[bus]]", "[costs]\nnosuch = 5\nbcopy = 40\n\n[[bus]]"))
	exp := edit(t, goodExperiment, "[workload]", "[layers]\nip_outptu = \"IP\"\n\n[workload]")
	p := write(t, dir, "e.toml", exp)
	e, err := machine.LoadExperiment(p)
	if err != nil {
		t.Fatal(err)
	}
	_, err = machine.New(e, machine.Options{})
	want := filepath.Join(dir, "m.toml") + ":21: costs.nosuch: names no modelled function or loop of host a (see simkron symbols)"
	if _, ok := errors.AsType[config.Errors](err); !ok || err.Error() != want {
		t.Errorf("New: %T %v\nwant config.Errors %q", err, err, want)
	}
	write(t, dir, "m.toml", goodMachine)
	if e, err = machine.LoadExperiment(p); err != nil {
		t.Fatal(err)
	}
	_, err = machine.New(e, machine.Options{})
	want = p + `:9: layers.ip_outptu: no host has a modelled function called "ip_outptu" (see simkron symbols ` + p + ")"
	if _, ok := errors.AsType[config.Errors](err); !ok || err.Error() != want {
		t.Errorf("New: %T %v\nwant config.Errors %q", err, err, want)
	}
}

// A workload's two ends must be different hosts, and hosts that exchange
// IPv4 packets must be on each other's subnet; both are found at load, at
// the workload's key.
func TestPeers(t *testing.T) {
	const udp = "../configs/udp-ne2000.toml"
	tests := []struct {
		name string
		sets []string // KEY=VALUE
		want string   // "" for no error
	}{
		{name: "good", sets: nil},
		{name: "same host", sets: []string{`workload.udp.server="pcA"`},
			want: `configs/udp-ne2000.toml: --set workload.udp.server="pcA": workload.udp.server: client and server name the same host "pcA": they must be different hosts`},
		{name: "other subnet", sets: []string{`host[1].nic[0].ip="10.0.1.2"`},
			want: `configs/udp-ne2000.toml:43: workload.udp.server: host "pcB" (10.0.1.2) is not on host "pcA"'s subnet (10.0.0.1, netmask 255.255.255.0)`},
		{name: "narrow netmask on one side", sets: []string{`host[0].nic[0].netmask="255.255.255.252"`, `host[1].nic[0].ip="10.0.0.6"`},
			want: `workload.udp.server: host "pcB" (10.0.0.6) is not on host "pcA"'s subnet (10.0.0.1, netmask 255.255.255.252)`},
		{name: "ping to itself", sets: []string{"workload.type=ping", `workload.ping.from="pcA"`, `workload.ping.to="pcA"`},
			want: `workload.ping.to: from and to name the same host "pcA": they must be different hosts`},
		// --set workload.type leaves [workload.udp] alone; a section set
		// on the command line of a workload that does not run is not.
		{name: "another workload chosen", sets: []string{"workload.type=tcp", `workload.tcp.client="pcA"`, `workload.tcp.server="pcB"`}},
		{name: "section of one that does not run", sets: []string{"workload.tcp.nodelay=true"},
			want: `workload.tcp: configures the tcp workload, which does not run (type = "udp")`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var o []machine.Override
			for _, s := range tc.sets {
				k, v, err := config.ParseSet(s)
				if err != nil {
					t.Fatal(err)
				}
				o = append(o, machine.Override{Key: k, Value: v, Origin: "--set " + s})
			}
			_, err := machine.LoadExperimentWith(udp, o)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v\nwant %q", err, tc.want)
			}
		})
	}
}

// The bounds of [costs] are cpu.MaxInstructions's, which keeps cycle
// arithmetic in range.
func TestCostBounds(t *testing.T) {
	for _, p := range config.Params("", machine.DefaultSpec()) {
		if p.Key == "costs" {
			if p.Min != "0" || p.Max != strconv.Itoa(cpu.MaxInstructions) {
				t.Errorf("costs range %s..%s, want 0..%d", p.Min, p.Max, cpu.MaxInstructions)
			}
			return
		}
	}
	t.Error("no costs parameter")
}
