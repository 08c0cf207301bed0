package inet_test

// The end-to-end tests of this package run the Internet protocols on
// whole simulated hosts: machinetest's rig of two 486s with NE2000 cards
// on one segment (configs/udp-ne2000.toml), the latency sweeps over it,
// or one host against gVisor's netstack. These are their short names for
// machinetest's helpers.

import (
	"testing"

	"simkron/devices/ne2000"
	"simkron/ethersim"
	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/machine/parts/ethernet"
	"simkron/report"
	"simkron/stack/apps/latency"
	"simkron/stack/apps/membench"
	"simkron/stack/apps/tcp"
	"simkron/stack/apps/ttcp"
	"simkron/stack/apps/udp"
	drvne2000 "simkron/stack/driver/ne2000"
)

func host(t testing.TB, r *machine.Run, name string) *machine.Host {
	return machinetest.Host(t, r, name)
}
func build(t testing.TB, exp *machine.Experiment, opt machine.Options) *machine.Run {
	return machinetest.Build(t, exp, opt)
}
func execute(t testing.TB, r *machine.Run) *report.Result     { return machinetest.Execute(t, r) }
func lan0(t testing.TB, r *machine.Run) *ethersim.Segment     { return machinetest.Segment(t, r, "lan0") }
func ownMachine(exp *machine.Experiment, i int) *machine.Spec { return machinetest.OwnMachine(exp, i) }
func noWorkload(exp *machine.Experiment)                      { machinetest.NoWorkload(exp) }
func ne2k(n *ethernet.NIC) *ne2000.NE2000                     { return machinetest.NE2000(n) }
func ne2kDriver(n *ethernet.NIC) *drvne2000.Driver            { return machinetest.NE2000Driver(n) }
func udpRows(r *report.Result) []latency.Row                  { return machinetest.Section[[]latency.Row](r, "udp") }
func udpParams(e *machine.Experiment) *udp.Params {
	return machinetest.Params[udp.Params](e, "udp")
}
func tcpParams(e *machine.Experiment) *tcp.Params {
	return machinetest.Params[tcp.Params](e, "tcp")
}
func ttcpParams(e *machine.Experiment) *ttcp.Params {
	return machinetest.Params[ttcp.Params](e, "ttcp")
}
func membenchParams(e *machine.Experiment) *membench.Params {
	return machinetest.Params[membench.Params](e, "membench")
}

// runSweep builds and runs exp to its end.
func runSweep(t *testing.T, exp *machine.Experiment) (*report.Result, *machine.Run) {
	t.Helper()
	r := build(t, exp, machine.Options{})
	res, err := r.Execute(machine.Options{})
	if err != nil || !res.Complete {
		t.Fatal(err, res.Incomplete)
	}
	return res, r
}
