// Package kernel is the simulated operating-system kernel that runs on a
// simkron host: boot, threads that block and wake, system-call entry,
// interrupt dispatch, deferred work (softirqs), kernel timers on a hashed
// timing wheel, and a buffer allocator in simulated memory. Its layer is
// KERN; protocol code above it charges its own layers.
//
// Contract: everything here runs on the simulated core through package cpu
// and charges its cost there; the kernel reaches devices only through
// registers (package cpu's In/Out) and keeps data only in simulated memory.
//
// Simplifications: one core; a FIFO run queue with no time-slice
// preemption (a thread runs until it blocks or yields); no virtual memory
// (simulated programs use physical addresses).
package kernel

import (
	"fmt"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
)

// Costs of the kernel's own functions, in instructions per call. The
// counts are of the order of a Linux 2.x / 4.4BSD kernel path on a 32-bit
// RISC or 486: small fixed paths, no loops.
var (
	defSyscall  = cpu.Def{Name: "system_call", Layer: cpu.LayerKERN, Instructions: 40, CodeBytes: 256, Why: "save user registers, index the call table, check the result (Linux entry.S)"}
	defSchedule = cpu.Def{Name: "schedule", Layer: cpu.LayerKERN, Instructions: 120, CodeBytes: 768, Why: "pick the next runnable thread from a FIFO run queue, bookkeeping"}
	defWakeup   = cpu.Def{Name: "wake_up", Layer: cpu.LayerKERN, Instructions: 30, CodeBytes: 192, Why: "walk a wait queue, mark threads runnable, enqueue"}
	defDoTimer  = cpu.Def{Name: "do_timer", Layer: cpu.LayerKERN, Instructions: 40, CodeBytes: 256, Why: "advance jiffies, account the tick, check the wheel slot"}
	defTimerRun = cpu.Def{Name: "run_timer_list", Layer: cpu.LayerKERN, Instructions: 25, CodeBytes: 256, Why: "per expired timer: unlink and call"}
	defSoftirq  = cpu.Def{Name: "do_softirq", Layer: cpu.LayerKERN, Instructions: 30, CodeBytes: 256, Why: "scan the pending mask, call each handler"}
	defKmalloc  = cpu.Def{Name: "kmalloc", Layer: cpu.LayerInherit, Instructions: 50, CodeBytes: 384, Why: "size-class lookup and free-list pop (slab fast path)"}
	defKfree    = cpu.Def{Name: "kfree", Layer: cpu.LayerInherit, Instructions: 35, CodeBytes: 256, Why: "find the size class, free-list push"}
	defIdle     = cpu.Def{Name: "cpu_idle", Layer: cpu.LayerIDLE, Instructions: 10, CodeBytes: 64, Why: "check the run queue, halt"}
	defIRQ      = cpu.Def{Name: "irq_entry", Layer: cpu.LayerKERN, Instructions: 0, CodeBytes: 64, Why: "interrupt entry and exit; their cycles are the core's irq_entry_cycles and irq_exit_cycles"}
)

// Params configures the kernel.
type Params struct {
	HeapSize sim.Size `toml:"heap_size" min:"64KiB" help:"memory for kernel and user buffers, placed after the kernel text"`
}

// DefaultParams returns the defaults.
func DefaultParams() Params { return Params{HeapSize: 4 * sim.MiB} }

// threadState is where a thread is.
type threadState uint8

const (
	stateRunnable threadState = iota
	stateRunning
	stateBlocked
	stateDone
)

// Thread is a simulated program or kernel thread.
type Thread struct {
	k     *Kernel
	ctx   *cpu.Context
	name  string
	state threadState
	// timedOut is set when a timed sleep ended by its timer.
	timedOut bool
	// sleep is the timer of a timed sleep, and sleepQ the queue it sleeps
	// on: one per thread, reused.
	sleep  Timer
	sleepQ *WaitQueue
}

// Name returns the thread's name.
func (t *Thread) Name() string { return t.name }

// Kernel returns the thread's kernel.
func (t *Thread) Kernel() *Kernel { return t.k }

// Done reports whether the thread's body has returned.
func (t *Thread) Done() bool { return t.state == stateDone }

// Kernel is one host's kernel.
type Kernel struct {
	name  string
	cpu   *cpu.CPU
	sys   *memory.System
	syms  *cpu.SymbolTable
	k     *sim.Scheduler
	runq  []*Thread
	cur   *Thread // nil while idle or in the idle loop
	idle  *cpu.Context
	all   []*Thread
	alloc *Allocator
	lib   lib

	softPending uint32
	softirqs    [32]softirq
	inSoftirq   bool

	wheel        wheel
	jiffies      uint64
	timerJiffies uint64 // last tick whose wheel slot was visited
	hz           int

	sym struct {
		syscall, schedule, wakeup, doTimer, timerRun, softirq, kmalloc, kfree, idle *cpu.Symbol
	}
	// OnAllDone, if set, runs (on the event side) when the last thread
	// ends: the workload is over.
	OnAllDone func()
	live      int
	stats     Stats
}

// Stats counts kernel events.
type Stats struct {
	Syscalls      uint64 `stat:"syscalls" help:"system calls made"`
	Schedules     uint64 `stat:"schedules" help:"times the scheduler picked the next thread"`
	Wakeups       uint64 `stat:"wakeups" help:"threads woken from a wait queue"`
	Ticks         uint64 `stat:"ticks" help:"clock ticks handled"`
	TimersFired   uint64 `stat:"timers_fired" help:"kernel timers whose handlers ran"`
	SoftirqRuns   uint64 `stat:"softirq_runs" help:"deferred-work (softirq) handlers run"`
	ThreadsEnded  uint64 `stat:"threads_ended" help:"threads whose body returned"`
	AllocFailures uint64 `stat:"alloc_failures" help:"buffer allocations refused: the heap exhausted or the size too large"`
}

// Boot brings up a kernel on c: it places its functions in the text
// segment, carves the heap after it and starts the idle loop. Threads are
// added with Spawn; they start running as soon as the event scheduler runs.
func Boot(name string, c *cpu.CPU, syms *cpu.SymbolTable, p Params) (*Kernel, error) {
	k := &Kernel{name: name, cpu: c, sys: c.System(), syms: syms, k: c.Scheduler()}
	k.sym.syscall = syms.Define(defSyscall)
	k.sym.schedule = syms.Define(defSchedule)
	k.sym.wakeup = syms.Define(defWakeup)
	k.sym.doTimer = syms.Define(defDoTimer)
	k.sym.timerRun = syms.Define(defTimerRun)
	k.sym.softirq = syms.Define(defSoftirq)
	k.sym.kmalloc = syms.Define(defKmalloc)
	k.sym.kfree = syms.Define(defKfree)
	k.sym.idle = syms.Define(defIdle)
	c.IRQSymbol = syms.Define(defIRQ)
	k.defineLib()
	if text := uint64(syms.TextEnd() - syms.TextStart()); text > uint64(MaxBootText) {
		panic(fmt.Sprintf("kernel: %s: %d bytes of text at boot, more than MaxBootText (%d), which the config check counts on", name, text, MaxBootText))
	}
	l, err := PlaceHeap(uint64(syms.TextEnd()), p, uint64(k.sys.Phys.Size()))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	a, err := NewAllocator(memory.Addr(l.HeapBase), uint64(p.HeapSize), uint64(k.sys.Phys.Size()))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	k.alloc = a
	k.wheel.init(256)
	k.OpenSoftirq(SoftirqTimer, nil, k.runTimers)
	c.OnIRQExit = k.runSoftirqs
	c.OnContextEnd = k.threadEnded
	k.idle = c.NewContext(name+".idle", cpu.KindIdle, func(*cpu.Context) { k.idleLoop() })
	c.Start(k.idle)
	return k, nil
}

// Name returns the host's name.
func (k *Kernel) Name() string { return k.name }

// CPU returns the core the kernel runs on.
func (k *Kernel) CPU() *cpu.CPU { return k.cpu }

// Symbols returns the host's symbol table.
func (k *Kernel) Symbols() *cpu.SymbolTable { return k.syms }

// SyscallSymbol returns the system-call entry's symbol (system_call):
// Thread.Syscall enters it, takes the trap and calls the system call's
// own function inside it.
func (k *Kernel) SyscallSymbol() *cpu.Symbol { return k.sym.syscall }

// Allocator returns the buffer allocator.
func (k *Kernel) Allocator() *Allocator { return k.alloc }

// Stats returns the kernel's counters.
func (k *Kernel) Stats() Stats { return k.stats }

// Jiffies returns the tick count.
func (k *Kernel) Jiffies() uint64 { return k.jiffies }

// Current returns the running thread, or nil when idle.
func (k *Kernel) Current() *Thread { return k.cur }

// Threads returns how many threads have not ended yet.
func (k *Kernel) Threads() int { return k.live }

// Spawn creates a runnable thread that runs body. A thread spawned while
// the core is halted in the idle loop starts when the core next wakes (at
// the latest, the next clock tick).
func (k *Kernel) Spawn(name string, body func(t *Thread)) *Thread {
	t := &Thread{k: k, name: name, state: stateRunnable}
	t.ctx = k.cpu.NewContext(k.name+"."+name, cpu.KindThread, func(*cpu.Context) { body(t) })
	t.ctx.Data = t
	k.all = append(k.all, t)
	k.runq = append(k.runq, t)
	k.live++
	return t
}

// idleLoop runs whenever no thread can: it hands the core to the next
// runnable thread or halts until an interrupt.
func (k *Kernel) idleLoop() {
	c := k.cpu
	// A thread an interrupt wakes while the loop catches up on its way
	// into the halt is scheduled at once, not at the next interrupt.
	ready := func() bool { return len(k.runq) > 0 }
	for {
		c.Enter(k.sym.idle)
		if len(k.runq) > 0 {
			c.Exit(k.sym.idle)
			k.schedule()
			continue
		}
		c.Exit(k.sym.idle)
		c.HaltUnless(ready)
	}
}

// schedule switches from the running context to the next runnable thread,
// or to the idle loop when there is none. The caller has already put the
// current thread where it belongs (blocked, runnable or done).
func (k *Kernel) schedule() {
	c := k.cpu
	k.stats.Schedules++
	c.Enter(k.sym.schedule)
	var next *Thread
	if len(k.runq) > 0 {
		next = k.runq[0]
		copy(k.runq, k.runq[1:])
		k.runq[len(k.runq)-1] = nil
		k.runq = k.runq[:len(k.runq)-1]
	}
	if next == nil {
		k.cur = nil
		c.Switch(k.idle)
	} else {
		k.cur = next
		next.state = stateRunning
		c.Switch(next.ctx)
	}
	// Switched back in: whoever switched to us set k.cur.
	c.Exit(k.sym.schedule)
}

// threadEnded is the exit path of a thread whose body returned.
func (k *Kernel) threadEnded(x *cpu.Context) {
	t := x.Data.(*Thread)
	// Ending is observable (the workload may be over): catch up first.
	k.cpu.Sync()
	t.state = stateDone
	k.stats.ThreadsEnded++
	k.live--
	if k.live == 0 && k.OnAllDone != nil {
		k.OnAllDone()
	}
	k.schedule()
}

// Syscall runs fn as a system call: the trap, the kernel entry path, then
// fn inside sym (the call's own function, e.g. sys_sendto).
func (t *Thread) Syscall(sym *cpu.Symbol, fn func()) {
	k := t.k
	c := k.cpu
	k.stats.Syscalls++
	c.Enter(k.sym.syscall)
	c.Trap()
	c.Call(sym, fn)
	c.Exit(k.sym.syscall)
}

// Yield lets other runnable threads run.
func (t *Thread) Yield() {
	k := t.k
	if len(k.runq) == 0 {
		return
	}
	t.state = stateRunnable
	k.runq = append(k.runq, t)
	k.schedule()
}

// WaitQueue holds threads sleeping on one condition, in arrival order.
type WaitQueue struct {
	waiters []*Thread
}

// Len returns the number of sleepers.
func (q *WaitQueue) Len() int { return len(q.waiters) }

// Sleep blocks t on q until Wakeup. As in a real kernel the caller
// re-checks its condition afterwards.
func (t *Thread) Sleep(q *WaitQueue) {
	t.state = stateBlocked
	q.waiters = append(q.waiters, t)
	t.k.schedule()
}

// SleepTimeout blocks t on q for at most d (rounded up to ticks). It
// reports whether the timeout ended the sleep.
func (t *Thread) SleepTimeout(q *WaitQueue, d sim.Time) bool {
	k := t.k
	tm := &t.sleep
	if tm.Func == nil {
		tm.Name = "sleep." + t.name
		tm.Func = func() {
			t.timedOut = true
			t.sleepQ.remove(t)
			k.makeRunnable(t)
		}
	}
	t.timedOut = false
	t.sleepQ = q
	k.AddTimer(tm, k.TicksFor(d))
	t.Sleep(q)
	k.DelTimer(tm)
	t.sleepQ = nil
	return t.timedOut
}

// SleepFor blocks t for d.
func (t *Thread) SleepFor(d sim.Time) {
	var q WaitQueue
	t.SleepTimeout(&q, d)
}

func (q *WaitQueue) remove(t *Thread) {
	for i, w := range q.waiters {
		if w == t {
			q.waiters = append(q.waiters[:i], q.waiters[i+1:]...)
			return
		}
	}
}

// Wakeup makes every thread sleeping on q runnable. It may be called from
// any context, interrupt handlers included.
func (k *Kernel) Wakeup(q *WaitQueue) {
	if len(q.waiters) == 0 {
		return
	}
	c := k.cpu
	c.Enter(k.sym.wakeup)
	for _, t := range q.waiters {
		k.makeRunnable(t)
	}
	clear(q.waiters)
	q.waiters = q.waiters[:0]
	c.Exit(k.sym.wakeup)
}

func (k *Kernel) makeRunnable(t *Thread) {
	if t.state != stateBlocked {
		return
	}
	k.stats.Wakeups++
	t.state = stateRunnable
	k.runq = append(k.runq, t)
}

// PopFront removes and returns the first element of the queue q, moving
// the rest down so that the slice keeps its whole capacity: a queue that
// fills and drains as it runs allocates nothing once it has grown to its
// largest. Queues here are short (a backlog, a socket's datagrams).
func PopFront[T any](q *[]T) T {
	s := *q
	v := s[0]
	copy(s, s[1:])
	var zero T
	s[len(s)-1] = zero
	*q = s[:len(s)-1]
	return v
}
