// Package top is the host environment of the TOP measurements: the
// single-program DOS PC on which the TOP OSI stack ran, modelled as code
// running in simulated memory. There is no kernel, no user/kernel split
// and no system call: one program owns the machine, with the packet
// driver resident beside it and the BIOS's timer interrupt.
//
// # Layer
//
// The host's own work (the main loop, the timer interrupt) is layer KERN;
// the memory manager, the interface queues and the scheduler are library
// routines whose cycles count towards the layer that called them, filed
// under the cost categories of the study (memory management, task
// scheduling), so that each layer's processing splits as the study's did.
//
// # Contract: the seed's implementation architecture
//
//   - Layer interface: a pair of FIFO queues between two layers (one each
//     way), whose elements are fixed-size Primitive Structures
//     (Prim) pointing to Parameter Structures (the osi descriptors: link,
//     user data pointer and length, other parameters, number of
//     allocations). The other parameters of a primitive (addresses) are
//     written into a block of the data area and read back by the taker.
//   - Task scheduler: one ready queue. Putting a primitive into an
//     interface queue enqueues the task that serves the queue; the main
//     loop takes the ready tasks in order and each runs to completion,
//     which makes every state machine atomic.
//   - Memory manager (mm.go): separate transmission and reception
//     regions, each with primitive, parameter and data areas; fixed-size
//     structures from free lists, variable-size data first fit with
//     coalescing.
//   - Timer manager (timer.go): a Varghese & Lauck timing wheel advanced
//     by the PC's 18.2 Hz tick; a time-out reaches its layer as a
//     primitive in that layer's time-out queue.
//   - MAC (mac.go): the packet driver below, and the MAC–LLC interface as
//     a pair of circular buffers.
//
// # Costs
//
// Every function's instruction count is its C path as a 16-bit compiler
// of the time emitted it for a program of more than 64 KiB of data (far
// pointers): a structure field's load or store through a far pointer 2
// instructions (LES, then MOV), a call with its arguments 3 to 6 (the
// pushes, CALL, the stack adjusted), a test and branch 2, a prologue and
// epilogue 3 to 4, PUSHF/CLI ... POPF around a queue's update 3. Each
// function's Why (simkron symbols) adds its path up. Cycles are the
// instructions times the machine's CPI (1.8 on the 486DX-33: one cycle
// for a register or ALU instruction and a load that hits the L1, three
// for a taken branch or a near call, more for LES and far calls and
// returns), plus what the cache model charges for each load and store
// of the structures, which live in simulated memory, and for fetching
// the code. Loops over items (free extents, timer blocks, octets) are
// charged per item where they run. Nothing is charged for the purpose
// of a figure: the seed's Table 1 gives each module's size (task
// scheduler 155 lines, timer manager 350, memory manager 965, MAC 1120),
// which these paths fit in.
//
// Interrupts are the core's own controller and dispatch (package cpu):
// the host installs its handlers with SetHandler and masks with CLI/STI
// (DisableInterrupts/RestoreInterrupts) around queue updates an interrupt
// handler could also make. It uses nothing of stack/kernel: a DOS program
// has no threads, softirqs or system calls to reuse.
//
// # Simplifications
//
// Addresses are physical (no segments). When the ready queue is empty
// the DOS main loop spins on it; the model halts until the next
// interrupt instead, which changes no timing the program can see (the
// halt's cycles are idle, not the main loop's). Structure layouts are this
// package's own, sized like the seed's.
package top

import (
	"encoding/binary"
	"fmt"

	"simkron/cpu"
	"simkron/devices/pit"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/dos"
	"simkron/stack/osi"
)

// Params configures the host program's memory and managers.
type Params struct {
	TxPrims    int      `toml:"tx_primitives" min:"8" max:"16384" help:"Primitive Structures in the transmission region"`
	RxPrims    int      `toml:"rx_primitives" min:"8" max:"16384" help:"Primitive Structures in the reception region"`
	TxParams   int      `toml:"tx_parameters" min:"8" max:"16384" help:"Parameter Structures in the transmission region"`
	RxParams   int      `toml:"rx_parameters" min:"8" max:"16384" help:"Parameter Structures in the reception region"`
	TxData     sim.Size `toml:"tx_data" min:"4KiB" max:"256KiB" help:"data area of the transmission region (PCIs, primitives' parameters)"`
	RxData     sim.Size `toml:"rx_data" min:"4KiB" max:"256KiB" help:"data area of the reception region"`
	TxRing     sim.Size `toml:"tx_ring" min:"2KiB" max:"64KiB" help:"MAC-LLC transmit circular buffer"`
	RxRing     sim.Size `toml:"rx_ring" min:"4KiB" max:"64KiB" help:"MAC-LLC receive circular buffer (frames stay there until the layers above release them)"`
	ReadySlots int      `toml:"ready_slots" min:"16" max:"16384" help:"entries of the scheduler's ready queue"`
	WheelSlots int      `toml:"wheel_slots" min:"8" max:"4096" help:"slots of the timing wheel (one per tick)"`
	Timers     int      `toml:"timers" min:"1" max:"4096" help:"timer control blocks"`
	DataBase   uint64   `toml:"data_base" help:"physical address of the program's data (structures, areas, buffers), after its code"`
	PITBase    uint64   `toml:"pit_base" help:"I/O port of the 8254 interval timer (PC: 0x40)"`
	PITIRQ     int      `toml:"pit_irq" min:"0" max:"31" help:"interrupt line of the timer (PC: 0)"`
}

// DefaultParams returns a layout that fits a 640 KiB DOS PC: the data at
// 192 KiB, the BIOS timer at port 0x40 on IRQ 0.
func DefaultParams() Params {
	return Params{
		TxPrims: 512, RxPrims: 512, TxParams: 1024, RxParams: 1024,
		TxData: 64 * sim.KiB, RxData: 64 * sim.KiB,
		TxRing: 8 * sim.KiB, RxRing: 32 * sim.KiB,
		ReadySlots: 1024, WheelSlots: 256, Timers: 64,
		DataBase: 0x30000, PITBase: 0x40, PITIRQ: 0,
	}
}

// Validate checks what the bounds cannot.
func (p Params) Validate() error {
	if p.DataBase%16 != 0 {
		return fmt.Errorf("data_base: %#x must be paragraph-aligned (a multiple of 16)", p.DataBase)
	}
	if p.DataBase < 0x500 {
		return fmt.Errorf("data_base: %#x overlaps the interrupt vectors and the BIOS data area below 0x500", p.DataBase)
	}
	return nil
}

// Costs of the host's own routines, in instructions per call: small C
// functions of the seed's run-time (its task scheduler is 155 lines, its
// timer manager 350; seed Table 1).
var (
	defMain     = cpu.Def{Name: "top_main", Layer: cpu.LayerKERN, Instructions: 12, CodeBytes: 96, Why: "main loop round: the ready ring's head and tail indices (far loads: 4), compare (2), the head entry's task block (index scaled, far load: 3), on to the dispatch or back round the loop (3)"}
	defDispatch = cpu.Def{Name: "sched_dispatch", Layer: cpu.LayerInherit, Instructions: 16, CodeBytes: 96, Why: "PUSHF/CLI and POPF (3), the head index advanced modulo the ring (load, INC, CMP, reset, store: 6), the task block's entry (far load: 2), CALL FAR through it (1), prologue and epilogue (4)"}
	defEnqueue  = cpu.Def{Name: "sched_enqueue", Layer: cpu.LayerInherit, Instructions: 14, CodeBytes: 96, Why: "PUSHF/CLI and POPF (3), head and tail (far loads: 4), the next tail modulo the ring and the full test (3), the task block at the tail and the new tail (far stores: 4)"}
	defPut      = cpu.Def{Name: "ifq_put", Layer: cpu.LayerInherit, Instructions: 22, CodeBytes: 160, Why: "mm_get_prim (call: 3), name, argument, Parameter Structure and parameters into it (4 far stores: 8), PUSHF/CLI/POPF (3), link at the tail (tail loaded and tested, stored at the tail or the head, new tail: 7), sched_enqueue (call: 1)"}
	defGet      = cpu.Def{Name: "ifq_get", Layer: cpu.LayerInherit, Instructions: 20, CodeBytes: 128, Why: "PUSHF/CLI/POPF (3), the head (far load: 2), empty test (2), its link into the head and the tail cleared when it was the last (5), its fields for the caller (far loads: 4), mm_put_prim (call: 3), return (1)"}
	defParamsW  = cpu.Def{Name: "prim_params_put", Layer: cpu.LayerInherit, Instructions: 12, CodeBytes: 96, Why: "mm_alloc for the block (call with region and size: 5), null test (2), the parameters stored (MOV CX, REP MOVSW set-up: 5)"}
	defParamsR  = cpu.Def{Name: "prim_params_get", Layer: cpu.LayerInherit, Instructions: 12, CodeBytes: 96, Why: "the parameters loaded (MOV CX, REP MOVSW set-up: 5), mm_free (call: 4), the caller's pointer returned (3)"}
	defInt08    = cpu.Def{Name: "int08_timer", Layer: cpu.LayerKERN, Instructions: 20, CodeBytes: 128, Why: "INT 08h: registers saved (4), the BIOS tick count at 0040:006C incremented (32 bits, far: 4), the timer manager called (3), EOI to the 8259 (MOV AL,20h; OUT 20h,AL: 2), registers restored and IRET (7)"}
	defBoot     = cpu.Def{Name: "top_start", Layer: cpu.LayerKERN, Instructions: 200, CodeBytes: 512, Why: "program start-up: program the PIT, lay out the regions, hook INT 08h (once)"}
)

// Stats counts the host's events.
type Stats struct {
	Dispatches    uint64 // tasks run
	Enqueued      uint64
	ReadyOverflow uint64 // tasks that found the ready queue full (lost)
	ReadyPeak     int
	Ticks         uint64
	PutFailures   uint64 // primitives that found no structure
}

// Runtime is a TOP program's run-time on one host's core: its tasks,
// timers, buffers and layer entities.
type Runtime struct {
	name   string
	c      *cpu.CPU
	syms   *cpu.SymbolTable
	cat    *osi.Catalog
	p      Params
	mm     *MemMgr
	bufs   *osi.Bufs
	copier *dos.Copier
	main   *cpu.Context

	// The ready queue: a ring of task-block addresses with head and tail
	// indices, all in simulated memory.
	readyCtl, readyRing memory.Addr
	readyLen            int
	tasks               map[memory.Addr]*Task
	taskArea            memory.Addr
	ntasks              int

	tm     timerMgr
	rings  []*ring
	mac    *MAC
	starts []func()
	// exits run in order when the program ends (station.go); exit asks
	// the main loop to end once nothing is ready; st is the station the
	// program runs on, nil for a host that is the machine's only program.
	exits    []func()
	exit     bool
	exitCond func() bool
	st       *Station
	// started is the station program's Started.
	started func(h *Runtime)
	tmp     [16]byte
	pbuf    []byte
	next    memory.Addr // bump pointer of the static data
	stats   Stats
	sym     struct{ main, dispatch, enqueue, put, get, paramsW, paramsR, int08, boot *cpu.Symbol }
}

// maxTasks bounds the task blocks of one program.
const maxTasks = 64

// Boot builds the host's run-time on c: it defines its functions in syms,
// lays its data out from p.DataBase and makes the program's one context,
// which starts when the event scheduler runs: it programs the PIT for the
// BIOS tick, runs every start-up function given to OnStart in order, and
// then the main loop.
func Boot(name string, c *cpu.CPU, syms *cpu.SymbolTable, p Params) (*Runtime, error) {
	return boot(name, c, syms, p, nil)
}

// boot is Boot for a program of station st (nil: the machine's only
// program).
func boot(name string, c *cpu.CPU, syms *cpu.SymbolTable, p Params, st *Station) (*Runtime, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	h := &Runtime{name: name, c: c, syms: syms, cat: osi.NewCatalog(), p: p, tasks: map[memory.Addr]*Task{}, st: st}
	h.sym.main = h.define(defMain, osi.CatSched)
	h.sym.dispatch = h.define(defDispatch, osi.CatSched)
	h.sym.enqueue = h.define(defEnqueue, osi.CatSched)
	h.sym.put = h.define(defPut, osi.CatSched)
	h.sym.get = h.define(defGet, osi.CatSched)
	h.sym.paramsW = h.define(defParamsW, osi.CatMemory)
	h.sym.paramsR = h.define(defParamsR, osi.CatMemory)
	h.sym.int08 = h.define(defInt08, osi.CatOther)
	h.sym.boot = h.define(defBoot, osi.CatOther)
	h.copier = dos.NewCopier(c, syms, "memcpy")
	h.cat.File(h.copier.Symbol(), osi.CatCopy)
	h.tm.define(h)
	if uint64(syms.TextEnd()) > p.DataBase {
		return nil, fmt.Errorf("%s: data_base %#x lies inside the program's code (up to %#x)", name, p.DataBase, uint64(syms.TextEnd()))
	}
	end := p.DataBase + 16*1024 + uint64(p.TxPrims+p.RxPrims)*primSize + uint64(p.TxParams+p.RxParams)*osi.DescSize +
		uint64(p.TxData+p.RxData) + uint64(p.TxRing+p.RxRing) + uint64(p.ReadySlots)*4 + uint64(p.WheelSlots)*4 + uint64(p.Timers)*16
	if end > uint64(c.System().Phys.Size()) {
		return nil, fmt.Errorf("%s: the program's data (%#x to %#x) does not fit in %v of memory", name, p.DataBase, end, c.System().Phys.Size())
	}
	h.layout()
	var next memory.Addr
	h.mm, next = newMemMgr(h, h.next, p)
	h.next = (next + 0xFF) &^ 0xFF
	h.bufs = osi.NewBufs(c, h.define, h.mm)
	return h, nil
}

// Start makes the program the machine's only context and starts it; call
// it once, after every component has been set up. A program that a
// Station runs is started by the station instead.
func (h *Runtime) Start() {
	h.main = h.c.NewContext(h.name+".main", cpu.KindThread, func(*cpu.Context) {
		h.run()
		// The machine's only program has nothing to return to.
		for {
			h.c.Halt()
		}
	})
	h.c.Start(h.main)
}

// Exit ends the program once its ready queue is empty: the main loop
// returns, the functions given to OnExit run, and a station runs its
// next program. Call it from the program's own code (a task).
func (h *Runtime) Exit() { h.exit = true }

// ExitWhen ends the program at the first moment its ready queue is empty
// and done reports true (a program that waits for its connections to
// close before it returns to DOS). done is the program's own check of
// its state, looked at by the simulator for it, uncharged.
func (h *Runtime) ExitWhen(done func() bool) { h.exitCond = done }

// OnExit adds fn to what runs, in order, when the program ends (release
// the packet driver's handles, give the timer interrupt back).
func (h *Runtime) OnExit(fn func()) { h.exits = append(h.exits, fn) }

// Name returns the host's name.
func (h *Runtime) Name() string { return h.name }

// CPU returns the core.
func (h *Runtime) CPU() *cpu.CPU { return h.c }

// Symbols returns the symbol table.
func (h *Runtime) Symbols() *cpu.SymbolTable { return h.syms }

// Catalog returns the cost categories of the host's symbols.
func (h *Runtime) Catalog() *osi.Catalog { return h.cat }

// Bufs returns the PDU chains over the memory manager.
func (h *Runtime) Bufs() *osi.Bufs { return h.bufs }

// Mem returns the memory manager.
func (h *Runtime) Mem() *MemMgr { return h.mm }

// Stats returns the host's counters.
func (h *Runtime) Stats() Stats { return h.stats }

// Params returns the configuration.
func (h *Runtime) Params() Params { return h.p }

// OnStart adds fn to the program's start-up, run in order in the
// program's context before the main loop (drivers, layer entities, the
// users' first tasks).
func (h *Runtime) OnStart(fn func()) { h.starts = append(h.starts, fn) }

// define places d and files it under cat.
func (h *Runtime) define(d cpu.Def, cat osi.Category) *cpu.Symbol {
	s := h.syms.Define(d)
	h.cat.File(s, cat)
	return s
}

// Define places a function of a component of the host (a layer entity, a
// driver, a user) and files it under cat.
func (h *Runtime) Define(d cpu.Def, cat osi.Category) *cpu.Symbol { return h.define(d, cat) }

// File files a symbol defined elsewhere (a driver's) under cat.
func (h *Runtime) File(s *cpu.Symbol, cat osi.Category) { h.cat.File(s, cat) }

// static reserves n bytes of the program's static data (16-aligned),
// cleared as a loader clears a program's uninitialised data (uncharged:
// it happens before the program runs, or is part of the program image).
func (h *Runtime) static(n int) memory.Addr {
	a := h.next
	h.next += memory.Addr((n + 15) &^ 15)
	if uint64(h.next) > uint64(h.c.System().Phys.Size()) {
		panic(fmt.Sprintf("top: %s: static data past the end of memory (%#x)", h.name, uint64(h.next)))
	}
	if h.st != nil {
		// Only a station's programs find the memory used: a machine's
		// only program starts on zeroed memory.
		_ = h.c.System().Phys.Write(a, make([]byte, h.next-a))
	}
	return a
}

// Static reserves n bytes of the program's static data for a component
// (a driver's buffers, a user's message): only before Start.
func (h *Runtime) Static(n int) memory.Addr {
	if h.next == 0 {
		panic("top: Static before the layout exists")
	}
	return h.static(n)
}

// layout places the static structures; it runs at Boot's end so that
// components can reserve static data before the program starts.
func (h *Runtime) layout() {
	p := h.p
	h.next = memory.Addr(p.DataBase)
	h.readyCtl = h.static(8)
	h.readyLen = p.ReadySlots
	h.readyRing = h.static(4 * p.ReadySlots)
	h.taskArea = h.static(16 * maxTasks)
	h.tm.wheelArea = h.static(4 * p.WheelSlots)
	h.tm.tcbArea = h.static(16 * p.Timers)
	h.next = (h.next + 0xFF) &^ 0xFF
}

func (h *Runtime) rd32(a memory.Addr) memory.Addr {
	h.c.Read(a, h.tmp[:4])
	return memory.Addr(binary.LittleEndian.Uint32(h.tmp[:4]))
}

func (h *Runtime) wr32(a, v memory.Addr) {
	binary.LittleEndian.PutUint32(h.tmp[:4], uint32(v))
	h.c.Write(a, h.tmp[:4])
}

// run is the program: start-up, then the main loop until Exit, then the
// exit functions.
func (h *Runtime) run() {
	c := h.c
	c.Call(h.sym.boot, func() {
		// The memory manager's free lists are threaded at start-up.
		if h.st == nil {
			h.programPIT()
		} else {
			h.st.hookTick(h)
		}
		h.wr32(h.readyCtl, 0)
		h.wr32(h.readyCtl+4, 0)
		h.tm.init()
	})
	for _, f := range h.starts {
		f()
	}
	if h.st != nil {
		h.st.started(h)
	}
	for {
		c.Enter(h.sym.main)
		head := int(h.rd32(h.readyCtl))
		tail := int(h.rd32(h.readyCtl + 4))
		var t *Task
		if head != tail {
			t = h.tasks[h.rd32(h.readyRing+memory.Addr(4*head))]
		}
		c.Exit(h.sym.main)
		if t == nil {
			if h.exit || h.exitCond != nil && h.exitCond() {
				break
			}
			c.Halt()
			continue
		}
		c.Call(t.sym, func() {
			c.Call(h.sym.dispatch, func() {
				was := c.DisableInterrupts()
				h.wr32(h.readyCtl, memory.Addr((head+1)%h.readyLen))
				c.RestoreInterrupts(was)
			})
			h.stats.Dispatches++
			t.run()
		})
	}
	for _, f := range h.exits {
		f()
	}
}

// programPIT sets counter 0 to the BIOS's rate generator of divisor
// 65536 (18.2 Hz) and hooks the tick.
func (h *Runtime) programPIT() {
	c := h.c
	base := memory.Addr(h.p.PITBase)
	c.Out(memory.SpaceIO, base+pit.RegControl, 1, 0x34) // counter 0, LSB then MSB, mode 2
	c.Out(memory.SpaceIO, base+pit.RegCounter0, 1, 0)
	c.Out(memory.SpaceIO, base+pit.RegCounter0, 1, 0)
	c.SetHandler(h.p.PITIRQ, "int08", h.int08)
}

// TickPeriod is the BIOS tick: 65536 cycles of the PC's 1.193182 MHz
// timer clock. The program knows it as a constant, as DOS programs did.
var TickPeriod = pit.DefaultParams().Period(0)

// int08 is the timer interrupt: the BIOS counts the tick, the timer
// manager advances its wheel.
func (h *Runtime) int08() {
	c := h.c
	c.Enter(h.sym.int08)
	defer c.Exit(h.sym.int08)
	h.stats.Ticks++
	h.wr32(dos.BIOSTickCount, h.rd32(dos.BIOSTickCount)+1)
	h.tm.tick()
}

// Ticks returns the BIOS tick count (read by an observer, uncharged).
func (h *Runtime) Ticks() uint32 {
	var b [4]byte
	_ = h.c.System().Phys.Read(dos.BIOSTickCount, b[:])
	return binary.LittleEndian.Uint32(b[:])
}

// ReadTicks is the program reading the BIOS tick count (charged): how
// the study timed its runs.
func (h *Runtime) ReadTicks() uint32 { return uint32(h.rd32(dos.BIOSTickCount)) }
