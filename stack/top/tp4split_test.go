package top_test

import (
	"testing"

	"simkron/cpu"
	"simkron/sim"
	"simkron/stack/osi"
	"simkron/stack/top"
)

// callCounter counts, per layer, the calls of some symbols between two
// moments, the layer being that of the innermost caller with one (as
// the split attributes a library routine's cycles).
type callCounter struct {
	on    bool
	stack []cpu.Layer
	calls map[string]int // "LAYER symbol"
}

func countCalls(c *cpu.CPU, names ...string) *callCounter {
	k := &callCounter{calls: map[string]int{}}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	c.Trace.Enter.Connect(func(s *cpu.Symbol) {
		l := s.Layer
		if l == cpu.LayerInherit {
			l = cpu.LayerKERN
			if n := len(k.stack); n > 0 {
				l = k.stack[n-1]
			}
		}
		k.stack = append(k.stack, l)
		if k.on && want[s.Name] {
			k.calls[string(l)+" "+s.Name]++
		}
	})
	c.Trace.Exit.Connect(func(*cpu.Symbol) { k.stack = k.stack[:len(k.stack)-1] })
	return k
}

// TP4's split at 128 B (remote, an AK per DT, checksum on) against what
// each end computes and allocates, message by message:
//
//   - the originator generates each DT's checksum (tp4_cksum over its
//     9-octet header and 128 octets of data) and verifies each AK's
//     (tp4_cksum_check over 9 octets); the recipient verifies the DT's
//     and generates the AK's;
//   - the originator's TP4 frees the T-DATA request's Primitive
//     Structure, allocates the DT's PCI block and its Parameter
//     Structure, the N-UNITDATA request's parameter block and Primitive
//     Structure, and on the AK frees its N-UNITDATA indication's
//     Primitive Structure and parameter block, the AK's NSDU (LLC's copy
//     in the reception region: its block and Parameter Structure) and
//     the DT it kept (the PCI's block, and both Parameter Structures of
//     the chain);
//   - the recipient's TP4 frees the DT's N-UNITDATA indication's
//     Primitive Structure and parameter block, allocates the T-DATA
//     indication's Primitive Structure, and the AK's block, Parameter
//     Structure, parameter block and Primitive Structure (the TSDU is
//     freed by the user).
//
// The checksum's cycles at each end are those octets' instructions at
// the machine's CPI, and a little more for the loads' cache misses.
func TestTP4SplitAccounting(t *testing.T) {
	const msgs = 500
	cfg := defaultUpper()
	r := buildUpper(t, top.LevelTP4, 128, msgs, false, cfg)
	names := []string{"mm_get_prim", "mm_put_prim", "mm_get_param", "mm_put_param", "mm_alloc", "mm_free", "tp4_cksum", "tp4_cksum_check"}
	ka, kb := countCalls(r.a.c, names...), countCalls(r.b.c, names...)
	var aStart, aEnd, bStart, bEnd osi.Reading
	r.ua.OnFirstSend = func() {
		ka.on, kb.on = true, true
		aStart, bStart = osi.Read(r.a.c), osi.Read(r.b.c)
	}
	r.ua.OnDone = func() {
		ka.on, kb.on = false, false
		aEnd, bEnd = osi.Read(r.a.c), osi.Read(r.b.c)
	}
	res := r.run(t, 60*sim.Second)
	if res.Sent != msgs {
		t.Fatalf("sent %d", res.Sent)
	}
	per := func(k *callCounter, name string) float64 { return float64(k.calls["TP4 "+name]) / msgs }
	want := []struct {
		who  string
		k    *callCounter
		name string
		n    float64
	}{
		{"originator", ka, "tp4_cksum", 1}, {"originator", ka, "tp4_cksum_check", 1},
		{"recipient", kb, "tp4_cksum", 1}, {"recipient", kb, "tp4_cksum_check", 1},
		{"originator", ka, "mm_get_prim", 1}, {"originator", ka, "mm_put_prim", 2},
		{"originator", ka, "mm_get_param", 1}, {"originator", ka, "mm_put_param", 3},
		{"originator", ka, "mm_alloc", 2}, {"originator", ka, "mm_free", 3},
		{"recipient", kb, "mm_get_prim", 2}, {"recipient", kb, "mm_put_prim", 1},
		{"recipient", kb, "mm_get_param", 1}, {"recipient", kb, "mm_put_param", 0},
		{"recipient", kb, "mm_alloc", 2}, {"recipient", kb, "mm_free", 1},
	}
	for _, w := range want {
		// Within one call over the run: the run's edges (the last DT's
		// AK, the reply's) fall on either side of the readings.
		if got := per(w.k, w.name); got < w.n-2.0/msgs || got > w.n+2.0/msgs {
			t.Errorf("%s: TP4 calls %s %.3f times a message, want %v", w.who, w.name, got, w.n)
		}
	}
	// The checksum's cycles: per message, the originator sums the DT
	// (9 + 128 octets) generating and the AK (9) verifying; the recipient
	// the same octets the other way round.
	cpi := cfg.machine.cpu.CPI
	perOctet := 4.0
	gen, chk := 24.0, 16.0
	instr := gen + perOctet*(9+128) + chk + perOctet*9
	for _, e := range []struct {
		who        string
		k          *osi.Catalog
		start, end osi.Reading
	}{{"originator", r.a.h.Catalog(), aStart, aEnd}, {"recipient", r.b.h.Catalog(), bStart, bEnd}} {
		s := e.k.Split(e.start, e.end, cpu.LayerTP4)
		got := float64(s.Of(osi.CatChecksum)) / msgs
		floor := instr * cpi
		t.Logf("%s: TP4 %d cycles a message, checksum %.0f (%.1f%%; the octets' instructions at CPI %.1f: %.0f), memory management %.0f (%.1f%%)",
			e.who, s.Total/msgs, got, s.Percent(osi.CatChecksum), cpi, floor, float64(s.Of(osi.CatMemory))/msgs, s.Percent(osi.CatMemory))
		if got < floor || got > 1.25*floor {
			t.Errorf("%s: checksum %.0f cycles a message, want %.0f to %.0f", e.who, got, floor, 1.25*floor)
		}
	}
}
