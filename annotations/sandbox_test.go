package annotations_test

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"simkron/annotations"
	"simkron/machine"
)

// exposed is every command a script may call: Tcl's language for values
// and control flow, and the engine's commands. The test reads what the
// sandbox holds, every namespace walked, so a command that appears there
// (a new Tcl version, a change to the set-up) fails it until it is added
// here on purpose.
var exposed = []string{
	// The engine's own (aliases into the master).
	"::annotation", "::bucket", "::cpu", "::cycles", "::dev", "::frame", "::host", "::io", "::layer",
	"::mem", "::now", "::puts", "::source", "::stat", "::symbol", "::symbols",
	// Tcl's.
	"::append", "::apply", "::array", "::binary", "::break", "::catch", "::concat", "::continue",
	"::coroutine", "::dict", "::error", "::eval", "::expr", "::for", "::foreach", "::format",
	"::global", "::if", "::incr", "::info", "::join", "::lappend", "::lassign", "::lindex",
	"::linsert", "::list", "::llength", "::lmap", "::lrange", "::lrepeat", "::lreplace",
	"::lreverse", "::lsearch", "::lset", "::lsort", "::namespace", "::proc", "::regexp",
	"::regsub", "::rename", "::return", "::scan", "::set", "::split", "::string", "::subst",
	"::switch", "::tailcall", "::throw", "::trace", "::try", "::unset", "::uplevel", "::upvar",
	"::variable", "::while", "::yield", "::yieldto",
	"::tcl::array::anymore", "::tcl::array::donesearch", "::tcl::array::exists", "::tcl::array::get",
	"::tcl::array::names", "::tcl::array::nextelement", "::tcl::array::set", "::tcl::array::size",
	"::tcl::array::startsearch", "::tcl::array::statistics", "::tcl::array::unset",
	"::tcl::binary::decode", "::tcl::binary::decode::base64", "::tcl::binary::decode::hex",
	"::tcl::binary::decode::uuencode", "::tcl::binary::encode", "::tcl::binary::encode::base64",
	"::tcl::binary::encode::hex", "::tcl::binary::encode::uuencode", "::tcl::binary::format",
	"::tcl::binary::scan",
	"::tcl::dict::append", "::tcl::dict::create", "::tcl::dict::exists", "::tcl::dict::filter",
	"::tcl::dict::for", "::tcl::dict::get", "::tcl::dict::incr", "::tcl::dict::info", "::tcl::dict::keys",
	"::tcl::dict::lappend", "::tcl::dict::map", "::tcl::dict::merge", "::tcl::dict::remove",
	"::tcl::dict::replace", "::tcl::dict::set", "::tcl::dict::size", "::tcl::dict::unset",
	"::tcl::dict::update", "::tcl::dict::values", "::tcl::dict::with",
	"::tcl::info::args", "::tcl::info::body", "::tcl::info::commands", "::tcl::info::complete",
	"::tcl::info::coroutine", "::tcl::info::default", "::tcl::info::errorstack", "::tcl::info::exists",
	"::tcl::info::frame", "::tcl::info::functions", "::tcl::info::globals", "::tcl::info::level",
	"::tcl::info::locals", "::tcl::info::patchlevel", "::tcl::info::procs", "::tcl::info::script",
	"::tcl::info::tclversion", "::tcl::info::vars",
	"::tcl::mathfunc::abs", "::tcl::mathfunc::acos", "::tcl::mathfunc::asin", "::tcl::mathfunc::atan",
	"::tcl::mathfunc::atan2", "::tcl::mathfunc::bool", "::tcl::mathfunc::ceil", "::tcl::mathfunc::cos",
	"::tcl::mathfunc::cosh", "::tcl::mathfunc::double", "::tcl::mathfunc::entier", "::tcl::mathfunc::exp",
	"::tcl::mathfunc::floor", "::tcl::mathfunc::fmod", "::tcl::mathfunc::hypot", "::tcl::mathfunc::int",
	"::tcl::mathfunc::isqrt", "::tcl::mathfunc::log", "::tcl::mathfunc::log10", "::tcl::mathfunc::max",
	"::tcl::mathfunc::min", "::tcl::mathfunc::pow", "::tcl::mathfunc::rand", "::tcl::mathfunc::round",
	"::tcl::mathfunc::sin", "::tcl::mathfunc::sinh", "::tcl::mathfunc::sqrt", "::tcl::mathfunc::srand",
	"::tcl::mathfunc::tan", "::tcl::mathfunc::tanh", "::tcl::mathfunc::wide",
	"::tcl::mathop::!", "::tcl::mathop::!=", "::tcl::mathop::%", "::tcl::mathop::&", "::tcl::mathop::*",
	"::tcl::mathop::**", "::tcl::mathop::+", "::tcl::mathop::-", "::tcl::mathop::/", "::tcl::mathop::<",
	"::tcl::mathop::<<", "::tcl::mathop::<=", "::tcl::mathop::==", "::tcl::mathop::>", "::tcl::mathop::>=",
	"::tcl::mathop::>>", "::tcl::mathop::^", "::tcl::mathop::eq", "::tcl::mathop::in", "::tcl::mathop::ne",
	"::tcl::mathop::ni", "::tcl::mathop::|", "::tcl::mathop::~",
	"::tcl::namespace::children", "::tcl::namespace::code", "::tcl::namespace::current",
	"::tcl::namespace::delete", "::tcl::namespace::ensemble", "::tcl::namespace::eval",
	"::tcl::namespace::exists", "::tcl::namespace::export", "::tcl::namespace::forget",
	"::tcl::namespace::import", "::tcl::namespace::inscope", "::tcl::namespace::origin",
	"::tcl::namespace::parent", "::tcl::namespace::path", "::tcl::namespace::qualifiers",
	"::tcl::namespace::tail", "::tcl::namespace::unknown", "::tcl::namespace::upvar",
	"::tcl::namespace::which",
	"::tcl::prefix", "::tcl::prefix::all", "::tcl::prefix::longest", "::tcl::prefix::match",
	"::tcl::string::bytelength", "::tcl::string::cat", "::tcl::string::compare", "::tcl::string::equal",
	"::tcl::string::first", "::tcl::string::index", "::tcl::string::is", "::tcl::string::last",
	"::tcl::string::length", "::tcl::string::map", "::tcl::string::match", "::tcl::string::range",
	"::tcl::string::repeat", "::tcl::string::replace", "::tcl::string::reverse", "::tcl::string::tolower",
	"::tcl::string::totitle", "::tcl::string::toupper", "::tcl::string::trim", "::tcl::string::trimleft",
	"::tcl::string::trimright", "::tcl::string::wordend", "::tcl::string::wordstart",
}

// Of those, the aliases into the master: the engine's commands, the
// commands guarded against results far larger than their arguments,
// trace (whose instant and counter are the engine's), and min() and
// max(), which Tcl's safe interpreter takes from its master.
var aliases = []string{
	"::format", "::lrepeat", "::regsub", "::tcl::binary::format", "::tcl::mathfunc::max",
	"::tcl::mathfunc::min", "::tcl::string::map", "::tcl::string::repeat", "::trace",
	"annotation", "bucket", "cpu", "cycles", "dev", "frame", "host", "io", "layer", "mem", "now",
	"puts", "source", "stat", "symbol", "symbols",
}

func TestSandboxExposesOnlyTheAllowList(t *testing.T) {
	e, err := newEngine(t, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := annotations.Inspect(e)
	if err != nil {
		t.Fatal(err)
	}
	want := annotations.Sandbox{
		Commands: slices.Sorted(slices.Values(exposed)),
		// The originals of the guarded commands, which only the master
		// invokes, after its check.
		Hidden:  []string{"binary format", "format", "lrepeat", "regsub", "string map", "string repeat", "trace"},
		Aliases: aliases,
		Globals: []string{"tcl_interactive", "tcl_patchLevel", "tcl_platform", "tcl_version"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the sandbox (-allowed +holds):\n%s", diff)
	}
	var engine []string
	for _, a := range aliases {
		if !strings.HasPrefix(a, "::") {
			engine = append(engine, a)
		}
	}
	if diff := cmp.Diff(engine, annotations.Commands()); diff != "" {
		t.Errorf("Commands() (-aliases +Commands):\n%s", diff)
	}
}

// Every way out of the sandbox the hardening issue found, and their kin:
// each is refused while the script loads, with its line.
func TestSandboxEscapesAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
	}{
		// The host's clock.
		{"clock milliseconds", "::tcl::clock::milliseconds", `invalid command name "::tcl::clock::milliseconds"`},
		{"clock microseconds", "::tcl::clock::microseconds", `invalid command name "::tcl::clock::microseconds"`},
		{"clock clicks", "::tcl::clock::clicks", `invalid command name "::tcl::clock::clicks"`},
		{"clock seconds", "::tcl::clock::seconds", `invalid command name "::tcl::clock::seconds"`},
		{"clock", "clock seconds", `invalid command name "clock"`},
		{"time", "time {set x 1}", `invalid command name "time"`},
		{"timerate", "::tcl::unsupported::timerate {set x 1}", `invalid command name "::tcl::unsupported::timerate"`},
		{"after", "after 10", `invalid command name "after"`},
		{"vwait", "vwait x", `invalid command name "vwait"`},
		{"update", "update", `invalid command name "update"`},
		// The environment and the host.
		{"getenv", "::tcl::clock::getenv PATH", `invalid command name "::tcl::clock::getenv"`},
		{"env", "set ::env(PATH)", `can't read "::env(PATH)": no such variable`},
		{"tcl_platform user", "set ::tcl_platform(user)", `no such element in array`},
		{"hostname", "info hostname", `unknown or ambiguous subcommand "hostname"`},
		{"nameofexecutable", "info nameofexecutable", `unknown or ambiguous subcommand "nameofexecutable"`},
		{"info library", "info library", `unknown or ambiguous subcommand "library"`},
		{"encoding", "encoding system", `invalid command name "encoding"`},
		{"encoding ensemble", "::tcl::encoding::system", `invalid command name "::tcl::encoding::system"`},
		{"pid", "pid", `invalid command name "pid"`},
		{"pkgconfig", "::tcl::pkgconfig list", `invalid command name "::tcl::pkgconfig"`},
		// Channels: none reaches the OS, none exists.
		{"chan pipe", "lassign [chan pipe] r w; puts [read $r]", `invalid command name "chan"`},
		{"chan pipe by name", "::tcl::chan::pipe", `invalid command name "::tcl::chan::pipe"`},
		{"chan create", "::tcl::chan::create read x", `invalid command name "::tcl::chan::create"`},
		{"read stdin", "read stdin", `invalid command name "read"`},
		{"gets stdin", "gets stdin", `invalid command name "gets"`},
		{"fconfigure", "fconfigure stdout", `invalid command name "fconfigure"`},
		{"zlib stream", "zlib stream deflate", `invalid command name "zlib"`},
		{"zlib push", "zlib push gzip stdout", `invalid command name "zlib"`},
		{"open", "open /etc/passwd", `invalid command name "open"`},
		{"file", "::tcl::file::delete /tmp/x", `invalid command name "::tcl::file::delete"`},
		// Interpreters, packages, hidden commands.
		{"interp create", "interp create x", `invalid command name "interp"`},
		{"invokehidden", "interp invokehidden {} exec ls", `invalid command name "interp"`},
		{"interp limit", "interp limit {} commands -value 1000000000", `invalid command name "interp"`},
		{"package", "package require Tcl", `invalid command name "package"`},
		{"load", "load libc.so", `invalid command name "load"`},
		{"TclOO", "oo::class create C", `invalid command name "oo::class"`},
		{"assemble", "::tcl::unsupported::assemble {push 1}", `invalid command name "::tcl::unsupported::assemble"`},
		{"cmdcount", "info cmdcount", `unknown or ambiguous subcommand "cmdcount"`},
		// Nothing the engine uses lives in the sandbox.
		{"namespace ::simkron", "namespace delete ::simkron", `unknown namespace "::simkron"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newEngine(t, script("escape.tcl", "set x 1\n"+tc.text+"\n"), "")
			var se *annotations.ScriptError
			if !errors.As(err, &se) || se.Line != 2 || !strings.Contains(se.Msg, tc.want) {
				t.Errorf("error %v, want escape.tcl:2: ...%s...", err, tc.want)
			}
		})
	}
}

// What the sandbox keeps still works: rand() from a fixed seed, min() and
// max(), ensembles without the subcommands it lost, and the guarded
// commands at ordinary sizes (regsub setting the caller's variable).
func TestSandboxKeepsTheLanguage(t *testing.T) {
	const text = `
proc sub {} { set n [regsub -all {b} abcb X out]; return "$n $out" }
annotation set sim exit {
	puts [expr {rand()}]
	puts [expr {max(3, 7.5, -1)}],[expr {min(3, 7.5, -1)}]
	puts [sub]
	puts [string repeat ab 3],[lrepeat 2 x y],[string map {a AA} banana]
	puts [format "%5.2f|%-4s|%*d" 3.14159 ab 3 7][format {|%2$s} x ab]
	puts [binary encode hex [binary format a3S1 xyz 258]]
	puts [dict get [dict create a 1] a],[string toupper x],[info exists ::nosuch]
}
`
	var outs []string
	for range 2 {
		r := simulate(t, loadUDP(t, []int{64}, 1), script("keep.tcl", text), "")
		if r.finish != nil {
			t.Fatal(r.finish)
		}
		outs = append(outs, r.e.Output())
	}
	if outs[0] != outs[1] {
		t.Errorf("two runs print differently:\n%s\n%s", outs[0], outs[1])
	}
	lines := strings.Split(strings.TrimSpace(outs[0]), "\n")
	want := []string{"7.5,-1", "2 aXcX", "ababab,x y x y,bAAnAAnAA", " 3.14|ab  |  7|ab", "78797a0102", "1,X,0"}
	if len(lines) != 7 {
		t.Fatalf("output %q", outs[0])
	}
	if diff := cmp.Diff(want, lines[1:]); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if v, err := strconvFloat(lines[0]); err != nil || v < 0 || v >= 1 {
		t.Errorf("rand() printed %q", lines[0])
	}
}

func strconvFloat(s string) (float64, error) { return strconv.ParseFloat(s, 64) }

// newRun builds the UDP run of one small message, closed when the test
// ends.
func newRun(t *testing.T) *machine.Run {
	t.Helper()
	r, err := machine.New(loadUDP(t, []int{64}, 1), machine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// machineOptions stops the run at e's first error, as simkron run does.
func machineOptions(e *annotations.Engine) machine.Options { return machine.Options{Abort: e.Err} }

func writeFile(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The command budget is counted by the engine: a script that replaces
// info, catch or error, or catches the limit's error, still stops at its
// budget; a body's error is the engine's to report, whatever catch the
// script defines.
func TestBudgetCannotBeBypassed(t *testing.T) {
	opt := annotations.Options{Commands: 1000, Time: 5 * time.Second}
	for _, tc := range []struct {
		name, text string
		line       int
		msg        string
	}{
		{"info replaced", `rename info _info
proc info args { if {$args eq "cmdcount"} { return 0 }; uplevel 1 [list _info {*}$args] }
annotation set pc ip_rcv:START {
	while 1 { set x 1 }
}`, 4, "the body ran more than 1000 Tcl commands"},
		{"catch replaced", `proc catch args { return 0 }
annotation set pc ip_rcv:START {
	set y 1
	error boom
}`, 4, "boom"},
		{"limit caught", `annotation set pc ip_rcv:START {
	catch { while 1 { set x 1 } }
	catch { while 1 { set x 1 } }
	set z 1
}`, 2, "the body ran more than 1000 Tcl commands"},
		{"limit caught, body ends", `annotation set pc ip_rcv:START {
	catch { while 1 { set x 1 } }
}`, 2, "the body ran more than 1000 Tcl commands"},
		{"error replaced", `rename error {}
annotation set pc ip_rcv:START {
	nosuch
}`, 3, `invalid command name "nosuch"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := runWith(t, script("bypass.tcl", tc.text), opt)
			var se *annotations.ScriptError
			if !errors.As(err, &se) || se.File != "bypass.tcl" || se.Line != tc.line || !strings.Contains(se.Msg, tc.msg) {
				t.Errorf("error %v, want bypass.tcl:%d: ...%s...", err, tc.line, tc.msg)
			}
		})
	}
}

// runWith runs the UDP run with scripts under opt and returns the
// engine's error: New's, or the run's.
func runWith(t *testing.T, scripts []annotations.Source, opt annotations.Options) error {
	t.Helper()
	r := newRun(t)
	e, err := annotations.New(r.AnnotationTarget(), scripts, opt)
	if err != nil {
		return err
	}
	defer e.Close()
	if err := e.Install(); err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute(machineOptions(e))
	if err != nil {
		t.Fatal(err)
	}
	during := e.Err()
	if err := e.Finish(); err != nil {
		if during != nil && res.Complete {
			t.Errorf("the run is complete after a script error")
		}
		return err
	}
	return nil
}

// The budgets of what one body can take: a command budget from 2^31 up
// (Tcl's own counter is 32 bits), the memory ceiling, the output cap, the
// run's host time, and a command that does not return.
func TestLimits(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  annotations.Options
		text string
		line int    // 0: no error
		msg  string // a piece of the message
	}{
		{"commands past 2^31", annotations.Options{Commands: 1_000_000_000_000},
			"annotation set sim exit {\n\tfor {set i 0} {$i < 1000} {incr i} {}\n}\n", 0, ""},
		{"commands at 2^31", annotations.Options{Commands: math.MaxInt32 + 1},
			"annotation set pc ip_rcv:END { set x 1 }\n", 0, ""},
		{"memory", annotations.Options{Memory: 16 << 20},
			"annotation set sim exit {\n\tset chunk [string repeat x 100000]\n\twhile 1 {\n\t\tlappend l \"$chunk[incr i]\"\n\t}\n}\n", 4,
			"the annotations held"},
		{"memory at the end of a body", annotations.Options{Memory: 16 << 20},
			"annotation set sim exit {\n\tset ::a [string repeat x 9000000]\n\tset ::b \"$::a y\"\n}\n", 1, "over their memory ceiling of 16 MiB"},
		{"string repeat", annotations.Options{},
			"set x 1\nset s [string repeat a 1100000000]\nappend s $s\n", 2,
			"string repeat: the result could take 1100000000 bytes"},
		{"lrepeat", annotations.Options{}, "lrepeat 1000000000 x\n", 1, "lrepeat: the result could take"},
		{"format width", annotations.Options{}, "format %1000000000s x\n", 1, "format: the result could take"},
		{"format star", annotations.Options{}, "format %*s 1000000000 x\n", 1, "format: the result could take"},
		{"binary format", annotations.Options{}, "binary format a1000000000 x\n", 1, "binary format: the result could take"},
		{"string map", annotations.Options{},
			"set s [string repeat a 1000000]\nstring map [list a [string repeat b 1000]] $s\n", 2, "string map: the result could take"},
		{"regsub", annotations.Options{},
			"set s [string repeat a 1000000]\nregsub -all a $s [string repeat & 1000]\n", 2, "regsub: the result could take"},
		{"output", annotations.Options{Output: 100},
			"annotation set pc ip_rcv:START {\n\tputs [string repeat x 60]\n}\n", 2,
			"puts: the annotations' output would pass its cap of 100 bytes"},
		{"bucket Inf", annotations.Options{}, "annotation set sim exit {\n\tbucket add b Inf\n}\n", 2,
			`bucket add b: "Inf" is not a finite number`},
		{"bucket NaN", annotations.Options{}, "annotation set sim exit {\n\tbucket add b NaN\n}\n", 2,
			`bucket add b: "NaN" is not a finite number`},
		{"bucket overflow", annotations.Options{}, "annotation set sim exit {\n\tbucket add b 1e308\n\tbucket add b 1e308\n}\n", 3,
			"the bucket's sum would overflow"},
		{"run time", annotations.Options{RunTime: 300 * time.Millisecond},
			"annotation set cycle 1 { incr ::n }\n", 1, "the annotations of this run took more than 300ms of host time in all"},
		{"one command that does not return", annotations.Options{Time: 50 * time.Millisecond},
			"annotation set sim exit {\n\tstring length [expr {3**40000}]\n}\n", 1,
			"one command was still running at 200ms: the interpreter was abandoned"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.opt.Time == 0 {
				tc.opt.Time = 10 * time.Second // host time is not what these test
			}
			err := runWith(t, script("limit.tcl", tc.text), tc.opt)
			if tc.line == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var se *annotations.ScriptError
			if !errors.As(err, &se) || se.File != "limit.tcl" || se.Line != tc.line || !strings.Contains(se.Msg, tc.msg) {
				t.Errorf("error %v, want limit.tcl:%d: ...%s...", err, tc.line, tc.msg)
			}
		})
	}
}

// A Tcl_Panic, which would abort the process, is a script error that
// names the line, and the run goes on to its end.
func TestTclPanicIsAnError(t *testing.T) {
	r := newRun(t)
	e, err := annotations.New(r.AnnotationTarget(), script("panic.tcl", "annotation set sim exit {\n\tset x 1\n\ttclpanic\n}\n"), annotations.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := annotations.AddPanicCommand(e); err != nil {
		t.Fatal(err)
	}
	if err := e.Install(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Execute(machineOptions(e)); err != nil {
		t.Fatal(err)
	}
	err = e.Finish()
	var se *annotations.ScriptError
	if !errors.As(err, &se) || se.Line != 3 || !strings.Contains(se.Msg, "Tcl gave up: cannot go on: a test") {
		t.Errorf("error %v, want panic.tcl:3: Tcl gave up: cannot go on: a test", err)
	}
}

// A script that sources itself, directly or through another, is refused
// at the source that closes the loop.
func TestSourceCycle(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.tcl", "set a 1\nsource b.tcl\n")
	writeFile(t, dir, "b.tcl", "\nsource a.tcl\n")
	writeFile(t, dir, "self.tcl", "source self.tcl\n")
	for _, tc := range []struct{ name, text, file, msg string }{
		{"itself", "source self.tcl\n", "self.tcl", "self.tcl is already being loaded (self.tcl sources self.tcl)"},
		{"through another", "source a.tcl\n", "b.tcl", "a.tcl is already being loaded (a.tcl sources b.tcl sources a.tcl)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newEngine(t, script(filepath.Join(dir, "top.tcl"), tc.text), dir)
			var se *annotations.ScriptError
			if !errors.As(err, &se) || se.File != tc.file || !strings.Contains(se.Msg, tc.msg) {
				t.Errorf("error %v, want %s: ...%s...", err, tc.file, tc.msg)
			}
		})
	}
}
