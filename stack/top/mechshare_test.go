package top_test

import (
	"math"
	"testing"

	"simkron/cpu"
	"simkron/stack/osi"
	"simkron/stack/top"
)

// One mechanism's cost changed, and the splits move the way the
// mechanism says: the memory manager's allocation (mm_alloc) made 30
// instructions dearer. Every call of it, in whatever layer, costs 30 ×
// CPI cycles more, and fetching its longer code a little more; nothing
// else changes but what the unified L1 loses to that code: each layer's
// memory management grows by its calls times 30 × CPI and by at most a
// tenth more; its memory copy and checksum cycles stay within 0.1%; its
// memory management's share rises and every other category's falls;
// and the transfer is slower.
func TestAllocCostMovesShares(t *testing.T) {
	const msgs = 300
	const extra = 30
	base := defaultUpper()
	dear := defaultUpper()
	dear.machine.costs = map[string]int64{"mm_alloc": 30 + extra}
	run := func(cfg upperCfg) (upperRun, *callCounter) {
		r := buildUpper(t, top.LevelTP4, 1024, msgs, true, cfg)
		k := countCalls(r.a.c, "mm_alloc")
		m := upperRun{r: r}
		r.ua.OnFirstSend = func() { k.on = true; m.aStart = osi.Read(r.a.c) }
		r.ua.OnDone = func() { k.on = false; m.aEnd = osi.Read(r.a.c) }
		m.res = r.run(t, 60e12)
		return m, k
	}
	m1, k1 := run(base)
	m2, k2 := run(dear)
	cpi := base.machine.cpu.CPI
	t.Logf("loopback 1024 B: %.2f -> %.2f Mbit/s with mm_alloc %d -> %d instructions", m1.res.Mbps(), m2.res.Mbps(), 30, 30+extra)
	if m2.res.Mbps() >= m1.res.Mbps() {
		t.Errorf("a dearer allocation did not slow the transfer: %.2f -> %.2f", m1.res.Mbps(), m2.res.Mbps())
	}
	for _, layer := range []cpu.Layer{cpu.LayerTP4, cpu.LayerCLNS, cpu.LayerLLC} {
		s1 := m1.r.a.h.Catalog().Split(m1.aStart, m1.aEnd, layer)
		s2 := m2.r.a.h.Catalog().Split(m2.aStart, m2.aEnd, layer)
		calls := k1.calls[string(layer)+" mm_alloc"]
		if k2.calls[string(layer)+" mm_alloc"] != calls || calls == 0 {
			t.Fatalf("%s: mm_alloc called %d and %d times", layer, calls, k2.calls[string(layer)+" mm_alloc"])
		}
		want := float64(calls) * extra * cpi
		got := float64(s2.Of(osi.CatMemory) - s1.Of(osi.CatMemory))
		t.Logf("%s: %d allocations; memory management %d -> %d cycles (+%.0f, want +%.0f), share %.1f%% -> %.1f%%",
			layer, calls, s1.Of(osi.CatMemory), s2.Of(osi.CatMemory), got, want, s1.Percent(osi.CatMemory), s2.Percent(osi.CatMemory))
		if got < want-1 || got > 1.1*want {
			t.Errorf("%s: memory management grew by %.0f cycles, want %d allocations × %d × %.1f = %.0f and at most a tenth more", layer, got, calls, extra, cpi, want)
		}
		for _, cat := range []osi.Category{osi.CatCopy, osi.CatChecksum} {
			if a, b := float64(s1.Of(cat)), float64(s2.Of(cat)); math.Abs(b-a) > 0.001*a {
				t.Errorf("%s: %v %.0f -> %.0f cycles, want it within 0.1%%", layer, cat, a, b)
			}
		}
		if s2.Percent(osi.CatMemory) <= s1.Percent(osi.CatMemory) {
			t.Errorf("%s: memory management's share %.1f%% -> %.1f%%, want it up", layer, s1.Percent(osi.CatMemory), s2.Percent(osi.CatMemory))
		}
		for _, cat := range []osi.Category{osi.CatCopy, osi.CatChecksum, osi.CatSched, osi.CatOther} {
			if s1.Of(cat) > 0 && s2.Percent(cat) >= s1.Percent(cat) {
				t.Errorf("%s: %v's share %.1f%% -> %.1f%%, want it down", layer, cat, s1.Percent(cat), s2.Percent(cat))
			}
		}
	}
}
