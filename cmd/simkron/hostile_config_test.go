package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The configuration's hostile cases: values that passed validation and
// failed (or were ignored) only once the run had started, files that
// could not be read safely, inputs that made the loader itself slow, and
// errors that named no file, line or key. Each is refused before anything
// runs, exit 2, nothing written, with a message naming file, line and key.
func TestHostileConfig(t *testing.T) {
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	udp := read("../../configs/udp-ne2000.toml")
	mach := read("../../configs/machines/i486dx33.toml")
	edit := func(text, old, new string) string {
		if !strings.Contains(text, old) {
			t.Fatalf("%q not in the config", old)
		}
		return strings.Replace(text, old, new, 1)
	}
	// lineOf returns the line of text that holds s.
	lineOf := func(text, s string) int {
		i := strings.Index(text, s)
		if i < 0 {
			t.Fatalf("%q not in the text", s)
		}
		return 1 + strings.Count(text[:i], "\n")
	}
	// withUDP is the UDP experiment beside its machine file, edited.
	withUDP := func(exp, machine string) map[string]string {
		return map[string]string{"e.toml": exp, "machines/i486dx33.toml": machine}
	}
	// A FIFO, which a reader without care blocks on for ever.
	fifoDir := t.TempDir()
	fifo := filepath.Join(fifoDir, "fifo.toml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	small := []string{"--set", "workload.udp.messages=1", "--set", "workload.udp.warmup=0", "--set", "workload.udp.sizes=[4]"}
	run := func(args ...string) []string { return append([]string{"run", "-q", "--out", "{out}"}, args...) }
	const q = "configs/udp-ne2000.toml"
	const mq = "configs/machines/i486dx33.toml"

	negCost := edit(mach, "[costs]", "[costs]\nip_output = -5000")
	badCost := edit(mach, "[costs]", "[costs]\nip_outptu = 120")
	badLayer := edit(udp, "[workload]", "[layers]\nip_outptu = \"IP\"\n\n[workload]")
	longSeg := strings.ReplaceAll(udp, `"lan0"`, `"`+strings.Repeat("s", 5000)+`"`)
	tcpUnused := edit(udp, "[workload.udp]", "[workload.tcp]\nnodelay = true\n\n[workload.udp]")
	seed := edit(udp, "seed = 1", "seed = 99999999999999999999")
	emptySizes := edit(udp, "sizes = [4, 16,", "sizes = [] # [4, 16,")

	runHostile(t, []hostileCase{
		// 6: empty lists.
		{item: 6, name: "udp sizes empty", args: run(q, "--set", "workload.udp.sizes=[]"),
			status: exitUsage, stderr: q + ": --set workload.udp.sizes=[]: workload.udp.sizes: is empty: give at least one value", wrote: wroteNothing},
		{item: 6, name: "tcp sizes empty", args: run("configs/tcp-ne2000.toml", "--set", "workload.tcp.sizes=[]"),
			status: exitUsage, stderr: "workload.tcp.sizes: is empty", wrote: wroteNothing},
		{item: 6, name: "tp4 sizes empty", args: run("configs/atm-ip.toml", "--set", "workload.tp4.sizes=[]"),
			status: exitUsage, stderr: "workload.tp4.sizes: is empty", wrote: wroteNothing},
		{item: 6, name: "via sizes empty", args: run("configs/simos-study.toml", "--set", "workload.via.sizes=[]"),
			status: exitUsage, stderr: "workload.via.sizes: is empty", wrote: wroteNothing},
		{item: 6, name: "compare sizes empty", args: run("configs/simos-study.toml", "--set", "workload.compare.sizes=[]"),
			status: exitUsage, stderr: "workload.compare.sizes: is empty", wrote: wroteNothing},
		{item: 6, name: "top sizes empty", args: run("configs/top-lower.toml", "--set", "workload.top.sizes=[]"),
			status: exitUsage, stderr: "workload.top.sizes: is empty", wrote: wroteNothing},
		{item: 6, name: "top cases empty", args: run("configs/top-lower.toml", "--set", "workload.top.case=[]"),
			status: exitUsage, stderr: "workload.top.case: is empty", wrote: wroteNothing},
		{item: 6, name: "empty sizes in the file", files: withUDP(emptySizes, mach), args: run("{dir}/e.toml"),
			status: exitUsage, stderr: fmt.Sprintf("{dir}/e.toml:%d: workload.udp.sizes: is empty", lineOf(emptySizes, "sizes = []")), wrote: wroteNothing},
		{item: 6, name: "an empty point of a sweep", args: []string{"sweep", q, "--set", "workload.udp.sizes=[4],[]", "--out", "{out}"},
			status: exitUsage, stderr: "workload.udp.sizes: is empty", wrote: wroteNothing},

		// 7: costs.
		{item: 7, name: "negative cost", args: run(q, "--set", "machine.costs.ip_output=-5000"),
			status: exitUsage, stderr: mq + ": --set machine.costs.ip_output=-5000: costs.ip_output: -5000 is below the minimum 0", wrote: wroteNothing},
		{item: 7, name: "small negative cost", args: run(q, "--set", "machine.costs.ip_output=-3"),
			status: exitUsage, stderr: "costs.ip_output: -3 is below the minimum 0", wrote: wroteNothing},
		{item: 7, name: "int64-max cost", args: run(q, "--set", "machine.costs.ip_output=9223372036854775807"),
			status: exitUsage, stderr: "costs.ip_output: 9223372036854775807 is above the maximum 10000", wrote: wroteNothing},
		{item: 7, name: "negative cost in the machine file", files: withUDP(udp, negCost), args: run("{dir}/e.toml"),
			status: exitUsage, stderr: fmt.Sprintf("{dir}/machines/i486dx33.toml:%d: costs.ip_output: -5000 is below the minimum 0", lineOf(negCost, "ip_output = -5000")), wrote: wroteNothing},

		// 12: files that are not regular, or too large.
		{item: 12, name: "machine is /dev/zero", files: withUDP(strings.ReplaceAll(udp, `"machines/i486dx33.toml"`, `"/dev/zero"`), mach), args: run("{dir}/e.toml"),
			status: exitUsage, stderr: fmt.Sprintf("{dir}/e.toml:%d: host[0].machine: /dev/zero: not a regular file: it is a character device", lineOf(udp, "machine =")), wrote: wroteNothing, timeout: 20 * time.Second},
		{item: 12, name: "config is a FIFO", args: run(fifo),
			status: exitUsage, stderr: fifo + ": not a regular file: it is a named pipe (FIFO)", wrote: wroteNothing, timeout: 20 * time.Second},
		{item: 12, name: "machine is a FIFO", files: withUDP(strings.ReplaceAll(udp, `"machines/i486dx33.toml"`, `"`+fifo+`"`), mach), args: []string{"validate", "{dir}/e.toml"},
			status: exitUsage, stderr: "host[0].machine: " + fifo + ": not a regular file: it is a named pipe (FIFO)", timeout: 20 * time.Second},
		{item: 12, name: "config over 4 MiB", files: map[string]string{"big.toml": "# " + strings.Repeat("x", 5<<20) + "\n"}, args: run("{dir}/big.toml"),
			status: exitUsage, stderr: "{dir}/big.toml: file too large: 5242883 bytes or more, and the limit for this kind of file is 4194304", wrote: wroteNothing},

		// 13: deep nesting, refused at once.
		{item: 13, name: "arrays 100,000 deep", files: map[string]string{"deep.toml": "a = " + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + "\n"},
			args: []string{"validate", "{dir}/deep.toml"}, status: exitUsage, stderr: "{dir}/deep.toml:1: tables and arrays nest deeper than 64 levels",
			timeout: 10 * time.Second},
		{item: 13, name: "table header of 100,000 parts", files: map[string]string{"deep.toml": "[experiment]\n[" + strings.Repeat("a.", 99_999) + "a]\n"},
			args: []string{"validate", "{dir}/deep.toml"}, status: exitUsage, stderr: "{dir}/deep.toml:2: tables and arrays nest deeper than 64 levels",
			timeout: 10 * time.Second},
		{item: 13, name: "dotted key of 100,000 parts", files: map[string]string{"deep.toml": strings.Repeat("a.", 99_999) + "a = 1\n"},
			args: []string{"validate", "{dir}/deep.toml"}, status: exitUsage, stderr: "{dir}/deep.toml:1: tables and arrays nest deeper than 64 levels",
			timeout: 10 * time.Second},

		// 17: floats that are not finite.
		{item: 17, name: "cpi nan", args: run(q, "--set", "machine.cpu.cpi=nan"),
			status: exitUsage, stderr: mq + ": --set machine.cpu.cpi=nan: cpu.cpi: expected a finite number, got float nan", wrote: wroteNothing},
		{item: 17, name: "cpi inf", args: run(q, "--set", "machine.cpu.cpi=inf"),
			status: exitUsage, stderr: "cpu.cpi: expected a finite number, got float inf", wrote: wroteNothing},
		{item: 17, name: "drop nan", args: run("configs/faults.toml", "--set", "host[0].nic[0].faults.drop=nan"),
			status: exitUsage, stderr: "host[0].nic[0].faults.drop: expected a finite number, got float nan", wrote: wroteNothing},

		// 19: errors with their file, line and key.
		{item: 19, name: "unknown cost in the machine file", files: withUDP(udp, badCost), args: run("{dir}/e.toml"),
			status: exitUsage, stderr: fmt.Sprintf("{dir}/machines/i486dx33.toml:%d: costs.ip_outptu: names no modelled function or loop of host pcA", lineOf(badCost, "ip_outptu")), wrote: wroteNothing},
		{item: 19, name: "unknown layer in the experiment", files: withUDP(badLayer, mach), args: run("{dir}/e.toml"),
			status: exitUsage, stderr: fmt.Sprintf(`{dir}/e.toml:%d: layers.ip_outptu: no host has a modelled function called "ip_outptu"`, lineOf(badLayer, "ip_outptu")), wrote: wroteNothing},
		{item: 19, name: "client and server one host", args: run(q, "--set", `workload.udp.server="pcA"`),
			status: exitUsage, stderr: q + `: --set workload.udp.server="pcA": workload.udp.server: client and server name the same host "pcA": they must be different hosts`, wrote: wroteNothing},
		{item: 19, name: "seed out of range in the file", files: withUDP(seed, mach), args: run("{dir}/e.toml"),
			status: exitUsage, stderr: fmt.Sprintf("{dir}/e.toml:%d: experiment.seed: 99999999999999999999 is out of range for int64", lineOf(seed, "seed =")), wrote: wroteNothing},
		{item: 19, name: "negative seed", args: run(q, "--set", "experiment.seed=-1"),
			status: exitUsage, stderr: "experiment.seed: expected a non-negative integer, got integer -1", wrote: wroteNothing},

		// 21: what the run found too late.
		{item: 21, name: "segment name of 5,000 characters", files: withUDP(longSeg, mach), args: run("{dir}/e.toml"),
			status: exitUsage, stderr: fmt.Sprintf(`{dir}/e.toml:%d: segment[0].name: name "ssssssssssssssss"… is 5000 characters long; a name has at most 64`, lineOf(longSeg, "name = \"sss")), wrote: wroteNothing},
		{item: 21, name: "hosts on different subnets", args: run(q, "--set", `host[1].nic[0].ip="10.0.1.2"`),
			status: exitUsage, stderr: fmt.Sprintf(`%s:%d: workload.udp.server: host "pcB" (10.0.1.2) is not on host "pcA"'s subnet (10.0.0.1, netmask 255.255.255.0)`, q, lineOf(udp, "server =")), wrote: wroteNothing},
		{item: 21, name: "unused workload.tcp table", files: withUDP(tcpUnused, mach), args: run("{dir}/e.toml"),
			status: exitUsage, stderr: fmt.Sprintf(`{dir}/e.toml:%d: workload.tcp: configures the tcp workload, which does not run (type = "udp")`, lineOf(tcpUnused, "[workload.tcp]")), wrote: wroteNothing},
		{item: 21, name: "another workload chosen with --set leaves the file's sections alone",
			args: run(q, "--set", "workload.type=tcp", "--set", `workload.tcp.client="pcA"`, "--set", `workload.tcp.server="pcB"`,
				"--set", "workload.tcp.messages=1", "--set", "workload.tcp.warmup=0", "--set", "workload.tcp.sizes=[4]"),
			status: exitOK, wrote: wroteComplete},

		// 22 (part): --set.
		{item: 22, name: "newline in a --set value", args: run(q, "--set", "workload.udp.messages=3\n# the rest"),
			status: exitUsage, stderr: `simkron run: --set "workload.udp.messages=3\n# the rest": a line break in a --set argument`, wrote: wroteNothing},
		{item: 22, name: "quoted key with a dot is one name", args: run(q, "--set", `machine.costs."bcopy.word"=-1`),
			status: exitUsage, stderr: mq + `: --set machine.costs."bcopy.word"=-1: costs."bcopy.word": -1 is below the minimum 0`, wrote: wroteNothing},
		{item: 22, name: "quoted key with a dot is set", args: run(append([]string{q, "--set", `machine.costs."bcopy.word"=5`}, small...)...),
			status: exitOK, wrote: wroteComplete},
	})
}
