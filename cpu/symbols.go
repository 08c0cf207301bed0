package cpu

import (
	"fmt"
	"io"
	"sort"

	"simkron/memory"
)

// Layer names the protocol layer a symbol's cycles are attributed to.
// The empty layer means "the caller's layer": library routines such as a
// copy or a checksum count towards whichever layer called them.
type Layer string

// Layers of the Internet, OSI TOP and VIA protocols (docs/design.md). Their
// order in reports, colours and meaning are report/shape's table of
// layers (shape.Layers), the one table of them; cpu, which may not import
// it, names the same layers, and TestLayersAgreeWithReportTable holds the
// two to the same names.
const (
	LayerInherit Layer = ""
	LayerAPPL    Layer = "APPL"
	LayerUDP     Layer = "UDP"
	LayerTCP     Layer = "TCP"
	LayerIP      Layer = "IP"
	LayerDEV     Layer = "DEV"
	LayerDMA     Layer = "DMA"
	LayerMAC     Layer = "MAC"
	LayerLLC     Layer = "LLC"
	LayerCLNS    Layer = "CLNS"
	LayerTP4     Layer = "TP4"
	LayerSES     Layer = "SES"
	LayerPRES    Layer = "PRES"
	LayerTRANS   Layer = "TRANS"
	// LayerKERN is kernel work that belongs to no protocol (scheduling,
	// timers, system-call entry); LayerIDLE is the idle loop.
	LayerKERN Layer = "KERN"
	LayerIDLE Layer = "IDLE"
)

// Def declares a modelled function: its cost in instructions per call and
// the size of its code. Packages declare their functions as package-level
// Defs and register them with a SymbolTable at boot. Why is the short
// justification the cost table prints.
type Def struct {
	Name         string
	Layer        Layer
	Instructions int64 // per call, excluding loops charged separately
	CodeBytes    int64 // size of the function's code, fetched through the I-cache per call
	Why          string
}

// Symbol is a Def placed at a real address in a host's kernel text.
type Symbol struct {
	Def
	Addr memory.Addr
	// index is the symbol's position in its table (dense, for fast
	// per-symbol accounting).
	index int
}

// Index returns the symbol's dense index within its table.
func (s *Symbol) Index() int { return s.index }

func (s *Symbol) String() string { return s.Name }

// SymbolTable places symbols in a kernel text segment in registration
// order, like a linker, and applies cost overrides.
type SymbolTable struct {
	base, next memory.Addr
	align      memory.Addr
	syms       []*Symbol
	costs      []Def
	byName     map[string]*Symbol
	overrides  map[string]int64
	used       map[string]bool
}

// MaxInstructions bounds the instruction counts a [costs] table may give,
// per call of a function or per item (byte, word, line) of a loop: 25
// times the largest modelled count (400). It keeps one charge within
// int64 milli-cycles (Exec's fixed point) whatever is charged: a loop over
// all of the largest memory (4 GiB, 2^32 items) at this count and the
// largest CPI (100, 1e5 milli-cycles) is 2^32 × 1e4 × 1e5 ≈ 4.3e18 <
// 2^63 ≈ 9.2e18.
const MaxInstructions = 10_000

// NewSymbolTable starts a text segment at base. overrides maps symbol
// names to instruction counts (0 to MaxInstructions, as LoadMachine
// checks) that replace the defaults (from TOML).
func NewSymbolTable(base memory.Addr, overrides map[string]int64) *SymbolTable {
	return &SymbolTable{base: base, next: base, align: 16, byName: map[string]*Symbol{}, overrides: overrides, used: map[string]bool{}}
}

// Define places d and returns its symbol. Defining the same name twice
// returns the first symbol (packages may share library routines); a
// different definition under one name is a simulator bug.
func (t *SymbolTable) Define(d Def) *Symbol {
	if s, ok := t.byName[d.Name]; ok {
		if s.Layer != d.Layer || s.CodeBytes != d.CodeBytes {
			panic(fmt.Sprintf("cpu: symbol %s defined twice with different layer/size", d.Name))
		}
		return s
	}
	if d.CodeBytes <= 0 {
		d.CodeBytes = 4 * max(d.Instructions, 1)
	}
	if v, ok := t.overrides[d.Name]; ok {
		d.Instructions = v
		t.used[d.Name] = true
	}
	s := &Symbol{Def: d, Addr: t.next, index: len(t.syms)}
	t.next += (memory.Addr(d.CodeBytes) + t.align - 1) &^ (t.align - 1)
	t.syms = append(t.syms, s)
	t.byName[d.Name] = s
	return s
}

// Binding is a modelled function to define and the variable that keeps
// its symbol, for DefineAll: {&d.sym.output, defOutput}. (An alias of an
// unnamed struct, so that a package lists its bindings as such pairs.)
type Binding = struct {
	To  **Symbol
	Def Def
}

// DefineAll defines the functions of bs in order, as Define does one by
// one (the order places them in the text), and stores each symbol where
// its binding says.
func (t *SymbolTable) DefineAll(bs []Binding) {
	for _, b := range bs {
		*b.To = t.Define(b.Def)
	}
}

// Cost returns the instruction count of a loop body or other per-item cost
// inside a function (bcopy's per-word loop), under a name the [costs] table
// can override like a function's. It is listed with the symbols.
func (t *SymbolTable) Cost(name string, instructions int64, why string) int64 {
	for _, c := range t.costs {
		if c.Name == name {
			return c.Instructions
		}
	}
	if v, ok := t.overrides[name]; ok {
		instructions = v
		t.used[name] = true
	}
	t.costs = append(t.costs, Def{Name: name, Instructions: instructions, Why: why})
	return instructions
}

// SetLayer moves the symbol called name to layer l, for a run that wants
// finer or coarser layers than the defaults. It must be called before the
// simulation runs (a core resolves a symbol's layer at its first call).
func (t *SymbolTable) SetLayer(name string, l Layer) error {
	s, ok := t.byName[name]
	if !ok {
		return fmt.Errorf("no modelled function is called %q", name)
	}
	s.Layer = l
	return nil
}

// Lookup finds a symbol by name.
func (t *SymbolTable) Lookup(name string) (*Symbol, bool) {
	s, ok := t.byName[name]
	return s, ok
}

// Symbols returns the symbols in address order.
func (t *SymbolTable) Symbols() []*Symbol { return t.syms }

// TextEnd returns the first address after the placed code.
func (t *SymbolTable) TextEnd() memory.Addr { return t.next }

// TextStart returns the address the text begins at.
func (t *SymbolTable) TextStart() memory.Addr { return t.base }

// UnusedOverrides returns override names that match no defined symbol,
// sorted: a configuration that names a function that does not exist.
func (t *SymbolTable) UnusedOverrides() []string {
	var out []string
	for name := range t.overrides {
		if !t.used[name] {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// WriteTable prints name, layer, address, size and instructions of every
// symbol, for annotation writers.
func (t *SymbolTable) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "%-24s %-6s %-10s %6s %6s  %s\n", "SYMBOL", "LAYER", "ADDRESS", "BYTES", "INSNS", "WHY")
	for _, s := range t.syms {
		layer := string(s.Layer)
		if layer == "" {
			layer = "-"
		}
		fmt.Fprintf(w, "%-24s %-6s 0x%08x %6d %6d  %s\n", s.Name, layer, uint64(s.Addr), s.CodeBytes, s.Instructions, s.Why)
	}
	for _, c := range t.costs {
		fmt.Fprintf(w, "%-24s %-6s %-10s %6s %6d  %s\n", c.Name, "-", "(loop)", "-", c.Instructions, c.Why)
	}
}
