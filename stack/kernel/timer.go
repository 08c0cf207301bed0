package kernel

import (
	"fmt"

	"simkron/sim"
)

// Timer is a kernel timer: Func runs in the timer softirq once the tick
// count reaches its expiry.
type Timer struct {
	Name    string
	Func    func()
	expires uint64
	slot    int // -1 when not pending
	pending bool
}

// Pending reports whether the timer is armed.
func (t *Timer) Pending() bool { return t.pending }

// wheel is a hashed timing wheel (Varghese & Lauck, "Hashed and
// hierarchical timing wheels", SOSP 1987, scheme 6): a timer due at tick e
// lives in slot e mod N; each tick visits one slot and fires the timers in
// it whose expiry has come, leaving those due in a later revolution.
//
//	slot:  0    1    2   ...  N-1
//	       │    │    │         │
//	      [t]  [ ]  [t,t]     [t]   each slot: timers in insertion order
type wheel struct {
	slots [][]*Timer
	count int
}

// init makes n slots, each with room for a few timers so that arming
// timers allocates nothing in a steady state.
func (w *wheel) init(n int) {
	w.slots = make([][]*Timer, n)
	room := make([]*Timer, 4*n)
	for i := range w.slots {
		w.slots[i] = room[4*i : 4*i : 4*i+4]
	}
}

func (w *wheel) add(t *Timer) {
	i := int(t.expires % uint64(len(w.slots)))
	t.slot = i
	t.pending = true
	w.slots[i] = append(w.slots[i], t)
	w.count++
}

func (w *wheel) del(t *Timer) {
	if !t.pending {
		return
	}
	s := w.slots[t.slot]
	for i, x := range s {
		if x == t {
			copy(s[i:], s[i+1:])
			s[len(s)-1] = nil
			w.slots[t.slot] = s[:len(s)-1]
			break
		}
	}
	t.pending = false
	t.slot = -1
	w.count--
}

// due removes and returns, in insertion order, the timers of now's slot
// that have expired.
func (w *wheel) due(now uint64, out []*Timer) []*Timer {
	i := int(now % uint64(len(w.slots)))
	s := w.slots[i]
	keep := s[:0]
	for _, t := range s {
		if t.expires <= now {
			t.pending = false
			t.slot = -1
			w.count--
			out = append(out, t)
		} else {
			keep = append(keep, t)
		}
	}
	clear(s[len(keep):])
	w.slots[i] = keep
	return out
}

// AddTimer arms t to fire after ticks ticks (at least one). An armed timer
// is moved.
func (k *Kernel) AddTimer(t *Timer, ticks uint64) {
	if t.Func == nil {
		panic(fmt.Sprintf("kernel: timer %s has no function", t.Name))
	}
	k.wheel.del(t)
	t.expires = k.jiffies + max(ticks, 1)
	k.wheel.add(t)
}

// DelTimer disarms t; disarming an idle timer does nothing.
func (k *Kernel) DelTimer(t *Timer) { k.wheel.del(t) }

// SetHZ tells the kernel the tick rate of its clock interrupt.
func (k *Kernel) SetHZ(hz int) { k.hz = hz }

// HZ returns the tick rate.
func (k *Kernel) HZ() int { return k.hz }

// TicksFor converts a duration to ticks, rounding up.
func (k *Kernel) TicksFor(d sim.Time) uint64 {
	if k.hz <= 0 {
		panic(fmt.Sprintf("kernel: %s: timers used without a clock interrupt (no timer device)", k.name))
	}
	period := sim.Second / sim.Time(k.hz)
	return uint64((d + period - 1) / period)
}

// Tick is the clock-interrupt work: the timer device's handler calls it on
// every tick.
func (k *Kernel) Tick() {
	c := k.cpu
	c.Enter(k.sym.doTimer)
	k.jiffies++
	k.stats.Ticks++
	if k.wheel.count > 0 {
		k.RaiseSoftirq(SoftirqTimer)
	}
	c.Exit(k.sym.doTimer)
}

// runTimers is the timer softirq. It visits every slot since its last
// run, so a softirq delayed past a tick loses nothing.
func (k *Kernel) runTimers() {
	c := k.cpu
	var buf [16]*Timer
	for k.timerJiffies < k.jiffies {
		k.timerJiffies++
		for _, t := range k.wheel.due(k.timerJiffies, buf[:0]) {
			k.stats.TimersFired++
			c.Call(k.sym.timerRun, t.Func)
		}
	}
}
