// Package timer models simkron's timer device: a real-time-clock register,
// a periodic tick interrupt at a configured rate, and a one-shot timer.
// It is hardware: it knows nothing of the kernel that programs it.
//
// Simplifications: registers are 32 bits wide and accessed whole (a narrower
// access reads the low bytes; a narrower write is zero-extended); the tick
// is exact (no crystal drift).
package timer

import (
	"fmt"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
)

// Params configures the device.
type Params struct {
	HZ    int   `toml:"hz" min:"1" max:"100000" help:"periodic tick rate in ticks per second"`
	Epoch int64 `toml:"epoch" min:"0" help:"RTC value at simulated time 0, in seconds since 1970"`
}

// DefaultParams returns 100 Hz (Linux 2.x's HZ) and an epoch of
// 1996-01-01 00:00:00 UTC.
func DefaultParams() Params { return Params{HZ: 100, Epoch: 820454400} }

// Stats counts the device's events.
type Stats struct {
	Ticks    uint64 `stat:"ticks" help:"periodic ticks raised"`
	OneShots uint64 `stat:"one_shots" help:"one-shot timer expiries raised"`
}

// Timer is the device.
type Timer struct {
	name   string
	k      *sim.Scheduler
	p      Params
	irq    cpu.IRQ
	guest  *memory.GuestLog
	period sim.Time
	ctrl   uint32
	status uint32
	ticks  uint32
	tickEv *sim.Event
	shotEv *sim.Event
	stats  Stats
}

var _ memory.Device = (*Timer)(nil)

// New returns a timer named name ("hostA.timer0") raising irq.
func New(k *sim.Scheduler, name string, p Params, irq cpu.IRQ, guest *memory.GuestLog) (*Timer, error) {
	if p.HZ <= 0 {
		return nil, fmt.Errorf("%s: hz must be positive", name)
	}
	if sim.Second%sim.Time(p.HZ) != 0 {
		return nil, fmt.Errorf("%s: hz %d does not divide a second into whole picoseconds", name, p.HZ)
	}
	t := &Timer{name: name, k: k, p: p, irq: irq, guest: guest, period: sim.Second / sim.Time(p.HZ)}
	t.tickEv = sim.NewEventPriority(name+".tick", sim.PriorityDevice, t.tick)
	t.shotEv = sim.NewEventPriority(name+".oneshot", sim.PriorityDevice, t.shot)
	return t, nil
}

// Name returns the device's name.
func (t *Timer) Name() string { return t.name }

// Stats returns the device's counters.
func (t *Timer) Stats() Stats { return t.stats }

// Peek implements memory.Peeker: reading the timer has no side effects,
// so an observer sees what a read would return.
func (t *Timer) Peek(off uint64) (uint64, bool) {
	if off > RegTicks || off%4 != 0 {
		return 0, false
	}
	return t.Read(off, 4), true
}

// Read implements memory.Device.
func (t *Timer) Read(off uint64, size int) uint64 {
	var v uint32
	switch off {
	case RegRTC:
		v = uint32(t.p.Epoch + int64(t.k.Now()/sim.Second))
	case RegCtrl:
		v = t.ctrl
	case RegHZ:
		v = uint32(t.p.HZ)
	case RegOneShot:
		if t.shotEv.Scheduled() {
			left := t.shotEv.When() - t.k.Now()
			v = uint32((left + sim.Microsecond - 1) / sim.Microsecond)
		}
	case RegStatus:
		v = t.status
	case RegTicks:
		v = t.ticks
	default:
		t.guest.Report(t.k.Now(), t.name, "read of undefined register offset 0x%x", off)
	}
	return uint64(v) & (1<<(8*size) - 1)
}

// Write implements memory.Device.
func (t *Timer) Write(off uint64, size int, v uint64) {
	x := uint32(v)
	switch off {
	case RegCtrl:
		was := t.ctrl
		t.ctrl = x & (BitTick | BitOneShot)
		if t.ctrl&BitTick != 0 && was&BitTick == 0 {
			t.ticks = 0
			t.k.Schedule(t.tickEv, t.k.Now()+t.period)
		} else if t.ctrl&BitTick == 0 {
			t.k.Cancel(t.tickEv)
		}
		if t.ctrl&BitOneShot == 0 {
			t.k.Cancel(t.shotEv)
		}
	case RegOneShot:
		if x == 0 {
			t.k.Cancel(t.shotEv)
		} else {
			if t.ctrl&BitOneShot == 0 {
				t.guest.Report(t.k.Now(), t.name, "one-shot armed while ONESHOT_EN is clear: it will not interrupt")
			}
			t.k.Schedule(t.shotEv, t.k.Now()+sim.Time(x)*sim.Microsecond)
		}
	case RegStatus:
		t.status &^= x
	case RegRTC, RegHZ, RegTicks:
		t.guest.Report(t.k.Now(), t.name, "write to read-only register offset 0x%x", off)
	default:
		t.guest.Report(t.k.Now(), t.name, "write to undefined register offset 0x%x", off)
	}
	t.update()
}

func (t *Timer) tick() {
	t.ticks++
	t.stats.Ticks++
	t.status |= BitTick
	t.k.ScheduleAfter(t.tickEv, t.period)
	t.update()
}

func (t *Timer) shot() {
	t.stats.OneShots++
	t.status |= BitOneShot
	t.update()
}

// update drives the interrupt line from STATUS and CTRL.
func (t *Timer) update() {
	if t.irq != nil {
		t.irq.Set(t.status&t.ctrl != 0)
	}
}
