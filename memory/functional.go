package memory

import (
	"fmt"
	"math"

	"simkron/sim"
)

// Detail is how closely a run models the memory side, SimOS style.
//
//	full        every reference goes through the cache hierarchy (tags,
//	            state, write-backs, DMA coherence): the exact model.
//	functional  no cache at all: each reference costs a calibrated
//	            average (FunctionalParams) measured by a full-detail run
//	            of the same machine; uncached regions keep their latency.
type Detail uint8

// Detail modes.
const (
	DetailFull Detail = iota
	DetailFunctional
)

// String returns "full" or "functional".
func (d Detail) String() string {
	switch d {
	case DetailFull:
		return "full"
	case DetailFunctional:
		return "functional"
	}
	return fmt.Sprintf("Detail(%d)", uint8(d))
}

// MarshalText writes the mode as UnmarshalText reads it.
func (d Detail) MarshalText() ([]byte, error) {
	if d > DetailFunctional {
		return nil, fmt.Errorf("memory: invalid detail %d", uint8(d))
	}
	return []byte(d.String()), nil
}

// UnmarshalText reads "full" or "functional".
func (d *Detail) UnmarshalText(b []byte) error {
	switch string(b) {
	case "full":
		*d = DetailFull
	case "functional":
		*d = DetailFunctional
	default:
		return fmt.Errorf("detail %q: want \"full\" or \"functional\"", b)
	}
	return nil
}

// FunctionalParams are the average costs functional detail charges in
// place of the cache hierarchy: a machine file's [functional] section,
// written by `simkron calibrate` from a full-detail run (System.Calibration).
// The costs are of references to cached memory; uncached regions keep
// their exact latency.
type FunctionalParams struct {
	Read  float64 `toml:"read" min:"0" max:"100000" unit:"cycles/word" help:"average cycles of one data load of a word"`
	Write float64 `toml:"write" min:"0" max:"100000" unit:"cycles/word" help:"average cycles of one data store of a word"`
	Copy  float64 `toml:"copy" min:"0" max:"100000" unit:"cycles/word" help:"average cycles of one word of a copy loop: its load and its store together"`
	Fetch float64 `toml:"fetch" min:"0" max:"100000" unit:"cycles/line" help:"average stall of fetching one instruction-cache line, beyond the first level's hit latency (which is charged as in full detail)"`
}

// kindCopy indexes the copy loop's counters and costs beside the three
// access kinds.
const kindCopy = Fetch + 1

// nKinds is the number of kinds with their own cost.
const nKinds = kindCopy + 1

// milli returns x cycles in milli-cycles, rounded to the nearest.
func milli(x float64) int64 { return int64(math.Round(x * 1000)) }

// functional is a System's state in functional detail: milli-cycles per
// unit (word, or line for Fetch) by kind, and the milli-cycles not yet
// charged, carried from one reference to the next so that the sum over a
// run is exact to a cycle and the same on every host.
type functional struct {
	milli [nKinds]int64
	rem   int64
}

// charge returns the whole cycles of units references of kind k and
// carries the fraction.
func (f *functional) charge(k AccessKind, units uint64) int64 {
	// t is never negative (costs are at least 0): one unsigned division
	// by the constant, its remainder by a multiplication.
	t := f.rem + int64(units)*f.milli[k]
	q := int64(uint64(t) / 1000)
	f.rem = t - q*1000
	return q
}

// Calibration is what a full-detail System charged for references to
// cached memory, by kind: the units (words; lines for Fetch) and the
// cycles they cost. Copy counts the words of copy loops (a load and a
// store each); Fetch counts cycles including the first level's hit.
type Calibration struct {
	Read, Write, Copy, Fetch CalibrationCount
}

// CalibrationCount is the cycles charged for Units references.
type CalibrationCount struct {
	Units, Cycles uint64
}

// Add adds o's counts to c's (pooling hosts of one machine).
func (c *Calibration) Add(o Calibration) {
	for i, p := range c.counts() {
		q := o.counts()[i]
		p.Units += q.Units
		p.Cycles += q.Cycles
	}
}

// counts returns c's counts by kind.
func (c *Calibration) counts() [nKinds]*CalibrationCount {
	var out [nKinds]*CalibrationCount
	out[Read], out[Write], out[Fetch] = &c.Read, &c.Write, &c.Fetch
	out[kindCopy] = &c.Copy
	return out
}

// Mean returns the average cycles of one unit (0 when none was counted).
func (c CalibrationCount) Mean() float64 {
	if c.Units == 0 {
		return 0
	}
	return float64(c.Cycles) / float64(c.Units)
}

// Params returns the averages as functional detail's costs; fetchHit is
// the first-level instruction cache's hit latency, which Fetch leaves out.
func (c Calibration) Params(fetchHit int64) FunctionalParams {
	p := FunctionalParams{Read: c.Read.Mean(), Write: c.Write.Mean(), Copy: c.Copy.Mean()}
	if c.Fetch.Units > 0 {
		p.Fetch = max(0, c.Fetch.Mean()-float64(fetchHit))
	}
	return p
}

// SetFunctional switches the system to functional detail with the costs p:
// from then on no reference, fetch or DMA transfer touches the hierarchy
// (whose counters stay zero). Call it before the system is used.
func (s *System) SetFunctional(p FunctionalParams) {
	f := &functional{}
	f.milli[Read] = milli(p.Read)
	f.milli[Write] = milli(p.Write)
	f.milli[kindCopy] = milli(p.Copy)
	// A line fetch costs the hit, as in full detail, plus the stall.
	f.milli[Fetch] = 1000*s.Cache.l1i.hit + milli(p.Fetch)
	s.fn = f
	s.plain = false
}

// NewFunctionalSystem is NewSystem over a hierarchy built from hp,
// switched to functional detail with the costs p (SetFunctional) before
// its caches are given their tag and state arrays: functional detail never
// touches them, and SetFull makes them, empty, if the system switches to
// full detail. A run in functional detail then allocates none of the
// caches' arrays (an R4000 host's are 180 KB).
func NewFunctionalSystem(k *sim.Scheduler, name string, phys *Phys, hp HierarchyParams, p FunctionalParams) (*System, error) {
	h, err := newHierarchy(hp)
	if err != nil {
		return nil, err
	}
	s := NewSystem(k, name, phys, h)
	s.SetFunctional(p)
	return s, nil
}

// SetFull switches a system in functional detail to full detail from now
// on, the warm-up done: references, fetches and DMA go through the
// hierarchy again. Its caches start empty, functional detail never having
// touched them, as SimOS's caches did when it switched to a detailed
// model; the caches' and the calibration's counters count from here.
func (s *System) SetFull() {
	s.Cache.reserve()
	s.fn = nil
	s.plain = len(s.uncached) == 0
}

// Detail returns the system's detail mode.
func (s *System) Detail() Detail {
	if s.fn != nil {
		return DetailFunctional
	}
	return DetailFull
}

// Calibration returns what the system charged for cached references so
// far (full detail; zero in functional detail).
func (s *System) Calibration() Calibration {
	var c Calibration
	for k, p := range c.counts() {
		*p = CalibrationCount{Units: s.cal[k].units, Cycles: s.cal[k].cycles}
	}
	return c
}

// calCount is one kind's calibration counters.
type calCount struct{ units, cycles uint64 }

// count adds units references of kind k that cost cycles (full detail).
func (s *System) count(k AccessKind, units uint64, cycles int64) int64 {
	c := &s.cal[k]
	c.units += units
	c.cycles += uint64(cycles)
	return cycles
}

// cachedRange charges the words of [w, w+n) (w word-aligned, n a multiple
// of 4) that lie in cached memory.
func (s *System) cachedRange(w Addr, n uint64, kind AccessKind) int64 {
	if s.fn != nil {
		return s.fn.charge(kind, n/4)
	}
	return s.count(kind, n/4, s.Cache.AccessRange(w, n, kind))
}

// Flush makes [a, a+n) visible to a non-coherent device (Hierarchy.Flush)
// and returns its cost. In functional detail there is no cache to hold a
// dirty line: it costs what a flush of clean lines costs in full detail,
// each data cache level's HitLatency per line of the range looked up.
func (s *System) Flush(a Addr, n uint64) int64 {
	if s.fn != nil {
		return s.lookupCost(a, n)
	}
	return s.Cache.Flush(a, n)
}

// Invalidate drops cached copies of [a, a+n) before the CPU reads what a
// non-coherent device wrote (Hierarchy.Invalidate) and returns its cost,
// each data cache level's HitLatency per line looked up; in functional
// detail the same, without touching the caches.
func (s *System) Invalidate(a Addr, n uint64) int64 {
	if s.fn != nil {
		return s.lookupCost(a, n)
	}
	return s.Cache.Invalidate(a, n)
}

// lookupCost is each data cache's HitLatency per line of [a, a+n).
func (s *System) lookupCost(a Addr, n uint64) int64 {
	if n == 0 {
		return 0
	}
	var cost int64
	for _, c := range s.Cache.dataCaches() {
		cost += int64(c.linesIn(a, n)) * c.hit
	}
	return cost
}
