//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"simkron/ethersim"
	"simkron/internal/netnstest"
)

// The bridge's hostile cases (issue 41, real hosts on the simulated
// network; item 41 in the table): bad bridges in the config, a TAP that
// cannot be had (a name too long, another interface's, in use, no
// CAP_NET_ADMIN, no tun driver), commands that cannot run a bridged
// experiment, and Ctrl-C. The cases that touch TAPs run simkron in a
// network namespace the test makes, through a wrapper that the harness
// runs as the binary.
func TestHostileBridge(t *testing.T) {
	bin, root := hostileBinary(t)
	machineFile := filepath.Join(root, "configs/machines/i486dx33.toml")
	// bridged is a one-host experiment whose segment is bridged to sk0,
	// with segment and workload text replaced as the case needs.
	bridged := func(segmentMore, workload string) string {
		return fmt.Sprintf(`[experiment]
name = "hostile-bridge"
stop_at = "600s"

[[segment]]
name = "lan0"
[[segment.bridge]]
tap = "sk0"
%s
[[host]]
name = "pcA"
machine = %q
[[host.nic]]
device = "nic0"
segment = "lan0"
mac = "02:00:00:00:00:0a"
ip = "10.0.0.1"

[[host]]
name = "pcB"
machine = %q
[[host.nic]]
device = "nic0"
segment = "lan0"
mac = "02:00:00:00:00:0b"
ip = "10.0.0.2"

%s`, segmentMore, machineFile, machineFile, workload)
	}
	serve := "[workload]\ntype = \"serve\"\n"
	lineOf := func(text, s string) int { return 1 + strings.Count(text[:strings.Index(text, s)], "\n") }
	lineOfLast := func(text, s string) int { return 1 + strings.Count(text[:strings.LastIndex(text, s)], "\n") }
	long := strings.Replace(bridged("", serve), `tap = "sk0"`, `tap = "simkron-bridge-0"`, 1)
	twice := bridged("[[segment.bridge]]\ntap = \"sk0\"\n", serve)
	atm := bridged("\n[[atm_link]]\nname = \"a\"\n[[atm_link.bridge]]\ntap = \"sk1\"\n", serve)
	run := func(file string) []string { return []string{"run", "-q", "--out", "{out}", "{dir}/" + file} }

	// Config errors: no TAP is touched, no namespace needed.
	runHostile(t, []hostileCase{
		{item: 41, name: "a TAP name longer than an interface name",
			files: map[string]string{"b.toml": long}, args: run("b.toml"),
			status: exitUsage, wrote: wroteNothing,
			stderr: fmt.Sprintf(`{dir}/b.toml:%d: segment[0].bridge[0].tap: TAP name "simkron-bridge-0" is 16 bytes long; a Linux interface name has at most 15`, lineOf(long, "simkron-bridge-0"))},
		{item: 41, name: "two bridges on one TAP",
			files: map[string]string{"b.toml": twice}, args: run("b.toml"),
			status: exitUsage, wrote: wroteNothing,
			stderr: fmt.Sprintf(`{dir}/b.toml:%d: segment[0].bridge[1].tap: TAP "sk0" is already bridged to segment "lan0" (line %d): one TAP device carries one bridge`, lineOfLast(twice, `tap = "sk0"`), lineOf(twice, `tap = "sk0"`))},
		{item: 41, name: "a bridge on an ATM link",
			files: map[string]string{"b.toml": atm}, args: run("b.toml"),
			status: exitUsage, wrote: wroteNothing,
			stderr: fmt.Sprintf(`{dir}/b.toml:%d: atm_link[0].bridge: an ATM link carries cells, not Ethernet frames, and cannot be bridged`, lineOf(atm, "[[atm_link.bridge]]"))},
		{item: 41, name: "simkron sweep of a bridged experiment",
			files:  map[string]string{"b.toml": bridged("", serve)},
			args:   []string{"sweep", "--out", "{out}", "--set", "workload.serve.udp_port=7,9", "{dir}/b.toml"},
			status: exitUsage, wrote: wroteNothing, stderrAny: "run it with simkron run (simkron sweep cannot)"},
		{item: 41, name: "simkron compare of a bridged experiment",
			files: map[string]string{"b.toml": bridged("", serve)}, args: []string{"compare", "{dir}/b.toml"},
			status: exitUsage, wrote: wroteNothing, stderr: "run it with simkron run (simkron compare cannot)"},
		{item: 41, name: "simkron calibrate of a bridged experiment",
			files: map[string]string{"b.toml": bridged("", serve)}, args: []string{"calibrate", "{dir}/b.toml"},
			status: exitUsage, wrote: wroteNothing, stderr: "run it with simkron run (simkron calibrate cannot)"},
	})

	// The TAP itself, in a namespace of the case's own.
	netnstest.Require(t, "setpriv", "unshare", "timeout")
	type nsCase struct {
		hostileCase
		prepare func(t *testing.T, ns *netnstest.NS) // before simkron runs
		prefix  string                               // runs simkron: ip netns exec NS PREFIX simkron ARGS
	}
	file := map[string]string{"b.toml": bridged("", serve)}
	tapLine := lineOf(bridged("", serve), `tap = "sk0"`)
	at := fmt.Sprintf("{dir}/b.toml:%d: segment[0].bridge[0].tap: ", tapLine)
	pingRun := "[workload]\ntype = \"ping\"\n[workload.ping]\nfrom = \"pcA\"\nto = \"pcB\"\ncount = 1000\ninterval = \"1s\"\n"
	cases := []nsCase{
		{hostileCase: hostileCase{item: 41, name: "a TAP name another kind of interface has",
			files: map[string]string{"b.toml": strings.Replace(bridged("", serve), `tap = "sk0"`, `tap = "lo"`, 1)}, args: run("b.toml"),
			status: exitUsage, wrote: wroteNothing, stderr: at + "TAP lo: an interface of another kind (not a TAP device) is called lo"}},
		{hostileCase: hostileCase{item: 41, name: "a TAP another program has open",
			files: file, args: run("b.toml"), status: exitUsage, wrote: wroteNothing, stderr: at + "TAP sk0 is in use: another program (another simkron?) has it open"},
			prepare: func(t *testing.T, ns *netnstest.NS) {
				var tap *ethersim.TAP
				if err := ns.Do(func() (err error) { tap, err = ethersim.OpenTAP("sk0"); return err }); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { tap.Close() })
			}},
		{hostileCase: hostileCase{item: 41, name: "no CAP_NET_ADMIN to create the TAP",
			files: file, args: run("b.toml"), status: exitUsage, wrote: wroteNothing,
			stderr: at + "TAP sk0 does not exist, and creating it needs CAP_NET_ADMIN: make it for your user first (sudo ip tuntap add dev sk0 mode tap user $USER) or run simkron with CAP_NET_ADMIN"},
			prefix: "setpriv --inh-caps=-net_admin --bounding-set=-net_admin"},
		{hostileCase: hostileCase{item: 41, name: "no CAP_NET_ADMIN, and the TAP another user's",
			files: file, args: run("b.toml"), status: exitUsage, wrote: wroteNothing,
			stderr: at + "TAP sk0: permission denied: the device belongs to another user or group"},
			prepare: func(t *testing.T, ns *netnstest.NS) {
				ns.IP(t, "tuntap", "add", "dev", "sk0", "mode", "tap", "user", "65534")
			},
			prefix: "setpriv --inh-caps=-net_admin --bounding-set=-net_admin"},
		{hostileCase: hostileCase{item: 41, name: "no tun driver (/dev/net/tun missing)",
			files: file, args: run("b.toml"), status: exitUsage, wrote: wroteNothing,
			stderr: at + "TAP sk0: /dev/net/tun does not exist: the kernel's tun driver is missing (modprobe tun), or a container was started without the device"},
			prefix: `unshare -m sh -c 'mount -t tmpfs tmpfs /dev/net && exec "$0" "$@"'`},
		{hostileCase: hostileCase{item: 41, name: "Ctrl-C ends a server with no duration: complete",
			files: file, args: run("b.toml"), status: exitOK, wrote: wroteComplete,
			check: func(t *testing.T, dir, stdout, stderr string) {
				if s, _ := os.ReadFile(filepath.Join(dir, "out", "summary.txt")); !strings.Contains(string(s), "serve: stopped by SIGINT at ") || !strings.Contains(string(s), "ended by SIGINT") {
					t.Errorf("the summary does not say Ctrl-C ended the run:\n%s", s)
				}
			}},
			prefix: "timeout --preserve-status -s INT 2"},
		{hostileCase: hostileCase{item: 41, name: "SIGTERM ends a server with no duration: complete",
			files: file, args: run("b.toml"), status: exitOK, wrote: wroteComplete},
			prefix: "timeout --preserve-status -s TERM 2"},
		{hostileCase: hostileCase{item: 41, name: "Ctrl-C before a server's duration: incomplete",
			files: map[string]string{"b.toml": bridged("", serve+"[workload.serve]\nduration = \"60s\"\n")}, args: run("b.toml"),
			status: exitFailed, wrote: wroteIncomplete, stderr: "simkron run: stopped by SIGINT at ", stderrAny: "before the workload ended; serve: served "},
			prefix: "timeout --preserve-status -s INT 2"},
		{hostileCase: hostileCase{item: 41, name: "Ctrl-C before another workload's end: incomplete",
			files: map[string]string{"b.toml": bridged("", pingRun)}, args: run("b.toml"),
			status: exitFailed, wrote: wroteIncomplete, stderr: "simkron run: stopped by SIGINT at "},
			prefix: "timeout --preserve-status -s INT 2"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%02d-%s", c.item, c.name), func(t *testing.T) {
			ns := netnstest.New(t)
			if c.prepare != nil {
				c.prepare(t, ns)
			}
			wrapper := filepath.Join(t.TempDir(), "simkron-in-ns")
			script := fmt.Sprintf("#!/bin/sh\nexec ip netns exec %s %s %q \"$@\"\n", ns.Name, c.prefix, bin)
			if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			c.timeout = 2 * time.Minute
			runHostileCase(t, wrapper, root, c.hostileCase)
		})
	}
}
