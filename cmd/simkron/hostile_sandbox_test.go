package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The annotation sandbox, tried as the hardening issue did: ways out of
// it, ways past its budget, values Tcl or JSON cannot hold, and scripts
// that would never end or would take the machine's memory.
func TestHostileSandbox(t *testing.T) {
	_, root := hostileBinary(t)
	// A short UDP run whose files live in the case's folder, so that its
	// scripts may source each other; its machine files are the project's.
	udp, err := os.ReadFile(filepath.Join(root, "configs", "udp-ne2000.toml"))
	if err != nil {
		t.Fatal(err)
	}
	exp := strings.ReplaceAll(string(udp), `machine = "machines/`, `machine = "`+filepath.Join(root, "configs", "machines")+"/")
	exp = strings.Replace(exp, "messages = 20", "messages = 2", 1)
	exp = strings.Replace(exp, "sizes = [4, 16, 64, 256, 1024, 1472, 2048, 4096, 8192, 16384, 32768]", "sizes = [64, 1024]", 1)
	if !strings.Contains(exp, "sizes = [64, 1024]") || !strings.Contains(exp, filepath.Join(root, "configs", "machines")) {
		t.Fatal("configs/udp-ne2000.toml changed shape: the cases' experiment is not the short run they expect")
	}
	// with returns the case's files: the experiment, with more lines in
	// [experiment], and the script x.tcl.
	with := func(experiment, script string) map[string]string {
		return map[string]string{
			"udp.toml": strings.Replace(exp, "[experiment]\n", "[experiment]\n"+experiment, 1),
			"x.tcl":    script,
		}
	}
	// The line of the first key of [experiment], where with puts its own.
	expLine := strings.Count(exp[:strings.Index(exp, "[experiment]\n")], "\n") + 2
	run := []string{"run", "-q", "--out", "{out}", "{dir}/udp.toml", "--annotate", "{dir}/x.tcl"}
	const stopped = "simkron run: stopped: {dir}/x.tcl:"
	runTwiceSame := func(t *testing.T, dir, _, _ string) {
		bin, root := hostileBinary(t)
		again := filepath.Join(dir, "again")
		cmd := exec.Command(bin, "run", "-q", "--out", again, filepath.Join(dir, "udp.toml"), "--annotate", filepath.Join(dir, "x.tcl"))
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the second run: %v\n%s", err, out)
		}
		a, err1 := os.ReadFile(filepath.Join(dir, "out", "result.json"))
		b, err2 := os.ReadFile(filepath.Join(again, "result.json"))
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Errorf("two runs wrote different results (%v, %v)", err1, err2)
		}
		if !bytes.Contains(a, []byte(`invalid command name \"::tcl::clock::clicks\"`)) {
			t.Errorf("the result does not hold the clock's refusal")
		}
	}
	runHostile(t, []hostileCase{
		// 1. The host's clock.
		{item: 1, name: "clock milliseconds in a body", files: with("", "annotation set sim exit { puts [::tcl::clock::milliseconds] }\n"),
			args: run, status: exitFailed, wrote: wroteIncomplete,
			stderr: stopped + `1: annotation sim exit: invalid command name "::tcl::clock::milliseconds"`},
		{item: 1, name: "clock microseconds while loading", files: with("", "set t [::tcl::clock::microseconds]\n"),
			args: run, status: exitUsage, wrote: wroteNothing, stderr: `{dir}/x.tcl:1: invalid command name "::tcl::clock::microseconds"`},
		{item: 1, name: "clock seconds, clock, time, rand", files: with("", "catch {::tcl::clock::seconds} a\ncatch {clock seconds} b\ncatch {time {}} c\nputs \"$a|$b|$c\"\nannotation set sim exit { puts [expr {rand()}] }\n"),
			args: run, status: exitOK, wrote: wroteComplete},
		{item: 1, name: "a script that tries to read the clock gives the same bytes twice",
			files: with("", "annotation set sim exit {\n\tcatch {::tcl::clock::clicks} m\n\tputs $m\n}\n"),
			args:  run, status: exitOK, wrote: wroteComplete, check: runTwiceSame},
		// 2. The environment.
		{item: 2, name: "getenv", files: with("", "puts [::tcl::clock::getenv PATH]\n"),
			args: run, status: exitUsage, wrote: wroteNothing, stderr: `{dir}/x.tcl:1: invalid command name "::tcl::clock::getenv"`},
		{item: 2, name: "env array", files: with("", "puts $::env(PATH)\n"),
			args: run, status: exitUsage, wrote: wroteNothing, stderr: `{dir}/x.tcl:1: can't read "::env(PATH)": no such variable`},
		{item: 2, name: "hostname", files: with("", "puts [info hostname]\n"),
			args: run, status: exitUsage, wrote: wroteNothing, stderr: `{dir}/x.tcl:1: unknown or ambiguous subcommand "hostname"`},
		// 3. Channels that reach the OS.
		{item: 3, name: "chan pipe and a blocked read", files: with("", "lassign [chan pipe] r w; puts [read $r]\n"),
			args: run, status: exitUsage, wrote: wroteNothing, stderr: `{dir}/x.tcl:1: invalid command name "chan"`, timeout: 20 * time.Second},
		{item: 3, name: "pipes until descriptors run out", files: with("", "set n 0\nwhile {![catch {chan pipe}]} { incr n }\nputs $n\n"),
			args: run, status: exitOK, wrote: wroteComplete, timeout: 20 * time.Second},
		{item: 3, name: "chan create", files: with("", "chan create read ::reader\n"),
			args: run, status: exitUsage, wrote: wroteNothing, stderr: `{dir}/x.tcl:1: invalid command name "chan"`},
		{item: 3, name: "zlib stream on a channel", files: with("", "zlib push gzip stdout\n"),
			args: run, status: exitUsage, wrote: wroteNothing, stderr: `{dir}/x.tcl:1: invalid command name "zlib"`},
		{item: 3, name: "read stdin", files: with("", "annotation set sim exit { gets stdin }\n"),
			args: run, status: exitFailed, wrote: wroteIncomplete, stderr: stopped + `1: annotation sim exit: invalid command name "gets"`, timeout: 20 * time.Second},
		// 4. The command budget and the engine's errors.
		{item: 4, name: "info replaced to fake the command count",
			files: with("annotation_commands = 1000\n", "rename info _info\nproc info args {if {$args eq \"cmdcount\"} {return 2000000000}; uplevel 1 [list _info {*}$args]}\nannotation set pc ip_output:START {\n\twhile 1 { set x 1 }\n}\n"),
			args:  run, status: exitFailed, wrote: wroteIncomplete,
			stderr: stopped + `4: annotation pc ip_output:START: annotation budget exceeded: the body ran more than 1000 Tcl commands`},
		{item: 4, name: "catch replaced to hide errors", files: with("", "proc catch args {return 0}\nannotation set pc ip_output:START {\n\terror boom\n}\n"),
			args: run, status: exitFailed, wrote: wroteIncomplete, stderr: stopped + `3: annotation pc ip_output:START: boom`},
		{item: 4, name: "the limit's error caught", files: with("annotation_commands = 1000\n", "annotation set sim exit {\n\tcatch { while 1 { set x 1 } }\n\tset after 1\n}\n"),
			args: run, status: exitFailed, wrote: wroteIncomplete,
			stderr: stopped + `2: annotation sim exit: annotation budget exceeded: the body ran more than 1000 Tcl commands`},
		// 8. Tcl's limit on one value.
		{item: 8, name: "a 1.1 GB string while loading", files: with("", "set s [string repeat a 1100000000]; append s $s\n"),
			args: run, status: exitUsage, wrote: wroteNothing,
			stderr: `{dir}/x.tcl:1: string repeat: the result could take 1100000000 bytes, more than the `},
		{item: 8, name: "a 1.1 GB string in a body", files: with("", "annotation set sim exit {\n\tset s [string repeat a 1100000000]; append s $s\n}\n"),
			args: run, status: exitFailed, wrote: wroteIncomplete,
			stderr: stopped + `2: annotation sim exit: string repeat: the result could take 1100000000 bytes`},
		{item: 8, name: "a value past 2 GiB in one command", files: with("annotation_host_time = \"60s\"\n", "annotation set sim exit {\n\tset s [string repeat a 200000000]\n\tstring cat $s $s $s $s $s $s $s $s $s $s $s\n}\n"),
			args: run, status: exitFailed, wrote: wroteIncomplete,
			stderr: stopped + `3: annotation sim exit: Tcl gave up: `},
		// 10. Host time and memory while a command runs, and over the run.
		{item: 10, name: "a long string map", files: with("", "annotation set sim exit {\n\tset s [string repeat a 10000000]\n\tstring map [list a [string repeat b 100]] $s\n}\n"),
			args: run, status: exitFailed, wrote: wroteIncomplete,
			stderr: stopped + `3: annotation sim exit: string map: the result could take 1000000000 bytes`},
		{item: 10, name: "a long string repeat", files: with("", "annotation set sim exit { string repeat abc 100000000 }\n"),
			args: run, status: exitFailed, wrote: wroteIncomplete, stderr: stopped + `1: annotation sim exit: string repeat: the result could take 300000000 bytes`},
		{item: 10, name: "one command that does not return", files: with("", "annotation set sim exit {\n\tstring length [expr {3**1000000}]\n}\n"),
			args: run, status: exitFailed, wrote: wroteIncomplete,
			stderr: stopped + `1: annotation sim exit: annotation budget exceeded: the body ran for more than 500ms of host time, and one command was still running at 1.1s`},
		// The body's time budget is raised so that the memory ceiling,
		// not the time on a loaded machine, is what stops it.
		{item: 10, name: "memory grown a little at a time", files: with("annotation_host_time = \"60s\"\n", "annotation set sim exit {\n\tset chunk [string repeat x 1000000]\n\twhile 1 { lappend l \"$chunk[incr i]\" }\n}\n"),
			args: run, status: exitFailed, wrote: wroteIncomplete,
			stderr: stopped + `3: annotation sim exit: annotation budget exceeded: the annotations held `},
		{item: 10, name: "annotation set cycle 1", files: with("annotation_run_time = \"2s\"\n", "annotation set cycle 1 { incr ::n }\n"),
			args: run, status: exitFailed, wrote: wroteIncomplete,
			stderr: stopped + `1: annotation cycle 1: annotation budget exceeded: the annotations of this run took more than 2s of host time in all`},
		// 11. Output.
		{item: 11, name: "a megabyte printed at every ip_output", files: with("", "annotation set pc ip_output:START {\n\tputs [string repeat x 1000000]\n}\n"),
			args: run, status: exitFailed, wrote: wroteIncomplete,
			stderr: stopped + `2: annotation pc ip_output:START: puts: the annotations' output would pass its cap of 1 MiB`,
			check: func(t *testing.T, dir, _, _ string) {
				if fi, err := os.Stat(filepath.Join(dir, "out", "result.json")); err != nil || fi.Size() > 2<<20 {
					t.Errorf("result.json: %v, want at most 2 MiB", fi)
				}
			}},
		// 15. The command budget's range, and messages with a reason.
		{item: 15, name: "annotation_commands = 2147483647", files: with("annotation_commands = 2147483647\n", "annotation set pc ip_output:START { incr ::n }\n"),
			args: run, status: exitOK, wrote: wroteComplete},
		{item: 15, name: "annotation_commands = 1e12", files: with("annotation_commands = 1000000000000\n", "annotation set pc ip_output:START { incr ::n }\n"),
			args: run, status: exitOK, wrote: wroteComplete},
		{item: 15, name: "namespace delete ::simkron", files: with("", "namespace delete ::simkron\n"),
			args: run, status: exitUsage, wrote: wroteNothing, stderr: `{dir}/x.tcl:1: unknown namespace "::simkron" in namespace delete command`},
		{item: 15, name: "a script that sources itself", files: with("", "set a 1\nsource x.tcl\n"),
			args: run, status: exitUsage, wrote: wroteNothing,
			stderr: `{dir}/x.tcl:2: source x.tcl: {dir}/x.tcl is already being loaded ({dir}/x.tcl sources x.tcl)`},
		// 16. Values JSON cannot hold.
		{item: 16, name: "bucket add b Inf", files: with("", "annotation set sim exit {\n\tbucket add b 1\n\tbucket add b Inf\n}\n"),
			args: run, status: exitFailed, wrote: wroteIncomplete, stderr: stopped + `3: annotation sim exit: bucket add b: "Inf" is not a finite number`},
		{item: 16, name: "two 1e308", files: with("", "annotation set sim exit {\n\tbucket add b 1e308\n\tbucket add b 1e308\n}\n"),
			args: run, status: exitFailed, wrote: wroteIncomplete, stderr: stopped + `3: annotation sim exit: bucket add b 1e308: the bucket's sum would overflow`},
		// 19. A missing script named by the experiment.
		{item: 19, name: "a missing script in [experiment] annotations", files: with("annotations = [\"nosuch.tcl\"]\n", ""),
			args: []string{"run", "-q", "--out", "{out}", "{dir}/udp.toml"}, status: exitUsage, wrote: wroteNothing,
			stderr: fmt.Sprintf("{dir}/udp.toml:%d: experiment.annotations[0]: nosuch.tcl: no such file or directory", expLine)},
		// 12. A script that is not a regular file.
		{item: 12, name: "a device as a script", files: with("", ""),
			args: []string{"run", "-q", "--out", "{out}", "{dir}/udp.toml", "--annotate", "/dev/zero"}, status: exitUsage, wrote: wroteNothing,
			stderr: "--annotate /dev/zero: not a regular file: it is a character device"},
	})
}
