package pit_test

import (
	"testing"

	"simkron/devices/pit"
	"simkron/memory"
	"simkron/sim"
)

type pulses struct {
	k  *sim.Scheduler
	at []sim.Time
}

func (p *pulses) Pulse() { p.at = append(p.at, p.k.Now()) }

func program(t *pit.PIT, ctl byte, count ...byte) {
	t.Write(pit.RegControl, 1, uint64(ctl))
	for _, b := range count {
		t.Write(pit.RegCounter0, 1, uint64(b))
	}
}

// The BIOS's programming (counter 0, LSB then MSB, mode 3, divisor 65536)
// gives the PC's 18.2 Hz tick, each edge at an exact multiple of
// 65536/1193182 s from the load, with no drift.
func TestBIOSTick(t *testing.T) {
	k := sim.NewScheduler(1)
	p := &pulses{k: k}
	var log memory.GuestLog
	d := pit.New(k, "pc.pit", pit.DefaultParams(), p, &log)
	program(d, 0x36, 0, 0)
	k.RunUntil(10 * sim.Second)
	if len(p.at) != 182 { // 10 s · 18.2065 Hz
		t.Fatalf("%d interrupts in 10 s, want 182", len(p.at))
	}
	for i, at := range []int{0, 1, 99, 181} {
		n := int64(at + 1)
		// n·65536 input cycles of the 1.193182 MHz clock, rounded down.
		want := sim.NewClock(pit.PCClock).Time(n * 65536)
		if p.at[at] != want {
			t.Errorf("edge %d at %v, want %v", i, p.at[at], want)
		}
	}
	if got, want := pit.DefaultParams().Period(0), sim.NewClock(pit.PCClock).Time(65536); got != want {
		t.Errorf("period %v, want %v", got, want)
	}
	if log.Count() != 0 {
		t.Errorf("guest errors: %v", log.Records())
	}
}

// A latched count reads back LSB then MSB and counts down from the
// divisor; a new divisor changes the rate.
func TestLatchAndReprogram(t *testing.T) {
	k := sim.NewScheduler(1)
	p := &pulses{k: k}
	d := pit.New(k, "pc.pit", pit.DefaultParams(), p, nil)
	program(d, 0x34, 0x9C, 0x2E) // mode 2, divisor 11932: about 100 Hz
	k.RunUntil(5 * sim.Millisecond)
	d.Write(pit.RegControl, 1, 0x00) // latch counter 0
	lo, hi := d.Read(pit.RegCounter0, 1), d.Read(pit.RegCounter0, 1)
	// 5 ms of a 1.193182 MHz clock is 5965.91 cycles: 5965 decrements.
	if got := hi<<8 | lo; got != 11932-5965 {
		t.Errorf("latched count %d, want %d", got, 11932-5965)
	}
	k.RunUntil(sim.Second)
	if len(p.at) != 99 && len(p.at) != 100 {
		t.Errorf("%d interrupts in 1 s at divisor 11932, want 100", len(p.at))
	}
}

// Unmodelled programming is a guest error, never a panic.
func TestUnmodelledModes(t *testing.T) {
	k := sim.NewScheduler(1)
	var log memory.GuestLog
	d := pit.New(k, "pc.pit", pit.DefaultParams(), nil, &log)
	d.Write(pit.RegCounter0, 1, 5) // before a control word
	program(d, 0x3A, 1, 0)         // mode 5
	program(d, 0x37, 0, 0)         // BCD
	d.Write(pit.RegControl, 1, 0xC2)
	_ = d.Read(pit.RegControl, 1)
	if log.Count() != 5 {
		t.Errorf("%d guest errors, want 5: %v", log.Count(), log.Records())
	}
}
