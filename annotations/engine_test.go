package annotations_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/annotations"
	"simkron/internal/machinetest"
	"simkron/machine"
)

// counters is a script that counts every point it names into buckets
// named after the point and the host.
const counters = `
annotation set pc ip_rcv:START  { bucket add ip_rcv.[host] 1 }
annotation set pc ip_rcv:END    { bucket add ip_rcv_end.[host] 1 }
annotation set exc entry        { bucket add exc_entry.[host] 1 }
annotation set exc exit         { bucket add exc_exit.[host] 1 }
annotation set exc 3 entry      { bucket add exc3.[host] 1 }
annotation set device nic0 irq  { bucket add nic0_irq.[host] 1 }
annotation set device nic0 frame { bucket add nic0_frame.[host] [string length [frame]] }
annotation set device pcB.nic0 frame { bucket add pcB_frame 1 }
annotation set sim exit         { bucket add exit 1 }
`

func TestPointsFireAsOftenAsTheModelCounts(t *testing.T) {
	r := simulate(t, loadUDP(t, []int{64, 4096}, 10), script("counters.tcl", counters), "")
	if r.finish != nil {
		t.Fatal(r.finish)
	}
	got := map[string]int{}
	for _, b := range r.e.Buckets() {
		got[b.Name] = b.Count
	}
	want := map[string]int{"exit": 1}
	nicIRQ := 0
	for _, h := range r.r.Hosts {
		want["ip_rcv."+h.Name] = int(machinetest.Inet(h).Stats().IPInReceives)
		want["ip_rcv_end."+h.Name] = int(machinetest.Inet(h).Stats().IPInReceives)
		n := int(h.CPU.Stats().Interrupts)
		want["exc_entry."+h.Name] = n
		want["exc_exit."+h.Name] = n
		for _, d := range h.Spec.Devices {
			if d.Name == "nic0" {
				nicIRQ = d.IRQ
				want["nic0_irq."+h.Name] = int(h.CPU.InterruptCounts()[d.IRQ])
			}
		}
		if c := h.CPU.InterruptCounts()[3]; c > 0 {
			want["exc3."+h.Name] = int(c)
		}
	}
	// Both cards are alone with each other on the segment: every frame
	// one sends reaches the other.
	var frames int
	for _, s := range r.res.Segments {
		frames += int(s.Frames)
	}
	want["nic0_frame.pcA"] = frames - got["nic0_frame.pcB"]
	want["nic0_frame.pcB"] = got["nic0_frame.pcB"]
	want["pcB_frame"] = got["nic0_frame.pcB"]
	if got["nic0_frame.pcB"] == 0 || nicIRQ == 0 {
		t.Errorf("no frame reached pcB (%d) or nic0 has no irq (%d)", got["nic0_frame.pcB"], nicIRQ)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("annotation counts (-model +annotations):\n%s", diff)
	}
}

func TestBucketOverIPOutputDurations(t *testing.T) {
	// Durations of ip_output calls, nested calls allowed: a stack per host.
	const durations = `
annotation set pc ip_output:START { lappend ::start([host]) [cycles] }
annotation set pc ip_output:END {
	set s [lindex $::start([host]) end]
	set ::start([host]) [lrange $::start([host]) 0 end-1]
	bucket add ip_output [expr {[cycles] - $s}]
}
annotation set sim exit { puts [bucket get ip_output count] }
`
	r := simulate(t, loadUDP(t, []int{1024}, 20), script("dur.tcl", durations), "")
	if r.finish != nil {
		t.Fatal(r.finish)
	}
	var want uint64 // one datagram of 1 KiB is one ip_output call
	for _, h := range r.r.Hosts {
		want += machinetest.Inet(h).Stats().IPOutRequests
	}
	bs := r.e.Buckets()
	if len(bs) != 1 || bs[0].Count != int(want) || want == 0 {
		t.Fatalf("buckets %+v, want one of %d ip_output calls", bs, want)
	}
	b := bs[0]
	if !(b.Min > 0 && b.Min <= b.P50 && b.P50 <= b.P90 && b.P90 <= b.P99 && b.P99 <= b.Max && b.Min <= b.Mean && b.Mean <= b.Max) {
		t.Errorf("inconsistent summary %+v", b)
	}
	if got := strings.TrimSpace(r.e.Output()); got != strconv.Itoa(int(want)) {
		t.Errorf("bucket get count printed %q, want %d", got, want)
	}
}

func TestCycleAnnotationsFireEveryNCycles(t *testing.T) {
	const n = 100000
	r := simulate(t, loadUDP(t, []int{1024}, 5), script("cycle.tcl", `
set ::last 0
annotation set cycle 100000 {
	bucket add tick 1
	if {[now] <= $::last} { error "time went backwards" }
	set ::last [now]
}
annotation set sim exit { bucket add exit 1 }
`), "")
	if r.finish != nil {
		t.Fatal(r.finish)
	}
	clock := r.r.Hosts[0].CPU.Clock()
	now := r.r.Sched.Now()
	cycles := clock.Cycle(now) // the cycles whose start is at or before now
	if clock.Time(cycles) > now {
		cycles--
	}
	if got, want := bucketCount(r.e, "tick"), int(cycles/n); got != want || want == 0 {
		t.Errorf("cycle %d fired %d times in %d cycles, want %d", n, got, cycles, want)
	}
	if got := bucketCount(r.e, "exit"); got != 1 {
		t.Errorf("sim exit ran %d times, want 1", got)
	}
}

func TestReadCommands(t *testing.T) {
	r := simulate(t, loadUDP(t, []int{64}, 2), script("read.tcl", `
set ::seen 0
annotation set pc ip_rcv:START {
	if {$::seen} { return }
	set ::seen 1
	puts "[host] [cpu] [symbol] [layer] [string is wide [cycles]] [expr {[now] > 0}]"
	puts "[string length [mem read 0 16]] [expr {[stat cycles] > 0}] [expr {[stat l1.misses] >= [stat l1d.misses]}]"
	puts "[expr {[stat interrupts] == [stat irq.0] + [stat irq.3]}] [string is wide [stat l2.writebacks]] [string is wide [stat waits_nested]]"
}
layer map ip_rcv DEV
annotation set sim exit { puts [llength [symbols]] }
`), "")
	if r.finish != nil {
		t.Fatal(r.finish)
	}
	lines := strings.Split(strings.TrimSpace(r.e.Output()), "\n")
	want := []string{"pcB pcB.cpu0 ip_rcv IP 1 1", "32 1 1", "1 1 1"}
	if len(lines) != 4 {
		t.Fatalf("output %q", r.e.Output())
	}
	if diff := cmp.Diff(want, lines[:3]); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if n, _ := strconv.Atoi(lines[3]); n != len(r.r.Hosts[0].Syms.Symbols()) {
		t.Errorf("symbols lists %s names, want %d", lines[3], len(r.r.Hosts[0].Syms.Symbols()))
	}
	if diff := cmp.Diff(map[string]string{"ip_rcv": "DEV"}, r.e.LayerMap()); diff != "" {
		t.Errorf("LayerMap (-want +got):\n%s", diff)
	}
}

// newEngine builds the UDP run and an engine over scripts, without
// running it; the run is closed when the test ends.
func newEngine(t *testing.T, scripts []annotations.Source, dir string) (*annotations.Engine, error) {
	t.Helper()
	r, err := machine.New(loadUDP(t, []int{64}, 1), machine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	e, err := annotations.New(r.AnnotationTarget(), scripts, annotations.Options{Dir: dir})
	if e != nil {
		t.Cleanup(e.Close)
	}
	return e, err
}

func TestSafeInterpreter(t *testing.T) {
	dir := t.TempDir()
	scripts := filepath.Join(dir, "scripts")
	if err := os.Mkdir(scripts, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(path, text string) {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "secret.tcl"), "set ::secret 1\n")
	write(filepath.Join(scripts, "lib.tcl"), "proc twice {x} { expr {2 * $x} }\n")
	if err := os.Symlink(filepath.Join(dir, "secret.tcl"), filepath.Join(scripts, "link.tcl")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, text, want string // want: a piece of the error, "" for none
	}{
		{"exec", "exec ls", `invalid command name "exec"`},
		{"open", "open /etc/passwd", `invalid command name "open"`},
		{"socket", "socket localhost 80", `invalid command name "socket"`},
		{"cd", "cd /", `invalid command name "cd"`},
		{"file", "file exists /etc/passwd", `invalid command name "file"`},
		{"glob", "glob *", `invalid command name "glob"`},
		{"load", "load libc.so", `invalid command name "load"`},
		{"exit", "exit 1", `invalid command name "exit"`},
		{"clock", "clock seconds", `invalid command name "clock"`},
		{"after", "after 10", `invalid command name "after"`},
		{"hidden", "interp invokehidden {} exec ls", `invalid command name "interp"`},
		{"puts to a file", "puts nosuch hello", "can not find channel"},
		{"source outside", "source ../secret.tcl", "outside the scripts' folder"},
		{"source absolute", "source " + filepath.Join(dir, "secret.tcl"), "outside the scripts' folder"},
		{"source through a link", "source link.tcl", "outside the scripts' folder"},
		{"source inside", "source lib.tcl\nif {[twice 21] != 42} { error wrong }", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newEngine(t, script("safe.tcl", tc.text), scripts)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	if _, err := newEngine(t, script("nodir.tcl", "source lib.tcl"), ""); err == nil || !strings.Contains(err.Error(), "no folder") {
		t.Errorf("source without a folder: %v", err)
	}
}

func TestLoadErrorsNameFileAndLine(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "inner.tcl"), []byte("\n\nannotation set pc nosuch_fn:END {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, text string
		file       string
		line       int
		msg        string
	}{
		{"unknown symbol", "# x\n\nannotation set pc nosuch_fn:START {\n}\n", "a.tcl", 3, `no host defines symbol "nosuch_fn"`},
		{"unknown kind", "set x 1\nannotation set dma start {}\n", "a.tcl", 2, "unknown point"},
		{"bad pc", "annotation set pc ip_rcv:MIDDLE {}\n", "a.tcl", 1, "want SYMBOL:START or SYMBOL:END"},
		{"unknown device", "\nannotation set device nic9 frame {}\n", "a.tcl", 2, `no host has a network card "nic9"`},
		{"bad cycle", "annotation set cycle 0 {}\n", "a.tcl", 1, "positive"},
		{"in a loop", "foreach s {ip_rcv nosuch_fn} {\n\tannotation set pc $s:START {}\n}\n", "a.tcl", 2, `"nosuch_fn"`},
		{"tcl error", "set a 1\nset b 2\nexpr {1 / 0}\n", "a.tcl", 3, "divide by zero"},
		{"syntax", "set a 1\nset b {\n", "a.tcl", 2, "missing close-brace"},
		{"in a sourced file", "set a 1\nsource inner.tcl\n", "inner.tcl", 3, `"nosuch_fn"`},
		{"body outside", "cycles\n", "a.tcl", 1, "only inside an annotation body"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newEngine(t, script("a.tcl", tc.text), dir)
			var se *annotations.ScriptError
			if !errors.As(err, &se) {
				t.Fatalf("error %v (%T), want a *ScriptError", err, err)
			}
			if se.File != tc.file || se.Line != tc.line || !strings.Contains(se.Msg, tc.msg) {
				t.Errorf("error %q, want %s:%d: ...%s...", err, tc.file, tc.line, tc.msg)
			}
		})
	}
}

func TestBodyErrorStopsAnnotationsNotTheRun(t *testing.T) {
	exp := loadUDP(t, []int{64}, 5)
	plain := simulate(t, exp, nil, "")
	r := simulate(t, exp, script("fail.tcl", `# fails on the third ip_rcv
set ::n 0

annotation set pc ip_rcv:START {
	incr ::n
	if {$::n == 3} {
		nosuch_command 1 2
	}
}
annotation set pc ip_rcv:START { bucket add after 1 }
annotation set sim exit { puts "exit ran" }
`), "")
	var se *annotations.ScriptError
	if !errors.As(r.e.Err(), &se) || r.finish != r.e.Err() {
		t.Fatalf("Err %v, Finish %v: want the same *ScriptError", r.e.Err(), r.finish)
	}
	want := annotations.ScriptError{File: "fail.tcl", Line: 7, Annotation: "pc ip_rcv:START", Msg: `invalid command name "nosuch_command"`}
	if diff := cmp.Diff(want, *se, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Info" }, cmp.Ignore())); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
	if got := se.Error(); got != `fail.tcl:7: annotation pc ip_rcv:START: invalid command name "nosuch_command"` {
		t.Errorf("Error() = %q", got)
	}
	if got := bucketCount(r.e, "after"); got != 2 {
		t.Errorf("the second annotation ran %d times, want 2 (none after the error)", got)
	}
	if r.e.Output() != "" {
		t.Errorf("sim exit ran after an error: %q", r.e.Output())
	}
	if r.trace != plain.trace || resultJSON(t, r.res) != resultJSON(t, plain.res) {
		t.Errorf("the run changed after a script error")
	}
}

func TestAnnotationsOnlyWhileLoading(t *testing.T) {
	r := simulate(t, loadUDP(t, []int{64}, 1), script("late.tcl", "annotation set sim exit {\n\tannotation set sim exit {}\n}\n"), "")
	var se *annotations.ScriptError
	if !errors.As(r.finish, &se) || se.Line != 2 || !strings.Contains(se.Msg, "while scripts load") {
		t.Errorf("Finish = %v, want late.tcl:2 annotations are set while scripts load", r.finish)
	}
}

func TestInstallTwice(t *testing.T) {
	e, err := newEngine(t, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Install(); err != nil {
		t.Fatal(err)
	}
	if err := e.Install(); err == nil {
		t.Error("a second Install succeeded")
	}
}
