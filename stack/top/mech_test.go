package top_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/cpu"
	"simkron/sim"
	"simkron/stack/osi"
	"simkron/stack/top"
	"simkron/stack/top/toptest"
)

// First fit splits free extents and coalesces freed neighbours; the two
// regions never mix; exhaustion is a counted failure.
func TestMemoryManager(t *testing.T) {
	b := toptest.New(t, "mm")
	m := b.H.Mem()
	b.H.OnStart(func() {
		a1 := m.Alloc(osi.Tx, 100)
		a2 := m.Alloc(osi.Tx, 200)
		a3 := m.Alloc(osi.Tx, 100)
		r1 := m.Alloc(osi.Rx, 100)
		if a1 == 0 || a2 <= a1 || a3 <= a2 || r1 == 0 {
			t.Fatalf("allocations %#x %#x %#x %#x", a1, a2, a3, r1)
		}
		if r1 > a1 && r1 < a3 {
			t.Errorf("reception block %#x inside the transmission area", r1)
		}
		m.Free(a2)
		m.Free(a1)
		// 300 octets fit only where a1 and a2 were, once coalesced.
		if got := m.Alloc(osi.Tx, 300); got != a1 {
			t.Errorf("300 octets at %#x, want the coalesced %#x", got, a1)
		}
		m.Free(a3)
		if m.Alloc(osi.Tx, 1<<20) != 0 {
			t.Error("a megabyte from a 64 KiB area")
		}
		if m.Stats().Failures != 1 {
			t.Errorf("failures %d, want 1", m.Stats().Failures)
		}
		// Fixed-size structures come back in LIFO order.
		d1 := m.AllocDesc(osi.Rx)
		m.FreeDesc(d1)
		if d2 := m.AllocDesc(osi.Rx); d2 != d1 {
			t.Errorf("descriptor %#x after freeing %#x", d2, d1)
		}
	})
	b.H.Start()
	b.K.RunUntil(sim.Millisecond)
}

// Timers of one tick, of more than a revolution of the wheel, stopped
// and restarted ones: each fires (as a time-out primitive) at its tick.
func TestTimerWheel(t *testing.T) {
	b := toptest.New(t, "tm")
	env := b.H.NewEnv("test", cpu.LayerAPPL)
	fired := map[string]uint32{}
	mk := func(name string) osi.Timer {
		return env.NewTimer(name, func() { fired[name] = b.H.Ticks() })
	}
	short, long, stopped, moved := mk("short"), mk("long"), mk("stopped"), mk("moved")
	b.H.OnStart(func() {
		short.Start(sim.Millisecond)      // one tick
		long.Start(300 * top.TickPeriod)  // past one revolution of 256
		stopped.Start(5 * top.TickPeriod) // stopped before it fires
		moved.Start(2 * top.TickPeriod)   // restarted to 10
		stopped.Stop()
		moved.Start(10 * top.TickPeriod)
	})
	b.H.Start()
	b.K.RunUntil(320 * top.TickPeriod)
	want := map[string]uint32{"short": 1, "moved": 10, "long": 300}
	if d := cmp.Diff(want, fired); d != "" {
		t.Errorf("ticks at which timers fired (-want +got):\n%s", d)
	}
	if st := b.H.TimerStats(); st.Started != 5 || st.Expired != 3 || st.Stopped != 1 {
		t.Errorf("timer stats %+v", st)
	}
	if long.Pending() || short.Pending() {
		t.Error("fired timers still pending")
	}
}

// Chains: PCI insertion, slicing, holding and freeing keep the blocks'
// use counts straight, and the bytes are where they belong.
func TestChains(t *testing.T) {
	b := toptest.New(t, "ch")
	bf := b.H.Bufs()
	b.H.OnStart(func() {
		c := b.H.CPU()
		data, a := bf.New(osi.Tx, 10)
		c.Write(a, []byte("0123456789"))
		pdu, p := bf.Prepend(osi.Tx, data, 3)
		c.Write(p, []byte("HDR"))
		if got := string(b.Bytes(pdu)); got != "HDR0123456789" || bf.Len(pdu) != 13 {
			t.Errorf("chain %q", got)
		}
		s := bf.Slice(osi.Tx, pdu, 2, 6)
		if got := string(b.Bytes(s)); got != "R01234" {
			t.Errorf("slice %q", got)
		}
		if n := bf.BlockUses(a - osi.BlockHeader); n != 2 {
			t.Errorf("data block used %d times, want 2", n)
		}
		bf.Hold(pdu)
		bf.Free(pdu) // the holder's reference stays
		if got := string(b.Bytes(pdu)); got != "HDR0123456789" {
			t.Errorf("held chain %q", got)
		}
		bf.Free(pdu)
		if got := string(b.Bytes(s)); got != "R01234" {
			t.Errorf("slice after the chain was freed: %q", got)
		}
		bf.Pull(s, 3)
		bf.Truncate(s, 2)
		if got := string(b.Bytes(s)); got != "23" {
			t.Errorf("pulled and truncated: %q", got)
		}
		joined := bf.Append(s, bf.Slice(osi.Tx, s, 0, 1))
		if got := string(b.Bytes(joined)); got != "232" {
			t.Errorf("appended: %q", got)
		}
		bf.Free(joined)
		if n := b.Held(); n != 0 {
			t.Errorf("%d structures held at the end", n)
		}
		tx, rx, _, _ := b.H.Mem().InUse()
		if tx != 0 || rx != 0 {
			t.Errorf("data area in use: %d, %d", tx, rx)
		}
	})
	b.H.Start()
	b.K.RunUntil(sim.Millisecond)
}

// The split of a layer's processing sums to the layer's own cycles.
func TestSplitSumsToLayer(t *testing.T) {
	m := measure(t, top.LevelCLNS, 512, 200, true)
	k := m.r.a.h.Catalog()
	s := k.Split(m.aStart, m.aEnd, cpu.LayerCLNS)
	var sum int64
	for _, x := range s.Symbols {
		sum += x.Cycles
	}
	if sum != s.Total || s.Total <= 0 {
		t.Errorf("symbols sum to %d, total %d", sum, s.Total)
	}
}
