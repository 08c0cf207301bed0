package osi

import (
	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
)

// Env is the host environment of an OSI protocol machine.
type Env interface {
	// CPU is the core the machine's functions are charged on.
	CPU() *cpu.CPU
	// Define places a function of the machine in the host's text and
	// files it under a cost category.
	Define(d cpu.Def, cat Category) *cpu.Symbol
	// Cost returns a per-item loop cost (instructions), overridable like
	// a function's.
	Cost(name string, instructions int64, why string) int64
	// Bufs is the PDU memory and its chain operations.
	Bufs() *Bufs
	// NewTimer returns a stopped timer that calls fn, in the machine's
	// own context (the TOP host delivers it as a time-out primitive).
	NewTimer(name string, fn func()) Timer
	// Now is the time the running code has reached (for lifetimes and
	// statistics).
	Now() sim.Time
	// Name is the host's name, for guest-error reports.
	Name() string
}

// DefineAll defines the functions of bs in env in order, each filed under
// cat, and stores each symbol where its binding says (as
// cpu.SymbolTable.DefineAll does).
func DefineAll(env Env, cat Category, bs []cpu.Binding) {
	for _, b := range bs {
		*b.To = env.Define(b.Def, cat)
	}
}

// Timer is a one-shot timer of the environment.
type Timer interface {
	// Start arms the timer to fire after d (rounded up to the
	// environment's tick); a running timer is restarted.
	Start(d sim.Time)
	// Stop disarms it; stopping an idle timer does nothing.
	Stop()
	// Pending reports whether it is armed.
	Pending() bool
}

// Dir says which flow a PDU structure belongs to: the TOP memory manager
// keeps transmission and reception in separate regions.
type Dir uint8

// Flows.
const (
	Tx Dir = iota
	Rx
)

// Mem is the environment's PDU memory: fixed-size descriptors and
// variable-size data blocks.
type Mem interface {
	// AllocDesc returns an uninitialised descriptor of DescSize bytes, or 0 when
	// the region is exhausted.
	AllocDesc(d Dir) memory.Addr
	// FreeDesc returns a descriptor.
	FreeDesc(a memory.Addr)
	// AllocBlock returns a data block for n bytes of data (after its
	// BlockHeader bytes of header), its use count 1, or 0 when the
	// region is exhausted.
	AllocBlock(d Dir, n int) memory.Addr
	// FreeBlock returns a block whose use count reached zero; the
	// environment knows from its header (and address) where it came from.
	FreeBlock(blk memory.Addr)
	// Copy copies n bytes of simulated memory (the host's library copy
	// routine, charged to the caller's layer as a memory copy).
	Copy(dst, src memory.Addr, n int)
}
