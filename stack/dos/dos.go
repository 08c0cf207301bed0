// Package dos is what the single-program DOS environment of the TOP
// measurements gives every program and resident driver on the PC: the
// real-mode string copy (REP MOVSW, 16 bits an iteration) and the BIOS
// data area's tick count. Layer: none of its own — a copy counts towards
// whoever calls it.
//
// Simplifications: code is charged with the core's CPI like any other;
// segment arithmetic (far pointers) is not modelled: addresses are
// physical.
package dos

import (
	"simkron/cpu"
	"simkron/memory"
)

// BIOS data area (IBM PC Technical Reference, BIOS listing): the timer
// interrupt (INT 08h) counts ticks since midnight in the double word at
// 0040:006C.
const (
	BIOSTickCount memory.Addr = 0x46C
)

// Copier is the real-mode copy routine of one program or driver: a
// function of its own at its own address, moving 16-bit words.
type Copier struct {
	c       *cpu.CPU
	sym     *cpu.Symbol
	perWord int64
	buf     []byte // reused: the bytes pass through it
}

// NewCopier defines the copy routine called name (each resident program
// links its own) and its per-word loop cost.
func NewCopier(c *cpu.CPU, syms *cpu.SymbolTable, name string) *Copier {
	s := syms.Define(cpu.Def{Name: name, Layer: cpu.LayerInherit, Instructions: 10, CodeBytes: 64,
		Why: "set up DS:SI, ES:DI and CX, CLD, REP MOVSW, the odd byte"})
	w := syms.Cost(name+".word", 2, "REP MOVSW: 3 clocks an iteration on the i486 (12+3n, i486 Programmer's Reference), two instruction slots")
	return &Copier{c: c, sym: s, perWord: w}
}

// Symbol returns the routine's symbol.
func (k *Copier) Symbol() *cpu.Symbol { return k.sym }

// Copy copies n bytes from src to dst (no overlap) as REP MOVSW does:
// a 16-bit load and a 16-bit store per word, each a reference of its
// own through the caches, and the loop's instructions.
func (k *Copier) Copy(dst, src memory.Addr, n int) {
	c := k.c
	c.Enter(k.sym)
	defer c.Exit(k.sym)
	if n <= 0 {
		return
	}
	sys := c.System()
	if cap(k.buf) < n {
		k.buf = make([]byte, n)
	}
	buf := k.buf[:n]
	if err := sys.Phys.Read(src, buf); err != nil {
		sys.Guest.Report(c.LocalTime(), c.Name(), "%s: %v", k.sym.Name, err)
		return
	}
	if err := sys.Phys.Write(dst, buf); err != nil {
		sys.Guest.Report(c.LocalTime(), c.Name(), "%s: %v", k.sym.Name, err)
		return
	}
	var stall int64
	for off := 0; off < n; off += 2 {
		stall += sys.Reference(src+memory.Addr(off), memory.Read)
		stall += sys.Reference(dst+memory.Addr(off), memory.Write)
	}
	c.Charge(stall)
	c.Exec(int64((n+1)/2) * k.perWord)
}
