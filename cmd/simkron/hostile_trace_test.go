package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"simkron/timeline"
)

// TestHostileTrace: the timeline's flags (issue 39, item 1: --trace and
// --trace-window; item 3: simkron report --trace, the waterfall; item 4:
// annotations' trace commands). What can be
// known before the run is refused before it (status 2, nothing written,
// no trace); a window the run never reaches is known only after it
// (status 1, the results written, and the trace without an event).
func TestHostileTrace(t *testing.T) {
	const study = "configs/simos-study.toml"
	noTrace := func(t *testing.T, dir, stdout, stderr string) {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.Contains(e.Name(), "t.json") {
				t.Errorf("left %s", e.Name())
			}
		}
	}
	traced := func(t *testing.T, dir, stdout, stderr string) {
		data, err := os.ReadFile(filepath.Join(dir, "t.json"))
		if err != nil {
			t.Fatal(err)
		}
		tr, err := timeline.Read(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range tr.Check() {
			t.Error(m)
		}
	}
	bad := func(name, window, stderr string) hostileCase {
		return hostileCase{item: 1, name: name, args: []string{"run", "-q", study, "--out", "{out}", "--trace", "{dir}/t.json", "--trace-window", window},
			status: exitUsage, stderr: stderr, wrote: wroteNothing, check: noTrace}
	}
	runTrace := func(args ...string) []string {
		return append([]string{"run", "-q", "--out", "{out}", "--trace", "{dir}/t.json"}, args...)
	}
	cases := []hostileCase{
		bad("a message of a size not measured", "message=udp:1000:3",
			"simkron run: --trace-window message=udp:1000:3: the workload measures no udp messages of 1000 bytes (its sizes: 4, 16, 64, 256, 1024, 1460, 2048, 4096, 8192, 16384, 32768)"),
		bad("the 21st of 20 messages", "message=udp:1024:21",
			"simkron run: --trace-window message=udp:1024:21: the workload measures 20 messages of 1024 bytes over udp, not 21"),
		bad("a protocol not run", "message=tp4:1024:1",
			"simkron run: --trace-window message=tp4:1024:1: the workload measures no tp4 messages (its protocols: udp, tcp, via)"),
		bad("a window after stop_at", "61s:62s",
			"simkron run: --trace-window 61s:62s: the window begins at or after the run's stop time (stop_at 60s): nothing would be traced"),
		bad("a window backwards", "2ms:1ms", `simkron run: --trace-window "2ms:1ms": TO (1ms) is not after FROM (2ms)`),
		bad("a window of one time", "1ms", `simkron run: --trace-window "1ms": want FROM:TO (two durations, such as 1ms:2ms) or message=PROTOCOL:SIZE:N`),
		bad("a window without a unit", "1:2", `simkron run: --trace-window "1:2": FROM: duration "1" needs a unit`),
		bad("a message without its number", "message=udp:1024", `simkron run: --trace-window "message=udp:1024": want message=PROTOCOL:SIZE:N`),
		bad("a message number 0", "message=udp:1024:0", `simkron run: --trace-window "message=udp:1024:0": N "0" is not a positive number (the first measured message is 1)`),
		{item: 1, name: "a message window on a workload without messages", args: []string{"run", "-q", "configs/ping-ne2000.toml", "--out", "{out}", "--trace", "{dir}/t.json", "--trace-window", "message=udp:64:1"},
			status: exitUsage, stderr: "simkron run: --trace-window message=udp:64:1: the workload measures no messages one by one (a window of time, FROM:TO, works for any)", wrote: wroteNothing, check: noTrace},
		{item: 1, name: "a trace in a file, as if a folder", files: map[string]string{"f": "x"}, args: []string{"run", "-q", study, "--out", "{out}", "--trace", "{dir}/f/new/t.json"},
			status: exitUsage, stderr: "simkron run: --trace {dir}/f/new/t.json: cannot write there: {dir}/f is not a folder", wrote: wroteNothing},
		{item: 1, name: "a trace in the output folder, made for it", args: runTrace(study, "--trace-window", "message=udp:64:1", "--trace", "{out}/sub/t.json"),
			status: exitOK, wrote: wroteComplete, check: func(t *testing.T, dir, stdout, stderr string) {
				if _, err := os.Stat(filepath.Join(dir, "out", "sub", "t.json")); err != nil {
					t.Error(err)
				}
			}},
		{item: 1, name: "a trace onto a folder", files: map[string]string{"t.json/x": ""}, args: []string{"run", "-q", study, "--out", "{out}", "--trace", "{dir}/t.json"},
			status: exitUsage, stderr: "simkron run: --trace {dir}/t.json: is a folder", wrote: wroteNothing},
		{item: 1, name: "a trace file named empty", args: []string{"run", "-q", study, "--out", "{out}", "--trace", ""},
			status: exitUsage, stderr: "simkron run: --trace '': an empty file name", wrote: wroteNothing},
		{item: 1, name: "a window without a trace", args: []string{"run", "-q", study, "--out", "{out}", "--trace-window", "1ms:2ms"},
			status: exitUsage, stderr: "simkron run: --trace-window 1ms:2ms: a window for no trace (give --trace FILE)", wrote: wroteNothing},
		{item: 1, name: "a window after the run's end", args: runTrace(study, "--trace-window", "50s:51s"),
			status: exitFailed, stderr: "simkron run: --trace {dir}/t.json: the trace's window matched nothing: 50s:51s was never reached (the run ended at",
			wrote: wroteComplete, check: func(t *testing.T, dir, stdout, stderr string) {
				data, err := os.ReadFile(filepath.Join(dir, "t.json"))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := timeline.Read(data); err != nil || strings.Contains(string(data), `"ph":"X"`) {
					t.Errorf("the empty trace: %v\n%s", err, data)
				}
			}},
		{item: 1, name: "one UDP echo traced", args: runTrace(study, "--trace-window", "message=udp:1024:3"),
			status: exitOK, wrote: wroteComplete, check: traced},
		{item: 4, name: "trace commands without a trace", files: map[string]string{"p.tcl": "annotation set pc udp_sendmsg:START { trace instant send; trace counter n 1 }\n"},
			args: []string{"run", "-q", study, "--out", "{out}", "--annotate", "{dir}/p.tcl"}, status: exitOK, wrote: wroteComplete},
		{item: 4, name: "a trace counter of no number", files: map[string]string{"p.tcl": "annotation set pc udp_sendmsg:START {\n trace counter n lots\n}\n"},
			args: runTrace(study, "--annotate", "{dir}/p.tcl", "--trace-window", "message=udp:64:1"), status: exitFailed,
			stderr: `simkron run: stopped: {dir}/p.tcl:2: annotation pc udp_sendmsg:START: trace counter n: "lots" is not a finite number`, wrote: wroteIncomplete},
	}
	// simkron report --trace: a file that is not a trace, a format with
	// no waterfall, the waterfall without a trace.
	result := `{"schema": "simkron.result/3", "simkron_version": "x", "experiment": "x", "seed": 1, "complete": true,
 "sim_time_ps": 0, "events": 0, "hosts": [], "workload": "udp", "sections": [], "figures": {}}`
	cases = append(cases,
		hostileCase{item: 3, name: "a result given as the trace", files: map[string]string{"result.json": result},
			args:   []string{"report", "--format", "html", "--trace", "{dir}/result.json", "{dir}/result.json"},
			status: exitUsage, stderr: `simkron report: --trace {dir}/result.json: not a trace simkron wrote (its otherData.generator is not "simkron")`},
		hostileCase{item: 3, name: "a trace with the table format", files: map[string]string{"result.json": result, "t.json": "{}"},
			args:   []string{"report", "--trace", "{dir}/t.json", "{dir}/result.json"},
			status: exitUsage, stderr: "simkron report: --trace {dir}/t.json: a waterfall is drawn in the html and svg formats, not table"},
		hostileCase{item: 3, name: "the waterfall without a trace", files: map[string]string{"result.json": result},
			args:   []string{"report", "--format", "svg", "--chart", "waterfall", "{dir}/result.json"},
			status: exitUsage, stderr: "simkron report: {dir}/result.json: the result has no measurements for this chart: the waterfall is drawn from a trace: give --trace FILE (simkron run --trace)"},
		hostileCase{item: 3, name: "a trace that does not exist", files: map[string]string{"result.json": result},
			args:   []string{"report", "--format", "html", "--trace", "{dir}/none.json", "{dir}/result.json"},
			status: exitUsage, stderr: "simkron report: --trace {dir}/none.json: no such file or directory"},
	)
	runHostile(t, cases)
}
