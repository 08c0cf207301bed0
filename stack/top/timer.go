package top

import (
	"fmt"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/osi"
)

// The timer manager: a timing wheel (Varghese & Lauck, "Hashed and
// hierarchical timing wheels", SOSP 1987, scheme 4 with the number of
// revolutions stored per timer) advanced by the BIOS tick. A timer of k
// ticks goes into slot (now + k) mod N with ⌊(k−1)/N⌋ revolutions to
// wait; each tick visits one slot only, counting down the revolutions of
// the timers there and expiring those at zero. Start and stop are O(1)
// (stop walks its slot's short list). An expired timer becomes a
// time-out primitive in its owner's time-out queue, so the owner's state
// machine handles it as a task like any other input.
//
//	slot:   0     1     2    ...   N-1      cursor ──► slot (ticks mod N)
//	        │     │     │           │
//	      [tcb] [   ] [tcb→tcb]   [tcb]     tcb: next, revolutions, queue
//
// Each timer control block (16 bytes) and each slot head lives in
// simulated memory.

var (
	defTmStart = cpu.Def{Name: "tm_start", Layer: cpu.LayerInherit, Instructions: 24, CodeBytes: 160, Why: "ticks from the interval (32-bit divide by the 55 ms tick: 4), slot (cursor plus ticks, masked: 3) and revolutions (shift: 2), unlink first when armed (test: 2), revolutions and queue into the block (far: 4), linked at the slot head (far load and two stores: 6), PUSHF/CLI/POPF (3)"}
	defTmStop  = cpu.Def{Name: "tm_stop", Layer: cpu.LayerInherit, Instructions: 16, CodeBytes: 128, Why: "PUSHF/CLI/POPF (3), the generation bumped so a queued time-out is stale (2), armed test (2), the slot's head (far: 2), the predecessor's link from the block's (far: 4), disarmed (3); each block before it 3 more"}
	defTmTick  = cpu.Def{Name: "tm_tick", Layer: cpu.LayerKERN, Instructions: 12, CodeBytes: 160, Why: "the cursor advanced and masked (2), the slot's head (far: 2), empty test (2), set-up and return (6); each block there: revolutions loaded, tested, decremented and stored, or tm_expire"}
	defTmFire  = cpu.Def{Name: "tm_expire", Layer: cpu.LayerKERN, Instructions: 10, CodeBytes: 96, Why: "the block unlinked from its slot (4), the time-out primitive put in the owner's queue (ifq_put with name and timer: 6)"}
)

// TimerStats counts the timer manager's work.
type TimerStats struct {
	Started, Stopped, Expired uint64
	Stale                     uint64 // time-outs that arrived after a restart or stop
}

type timerMgr struct {
	h                  *Runtime
	wheelArea, tcbArea memory.Addr
	slots              [][]*Timer
	cursor             uint64
	timers             []*Timer
	stats              TimerStats
	sym                struct{ start, stop, tick, fire *cpu.Symbol }
}

// Timer is one timer of a layer entity; it implements osi.Timer.
type Timer struct {
	tm      *timerMgr
	name    string
	index   int
	tcb     memory.Addr
	q       *Queue
	fn      func()
	gen     uint16
	slot    int
	rounds  int
	pending bool
}

func (tm *timerMgr) define(h *Runtime) {
	tm.h = h
	tm.sym.start = h.define(defTmStart, osi.CatOther)
	tm.sym.stop = h.define(defTmStop, osi.CatOther)
	tm.sym.tick = h.define(defTmTick, osi.CatOther)
	tm.sym.fire = h.define(defTmFire, osi.CatOther)
}

func (tm *timerMgr) init() {
	tm.slots = make([][]*Timer, tm.h.p.WheelSlots)
	for i := range tm.slots {
		tm.h.wr32(tm.wheelArea+memory.Addr(4*i), 0)
	}
}

// TimerStats returns the timer manager's counters.
func (h *Runtime) TimerStats() TimerStats { return h.tm.stats }

// newTimer makes a timer whose time-outs go to q and call fn there.
func (tm *timerMgr) newTimer(name string, q *Queue, fn func()) *Timer {
	if len(tm.timers) == tm.h.p.Timers {
		panic(fmt.Sprintf("top: %s: more than %d timers (timers parameter)", tm.h.name, tm.h.p.Timers))
	}
	t := &Timer{tm: tm, name: name, index: len(tm.timers), tcb: tm.tcbArea + memory.Addr(16*len(tm.timers)), q: q, fn: fn, slot: -1}
	tm.timers = append(tm.timers, t)
	return t
}

// Start implements osi.Timer.
func (t *Timer) Start(d sim.Time) {
	tm := t.tm
	h := tm.h
	c := h.c
	c.Enter(tm.sym.start)
	defer c.Exit(tm.sym.start)
	was := c.DisableInterrupts()
	defer c.RestoreInterrupts(was)
	if t.pending {
		tm.unlink(t)
	}
	k := uint64((d + TickPeriod - 1) / TickPeriod)
	k = max(k, 1)
	n := uint64(len(tm.slots))
	t.slot = int((tm.cursor + k) % n)
	t.rounds = int((k - 1) / n)
	t.gen++
	t.pending = true
	head := tm.wheelArea + memory.Addr(4*t.slot)
	h.wr32(t.tcb+4, memory.Addr(t.rounds))
	h.wr32(t.tcb+8, t.q.ctl)
	h.wr32(t.tcb, h.rd32(head))
	h.wr32(head, t.tcb)
	tm.slots[t.slot] = append([]*Timer{t}, tm.slots[t.slot]...)
	tm.stats.Started++
}

// Stop implements osi.Timer.
func (t *Timer) Stop() {
	tm := t.tm
	c := tm.h.c
	c.Enter(tm.sym.stop)
	defer c.Exit(tm.sym.stop)
	was := c.DisableInterrupts()
	defer c.RestoreInterrupts(was)
	t.gen++ // a time-out already queued is now stale
	if t.pending {
		tm.unlink(t)
		tm.stats.Stopped++
	}
}

// Pending implements osi.Timer.
func (t *Timer) Pending() bool { return t.pending }

// unlink removes t from its slot's list, walking the blocks before it.
func (tm *timerMgr) unlink(t *Timer) {
	h := tm.h
	s := tm.slots[t.slot]
	prev := tm.wheelArea + memory.Addr(4*t.slot)
	for i, x := range s {
		if x == t {
			h.wr32(prev, h.rd32(t.tcb))
			tm.slots[t.slot] = append(s[:i:i], s[i+1:]...)
			break
		}
		h.c.Exec(3)
		prev = x.tcb
	}
	t.pending = false
	t.slot = -1
}

// tick advances the wheel by one slot (in the timer interrupt).
func (tm *timerMgr) tick() {
	if len(tm.slots) == 0 {
		return
	}
	h := tm.h
	c := h.c
	c.Enter(tm.sym.tick)
	defer c.Exit(tm.sym.tick)
	tm.cursor++
	i := int(tm.cursor % uint64(len(tm.slots)))
	if h.rd32(tm.wheelArea+memory.Addr(4*i)) == 0 {
		return
	}
	for _, t := range append([]*Timer(nil), tm.slots[i]...) {
		r := int(h.rd32(t.tcb + 4))
		if r > 0 {
			t.rounds = r - 1
			h.wr32(t.tcb+4, memory.Addr(t.rounds))
			continue
		}
		c.Call(tm.sym.fire, func() {
			tm.unlink(t)
			tm.stats.Expired++
			t.q.Put(osi.Rx, Prim{Code: t.gen, Arg: uint16(t.index)})
		})
	}
}

// timeout is the owner's handling of a time-out primitive.
func (tm *timerMgr) timeout(p Prim) {
	if int(p.Arg) >= len(tm.timers) {
		panic(fmt.Sprintf("top: time-out for timer %d of %d", p.Arg, len(tm.timers)))
	}
	t := tm.timers[p.Arg]
	if t.pending || p.Code != t.gen {
		tm.stats.Stale++
		return
	}
	t.fn()
}
