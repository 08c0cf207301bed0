package machine_test

import (
	"fmt"

	"simkron/devices/ne2000"
	"simkron/machine"
	"simkron/machine/parts/ethernet"
	"simkron/report"
	"simkron/stack/apps/latency"
	macbench "simkron/stack/apps/mac"
	"simkron/stack/apps/membench"
	"simkron/stack/apps/tcp"
	"simkron/stack/apps/ttcp"
	"simkron/stack/apps/udp"
	drvne2000 "simkron/stack/driver/ne2000"

	_ "simkron/stack/apps" // the built-in workloads
)

// The workloads' sections of a result and their parameters in an
// experiment, typed, for the tests.

func section[T any](r *report.Result, name string) T {
	var v T
	if err := r.Section(name, &v); err != nil {
		panic(fmt.Sprintf("section %s: %v", name, err))
	}
	return v
}

func udpRows(r *report.Result) []latency.Row       { return section[[]latency.Row](r, "udp") }
func tcpRows(r *report.Result) []latency.Row       { return section[[]latency.Row](r, "tcp") }
func macRows(r *report.Result) []macbench.Row      { return section[[]macbench.Row](r, "mac") }
func ttcpResults(r *report.Result) []ttcp.Result   { return section[[]ttcp.Result](r, "ttcp") }
func membenchRows(r *report.Result) []membench.Row { return section[[]membench.Row](r, "membench") }

func params[T any](e *machine.Experiment, name string) *T { return e.Workload.Params[name].(*T) }

func udpParams(e *machine.Experiment) *udp.Params      { return params[udp.Params](e, "udp") }
func tcpParams(e *machine.Experiment) *tcp.Params      { return params[tcp.Params](e, "tcp") }
func macParams(e *machine.Experiment) *macbench.Params { return params[macbench.Params](e, "mac") }
func ttcpParams(e *machine.Experiment) *ttcp.Params    { return params[ttcp.Params](e, "ttcp") }
func membenchParams(e *machine.Experiment) *membench.Params {
	return params[membench.Params](e, "membench")
}

// ne2k and ne2kDriver return a NIC's NE2000 and its driver.
func ne2k(n *ethernet.NIC) *ne2000.NE2000 { return n.Card.(*ne2000.NE2000) }
func ne2kDriver(n *ethernet.NIC) *drvne2000.Driver {
	return n.Driver.(ethernet.NE2000Driver).Driver
}
