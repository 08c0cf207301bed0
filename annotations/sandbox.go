package annotations

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"modernc.org/tcl"
)

// The sandbox is a safe child interpreter ("interp create -safe") of a
// master the engine keeps to itself, stripped to an allow-list: after it
// is created every command of every namespace that is not listed below
// is deleted, every hidden command too but the originals of the guarded
// commands, and TclOO goes whole. What is left is Tcl's language for
// values and control flow, and the engine's own commands, which reach
// Go through aliases into the master. No command of the sandbox reads
// the host's clock, its environment, its files or any channel, and none
// creates an interpreter.

// allowed lists, fully qualified, every command the sandbox keeps of the
// safe interpreter Tcl 8.6 makes. The ensembles (array, binary, dict,
// info, namespace, string, ::tcl::prefix) keep only the subcommands
// listed here.
var allowed = []string{
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
	"::tcl::dict::for", "::tcl::dict::get", "::tcl::dict::incr", "::tcl::dict::info",
	"::tcl::dict::keys", "::tcl::dict::lappend", "::tcl::dict::map", "::tcl::dict::merge",
	"::tcl::dict::remove", "::tcl::dict::replace", "::tcl::dict::set", "::tcl::dict::size",
	"::tcl::dict::unset", "::tcl::dict::update", "::tcl::dict::values", "::tcl::dict::with",
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
	"::tcl::string::repeat", "::tcl::string::replace", "::tcl::string::reverse",
	"::tcl::string::tolower", "::tcl::string::totitle", "::tcl::string::toupper", "::tcl::string::trim",
	"::tcl::string::trimleft", "::tcl::string::trimright", "::tcl::string::wordend",
	"::tcl::string::wordstart",
}

// guard is a command whose result can be far larger than its arguments
// (a count, a width, a replacement applied to every character): its
// original is hidden in the sandbox under hidden, and name becomes an
// alias of a procedure of the master that checks the result's worst-case
// size against the memory left under the ceiling before it invokes the
// original in the sandbox (at the caller's level, so `regsub ... var`
// still sets the caller's variable).
type guard struct {
	name, hidden string
	proc         string // the checking procedure's body; $args are the command's arguments
}

var guards = []guard{
	{"::tcl::string::repeat", "string repeat", `
	if {[llength $args] == 2 && [string is entier -strict [lindex $args 1]]} {
		::simkron::room {string repeat} [string length [lindex $args 0]] [lindex $args 1]
	}`},
	{"::lrepeat", "lrepeat", `
	if {[llength $args] >= 1 && [string is entier -strict [lindex $args 0]]} {
		set each [expr {8 * ([llength $args] - 1)}]
		foreach a [lrange $args 1 end] { incr each [string length $a] }
		::simkron::room lrepeat [lindex $args 0] $each
	}`},
	{"::tcl::string::map", "string map", `
	if {[llength $args] in {2 3}} {
		set longest 1
		foreach {k v} [lindex $args end-1] {
			if {[string length $v] > $longest} { set longest [string length $v] }
		}
		::simkron::room {string map} [string length [lindex $args end]] $longest
	}`},
	{"::regsub", "regsub", `
	set i 0
	while {$i < [llength $args]} {
		set a [lindex $args $i]
		if {$a eq "--"} { incr i; break }
		if {![string match -* $a]} break
		if {$a eq "-start"} { incr i }
		incr i
	}
	if {[llength $args] - $i in {3 4}} {
		lassign [lrange $args $i end] re s spec
		::simkron::room regsub [expr {2 * ([string length $s] + 1)}] [expr {[string length $spec] + 1}]
	}`},
	{"::format", "format", `
	if {[llength $args] >= 1} {
		set rest [lrange $args 1 end]
		::simkron::formatroom [lindex $args 0] [llength $rest] {*}[lmap a $rest {string length $a}] {*}[lmap a $rest {string range $a 0 63}]
	}`},
	// Not a size guard: `trace instant` and `trace counter` are the
	// engine's (cmdTrace); Tcl's own trace subcommands pass
	// on to the original.
	{"::trace", "trace", `
	if {[lindex $args 0] in {instant counter}} {
		return [::simkron::trace {*}$args]
	}`},
	{"::tcl::binary::format", "binary format", `
	if {[llength $args] >= 1} {
		::simkron::binaryroom [lindex $args 0] {*}[lmap a [lrange $args 1 end] {string length $a}]
	}`},
}

// sandboxSetup strips the fresh safe child "sandbox" to the allow-list
// ($allowed) and hides the originals of the guarded commands ($guards:
// name, hidden name) behind aliases of the guards. It runs in the master
// before any script.
const sandboxSetup = `
proc ::simkron::commands {ns} {
	set out [sandbox eval [list info commands ${ns}::*]]
	foreach child [sandbox eval [list namespace children $ns]] {
		lappend out {*}[::simkron::commands $child]
	}
	return $out
}
foreach c [sandbox hidden] {
	sandbox expose $c
	sandbox eval [list rename $c {}]
}
sandbox eval {namespace delete ::oo}
foreach {name hidden} $guards {
	sandbox eval [list rename $name ::simkron-guarded]
	sandbox hide simkron-guarded $hidden
	interp alias sandbox $name {} ::simkron::guard::$hidden
}
foreach c [::simkron::commands ::] {
	if {$c ni $allowed} {
		sandbox eval [list rename $c {}]
	}
}
foreach c [::simkron::commands ::] {
	if {![sandbox eval [list namespace ensemble exists $c]]} continue
	set keep {}
	dict for {sub target} [sandbox eval [list namespace ensemble configure $c -map]] {
		if {[sandbox eval [list info commands $target]] ne ""} {
			dict set keep $sub $target
		}
	}
	sandbox eval [list namespace ensemble configure $c -map $keep]
}
foreach ns [sandbox eval {namespace children ::tcl}] {
	if {[sandbox eval [list info commands ${ns}::*]] eq "" && [sandbox eval [list namespace children $ns]] eq ""} {
		sandbox eval [list namespace delete $ns]
	}
}
if {[sandbox eval {namespace exists ::zlib}]} { sandbox eval {namespace delete ::zlib} }
# The safe child's min() and max() are aliases of the master's, which a
# master without Tcl's script library does not have.
proc ::tcl::mathfunc::max {args} { ::simkron::extreme max > $args }
proc ::tcl::mathfunc::min {args} { ::simkron::extreme min < $args }
proc ::simkron::extreme {name op values} {
	if {[llength $values] == 0} {
		return -code error "not enough arguments to math function \"$name\""
	}
	set best [lindex $values 0]
	foreach v $values {
		if {![string is double -strict $v]} {
			return -code error "expected a number but got \"$v\""
		}
		if {($op eq ">" && $v > $best) || ($op eq "<" && $v < $best)} { set best $v }
	}
	return $best
}
# rand() starts from a fixed seed instead of the host's clock.
sandbox eval {expr {srand(1)}}
`

// setupSandbox creates the sandbox in the master in, strips it, and
// defines the guards.
func (e *Engine) setupSandbox(in *tcl.Interp) error {
	if _, err := in.Eval("interp create -safe sandbox; namespace eval ::simkron::guard {}"); err != nil {
		return tclErr("interp create -safe", in, err)
	}
	var pairs []string
	for _, g := range guards {
		body := g.proc + "\n\tsandbox invokehidden " + tclQuote(g.hidden) + " {*}$args\n"
		if _, err := in.Eval("proc " + tclQuote("::simkron::guard::"+g.hidden) + " args " + tclQuote(body)); err != nil {
			return tclErr("guard "+g.name, in, err)
		}
		pairs = append(pairs, g.name, g.hidden)
	}
	for _, c := range []struct {
		name string
		fn   func(e *Engine, args []string) error
	}{
		{"room", (*Engine).cmdRoom},
		{"formatroom", (*Engine).cmdFormatRoom},
		{"binaryroom", (*Engine).cmdBinaryRoom},
	} {
		fn := c.fn
		if _, err := in.NewCommand("::simkron::"+c.name, func(_ any, in *tcl.Interp, args []string) int {
			if err := fn(e, args[1:]); err != nil {
				in.SetResult(err.Error())
				return tclError
			}
			in.SetResult("")
			return tclOK
		}, nil, nil); err != nil {
			return err
		}
	}
	if _, err := in.Eval("set allowed [list " + tclList(allowed) + "]; set guards [list " + tclList(pairs) + "]"); err != nil {
		return tclErr("allow-list", in, err)
	}
	if _, err := in.Eval(sandboxSetup); err != nil {
		return tclErr("stripping the safe interpreter", in, err)
	}
	return nil
}

// tclErr is an error of the master's script what, with Tcl's message.
func tclErr(what string, in *tcl.Interp, err error) error {
	msg, _ := in.Eval("set ::errorInfo")
	if msg == "" {
		msg = err.Error()
	}
	return fmt.Errorf("%s: %s", what, msg)
}

// tclQuote quotes s as one Tcl word.
func tclQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\', '$', '[', ']':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func tclList(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = tclQuote(w)
	}
	return strings.Join(q, " ")
}

// memoryUsed is what the annotations hold: the bytes Tcl's allocator has
// handed out to the engine's interpreters (child.memory) and what the
// engine keeps in Go for the scripts (output, buckets).
func (e *Engine) memoryUsed() int64 { return e.tcl.memory() + e.goBytes }

// room refuses a result of n bytes that would take the annotations over
// their memory ceiling.
func (e *Engine) room(what string, n int64) error {
	used := e.memoryUsed()
	if n <= e.opt.Memory-used {
		return nil
	}
	return fmt.Errorf("%s: the result could take %s, more than the %s left under the annotations' memory ceiling of %s",
		what, bytesText(n), bytesText(max(e.opt.Memory-used, 0)), bytesText(e.opt.Memory))
}

// cmdRoom implements `::simkron::room WHAT N M` in the master: room for
// N × M bytes. Numbers Tcl would refuse are left for the command to
// refuse.
func (e *Engine) cmdRoom(args []string) error {
	if len(args) != 3 {
		return errors.New(`wrong # args: should be "room what n m"`)
	}
	n, err1 := strconv.ParseInt(args[1], 0, 64)
	m, err2 := strconv.ParseInt(args[2], 0, 64)
	if err1 != nil || err2 != nil || n <= 0 || m <= 0 {
		return nil
	}
	return e.room(args[0], mulSat(n, m))
}

// mulSat is a × b for non-negative a and b, math.MaxInt64 when it
// overflows.
func mulSat(a, b int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(lo)
}

func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// cmdFormatRoom implements `::simkron::formatroom FORMAT N LENGTH...
// HEAD...`: room for what `format FORMAT ARG...` can produce, given the N
// arguments' lengths and their first characters (enough for a width or a
// precision taken from an argument with "*"). A conversion can take its
// width, its precision and four characters per character of its argument
// (an integer written in binary), and 400 more for a floating-point
// number.
func (e *Engine) cmdFormatRoom(args []string) error {
	n := 0
	if len(args) >= 2 {
		n, _ = strconv.Atoi(args[1])
	}
	if len(args) < 2 || n < 0 || len(args) != 2+2*n {
		return errors.New(`wrong # args: should be "formatroom format n length... head..."`)
	}
	lengths, heads := args[2:2+n], args[2+n:]
	argLen := func(i int) int64 {
		if i < 0 || i >= n {
			return 0
		}
		v, _ := strconv.ParseInt(lengths[i], 10, 64)
		return v
	}
	argNum := func(i int) int64 {
		if i < 0 || i >= n {
			return 0
		}
		v, err := strconv.ParseInt(strings.TrimSpace(heads[i]), 0, 64)
		if err != nil {
			return 0 // format refuses it
		}
		return max(v, -v)
	}
	f := args[0]
	total := int64(len(f))
	next := 0 // the argument the next conversion takes
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		i++
		if i < len(f) && f[i] == '%' {
			continue
		}
		// An XPG position, "%N$".
		j := i
		for j < len(f) && f[j] >= '0' && f[j] <= '9' {
			j++
		}
		if j < len(f) && f[j] == '$' && j > i {
			p, _ := strconv.Atoi(f[i:j])
			next = p - 1
			i = j + 1
		}
		for i < len(f) && strings.IndexByte("-+ 0#", f[i]) >= 0 {
			i++
		}
		// number reads a width or a precision: digits, or "*" for the
		// next argument.
		number := func() int64 {
			if i < len(f) && f[i] == '*' {
				i++
				next++
				return argNum(next - 1)
			}
			j := i
			for i < len(f) && f[i] >= '0' && f[i] <= '9' {
				i++
			}
			if i == j {
				return 0
			}
			v, err := strconv.ParseInt(f[j:i], 10, 64)
			if err != nil {
				return math.MaxInt64
			}
			return v
		}
		width := number()
		var prec int64
		if i < len(f) && f[i] == '.' {
			i++
			prec = number()
		}
		for i < len(f) && strings.IndexByte("hlLjqzt", f[i]) >= 0 {
			i++
		}
		size := addSat(addSat(width, prec), mulSat(4, argLen(next)))
		if i < len(f) && strings.IndexByte("eEfgGaA", f[i]) >= 0 {
			size = addSat(size, 400)
		}
		next++
		total = addSat(total, size)
	}
	return e.room("format", total)
}

// binarySize is the bytes one element of each binary format type takes.
var binarySize = map[byte]int64{
	'a': 1, 'A': 1, 'b': 1, 'B': 1, 'h': 1, 'H': 1, 'c': 1, 'x': 1, '@': 1,
	's': 2, 'S': 2, 't': 2,
	'i': 4, 'I': 4, 'n': 4, 'f': 4, 'r': 4, 'R': 4,
	'w': 8, 'W': 8, 'm': 8, 'd': 8, 'q': 8, 'Q': 8,
}

// cmdBinaryRoom implements `::simkron::binaryroom TEMPLATE LENGTH...`:
// room for what `binary format TEMPLATE ARG...` can produce, given its
// arguments' lengths. Each field is taken at its largest: its count of
// elements, or for a count of "*" as many elements as its argument has
// characters.
func (e *Engine) cmdBinaryRoom(args []string) error {
	if len(args) < 1 {
		return errors.New(`wrong # args: should be "binaryroom template length..."`)
	}
	t, lengths := args[0], args[1:]
	var total int64
	next := 0 // the argument the next field takes
	for i := 0; i < len(t); {
		c := t[i]
		i++
		if c == ' ' || c == '\t' || c == '\n' {
			continue
		}
		count := int64(1)
		switch {
		case i < len(t) && t[i] == '*':
			i++
			count = 0
			if next < len(lengths) {
				count, _ = strconv.ParseInt(lengths[next], 10, 64)
			}
		case i < len(t) && t[i] >= '0' && t[i] <= '9':
			j := i
			for i < len(t) && t[i] >= '0' && t[i] <= '9' {
				i++
			}
			var err error
			if count, err = strconv.ParseInt(t[j:i], 10, 64); err != nil {
				count = math.MaxInt64
			}
		}
		if c != 'x' && c != 'X' && c != '@' {
			next++
		}
		total = addSat(total, mulSat(binarySize[c], count))
	}
	return e.room("binary format", total)
}

// bytesText writes n bytes for a message: "256 MiB" when it is a whole
// number of MiB, else the bytes.
func bytesText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
