package top

import (
	"simkron/cpu"
	"simkron/sim"
	"simkron/stack/osi"
)

// Env is the environment the host gives one layer entity (osi.Env): the
// host's memory and chains, and timers whose time-outs arrive in the
// entity's own time-out queue, served by a task in the entity's layer.
type Env struct {
	h        *Runtime
	timeouts *Queue
}

// NewEnv returns the environment of a layer entity called name in layer
// (its time-out task is name+"_timeout").
func (h *Runtime) NewEnv(name string, layer cpu.Layer) *Env {
	e := &Env{h: h}
	e.timeouts = h.NewQueue(name+".timeouts", cpu.Def{Name: name + "_timeout", Layer: layer, Instructions: 8, CodeBytes: 64,
		Why: "the time-out task's entry: prologue (2), ifq_get (call: 2), the timer's handler by its index (far load and call: 3), return (1)"}, h.tm.timeout)
	return e
}

// Host returns the host.
func (e *Env) Host() *Runtime { return e.h }

// CPU implements osi.Env.
func (e *Env) CPU() *cpu.CPU { return e.h.c }

// Define implements osi.Env.
func (e *Env) Define(d cpu.Def, cat osi.Category) *cpu.Symbol { return e.h.define(d, cat) }

// Cost implements osi.Env.
func (e *Env) Cost(name string, instructions int64, why string) int64 {
	return e.h.syms.Cost(name, instructions, why)
}

// Bufs implements osi.Env.
func (e *Env) Bufs() *osi.Bufs { return e.h.bufs }

// NewTimer implements osi.Env.
func (e *Env) NewTimer(name string, fn func()) osi.Timer {
	return e.h.tm.newTimer(name, e.timeouts, fn)
}

// Now implements osi.Env.
func (e *Env) Now() sim.Time { return e.h.c.LocalTime() }

// Name implements osi.Env.
func (e *Env) Name() string { return e.h.name }

var _ osi.Env = (*Env)(nil)
