package machine_test

import (
	"os"

	"strings"
	"testing"

	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/stack/kernel"
	"simkron/stack/top"
	"simkron/workload"
)

// topMachine is the TOP study's PC, from its machine file.
func topMachine(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../configs/machines/top-pc486.toml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const topExperiment = `[experiment]
name = "e"

[[segment]]
name = "lan0"

[[host]]
name = "a"
machine = "m.toml"
[[host.nic]]
device = "nic0"
segment = "lan0"
mac = "02:00:00:00:00:01"

[[host]]
name = "l"
machine = "m.toml"
[host.top.pktdrv]
loopback = true

[workload]
type = "top"
[workload.top]
loopback = "l"
sizes = [128]
messages = 10
[[workload.top.case]]
name = "c"
levels = ["mac"]
remote = false
`

// Every way a TOP host's machine file or experiment can be wrong is an
// error at its file, line and key.
func TestTOPConfigErrors(t *testing.T) {
	tests := []struct {
		name       string
		old, new   string
		experiment bool
		want       string
	}{
		{name: "kernel timer", old: `type = "pit"`, new: "type = \"timer\"", want: `m.toml:63: device[0].type: a TOP host has no kernel to drive a timer`},
		{name: "no tick", old: "pit_base = 0x40", new: "pit_base = 0x50", want: "m.toml:99: top.pit_base: no pit device at 0x50 on irq 0"},
		{name: "via", old: "\n[top]\n", new: "\n[via]\nenabled = true\n\n[top]\n", want: "m.toml:86: via.enabled: a TOP host has no kernel for the VIA agent"},
		{name: "code over data", old: "kernel_text = 0x10000", new: "kernel_text = 0x40000", want: "m.toml:28: memory.kernel_text: the programs' code at 0x40000 must lie below their data"},
		{name: "bad station key", old: "timers = 64", new: "timers = 64\ntimer = 3", want: `m.toml:98: top.timer: unknown key (did you mean "timers"?)`},
		{name: "bad station value", old: "wheel_slots = 256", new: "wheel_slots = 4", want: "m.toml:96: top.wheel_slots: 4 is below the minimum 8"},
		{name: "ip on a TOP host", experiment: true, old: `mac = "02:00:00:00:00:01"`, new: "mac = \"02:00:00:00:00:01\"\nip = \"10.0.0.1\"", want: `e.toml:14: host[0].nic[0].ip: host "a" runs the TOP environment: no Internet protocols`},
		{name: "bad host.top key", experiment: true, old: "loopback = true", new: "loopbak = true", want: `e.toml:19: host[1].top.pktdrv.loopbak: unknown key (did you mean "loopback"?)`},
		{name: "host.top enabled", experiment: true, old: "[host.top.pktdrv]", new: "[host.top]\nenabled = false\n[host.top.pktdrv]", want: "e.toml:19: host[1].top.enabled: unknown key"},
		{name: "not a TOP host for the workload", experiment: true, old: `loopback = "l"`, new: `loopback = "x"`, want: `e.toml:24: workload.top.loopback: no [[host]] is called "x"`},
		{name: "unknown level", experiment: true, old: `levels = ["mac"]`, new: `levels = ["ip"]`, want: `e.toml:29: workload.top.case[0].levels: no layer user "ip"`},
		{name: "case TP4 settings", experiment: true, old: `levels = ["mac"]`, new: "levels = [\"tp4\"]\nack_step = 12", want: `e.toml:30: workload.top.case[0].ack_step: 12 is above the credit 8`},
		{name: "too large for the MAC user", experiment: true, old: "sizes = [128]", new: "sizes = [1501]", want: "e.toml:25: workload.top.sizes: 1501 octets is more than the mac user sends in one message (1500)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			m, e := topMachine(t), topExperiment
			if tc.experiment {
				e = edit(t, e, tc.old, tc.new)
			} else {
				m = edit(t, m, tc.old, tc.new)
			}
			write(t, dir, "m.toml", m)
			_, err := machine.LoadExperiment(write(t, dir, "e.toml", e))
			if err == nil {
				t.Fatalf("no error; want one containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error:\n%v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

// A [host.top] on a host whose machine does not run the TOP environment
// is refused at its line.
func TestHostTOPNeedsTOPMachine(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "m.toml", goodMachine)
	_, err := machine.LoadExperiment(write(t, dir, "e.toml", strings.Replace(goodExperiment, `machine = "m.toml"`, "machine = \"m.toml\"\n[host.top]\nnsap = \"490001020000000001\"", 1)))
	if err == nil || !strings.Contains(err.Error(), `e.toml:7: host[0].top: machine "m" does not run the TOP environment`) {
		t.Errorf("error %v", err)
	}
}

// A TOP host has no kernel: workloads find its station, whose packet
// driver is its NE2000's, loops back when [host.top.pktdrv] says so, and
// whose NSAP is its station address's unless [host.top] gives one.
func TestTOPHostComponents(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "m.toml", topMachine(t))
	e := edit(t, topExperiment, "[host.top.pktdrv]", "[host.top]\nnsap = \"49000102000000000901\"\n[host.top.pktdrv]")
	exp, err := machine.LoadExperiment(write(t, dir, "e.toml", e))
	if err != nil {
		t.Fatal(err)
	}
	r, err := machine.New(exp, machine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, h := range r.Hosts {
		var v workload.Host = hostOf(h)
		if _, ok := workload.Find[*kernel.Kernel](v); ok {
			t.Errorf("%s: a kernel", h.Name)
		}
		st, ok := workload.Find[*top.Station](v)
		if !ok || st != machinetest.Station(h) {
			t.Fatalf("%s: no station among %v", h.Name, v.Components())
		}
		if n := len(st.Drivers()); n != 1 {
			t.Fatalf("%s: %d packet drivers", h.Name, n)
		}
		loop := h.Name == "l"
		if st.Drivers()[0].Loopback() != loop {
			t.Errorf("%s: loopback %v", h.Name, !loop)
		}
		want := "490001020000000001" + "00"
		if loop {
			want = "49000102000000000901"
		}
		if got := st.NSAP().String(); got != want {
			t.Errorf("%s: NSAP %s, want %s", h.Name, got, want)
		}
	}
}

// hostOf is a host as workloads see it, found through the run's
// environment the way the workload's New is given it.
func hostOf(h *machine.Host) workload.Host { return machine.HostView(h) }

// A case that needs hosts the workload does not name is refused before
// anything runs.
func TestTOPCaseNeedsHosts(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "m.toml", topMachine(t))
	exp, err := machine.LoadExperiment(write(t, dir, "e.toml", edit(t, topExperiment, "remote = false", "remote = true")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := machine.New(exp, machine.Options{}); err == nil || !strings.Contains(err.Error(), "workload.top: case[0].remote: the remote cases need an originator and a recipient") {
		t.Errorf("error %v", err)
	}
}
