package cpu

// Self cycles per symbol and layer: the cycles charged while a symbol was
// innermost, split by the layer that call ran in. A symbol of
// LayerInherit (a memory manager, a copy routine) takes its caller's
// layer, so its per-symbol total alone cannot say which layer's
// processing it served; this table can. It is off unless a measurement
// asks for it, and it observes only: timing is the same either way.

// SelfCycles is the self cycles of one symbol in one layer.
type SelfCycles struct {
	Symbol *Symbol
	Layer  Layer
	Cycles int64
}

// selfTable holds rows[symbol index][layer index] and each row's symbol.
type selfTable struct {
	rows [][]int64
	syms []*Symbol
}

// EnableSelfCycles starts counting self cycles per symbol and layer from
// now on (cycles charged earlier are not in the table). Calling it again
// does nothing.
func (c *CPU) EnableSelfCycles() {
	if c.self == nil {
		c.settle()
		c.self = &selfTable{}
	}
}

// addSelf counts n cycles of the symbol s in layer index li.
func (c *CPU) addSelf(s *Symbol, li int, n int64) {
	t := c.self
	if s.index >= len(t.rows) {
		grow := s.index + 64 - len(t.rows)
		t.rows = append(t.rows, make([][]int64, grow)...)
		t.syms = append(t.syms, make([]*Symbol, grow)...)
	}
	row := t.rows[s.index]
	if li >= len(row) {
		row = append(row, make([]int64, li+1-len(row))...)
		t.rows[s.index] = row
		t.syms[s.index] = s
	}
	row[li] += n
}

// SelfCycles returns the non-zero entries of the table, ordered by
// symbol index and then by the order layers were first entered; nil when
// EnableSelfCycles was not called.
func (c *CPU) SelfCycles() []SelfCycles {
	if c.self == nil {
		return nil
	}
	c.settle()
	var out []SelfCycles
	for i, row := range c.self.rows {
		for li, n := range row {
			if n != 0 {
				out = append(out, SelfCycles{Symbol: c.self.syms[i], Layer: c.layers[li], Cycles: n})
			}
		}
	}
	return out
}
