package machine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"simkron/internal/machinetest"
	"simkron/machine"
	drvne2000 "simkron/stack/driver/ne2000"
)

// loadTTCPStall writes configs/ttcp-stall.toml, edited, and the machine
// file it names into a fresh folder and loads it.
func loadTTCPStall(t *testing.T, edits ...string) (*machine.Experiment, string, error) {
	t.Helper()
	text, err := os.ReadFile("../configs/ttcp-stall.toml")
	if err != nil {
		t.Fatal(err)
	}
	m, err := os.ReadFile("../configs/machines/i486dx33.toml")
	if err != nil {
		t.Fatal(err)
	}
	e := string(text)
	for i := 0; i < len(edits); i += 2 {
		e = edit(t, e, edits[i], edits[i+1])
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "machines"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "machines/i486dx33.toml", string(m))
	exp, err := machine.LoadExperiment(write(t, dir, "e.toml", e))
	return exp, e, err
}

// lineOf returns the 1-based line of the first line of text holding s.
func lineOf(text, s string) int {
	for i, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			return i + 1
		}
	}
	return 0
}

// An experiment's [host.inet] and [[host.nic]] mtu reach the host they
// name and no other.
func TestExperimentOverrides(t *testing.T) {
	exp, _, err := loadTTCPStall(t, `[host.inet]
tcp_delack_style = "bsd"
tcp_mss_cluster = "2KiB"
tcp_min_rto = "1s"`, `[host.inet]
tcp_delack_style = "linux"`, "mtu = 4352", "mtu = 3000")
	if err != nil {
		t.Fatal(err)
	}
	a, b := exp.Hosts[0].Machine, exp.Hosts[1].Machine
	if machinetest.InetParams(a).TCPDelAckStyle != "linux" || machinetest.InetParams(a).TCPMSSCluster != 0 || machinetest.InetParams(a).MTU != 3000 {
		t.Errorf("host 0: inet %+v", machinetest.InetParams(a))
	}
	if machinetest.InetParams(b).TCPDelAckStyle != "bsd" || machinetest.InetParams(b).TCPMSSCluster != 2048 || machinetest.InetParams(b).MTU != 4352 {
		t.Errorf("host 1: inet %+v", machinetest.InetParams(b))
	}
	for i, want := range []int{3000, 4352} {
		drv := exp.Hosts[i].Machine.Devices[len(exp.Hosts[i].Machine.Devices)-1].Driver.(*drvne2000.Params)
		if drv.MTU != want {
			t.Errorf("host %d: driver mtu %d, want %d", i, drv.MTU, want)
		}
	}
	if _, err := machine.New(exp, machine.Options{}); err != nil {
		t.Fatal(err)
	}
}

// Mistakes in the overrides name the experiment file, line and key.
func TestExperimentOverrideErrors(t *testing.T) {
	tests := []struct {
		name, old, new, at, want string
	}{
		{"unknown inet key", `tcp_delack_style = "bsd"`, `tcp_delack_stile = "bsd"`, "tcp_delack_stile", "host[0].inet.tcp_delack_stile: unknown key"},
		{"bad delack style", `tcp_delack_style = "bsd"`, `tcp_delack_style = "solaris"`, "solaris", `host[0].inet.tcp_delack_style: "solaris" is not a style`},
		{"inet range", `tcp_min_rto = "1s"`, `tcp_min_rto = "0s"`, "tcp_min_rto", "host[0].inet.tcp_min_rto:"},
		{"segment too short", `max_frame = "4370B"`, `max_frame = "1518B"`, "mtu = 4352", `host[0].nic[0].mtu: 4352 needs frames of 4370 bytes; segment "ring0" carries at most 1518B`},
		{"driver cannot", "mtu = 4352", "mtu = 6000", "mtu = 6000", "host[0].nic[0].mtu: 6000:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, text, err := loadTTCPStall(t, tc.old, tc.new)
			if err == nil {
				t.Fatalf("no error; want %q", tc.want)
			}
			want := fmt.Sprintf("e.toml:%d: %s", lineOf(text, tc.at), tc.want)
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error:\n%v\nwant it to contain %q", err, want)
			}
		})
	}
}

// The programs' own functions are defined when the workload is set up,
// so a machine's [costs] may name them.
func TestWorkloadCostsOverride(t *testing.T) {
	for cfg, name := range map[string]string{"../configs/ttcp-stall.toml": "ttcp_main", "../configs/tcp-ne2000.toml": "tcpbench_main"} {
		exp, err := machine.LoadExperiment(cfg)
		if err != nil {
			t.Fatal(err)
		}
		m := ownMachine(exp, 0)
		m.Costs = map[string]int64{name: 55}
		r, err := machine.New(exp, machine.Options{})
		if err != nil {
			t.Errorf("%s: [costs] %s: %v", cfg, name, err)
			continue
		}
		if s, ok := r.Hosts[0].Syms.Lookup(name); !ok || s.Instructions != 55 {
			t.Errorf("%s: %s not defined with the override", cfg, name)
		}
		r.Close()
	}
}
