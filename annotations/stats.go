package annotations

import (
	"fmt"
	"strconv"
	"strings"

	"simkron/memory"
)

// StatNames documents the names `stat NAME` accepts. CACHE is l1 (the
// first level: the unified cache, or l1i and l1d added up when split),
// l1i, l1d (the same cache as l1 when unified) or l2.
var StatNames = []struct{ Name, Help string }{
	{"cycles", "the core's cycle counter, idle included"},
	{"idle_cycles", "cycles the core spent halted"},
	{"instructions", "instructions charged"},
	{"interrupts", "interrupts taken, every line"},
	{"irq.N", "interrupts taken on line N"},
	{"spurious", "interrupts on a line with no handler"},
	{"switches", "context switches"},
	{"traps", "system-call traps"},
	{"io_accesses", "device register accesses over a bus"},
	{"io_cycles", "cycles those accesses cost"},
	{"syncs_fast", "synchronisations with nothing due"},
	{"syncs_slow", "synchronisations that let events run"},
	{"syncs_early", "device accesses made ahead of the event clock, within the sync quantum"},
	{"waits_nested", "waits (slow synchronisations, halts) that ran the due events on the core's own stack"},
	{"CACHE.read_hits", "data load hits (also read_misses, write_hits, write_misses, fetch_hits, fetch_misses)"},
	{"CACHE.misses", "misses of every kind (also hits, accesses)"},
	{"CACHE.writebacks", "dirty lines written to the next level"},
	{"CACHE.invalidations", "valid lines dropped by a flush, an invalidate or a DMA snoop"},
	{"CACHE.stale_reads", "reads of lines non-coherent DMA had overwritten"},
	{"mem.reads", "line fills memory served"},
	{"mem.writes", "writes that reached memory"},
	{"uncached.refs", "references to uncached regions"},
	{"uncached.cycles", "cycles those references cost"},
}

// statValue reads counter name of host v.
func statValue(v HostView, name string) (int64, error) {
	cs := v.CPU.Stats()
	switch name {
	case "cycles":
		return cs.Cycles, nil
	case "idle_cycles":
		return cs.IdleCycles, nil
	case "instructions":
		return cs.Instructions, nil
	case "interrupts":
		return int64(cs.Interrupts), nil
	case "spurious":
		return int64(cs.Spurious), nil
	case "switches":
		return int64(cs.Switches), nil
	case "traps":
		return int64(cs.Traps), nil
	case "io_accesses":
		return int64(cs.IOAccesses), nil
	case "io_cycles":
		return cs.IOCycles, nil
	case "syncs_fast":
		return int64(cs.SyncsFast), nil
	case "syncs_slow":
		return int64(cs.SyncsSlow), nil
	case "syncs_early":
		return int64(cs.SyncsEarly), nil
	case "waits_nested":
		return int64(cs.WaitsNested), nil
	case "uncached.refs":
		return int64(v.Sys.Stats().UncachedRefs), nil
	case "uncached.cycles":
		return int64(v.Sys.Stats().UncachedCycles), nil
	}
	prefix, field, ok := strings.Cut(name, ".")
	if !ok {
		return 0, fmt.Errorf("stat: unknown counter %q (see annotations.StatNames)", name)
	}
	h := v.Sys.Cache
	switch prefix {
	case "irq":
		n, err := strconv.Atoi(field)
		counts := v.CPU.InterruptCounts()
		if err != nil || n < 0 || n >= len(counts) {
			return 0, fmt.Errorf("stat %s: no interrupt line %q", name, field)
		}
		return int64(counts[n]), nil
	case "mem":
		if h == nil {
			return 0, fmt.Errorf("stat %s: the host has no caches", name)
		}
		switch field {
		case "reads":
			return int64(h.MemReads()), nil
		case "writes":
			return int64(h.MemWrites()), nil
		}
		return 0, fmt.Errorf("stat: unknown counter %q (mem.reads or mem.writes)", name)
	}
	if h == nil {
		return 0, fmt.Errorf("stat %s: the host has no caches", name)
	}
	var s memory.CacheStats
	switch prefix {
	case "l1":
		s = h.L1D().Stats()
		if h.L1I() != h.L1D() {
			s = addStats(s, h.L1I().Stats())
		}
	case "l1i":
		s = h.L1I().Stats()
	case "l1d":
		s = h.L1D().Stats()
	case "l2":
		if h.L2() == nil {
			return 0, fmt.Errorf("stat %s: the host has no l2 cache", name)
		}
		s = h.L2().Stats()
	default:
		return 0, fmt.Errorf("stat: unknown counter %q (see annotations.StatNames)", name)
	}
	var n uint64
	switch field {
	case "read_hits":
		n = s.ReadHits
	case "read_misses":
		n = s.ReadMisses
	case "write_hits":
		n = s.WriteHits
	case "write_misses":
		n = s.WriteMisses
	case "fetch_hits":
		n = s.FetchHits
	case "fetch_misses":
		n = s.FetchMisses
	case "writebacks":
		n = s.Writebacks
	case "invalidations":
		n = s.Invalidations
	case "stale_reads":
		n = s.StaleReads
	case "misses":
		n = s.Misses()
	case "accesses":
		n = s.Accesses()
	case "hits":
		n = s.Accesses() - s.Misses()
	default:
		return 0, fmt.Errorf("stat: unknown cache counter %q (see annotations.StatNames)", name)
	}
	return int64(n), nil
}

func addStats(a, b memory.CacheStats) memory.CacheStats {
	a.ReadHits += b.ReadHits
	a.ReadMisses += b.ReadMisses
	a.WriteHits += b.WriteHits
	a.WriteMisses += b.WriteMisses
	a.FetchHits += b.FetchHits
	a.FetchMisses += b.FetchMisses
	a.Writebacks += b.Writebacks
	a.Invalidations += b.Invalidations
	a.StaleReads += b.StaleReads
	return a
}
