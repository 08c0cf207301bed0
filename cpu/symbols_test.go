package cpu_test

import (
	"testing"

	"simkron/cpu"
)

// DefineAll places its functions in the order given, each where Define
// alone would have placed it, and keeps each symbol where its binding
// says; a name defined before gives back the first symbol.
func TestDefineAll(t *testing.T) {
	defs := []cpu.Def{
		{Name: "a", Layer: cpu.LayerIP, Instructions: 10, CodeBytes: 40},
		{Name: "b", Layer: cpu.LayerDEV, Instructions: 3, CodeBytes: 100},
		{Name: "c", Layer: cpu.LayerUDP, Instructions: 7},
	}
	one := cpu.NewSymbolTable(0x1000, nil)
	var want []*cpu.Symbol
	for _, d := range defs {
		want = append(want, one.Define(d))
	}

	all := cpu.NewSymbolTable(0x1000, nil)
	shared := all.Define(defs[1])
	var a, b, c *cpu.Symbol
	all.DefineAll([]cpu.Binding{{&a, defs[0]}, {&b, defs[1]}, {&c, defs[2]}})
	if b != shared {
		t.Errorf("b is a new symbol %p, want the one defined before, %p", b, shared)
	}
	// b came first in all's text: a and c follow it, in their order.
	for i, s := range []*cpu.Symbol{a, c} {
		if s == nil || s.Name != []string{"a", "c"}[i] {
			t.Fatalf("binding %d holds %v", i, s)
		}
	}
	if a.Addr != 0x1000+112 || c.Addr != a.Addr+48 {
		t.Errorf("a at %#x, c at %#x; want 0x1070 and 0x10a0 (after b's 112 aligned bytes, a's 48)", a.Addr, c.Addr)
	}

	fresh := cpu.NewSymbolTable(0x1000, nil)
	var x, y, z *cpu.Symbol
	fresh.DefineAll([]cpu.Binding{{&x, defs[0]}, {&y, defs[1]}, {&z, defs[2]}})
	for i, s := range []*cpu.Symbol{x, y, z} {
		if s.Name != want[i].Name || s.Addr != want[i].Addr || s.Index() != want[i].Index() || s.CodeBytes != want[i].CodeBytes {
			t.Errorf("binding %d: %s at %#x (index %d, %d bytes), Define alone: %s at %#x (index %d, %d bytes)",
				i, s.Name, s.Addr, s.Index(), s.CodeBytes, want[i].Name, want[i].Addr, want[i].Index(), want[i].CodeBytes)
		}
	}
}
