package kernel_test

import (
	"testing"

	"simkron/cpu"
	"simkron/devices/timer"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/driver/clock"
	"simkron/stack/kernel"
)

// Known costs: every kernel function's instruction count is overridden so
// the expected times below can be added up by hand. CPI is 1 and a fetch
// miss costs nothing beyond a hit (memory latency = hit latency), so a
// function costs exactly its instructions.
var overrides = map[string]int64{
	"system_call": 40, "schedule": 120, "wake_up": 30, "cpu_idle": 10,
	"do_timer": 40, "run_timer_list": 25, "do_softirq": 30, "kmalloc": 50, "kfree": 35,
	"time_init": 60, "timer_interrupt": 25,
}

type host struct {
	k    *sim.Scheduler
	c    *cpu.CPU
	sys  *memory.System
	kern *kernel.Kernel
	syms *cpu.SymbolTable
	isa  *memory.Bus
}

func newHost(t testing.TB) *host {
	t.Helper()
	k := sim.NewScheduler(1)
	l1 := &memory.CacheParams{Size: 8 * sim.KiB, Line: 16, Assoc: 4, HitLatency: 1, WritePolicy: memory.WriteBack, WriteAllocate: true}
	hier, err := memory.NewHierarchy(memory.HierarchyParams{L1: l1, MemLatency: 1, MemWriteLatency: 1})
	if err != nil {
		t.Fatal(err)
	}
	sys := memory.NewSystem(k, "h", memory.NewPhys(16*sim.MiB), hier)
	p := cpu.Params{Clock: 100 * sim.MHz, CPI: 1, TrapCycles: 100, IRQEntryCycles: 80, IRQExitCycles: 40, SwitchCycles: 300, Lines: 16}
	c, err := cpu.New(k, "h.cpu0", p, sys)
	if err != nil {
		t.Fatal(err)
	}
	syms := cpu.NewSymbolTable(0x100000, overrides)
	kern, err := kernel.Boot("h", c, syms, kernel.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	isa := memory.NewBus(memory.BusParams{Name: "isa", AccessTime: sim.Microsecond, Width: 2})
	return &host{k: k, c: c, sys: sys, kern: kern, syms: syms, isa: isa}
}

// slowDev completes a command 100us after it is written and raises a level
// interrupt until its status register is written.
type slowDev struct {
	k      *sim.Scheduler
	irq    *cpu.IRQLine
	done   *sim.Event
	status uint64
	wrote  sim.Time
}

func (d *slowDev) Name() string { return "slow" }
func (d *slowDev) Read(off uint64, size int) uint64 {
	return d.status
}
func (d *slowDev) Write(off uint64, size int, v uint64) {
	switch off {
	case 0: // command
		d.wrote = d.k.Now()
		d.k.ScheduleAfter(d.done, 100*sim.Microsecond)
	case 1: // acknowledge
		d.status = 0
		d.irq.Set(false)
	}
}

const cyc = 10 * sim.Nanosecond

// A thread blocks in a system call and is woken by the device's interrupt
// through the kernel; every simulated instant is checked by hand.
func TestSyscallBlocksUntilDeviceInterrupt(t *testing.T) {
	h := newHost(t)
	line, _ := h.c.Line(5, false)
	dev := &slowDev{k: h.k, irq: line}
	dev.done = sim.NewEvent("slow.done", func() { dev.status = 1; line.Set(true) })
	if err := h.sys.Devices.Map(memory.Mapping{Name: "slow", Space: memory.SpaceIO, Base: 0x300, Size: 2, Dev: dev, Bus: h.isa}); err != nil {
		t.Fatal(err)
	}
	sysWait := h.syms.Define(cpu.Def{Name: "sys_wait", Layer: cpu.LayerAPPL, Instructions: 20, CodeBytes: 64})
	intr := h.syms.Define(cpu.Def{Name: "slow_intr", Layer: cpu.LayerDEV, Instructions: 30, CodeBytes: 64})
	var wq kernel.WaitQueue
	h.c.SetHandler(5, "slow", func() {
		h.c.Call(intr, func() {
			if h.c.In(memory.SpaceIO, 0x300, 1) != 0 {
				h.c.Out(memory.SpaceIO, 0x301, 1, 1)
				h.kern.Wakeup(&wq)
			}
		})
	})
	var back sim.Time
	h.kern.Spawn("prog", func(th *kernel.Thread) {
		th.Syscall(sysWait, func() {
			h.c.Out(memory.SpaceIO, 0x300, 1, 1)
			th.Sleep(&wq)
		})
		h.c.Sync()
		back = h.k.Now()
	})
	h.k.Run()

	// idle 10, schedule 120, switch 300, trap 100, system_call 40,
	// sys_wait 20: the command is written at cycle 590.
	if want := 590 * cyc; dev.wrote != want {
		t.Errorf("command written at %v, want %v", dev.wrote, want)
	}
	// Interrupt at 590 cycles + 100us = cycle 10590; entry 80, slow_intr
	// 30, status read 100 (ISA), ack 100, wake_up 30, exit 40 -> 10970;
	// idle 10, schedule 120, switch 300 -> back in the thread at 11400.
	if want := 11400 * cyc; back != want {
		t.Errorf("thread resumed at %v, want %v", back, want)
	}
	if got := h.kern.Stats().Wakeups; got != 1 {
		t.Errorf("wakeups = %d, want 1", got)
	}
}

// With the clock driver, the kernel counts HZ ticks in a simulated second
// and a kernel timer fires on its tick.
func TestTicksAndTimers(t *testing.T) {
	h := newHost(t)
	irq, _ := h.c.Line(0, false)
	tp := timer.DefaultParams()
	dev, err := timer.New(h.k, "h.timer0", tp, irq, h.sys.Guest)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.sys.Devices.Map(memory.Mapping{Name: "timer0", Space: memory.SpaceIO, Base: 0x40, Size: timer.Size, Dev: dev, Bus: h.isa}); err != nil {
		t.Fatal(err)
	}
	drv := clock.New(h.kern, memory.SpaceIO, 0x40, 0)
	var fired uint64
	var slept sim.Time
	h.kern.Spawn("init", func(th *kernel.Thread) {
		drv.Init()
		tm := &kernel.Timer{Name: "t", Func: func() { fired = h.kern.Jiffies() }}
		h.kern.AddTimer(tm, 25)
		start := h.c.LocalTime()
		th.SleepFor(300 * sim.Millisecond)
		slept = h.c.LocalTime() - start
	})
	h.k.RunUntil(sim.Second + sim.Millisecond/2)
	if got := h.kern.Jiffies(); got != 100 {
		t.Errorf("jiffies after 1s at 100 Hz = %d, want 100", got)
	}
	if got := dev.Stats().Ticks; got != 100 {
		t.Errorf("device ticks = %d, want 100", got)
	}
	if fired != 25 {
		t.Errorf("timer fired at jiffy %d, want 25", fired)
	}
	// 300ms is 30 ticks; the sleep ends in the 30th or 31st tick after it
	// began (the first tick may be partial).
	if slept < 290*sim.Millisecond || slept > 311*sim.Millisecond {
		t.Errorf("SleepFor(300ms) slept %v", slept)
	}
	if drv.BootTime() != uint32(tp.Epoch) {
		t.Errorf("RTC at boot = %d, want %d", drv.BootTime(), tp.Epoch)
	}
}

func TestAllocator(t *testing.T) {
	a, err := kernel.NewAllocator(0x10000, 64*1024, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	p1, _ := a.Alloc(100)  // 128-byte class
	p2, _ := a.Alloc(2000) // 2 KiB class, aligned
	if p1 != 0x10000 || p2 != 0x10800 {
		t.Errorf("allocations at 0x%x, 0x%x; want 0x10000, 0x10800", p1, p2)
	}
	if err := a.Free(p1); err != nil {
		t.Fatal(err)
	}
	if p3, _ := a.Alloc(65); p3 != p1 {
		t.Errorf("freed block not reused: 0x%x", p3)
	}
	if err := a.Free(0x12345); err == nil {
		t.Error("bad free not reported")
	}
	if _, ok := a.Alloc(kernel.MaxAlloc + 1); ok {
		t.Error("oversized allocation succeeded")
	}
	if _, err := kernel.NewAllocator(0xF0000, 1<<20, 1<<20); err == nil {
		t.Error("heap beyond memory accepted")
	}
}
