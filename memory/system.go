package memory

import (
	"fmt"
	"math/bits"
	"sort"

	"simkron/sim"
)

// System ties one host's memory side together: physical memory, the CPU's
// cache hierarchy, uncached regions, the device registry and the log of
// guest errors. The CPU model charges data references through Reference and
// ReferenceRange; devices move data through DMA ports.
type System struct {
	Name    string
	Phys    *Phys
	Cache   *Hierarchy
	Devices *Registry
	Guest   *GuestLog

	k        *sim.Scheduler
	uncached []uncachedRegion // sorted by base, disjoint
	ports    []*DMAPort
	stats    SystemStats
	// plain is set while no uncached region exists and the detail is
	// full: the one branch the hot paths take to go straight to the
	// hierarchy.
	plain bool
	fn    *functional // functional detail's costs; nil in full detail
	// cal counts, by kind (Read, Write, Fetch, kindCopy), the cached
	// references full detail charged and their cycles.
	cal [nKinds]calCount
}

// SystemStats counts references that bypassed the caches.
type SystemStats struct {
	UncachedRefs   uint64 // references to uncached regions
	UncachedCycles uint64 // cycles they cost
}

type uncachedRegion struct {
	base, end Addr // [base, end)
	latency   int64
}

// NewSystem assembles a host's memory side. Stale reads found by the
// hierarchy are reported to the system's GuestLog at the kernel's time.
func NewSystem(k *sim.Scheduler, name string, phys *Phys, h *Hierarchy) *System {
	s := &System{Name: name, Phys: phys, Cache: h, Devices: NewRegistry(), Guest: &GuestLog{}, k: k, plain: true}
	h.OnStale = func(a Addr) {
		s.Guest.Report(k.Now(), name+".cache",
			"CPU read of %#x returned stale data: DMA wrote the line while it was cached "+
				"(non-coherent DMA; flush/invalidate before reading)", uint64(a))
	}
	return s
}

// Scheduler returns the event scheduler the system reports times from.
func (s *System) Scheduler() *sim.Scheduler { return s.k }

// Stats returns the uncached-reference counters.
func (s *System) Stats() SystemStats { return s.stats }

// ResetStats zeroes the system's, the hierarchy's and the DMA ports'
// counters.
func (s *System) ResetStats() {
	s.stats = SystemStats{}
	s.Cache.ResetStats()
	for _, p := range s.ports {
		p.stats = DMAStats{}
	}
}

// AddUncached makes [base, base+size) bypass the caches (a frame buffer,
// device memory): each reference there costs latency cycles. Regions must
// not overlap.
func (s *System) AddUncached(base Addr, size uint64, latency int64) error {
	end := base + Addr(size)
	switch {
	case size == 0:
		return fmt.Errorf("memory: %s: uncached region at %#x has zero size", s.Name, uint64(base))
	case end < base:
		return fmt.Errorf("memory: %s: uncached region at %#x of size %#x wraps around", s.Name, uint64(base), size)
	case latency < 0:
		return fmt.Errorf("memory: %s: uncached region at %#x: latency %d is negative", s.Name, uint64(base), latency)
	}
	i := sort.Search(len(s.uncached), func(i int) bool { return s.uncached[i].base >= base })
	for _, j := range []int{i - 1, i} {
		if j >= 0 && j < len(s.uncached) {
			o := s.uncached[j]
			if base < o.end && o.base < end {
				return fmt.Errorf("memory: %s: uncached region [%#x, %#x) overlaps [%#x, %#x)",
					s.Name, uint64(base), uint64(end), uint64(o.base), uint64(o.end))
			}
		}
	}
	s.uncached = append(s.uncached, uncachedRegion{})
	copy(s.uncached[i+1:], s.uncached[i:])
	s.uncached[i] = uncachedRegion{base: base, end: end, latency: latency}
	s.plain = false
	return nil
}

// region returns the index of the first uncached region ending after a.
func (s *System) region(a Addr) int {
	u := s.uncached
	lo, hi := 0, len(u)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if u[mid].end <= a {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// Reference charges one CPU reference of up to a word at a and returns its
// cost in cycles: an uncached region's latency, or the cache hierarchy's.
//
// In functional detail a cached reference costs the kind's average.
func (s *System) Reference(a Addr, kind AccessKind) int64 {
	if s.plain {
		return s.count(kind, 1, s.Cache.Access(a, kind))
	}
	if i := s.region(a); i < len(s.uncached) && s.uncached[i].base <= a {
		s.stats.UncachedRefs++
		s.stats.UncachedCycles += uint64(s.uncached[i].latency)
		return s.uncached[i].latency
	}
	if s.fn != nil {
		return s.fn.charge(kind, 1)
	}
	return s.count(kind, 1, s.Cache.Access(a, kind))
}

// FetchLines fetches n consecutive instruction-cache lines, the first
// being the one holding a, in address order, and returns the total cycles:
// exactly Reference(line address, Fetch) for each line in turn. When no
// uncached region overlaps the first to the last line address it is
// Hierarchy.FetchLines; otherwise (or when the addresses wrap) each line
// goes through Reference.
//
// In functional detail a cached line costs the hit latency plus the
// average stall.
func (s *System) FetchLines(a Addr, n uint64) int64 {
	if s.plain {
		return s.count(Fetch, n, s.Cache.FetchLines(a, n))
	}
	if n == 0 {
		return 0
	}
	shift := s.Cache.l1i.lineShift
	first := uint64(a) >> shift << shift
	// The last line's address, unless the walk wraps past the top.
	if n-1 <= (^uint64(0)-first)>>shift {
		last := first + (n-1)<<shift
		if i := s.region(Addr(first)); i == len(s.uncached) || uint64(s.uncached[i].base) > last {
			if s.fn != nil {
				return s.fn.charge(Fetch, n)
			}
			return s.count(Fetch, n, s.Cache.FetchLines(Addr(first), n))
		}
	}
	var cost int64
	for addr := first; n > 0; n-- {
		cost += s.Reference(Addr(addr), Fetch)
		addr += 1 << shift
	}
	return cost
}

// FetchFunctional is FetchLines(a, n) in functional detail with no
// uncached region, where a fetch's cost does not depend on a, and true;
// otherwise it charges nothing and returns false. It is small enough to
// inline into a CPU's every call.
func (s *System) FetchFunctional(n uint64) (int64, bool) {
	if f := s.fn; f != nil && len(s.uncached) == 0 {
		return f.charge(Fetch, n), true
	}
	return 0, false
}

// FetchLinesMemo is FetchLines with the hierarchy's memo m (see
// Hierarchy.FetchLinesMemo) when no uncached region is in the way.
func (s *System) FetchLinesMemo(a Addr, n uint64, m *FetchMemo) int64 {
	if s.plain {
		return s.count(Fetch, n, s.Cache.FetchLinesMemo(a, n, m))
	}
	if cost, ok := s.FetchFunctional(n); ok {
		// Each line costs the average, and the fraction carried makes n
		// at once the same as n one by one.
		return cost
	}
	return s.FetchLines(a, n)
}

// ReferenceRange charges a reference to every word (4 bytes) touching
// [a, a+n), in order, exactly as Reference per word would, and returns the
// total cycles.
func (s *System) ReferenceRange(a Addr, n uint64, kind AccessKind) int64 {
	if n == 0 {
		return 0
	}
	w := uint64(a) &^ 3
	last := (uint64(a) + n - 1) &^ 3
	if last < w {
		last = ^uint64(3)
	}
	if s.plain {
		// Hierarchy.AccessRange, its words counted for calibration.
		words := (last-w)/4 + 1
		return s.count(kind, words, s.Cache.accessWords(w, words, kind))
	}
	var cost int64
	for {
		i := s.region(Addr(w))
		if i < len(s.uncached) && uint64(s.uncached[i].base) <= w {
			// Words whose address lies in the region.
			r := s.uncached[i]
			stop := min(last, (uint64(r.end)-1)&^3)
			words := (stop-w)/4 + 1
			s.stats.UncachedRefs += words
			s.stats.UncachedCycles += words * uint64(r.latency)
			cost += int64(words) * r.latency
			w = stop
		} else {
			// Cached words up to the next region (or the end).
			stop := last
			if i < len(s.uncached) {
				stop = min(stop, (uint64(s.uncached[i].base)-1)&^3)
			}
			cost += s.cachedRange(Addr(w), stop-w+4, kind)
			w = stop
		}
		if w >= last {
			return cost
		}
		w += 4
	}
}

// DMAStats counts a DMA port's traffic.
type DMAStats struct {
	Writes       uint64 // transfers device → memory
	Reads        uint64 // transfers memory → device
	BytesWritten uint64
	BytesRead    uint64
	Errors       uint64 // transfers refused (out of range)
}

// DMAPort is a device's path into host memory. Bytes move at the moment of
// the call (a simplification: the device sees memory as of the start of the
// transfer); the call returns how long the transfer takes at the port's
// bandwidth, and the device schedules its completion after that.
type DMAPort struct {
	name     string
	sys      *System
	bps      uint64
	coherent bool
	stats    DMAStats
}

// NewDMAPort returns a DMA port moving bytesPerSecond. A coherent port's
// writes invalidate cached copies (snooping); a non-coherent port's writes
// leave them, stale, and the driver must invalidate before reading. It
// panics if bytesPerSecond is not positive.
func (s *System) NewDMAPort(name string, bytesPerSecond int64, coherent bool) *DMAPort {
	if bytesPerSecond <= 0 {
		panic(fmt.Sprintf("memory: DMA port %q: bandwidth %d bytes/s must be positive", name, bytesPerSecond))
	}
	p := &DMAPort{name: name, sys: s, bps: uint64(bytesPerSecond), coherent: coherent}
	s.ports = append(s.ports, p)
	return p
}

// Name returns the port's name.
func (p *DMAPort) Name() string { return p.name }

// Coherent reports whether the port snoops the caches.
func (p *DMAPort) Coherent() bool { return p.coherent }

// Stats returns the port's counters.
func (p *DMAPort) Stats() DMAStats { return p.stats }

// Duration returns how long moving n bytes takes: ceil(n·1e12/bandwidth) ps.
func (p *DMAPort) Duration(n int) sim.Time {
	if n <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(n), uint64(sim.Second))
	if hi >= p.bps {
		return sim.Never
	}
	q, r := bits.Div64(hi, lo, p.bps)
	if r != 0 {
		q++
	}
	return sim.Time(q)
}

func (p *DMAPort) component() string { return p.sys.Name + ".dma." + p.name }

func (p *DMAPort) refuse(op string, a Addr, n int) error {
	p.stats.Errors++
	err := fmt.Errorf("memory: %s: DMA %s of %d bytes at %#x exceeds physical memory of %v",
		p.component(), op, n, uint64(a), p.sys.Phys.Size())
	p.sys.Guest.Report(p.sys.k.Now(), p.component(), "DMA %s of %d bytes at %#x exceeds physical memory of %v",
		op, n, uint64(a), p.sys.Phys.Size())
	return err
}

// Write moves data from the device into host memory at a and returns the
// transfer's duration. Coherent: cached copies of the range are dropped.
// Non-coherent: they are marked stale, and a later CPU read of one is
// reported as a guest error. A range outside memory moves nothing, is
// reported to the GuestLog and returns an error.
func (p *DMAPort) Write(a Addr, data []byte) (sim.Time, error) {
	s := p.sys
	if !s.Phys.InRange(a, uint64(len(data))) {
		return 0, p.refuse("write", a, len(data))
	}
	_ = s.Phys.Write(a, data)
	switch {
	case s.fn != nil:
		// Functional detail: no cache holds a copy to drop or to leave
		// stale.
	case p.coherent:
		s.Cache.SnoopInvalidate(a, uint64(len(data)))
	default:
		s.Cache.MarkStale(a, uint64(len(data)))
	}
	p.stats.Writes++
	p.stats.BytesWritten += uint64(len(data))
	return p.Duration(len(data)), nil
}

// Read moves host memory at a into dst (the device) and returns the
// transfer's duration. A non-coherent port reading a range with a dirty
// cached line reports a guest error (the driver forgot to flush); the data
// still comes from Phys, which is all a tags-only model has. A range
// outside memory moves nothing, is reported and returns an error.
func (p *DMAPort) Read(a Addr, dst []byte) (sim.Time, error) {
	s := p.sys
	if !s.Phys.InRange(a, uint64(len(dst))) {
		return 0, p.refuse("read", a, len(dst))
	}
	if !p.coherent && s.fn == nil && s.Cache.DirtyIn(a, uint64(len(dst))) {
		s.Guest.Report(s.k.Now(), p.component(),
			"DMA read of unflushed dirty line in [%#x, %#x): the CPU's latest writes are still in the cache "+
				"(non-coherent DMA; flush before starting the device)", uint64(a), uint64(a)+uint64(len(dst)))
	}
	_ = s.Phys.Read(a, dst)
	p.stats.Reads++
	p.stats.BytesRead += uint64(len(dst))
	return p.Duration(len(dst)), nil
}

// ReferenceCopy charges the references of a copy loop from [src, src+n)
// to [dst, dst+n) (Hierarchy.CopyRange). With uncached regions present
// it is the loop through Reference, word by word at src+4i and dst+4i,
// load then store; the stretches that stay on one side of every region's
// edge are charged whole, which gives the same (Hierarchy.CopyWords where
// both sides are cached; where one side is uncached the other's words
// interleave with nothing the caches see).
//
// In functional detail a cached word costs the copy average where both
// sides are cached, the read or write average where one is.
func (s *System) ReferenceCopy(dst, src Addr, n uint64) int64 {
	if s.plain {
		return s.count(kindCopy, (n+3)/4, s.Cache.CopyRange(dst, src, n))
	}
	var cost int64
	for off := Addr(0); off < Addr(n); {
		su, sEdge := s.span(src + off)
		du, dEdge := s.span(dst + off)
		// Up to the first word whose start crosses an edge, or the end.
		end := min(sEdge-src, dEdge-dst, Addr(n))
		end = min(off+(end-off+3)&^3, Addr(n))
		words := uint64(end-off+3) / 4
		switch {
		case su < 0 && du < 0 && s.fn != nil:
			cost += s.fn.charge(kindCopy, words)
		case su < 0 && du < 0:
			cost += s.count(kindCopy, words, s.Cache.CopyWords(dst+off, src+off, words))
		case du < 0 && s.fn != nil:
			cost += s.uncachedRefs(su, words) + s.fn.charge(Write, words)
		case du < 0:
			cost += s.uncachedRefs(su, words) + s.count(Write, words, s.Cache.accessWords(uint64(dst+off), words, Write))
		case su < 0 && s.fn != nil:
			cost += s.fn.charge(Read, words) + s.uncachedRefs(du, words)
		case su < 0:
			cost += s.count(Read, words, s.Cache.accessWords(uint64(src+off), words, Read)) + s.uncachedRefs(du, words)
		default:
			cost += s.uncachedRefs(su, words) + s.uncachedRefs(du, words)
		}
		off = end
	}
	return cost
}

// span returns the uncached region a lies in (-1: none) and where that
// stops being so: the region's end, or the next region's start (the top
// of the address space when there is none).
func (s *System) span(a Addr) (region int, edge Addr) {
	i := s.region(a)
	switch {
	case i == len(s.uncached):
		return -1, ^Addr(0)
	case s.uncached[i].base <= a:
		return i, s.uncached[i].end
	}
	return -1, s.uncached[i].base
}

// uncachedRefs charges words references to uncached region i.
func (s *System) uncachedRefs(i int, words uint64) int64 {
	r := s.uncached[i]
	s.stats.UncachedRefs += words
	s.stats.UncachedCycles += words * uint64(r.latency)
	return int64(words) * r.latency
}
