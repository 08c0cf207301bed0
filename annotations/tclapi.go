package annotations

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/tcl"
	lib "modernc.org/tcl/lib"
)

// This file is the one place that reaches below modernc.org/tcl's Interp
// into Tcl's C library (modernc.org/tcl/lib, Tcl 8.6 translated to Go),
// for what Tcl's script level cannot give without going through commands
// a script could redefine:
//
//   - evaluating a load or a body in the sandbox and reading its return
//     options straight from the child interpreter (no catch, no Tcl
//     variable the script could touch);
//   - the command budget: the child's command counter (Interp.cmdCount,
//     what `info cmdcount` reports) and its command and time limits, with
//     handlers in Go that Tcl calls when a limit is reached;
//   - the memory Tcl's allocator holds for the engine (the per-thread
//     cache of tclThreadAlloc.c, one per libc.TLS, so one per engine);
//   - the line of the command being run (the child's TIP 280 frames);
//   - Tcl_Panic, which would abort the process, turned into a Go panic
//     that the engine recovers.
//
// The structs are the translated ones of the same module version, so
// their layout is Tcl's by construction.

// tclObj is a Tcl_Obj* the engine holds a reference to.
type tclObj uintptr

// child is the safe child interpreter "sandbox" of a master, seen from Go.
type child struct {
	in  *tcl.Interp // the master
	tls *libc.TLS
	h   uintptr // the child's Tcl_Interp*
	id  uintptr // the child's key in the registry of engines
	// cache is the TLS's allocator cache (tclThreadAlloc.c), 0 until known.
	cache uintptr
}

// openChild returns the child interpreter path of master in.
func openChild(in *tcl.Interp, path string) (*child, error) {
	p, err := libc.CString(path)
	if err != nil {
		return nil, err
	}
	defer libc.Xfree(in.TLS(), p)
	h := lib.XTcl_GetSlave(in.TLS(), in.Handle(), p)
	if h == 0 {
		return nil, fmt.Errorf("no child interpreter %q", path)
	}
	return &child{in: in, tls: in.TLS(), h: h}, nil
}

// newObj returns a new Tcl value holding text, with a reference the
// caller releases with free.
func (c *child) newObj(text string) (tclObj, error) {
	p, err := libc.CString(text)
	if err != nil {
		return 0, err
	}
	defer libc.Xfree(c.tls, p)
	o := lib.XTcl_NewStringObj(c.tls, p, int32(len(text)))
	lib.XTcl_DbIncrRefCount(c.tls, o, 0, 0)
	return tclObj(o), nil
}

func (c *child) free(o tclObj) {
	if o != 0 {
		lib.XTcl_DbDecrRefCount(c.tls, uintptr(o), 0, 0)
	}
}

// at is the value of type T at addr, an address Tcl's C code handed out
// (memory of the libc allocator or of the TLS stack, outside Go's heap).
func at[T any](addr uintptr) *T { return *(**T)(unsafe.Pointer(&addr)) }

// goString returns the string of a Tcl value. Out-parameters of Tcl's
// functions live on the TLS stack, which does not move as Go's does.
func (c *child) goString(o uintptr) string {
	n := c.tls.Alloc(8)
	defer c.tls.Free(8)
	p := lib.XTcl_GetStringFromObj(c.tls, o, n)
	return string(libc.GoBytes(p, int(*at[int32](n))))
}

// eval evaluates script at the child's global level and returns Tcl's
// return code and result.
func (c *child) eval(script tclObj) (code int, result string) {
	code = int(lib.XTcl_EvalObjEx(c.tls, c.h, uintptr(script), lib.TCL_EVAL_GLOBAL))
	return code, c.goString(lib.XTcl_GetObjResult(c.tls, c.h))
}

// returnOptions reads the return options of the last evaluation, which
// ended with code: -errorline (the line of the failing command in the
// evaluated script), -errorinfo and -errorcode.
func (c *child) returnOptions(code int) (line int, info, errorCode string) {
	opts := lib.XTcl_GetReturnOptions(c.tls, c.h, int32(code))
	lib.XTcl_DbIncrRefCount(c.tls, opts, 0, 0)
	defer lib.XTcl_DbDecrRefCount(c.tls, opts, 0, 0)
	for k, v := range c.pairs(opts) {
		switch k {
		case "-errorline":
			line, _ = strconv.Atoi(v)
		case "-errorinfo":
			info = v
		case "-errorcode":
			errorCode = v
		}
	}
	return line, info, errorCode
}

// pairs yields the keys and values of a Tcl dictionary (or any list of
// pairs) as strings.
func (c *child) pairs(dict uintptr) func(yield func(k, v string) bool) {
	return func(yield func(k, v string) bool) {
		out := c.tls.Alloc(16)
		defer c.tls.Free(16)
		if lib.XTcl_ListObjGetElements(c.tls, 0, dict, out, out+8) != lib.TCL_OK {
			return
		}
		n, elems := *at[int32](out), *at[uintptr](out + 8)
		elem := func(i int32) uintptr { return *at[uintptr](elems + uintptr(i)*8) }
		for i := int32(0); i+1 < n; i += 2 {
			if !yield(c.goString(elem(i)), c.goString(elem(i+1))) {
				return
			}
		}
	}
}

// frame returns the line and text of the command the child is running,
// from the innermost frame that has them in the script being evaluated
// (a frame of type "eval"): the command itself, or the call of the proc
// it is in.
func (c *child) frame() (line int, cmd string) {
	for f := at[lib.Interp](c.h).FcmdFramePtr; f != 0; f = at[lib.CmdFrame](f).FnextPtr {
		d := lib.XTclInfoFrame(c.tls, c.h, f)
		lib.XTcl_DbIncrRefCount(c.tls, d, 0, 0)
		var typ, l string
		var text string
		for k, v := range c.pairs(d) {
			switch k {
			case "type":
				typ = v
			case "line":
				l = v
			case "cmd":
				text = v
			}
		}
		lib.XTcl_DbDecrRefCount(c.tls, d, 0, 0)
		if typ == "eval" && l != "" {
			line, _ = strconv.Atoi(l)
			return line, text
		}
	}
	return 0, ""
}

// Limits. The child's command counter is an int32 that counts up from
// where the engine last set it; the engine sets it to 0 before every load
// and body and whenever a slice of commands has been used, and counts the
// budget itself in an int64.

func (c *child) commands() int32 { return at[lib.Interp](c.h).FcmdCount }

func (c *child) setCommands(n int32) { at[lib.Interp](c.h).FcmdCount = n }

// limitCommands makes Tcl call the command-limit handler once more than n
// commands have run since the counter was last set.
func (c *child) limitCommands(n int32) {
	lib.XTcl_LimitSetCommands(c.tls, c.h, n)
	lib.XTcl_LimitTypeSet(c.tls, c.h, lib.TCL_LIMIT_COMMANDS)
}

// limitTime makes Tcl call the time-limit handler at its checks after t.
func (c *child) limitTime(t time.Time) {
	p := c.tls.Alloc(int(unsafe.Sizeof(lib.Tcl_Time{})))
	defer c.tls.Free(int(unsafe.Sizeof(lib.Tcl_Time{})))
	*at[lib.Tcl_Time](p) = lib.Tcl_Time{Fsec: t.Unix(), Fusec: int64(t.Nanosecond() / 1000)}
	lib.XTcl_LimitSetTime(c.tls, c.h, p)
	lib.XTcl_LimitTypeSet(c.tls, c.h, lib.TCL_LIMIT_TIME)
}

// memory returns the bytes Tcl's allocator has handed out, and not taken
// back, through the engine's thread cache: every string, list, dict,
// array, big integer, compiled script and interpreter structure of the
// master and the child. What it leaves out is the 48-byte header of each
// Tcl value (Tcl_Obj), which the allocator hands out from blocks of its
// own without counting it; a live value is held by a slot the count does
// include (a list element, a variable, a dictionary entry: 8 bytes or
// more), so the headers add at most six times the count.
func (c *child) memory() int64 {
	if c.cache == 0 {
		// Made on the first allocation, kept as long as the TLS.
		if c.cache = lib.XTclpGetAllocCache(c.tls); c.cache == 0 {
			return 0
		}
	}
	cache := at[lib.Cache1](c.cache)
	// Blocks too large for the buckets are counted in an int32 of Tcl's;
	// read as unsigned it stays right to 4 GiB.
	n := int64(uint32(cache.FtotalAssigned))
	for _, b := range cache.Fbuckets {
		n += b.FtotalAssigned
	}
	return n
}

// The engines by key, for the limit handlers and the panic procedure,
// which Tcl calls with a key (client data) or a libc.TLS.
var (
	registry sync.Map // key (uintptr) or *libc.TLS -> *Engine
	nextKey  atomic.Uintptr
)

func register(e *Engine) uintptr {
	key := nextKey.Add(1)
	registry.Store(key, e)
	registry.Store(e.tcl.tls, e)
	return key
}

func unregister(e *Engine) {
	registry.Delete(e.tcl.id)
	registry.Delete(e.tcl.tls)
}

func engineOf(key any) *Engine {
	if e, ok := registry.Load(key); ok {
		return e.(*Engine)
	}
	return nil
}

// handlers installs the engine's command- and time-limit handlers on the
// child.
func (c *child) handlers() {
	lib.XTcl_LimitAddHandler(c.tls, c.h, lib.TCL_LIMIT_COMMANDS, cFunc(commandLimitReached), c.id, 0)
	lib.XTcl_LimitAddHandler(c.tls, c.h, lib.TCL_LIMIT_TIME, cFunc(timeLimitReached), c.id, 0)
}

// cFunc returns the C function pointer of a top-level Go function with a
// C procedure's signature, as the translated Tcl calls it.
func cFunc(f func(*libc.TLS, uintptr, uintptr)) uintptr {
	return *(*uintptr)(unsafe.Pointer(&struct {
		f func(*libc.TLS, uintptr, uintptr)
	}{f}))
}

// commandLimitReached is Tcl's command-limit handler (Tcl_LimitHandlerProc).
func commandLimitReached(_ *libc.TLS, key, _ uintptr) {
	if e := engineOf(key); e != nil {
		e.commandLimit()
	}
}

// timeLimitReached is Tcl's time-limit handler.
func timeLimitReached(_ *libc.TLS, key, _ uintptr) {
	if e := engineOf(key); e != nil {
		e.timeLimit()
	}
}

// tclAbort is the Go panic Tcl_Panic raises instead of aborting: Tcl found
// it cannot go on (a value over its 2 GiB limit, an allocation that
// failed). The interpreter is left as it was and never used again.
type tclAbort struct {
	msg  string
	file string // the script being loaded, "" in a body
	line int    // the line being run, as frame gives it, 0 if unknown
	cmd  string // the command being run
}

var panicOnce sync.Once

// catchPanics makes every Tcl_Panic of the process a Go panic of type
// tclAbort, raised on the goroutine that runs the Tcl code.
func catchPanics(tls *libc.TLS) {
	panicOnce.Do(func() { lib.XTcl_SetPanicProc(tls, cFunc(tclPanic)) })
}

// tclPanic is the panic procedure (Tcl_PanicProc): it formats Tcl's
// message, notes where the engine's script was, and panics.
func tclPanic(tls *libc.TLS, format, va uintptr) {
	a := tclAbort{msg: cFormat(libc.GoString(format), va)}
	if e := engineOf(tls); e != nil && e.tcl != nil {
		func() {
			defer func() { _ = recover() }() // the interpreter may be in no state to say
			a.line, a.cmd = e.tcl.frame()
			if len(e.files) > 0 {
				a.file = e.files[len(e.files)-1]
			}
		}()
	}
	panic(a)
}

// cFormat formats a C printf format the way Tcl_Panic's messages use it
// (%d, %u, %s and their long forms), reading the arguments from va.
func cFormat(format string, va uintptr) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' || i+1 >= len(format) {
			b.WriteByte(format[i])
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("lzh", format[j]) >= 0 {
			j++
		}
		if j >= len(format) {
			b.WriteString(format[i:])
			break
		}
		long := j > i+1 // %ld, %zu...: a 64-bit argument
		switch format[j] {
		case 'd', 'i':
			v := int64(libc.VaUintptr(&va))
			if !long {
				v = int64(int32(v))
			}
			b.WriteString(strconv.FormatInt(v, 10))
		case 'u':
			v := uint64(libc.VaUintptr(&va))
			if !long {
				v = uint64(uint32(v))
			}
			b.WriteString(strconv.FormatUint(v, 10))
		case 's':
			b.WriteString(libc.GoString(libc.VaUintptr(&va)))
		case '%':
			b.WriteByte('%')
		default:
			b.WriteString(format[i : j+1])
		}
		i = j
	}
	return b.String()
}
