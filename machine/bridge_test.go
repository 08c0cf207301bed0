package machine_test

import (
	"strings"
	"testing"

	"simkron/internal/machinetest"
	"simkron/machine"
)

// bridgedExperiment is two hosts on a segment bridged to TAP sk0, with
// more appended.
func bridgedExperiment(more string) string {
	return `[experiment]
name = "bridged"

[[segment]]
name = "lan0"
[[segment.bridge]]
tap = "sk0"

[[host]]
name = "pcA"
machine = "machines/i486dx33.toml"
[[host.nic]]
device = "nic0"
segment = "lan0"
mac = "02:00:00:00:00:0a"
ip = "10.0.0.1"

[workload]
type = "serve"
` + more
}

// A bridged experiment loads and builds without touching the host's
// network: its TAP is opened only by OpenBridges.
func TestBridgeConfigBuilds(t *testing.T) {
	exp, err := machine.LoadExperimentBytes("../configs/bridged.toml", []byte(bridgedExperiment("")), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := machinetest.Segments(exp)[0].Bridges; len(got) != 1 || got[0].TAP != "sk0" || got[0].Queue != 1000 {
		t.Errorf("bridges %+v, want sk0 with a queue of 1000", got)
	}
	r, err := machine.New(exp, machine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.Bridged() {
		t.Error("the run does not know it is bridged")
	}
	err = machine.RefuseBridges(exp, "simkron sweep")
	if err == nil || !strings.Contains(err.Error(), "bridged.toml:6: segment[0].bridge: segment \"lan0\" is bridged to TAP sk0") ||
		!strings.Contains(err.Error(), "simkron sweep cannot") {
		t.Errorf("RefuseBridges = %v", err)
	}
}

// Bad bridges are reported at their line with their key, before anything
// is built.
func TestBridgeConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
	}{
		{"name too long", strings.Replace(bridgedExperiment(""), `tap = "sk0"`, `tap = "sk0123456789abcd"`, 1),
			`bridged.toml:7: segment[0].bridge[0].tap: TAP name "sk0123456789abcd" is 16 bytes long; a Linux interface name has at most 15`},
		{"bad characters", strings.Replace(bridgedExperiment(""), `tap = "sk0"`, `tap = "sk/0"`, 1),
			`bridged.toml:7: segment[0].bridge[0].tap: TAP name "sk/0" may hold only letters, digits`},
		{"no name", strings.Replace(bridgedExperiment(""), `tap = "sk0"`, `queue = 10`, 1),
			`segment[0].bridge[0].tap: the TAP device's name is empty`},
		{"queue of 0", strings.Replace(bridgedExperiment(""), `tap = "sk0"`, "tap = \"sk0\"\nqueue = 0", 1),
			`bridged.toml:8: segment[0].bridge[0].queue: 0 is below the minimum 1`},
		{"one TAP twice on a segment", strings.Replace(bridgedExperiment(""), `tap = "sk0"`, "tap = \"sk0\"\n[[segment.bridge]]\ntap = \"sk0\"", 1),
			`bridged.toml:9: segment[0].bridge[1].tap: TAP "sk0" is already bridged to segment "lan0" (line 7): one TAP device carries one bridge`},
		{"one TAP on two segments", bridgedExperiment("\n[[segment]]\nname = \"lan1\"\n[[segment.bridge]]\ntap = \"sk0\"\n"),
			`segment[1].bridge[0].tap: TAP "sk0" is already bridged to segment "lan0" (line 7)`},
		{"a bridge on an ATM link", bridgedExperiment("\n[[atm_link]]\nname = \"a\"\n[[atm_link.bridge]]\ntap = \"sk1\"\n"),
			`bridged.toml:23: atm_link[0].bridge: an ATM link carries cells, not Ethernet frames, and cannot be bridged`},
		{"a bridge on an ATM switch", bridgedExperiment("\n[[atm_link]]\nname = \"a\"\n[[atm_switch]]\nname = \"sw\"\nports = [\"a\"]\n[atm_switch.bridge]\ntap = \"sk1\"\n"),
			`atm_switch[0].bridge: an ATM switch carries cells, not Ethernet frames, and cannot be bridged`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := machine.LoadExperimentBytes("../configs/bridged.toml", []byte(tc.text), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v\nwant one saying %q", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "unknown key") {
				t.Errorf("the bridge is also reported as an unknown key: %v", err)
			}
		})
	}
}
