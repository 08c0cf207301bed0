// Package annotations is simkron's Tcl annotation engine, after SimOS:
// scripts attach bodies to points of a running simulation (a symbol's
// entry or exit, an interrupt, a frame reaching a card, every N cycles,
// the end of the run) and read the machine from there.
//
// # Layer
//
// Observation only. The engine connects to the model's trace sources
// (package trace: the cores' calls, interrupts and device accesses, the
// event scheduler's firings, the cards' frames), beside whatever other
// listener they have.
//
// # Contract
//
// Annotations never change the simulation. Nothing a body can do charges
// cycles, schedules or cancels events, touches a device register or
// writes memory: the commands a body sees are read-only, memory is read
// straight from physical memory (no cache reference, no cost), and `cycle`
// annotations run from the event scheduler's trace source before the first event
// at or after their time instead of as events of their own. With or
// without annotations the event trace and the result are identical; the
// tests hash both.
//
// # The sandbox
//
// Scripts run in a safe child interpreter of a master the engine keeps
// to itself, stripped to an allow-list (sandbox.go): Tcl's commands for
// values and control flow, and the engine's commands below, which reach
// Go through aliases. Every other command of every namespace is deleted
// when the sandbox is made — the clock and everything under ::tcl::clock,
// the environment, channels (chan, read, gets, zlib...), interp, package,
// encoding, TclOO, ::tcl::unsupported — and so are the safe interpreter's
// hidden commands, but for the originals of the guarded commands below.
// rand() starts from a fixed seed. What a script prints is deterministic.
// `source` reads only regular files under the folder given to New, and
// refuses a file that is already being loaded.
//
// The engine keeps its budget and reads a body's errors in Go, on the
// child interpreter itself (tclapi.go): no Tcl command of the sandbox is
// part of it, so a script that redefines info, catch or error changes
// nothing.
//
// # Limits
//
// Each load and each body has a budget of Tcl commands (Options.Commands)
// and of host time (Options.Time), and all of them together one of host
// time for the whole run (Options.RunTime). Tcl checks them before every
// command it invokes and every 64 bytecode instructions; the engine
// counts the commands in an int64 of its own (Tcl's counter is 32 bits),
// and checks them and the memory every 100 commands (checkEvery) and at
// the end of each load and body. A single command cannot be
// interrupted: one still running well past its time (backstop) is left to
// finish on a goroutine of its own and the interpreter is abandoned.
// What the annotations hold — Tcl's allocations for the interpreters,
// the output and the bucket values — has a ceiling (Options.Memory).
// Commands whose result can be far larger than their arguments (string
// repeat, string map, lrepeat, regsub, format, binary format) first check
// their result's worst case against the room left. puts has a cap
// (Options.Output). A Tcl_Panic (a value past Tcl's 2 GiB limit, an
// allocation that failed) becomes a script error instead of an abort.
// Going over any of these is a script error with the file and line.
//
// # Points
//
//	annotation set pc SYMBOL:START|END BODY   entering / leaving SYMBOL on any host
//	annotation set exc ?LINE? entry|exit BODY interrupt entry / exit (any line without LINE)
//	annotation set device DEV frame BODY      a frame reached card DEV ("nic0" or "pcA.nic0")
//	annotation set device DEV irq BODY        DEV's interrupt line was taken
//	annotation set cycle N BODY               every N cycles of the first host's clock
//	annotation set sim exit BODY              once, at Finish
//
// Bodies run at the interpreter's global level. Inside them:
//
//	cycles            the host CPU's cycle counter (charged work, idle included)
//	now               simulated time in picoseconds (see below)
//	host, cpu         the host's and the core's names
//	symbol, layer     the innermost active symbol and its declared layer ("" if none)
//	frame             the frame of a `device ... frame` point, as hex ("" elsewhere)
//	mem read ADDR LEN LEN bytes of the host's physical memory at ADDR, as hex
//	stat NAME         a counter of the host (see StatNames)
//	symbols           every symbol name any host defines, sorted
//	layer map SYMBOL LAYER   a request to attribute SYMBOL to LAYER (LayerMap)
//	bucket add NAME VALUE | bucket get NAME STAT | bucket report
//	puts ?-nonewline? ?stdout|stderr? STRING   appended to Output
//	trace instant NAME      an instant event NAME on the host's timeline, at `now`
//	trace counter NAME V    the host's counter track NAME set to the number V, at `now`
//
// The two trace commands write to the run's timeline (simkron run
// --trace, SetTrace), within its window; without a timeline they do
// nothing, so that one script serves runs with and without a trace.
// Tcl's own trace subcommands (trace add, remove, info) work as ever.
//
// `now` is the time the point happened: the core's local time (the time
// its charged work has reached) for pc and exc points, the due time for
// cycle points, and the event clock for frame and exit points. The host
// of a cycle or exit point is the first host.
//
// # Errors
//
// A script that fails to load (Tcl syntax, an unknown point, a symbol no
// host defines) makes New fail with the file and line. A body that fails
// while the simulation runs is recorded (Err) with the file, the line of
// the failing command and Tcl's message; no body runs after it, and the
// simulation goes on untouched: stopping it is the caller's decision.
//
// # Simplifications
//
// The memory measure leaves out the 48-byte header of each Tcl value,
// which Tcl's allocator does not count (at most six times what it does);
// and between two checks one command can still grow it as far as Tcl's
// own limit of 2 GiB for one value. A command abandoned past its time
// keeps a core busy until the process ends. Tcl's parser recurses once
// for each level of brackets: a script that evaluates a string nested
// hundreds of thousands of levels deep is stopped by the default time
// budget within about a second (its goroutine's stack then near 1 GB),
// but given tens of seconds it can reach Go's stack limit of 1 GB, which
// ends the process; nothing here can catch that.
//
// Annotations are set while scripts load, not from bodies. Symbols are
// resolved by name when an annotation is set, so a symbol defined later
// cannot be annotated. `layer` is the symbol's declared layer (a library
// routine's is "", not its caller's). An error's line is found through
// Tcl's frame information; for a body defined inside a proc it is the line
// that called the proc. Bodies that leave a symbol can also run while a
// run's threads are unwound at its end (machine.Run.Close), before Finish.
package annotations
