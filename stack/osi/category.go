package osi

import (
	"fmt"
	"sort"

	"simkron/cpu"
)

// Category is one of the cost categories of the TOP study's processing
// split: where a layer's time goes.
type Category uint8

// The study's categories, in its order.
const (
	CatOther Category = iota
	CatCopy
	CatChecksum
	CatMemory
	CatSched
	numCategories
)

// Categories lists every category, in the study's order of presentation.
var Categories = [...]Category{CatCopy, CatChecksum, CatMemory, CatSched, CatOther}

// String names the category as the study does.
func (c Category) String() string {
	switch c {
	case CatCopy:
		return "memory copy"
	case CatChecksum:
		return "checksum"
	case CatMemory:
		return "memory management"
	case CatSched:
		return "task scheduling"
	case CatOther:
		return "others"
	}
	return fmt.Sprintf("Category(%d)", uint8(c))
}

// Catalog maps symbols to categories: every function the environment or a
// protocol machine defines is filed under one when it is defined; a
// symbol never filed counts as CatOther.
type Catalog struct {
	bySym map[*cpu.Symbol]Category
}

// NewCatalog returns an empty catalog.
func NewCatalog() *Catalog { return &Catalog{bySym: map[*cpu.Symbol]Category{}} }

// File puts s under cat. Filing one symbol under two categories is a
// simulator bug.
func (k *Catalog) File(s *cpu.Symbol, cat Category) {
	if old, ok := k.bySym[s]; ok && old != cat {
		panic(fmt.Sprintf("osi: symbol %s filed as %v and %v", s.Name, old, cat))
	}
	k.bySym[s] = cat
}

// Of returns the category of s.
func (k *Catalog) Of(s *cpu.Symbol) Category { return k.bySym[s] }

// Reading is a reading of a core's self-cycle counters (cpu.SelfCycles),
// taken by an observer; the core must have them enabled.
type Reading struct {
	self map[selfKey]int64
}

type selfKey struct {
	sym   *cpu.Symbol
	layer cpu.Layer
}

// Read takes a reading of c's counters. It only looks.
func Read(c *cpu.CPU) Reading {
	r := Reading{self: map[selfKey]int64{}}
	for _, e := range c.SelfCycles() {
		r.self[selfKey{e.Symbol, e.Layer}] += e.Cycles
	}
	return r
}

// Split is where one layer's processing went between two readings.
type Split struct {
	Layer cpu.Layer
	Total int64 // cycles of the layer's processing
	// Cycles by category, indexed by Category.
	Cycles [numCategories]int64
	// Symbols lists every symbol that contributed, with its category,
	// largest first (ties by name).
	Symbols []SymbolShare
}

// SymbolShare is one symbol's part of a split.
type SymbolShare struct {
	Name     string
	Category Category
	Cycles   int64
}

// Of returns the cycles of category cat.
func (s Split) Of(cat Category) int64 { return s.Cycles[cat] }

// Percent returns cat's share of the total in percent (0 for an empty
// split); for reports only.
func (s Split) Percent(cat Category) float64 {
	if s.Total == 0 {
		return 0
	}
	return 100 * float64(s.Cycles[cat]) / float64(s.Total)
}

// Split returns the split of layer's processing between two readings:
// the self cycles of every symbol that ran in that layer (its own
// functions and the inherit routines it called: memory manager, copies,
// checksums, scheduling on its behalf), by the symbol's category. The
// parts sum to Total exactly.
func (k *Catalog) Split(before, after Reading, layer cpu.Layer) Split {
	s := Split{Layer: layer}
	for key, n := range after.self {
		if key.layer != layer {
			continue
		}
		d := n - before.self[key]
		if d == 0 {
			continue
		}
		cat := k.Of(key.sym)
		s.Cycles[cat] += d
		s.Total += d
		s.Symbols = append(s.Symbols, SymbolShare{Name: key.sym.Name, Category: cat, Cycles: d})
	}
	sort.Slice(s.Symbols, func(i, j int) bool {
		if s.Symbols[i].Cycles != s.Symbols[j].Cycles {
			return s.Symbols[i].Cycles > s.Symbols[j].Cycles
		}
		return s.Symbols[i].Name < s.Symbols[j].Name
	})
	return s
}
