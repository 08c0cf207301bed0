// Package membench is the memory-system micro-benchmark that runs as a
// program on a simulated host: it copies and checksums buffers of growing
// size in simulated memory and reports cycles per byte and cache misses
// per level, so the knees at each cache's capacity show. Copying and
// checksumming are the costs that dominated protocol processing in the
// TOP measurements. Layer APPL (the loops it calls inherit it).
//
// Each size is run Passes times back to back: the first pass finds the
// caches cold; the others are averaged as the warm figure. Cycles are
// those of the program's own context (interrupt handlers that ran on its
// stack are excluded); cache counts are the whole hierarchy's, so a clock
// tick during a pass adds its few references.
package membench

import (
	"fmt"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/kernel"
)

// Params configures the benchmark.
type Params struct {
	MinSize sim.Size `toml:"min_size" min:"4B" help:"smallest buffer; sizes double up to max_size"`
	MaxSize sim.Size `toml:"max_size" min:"4B" max:"16MiB" help:"largest buffer"`
	Ops     []string `toml:"ops" nonempty:"true" help:"loops to run, in order: \"copy\" (bcopy) and/or \"checksum\" (in_cksum)"`
	Passes  int      `toml:"passes" min:"2" max:"1000" help:"runs per size; the first is cold, the rest are averaged"`
}

// DefaultParams sweeps 64 B to 4 MiB.
func DefaultParams() Params {
	return Params{MinSize: 64, MaxSize: 4 * sim.MiB, Ops: []string{OpCopy, OpChecksum}, Passes: 4}
}

// Operations.
const (
	OpCopy     = "copy"
	OpChecksum = "checksum"
)

// Validate checks the sweep.
func (p Params) Validate() error {
	if p.MinSize > p.MaxSize {
		return fmt.Errorf("min_size %v is larger than max_size %v", p.MinSize, p.MaxSize)
	}
	if p.MinSize%4 != 0 {
		return fmt.Errorf("min_size %v is not a multiple of 4 bytes", p.MinSize)
	}
	if len(p.Ops) == 0 {
		return fmt.Errorf("ops is empty")
	}
	for _, op := range p.Ops {
		if op != OpCopy && op != OpChecksum {
			return fmt.Errorf("ops: unknown operation %q (want %q or %q)", op, OpCopy, OpChecksum)
		}
	}
	return nil
}

// Sizes returns the sizes swept.
func (p Params) Sizes() []int {
	var out []int
	for s := p.MinSize; s <= p.MaxSize; s *= 2 {
		out = append(out, int(s))
	}
	return out
}

// Level is the cache traffic of one pass at one level.
type Level struct {
	Name     string  `json:"name"`
	Accesses float64 `json:"accesses"`
	Misses   float64 `json:"misses"`
}

// Row is the result for one operation and size on one host.
type Row struct {
	Host          string  `json:"host"`
	Op            string  `json:"op"`
	Size          int     `json:"size"`
	ColdCycles    int64   `json:"cold_cycles"`
	WarmCycles    float64 `json:"warm_cycles"` // mean over the warm passes
	CyclesPerByte float64 `json:"cycles_per_byte"`
	Levels        []Level `json:"levels"` // per warm pass, L1 first
	Checksum      uint16  `json:"checksum,omitempty"`
}

var defMain = cpu.Def{Name: "membench_main", Layer: cpu.LayerAPPL, Instructions: 30, CodeBytes: 256, Why: "loop over sizes and passes, call the routine"}

// Program is the benchmark as it runs on one host.
type Program struct {
	p    Params
	k    *kernel.Kernel
	host string
	main *cpu.Symbol
	rows []Row
	err  error
}

// New prepares the program for host; Start spawns its thread.
func New(host string, k *kernel.Kernel, p Params) *Program {
	return &Program{p: p, k: k, host: host, main: k.Symbols().Define(defMain)}
}

// Rows returns the results, in op and size order, once the program ended.
func (pr *Program) Rows() []Row { return pr.rows }

// Err returns a failure of the program (out of simulated memory).
func (pr *Program) Err() error { return pr.err }

// Start spawns the program's thread.
func (pr *Program) Start() {
	pr.k.Spawn("membench", pr.run)
}

func (pr *Program) run(t *kernel.Thread) {
	k := pr.k
	c := k.CPU()
	c.Enter(pr.main)
	defer c.Exit(pr.main)
	// One region of twice the largest size: a copy of size S reads
	// [0, S) and writes [S, 2S), so its working set is 2S contiguous
	// bytes and fits a cache exactly when 2S does, whatever the cache's
	// associativity.
	maxSize := int(pr.p.MaxSize)
	region := k.Kmalloc(2 * maxSize)
	if region == 0 {
		pr.err = fmt.Errorf("%s: cannot allocate %v for the buffers: raise [kernel] heap_size", pr.host, 2*pr.p.MaxSize)
		return
	}
	// Fill the source with a pattern, as the program would.
	pattern := make([]byte, maxSize)
	for i := range pattern {
		pattern[i] = byte(i*7 + i>>8)
	}
	c.Write(region, pattern)
	levels := c.System().Cache.Caches()
	for _, op := range pr.p.Ops {
		for _, size := range pr.p.Sizes() {
			row := Row{Host: pr.host, Op: op, Size: size, Levels: make([]Level, len(levels))}
			var warm int64
			for pass := 0; pass < pr.p.Passes; pass++ {
				before := snapshot(levels)
				x := c.Current()
				c0 := x.Cycles()
				switch op {
				case OpCopy:
					k.Bcopy(region+memory.Addr(size), region, size)
				case OpChecksum:
					row.Checksum = k.Cksum(region, size)
				}
				cycles := x.Cycles() - c0
				if pass == 0 {
					row.ColdCycles = cycles
					continue
				}
				warm += cycles
				after := snapshot(levels)
				for i := range levels {
					row.Levels[i].Name = levels[i].Name()
					row.Levels[i].Accesses += float64(after[i].Accesses() - before[i].Accesses())
					row.Levels[i].Misses += float64(after[i].Misses() - before[i].Misses())
				}
			}
			n := float64(pr.p.Passes - 1)
			row.WarmCycles = float64(warm) / n
			row.CyclesPerByte = row.WarmCycles / float64(size)
			for i := range row.Levels {
				row.Levels[i].Accesses /= n
				row.Levels[i].Misses /= n
			}
			pr.rows = append(pr.rows, row)
		}
	}
	k.Kfree(region)
}

func snapshot(cs []*memory.Cache) []memory.CacheStats {
	out := make([]memory.CacheStats, len(cs))
	for i, c := range cs {
		out[i] = c.Stats()
	}
	return out
}
