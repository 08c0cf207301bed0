package cpu

import (
	"fmt"

	"simkron/sim"
)

// Params describes a CPU core. Cycle costs are what the hardware and the
// minimal kernel stub charge beyond the instructions of modelled functions.
type Params struct {
	Clock sim.Frequency `toml:"clock" min:"1MHz" max:"100GHz" help:"core clock rate"`
	CPI   float64       `toml:"cpi" min:"0.1" max:"100" help:"average cycles per instruction, memory stalls excluded (an L1 hit is charged by the cache model)"`
	// Fixed costs of the privileged machinery, in cycles.
	TrapCycles     int64 `toml:"trap_cycles" min:"0" max:"100000" unit:"cycles" help:"system-call trap and return (hardware and register save)"`
	IRQEntryCycles int64 `toml:"irq_entry_cycles" min:"0" max:"100000" unit:"cycles" help:"interrupt recognition, vectoring and register save"`
	IRQExitCycles  int64 `toml:"irq_exit_cycles" min:"0" max:"100000" unit:"cycles" help:"register restore and return from interrupt"`
	SwitchCycles   int64 `toml:"context_switch_cycles" min:"0" max:"1000000" unit:"cycles" help:"saving one context and loading another"`
	Lines          int   `toml:"irq_lines" min:"1" max:"32" help:"interrupt lines; a lower line number has higher priority"`
}

// DefaultParams returns a generic 33 MHz 32-bit core.
func DefaultParams() Params {
	return Params{
		Clock:          33 * sim.MHz,
		CPI:            1.5,
		TrapCycles:     100,
		IRQEntryCycles: 80,
		IRQExitCycles:  40,
		SwitchCycles:   300,
		Lines:          16,
	}
}

// Validate checks what the tag bounds cannot.
func (p Params) Validate() error {
	if p.Clock <= 0 {
		return fmt.Errorf("clock must be positive")
	}
	return nil
}

// cpiMilli returns the CPI in thousandths of a cycle, the fixed-point form
// used for charging (no floating point touches the cycle counter).
func (p Params) cpiMilli() int64 { return int64(p.CPI*1000 + 0.5) }
