package top

import (
	"encoding/binary"
	"fmt"

	"simkron/cpu"
	"simkron/memory"
	"simkron/stack/osi"
)

// Task is a state machine of the program: a function of some layer that
// the scheduler runs to completion each time it is taken from the ready
// queue. Its task block (16 bytes of static data) is what the ready
// queue holds.
type Task struct {
	h    *Runtime
	name string
	sym  *cpu.Symbol
	tcb  memory.Addr
	run  func()
	// Runs counts how often the task ran.
	Runs uint64
}

// NewTask defines a task whose entry is the function d (its layer is the
// task's) and whose body is run.
func (h *Runtime) NewTask(d cpu.Def, cat osi.Category, run func()) *Task {
	if h.ntasks == maxTasks {
		panic(fmt.Sprintf("top: %s: more than %d tasks", h.name, maxTasks))
	}
	t := &Task{h: h, name: d.Name, sym: h.define(d, cat), tcb: h.taskArea + memory.Addr(16*h.ntasks)}
	h.ntasks++
	t.run = func() { t.Runs++; run() }
	h.tasks[t.tcb] = t
	return t
}

// Name returns the task's name.
func (t *Task) Name() string { return t.name }

// Schedule appends t to the ready queue (sched_enqueue). It may be called
// from an interrupt handler. A full ready queue loses the task, which is
// counted (a configuration too small for the load).
func (h *Runtime) Schedule(t *Task) {
	c := h.c
	c.Enter(h.sym.enqueue)
	defer c.Exit(h.sym.enqueue)
	was := c.DisableInterrupts()
	defer c.RestoreInterrupts(was)
	head := int(h.rd32(h.readyCtl))
	tail := int(h.rd32(h.readyCtl + 4))
	next := (tail + 1) % h.readyLen
	if next == head {
		h.stats.ReadyOverflow++
		return
	}
	h.wr32(h.readyRing+memory.Addr(4*tail), t.tcb)
	h.wr32(h.readyCtl+4, memory.Addr(next))
	h.stats.Enqueued++
	h.stats.ReadyPeak = max(h.stats.ReadyPeak, (next-head+h.readyLen)%h.readyLen)
}

// Prim is a primitive as a task sees it. In simulated memory it is a
// Primitive Structure of 16 bytes:
//
//	off  size  field
//	0    4     next: the following primitive of the queue
//	4    2     code: which primitive (the layer's own numbering)
//	6    2     arg: a small parameter (a SAP, a timer generation)
//	8    4     chain: the Parameter Structure (PDU) it carries, 0 for none
//	12   4     params: the block of other parameters, 0 for none
type Prim struct {
	Code   uint16
	Arg    uint16
	Chain  osi.Chain
	Params memory.Addr
}

// Queue is one direction of a layer interface: a FIFO of primitives in
// simulated memory (head and tail words) served by one task, which takes
// one primitive per run.
type Queue struct {
	h      *Runtime
	name   string
	ctl    memory.Addr // head, tail
	task   *Task
	handle func(p Prim)
	depth  int
	// Puts and MaxDepth count the queue's traffic.
	Puts     uint64
	MaxDepth int
}

// NewQueue makes a queue served by a new task with entry d, which calls
// handle for each primitive.
func (h *Runtime) NewQueue(name string, d cpu.Def, handle func(p Prim)) *Queue {
	q := &Queue{h: h, name: name, ctl: h.static(8), handle: handle}
	q.task = h.NewTask(d, osi.CatOther, q.serve)
	return q
}

// Task returns the queue's serving task.
func (q *Queue) Task() *Task { return q.task }

// Depth returns how many primitives wait.
func (q *Queue) Depth() int { return q.depth }

// Put appends a primitive, its structure taken from region d, and
// schedules the queue's task (ifq_put). It returns false when no
// structure is left (counted; the caller still owns p's chain and
// parameters).
func (q *Queue) Put(d osi.Dir, p Prim) bool {
	h := q.h
	c := h.c
	c.Enter(h.sym.put)
	defer c.Exit(h.sym.put)
	a := h.mm.GetPrim(d)
	if a == 0 {
		h.stats.PutFailures++
		return false
	}
	var b [primSize]byte
	binary.LittleEndian.PutUint16(b[4:], p.Code)
	binary.LittleEndian.PutUint16(b[6:], p.Arg)
	binary.LittleEndian.PutUint32(b[8:], uint32(p.Chain))
	binary.LittleEndian.PutUint32(b[12:], uint32(p.Params))
	c.Write(a, b[:])
	was := c.DisableInterrupts()
	tail := h.rd32(q.ctl + 4)
	if tail == 0 {
		h.wr32(q.ctl, a)
	} else {
		h.wr32(tail, a)
	}
	h.wr32(q.ctl+4, a)
	q.depth++
	q.MaxDepth = max(q.MaxDepth, q.depth)
	q.Puts++
	c.RestoreInterrupts(was)
	h.Schedule(q.task)
	return true
}

// get takes the head primitive (ifq_get); ok is false when the queue is
// empty.
func (q *Queue) get() (Prim, bool) {
	h := q.h
	c := h.c
	c.Enter(h.sym.get)
	defer c.Exit(h.sym.get)
	was := c.DisableInterrupts()
	a := h.rd32(q.ctl)
	if a == 0 {
		c.RestoreInterrupts(was)
		return Prim{}, false
	}
	var b [primSize]byte
	c.Read(a, b[:])
	next := memory.Addr(binary.LittleEndian.Uint32(b[0:]))
	h.wr32(q.ctl, next)
	if next == 0 {
		h.wr32(q.ctl+4, 0)
	}
	q.depth--
	c.RestoreInterrupts(was)
	h.mm.PutPrim(a)
	return Prim{
		Code:   binary.LittleEndian.Uint16(b[4:]),
		Arg:    binary.LittleEndian.Uint16(b[6:]),
		Chain:  osi.Chain(binary.LittleEndian.Uint32(b[8:])),
		Params: memory.Addr(binary.LittleEndian.Uint32(b[12:])),
	}, true
}

// Unget puts p back at the head of the queue, its structure taken from
// region d again, without scheduling the task: the task could not serve
// it yet and waits to be scheduled when it can (flow control).
func (q *Queue) Unget(d osi.Dir, p Prim) bool {
	h := q.h
	c := h.c
	c.Enter(h.sym.put)
	defer c.Exit(h.sym.put)
	a := h.mm.GetPrim(d)
	if a == 0 {
		h.stats.PutFailures++
		return false
	}
	was := c.DisableInterrupts()
	head := h.rd32(q.ctl)
	var b [primSize]byte
	binary.LittleEndian.PutUint32(b[0:], uint32(head))
	binary.LittleEndian.PutUint16(b[4:], p.Code)
	binary.LittleEndian.PutUint16(b[6:], p.Arg)
	binary.LittleEndian.PutUint32(b[8:], uint32(p.Chain))
	binary.LittleEndian.PutUint32(b[12:], uint32(p.Params))
	c.Write(a, b[:])
	h.wr32(q.ctl, a)
	if head == 0 {
		h.wr32(q.ctl+4, a)
	}
	q.depth++
	c.RestoreInterrupts(was)
	return true
}

func (q *Queue) serve() {
	if p, ok := q.get(); ok {
		q.handle(p)
	}
}

// PutParams stores a primitive's other parameters in a block of region
// d's data area and returns it, or 0 when the area is full.
func (h *Runtime) PutParams(d osi.Dir, b []byte) memory.Addr {
	c := h.c
	c.Enter(h.sym.paramsW)
	defer c.Exit(h.sym.paramsW)
	a := h.mm.Alloc(d, len(b))
	if a != 0 {
		c.Write(a, b)
	}
	return a
}

// TakeParams reads n bytes of other parameters at a and frees their
// block. The returned slice is valid until the next call.
func (h *Runtime) TakeParams(a memory.Addr, n int) []byte {
	c := h.c
	c.Enter(h.sym.paramsR)
	defer c.Exit(h.sym.paramsR)
	if cap(h.pbuf) < n {
		h.pbuf = make([]byte, n)
	}
	b := h.pbuf[:n]
	c.Read(a, b)
	h.mm.Free(a)
	return b
}
