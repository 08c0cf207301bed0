package sim

import "time"

// Pacing simulated time to the wall clock.
//
// A simulation that exchanges frames with real hosts (ethersim's bridge to
// a Linux TAP device) must not run ahead of the wall clock: a real host
// would see replies before it could have had them. A Pacer drives a
// kernel so that no event fires before its simulated time has passed on
// the wall clock, counted from Start, as ns-3's real-time scheduler does
// in its best-effort mode. It is the one part of simkron besides progress
// reporting that reads the host's clock, and a run without a bridge never
// makes one: the pacer drives the kernel from outside, through
// RunEventsUntil and AdvanceTo, and adds nothing to the kernel's own loop.
//
// The policy:
//
//   - An event fires no earlier than its instant on the wall clock. While
//     nothing is due the pacer sleeps; when the simulation cannot keep up,
//     events fire late, as fast as the host runs them, until it has caught
//     up. How far it trailed is measured: the largest lag (the wall
//     clock's time less the time of the oldest event due), and the
//     wall-clock time spent more than LagTolerance behind.
//   - Arrivals from outside (Post, from any goroutine) cross into the
//     simulation only on the kernel's goroutine, between events. One that
//     comes while the simulation keeps up is stamped with its wall-clock
//     arrival instant exactly: the events due before it run first, then
//     the clock advances to it. One that comes while the simulation trails
//     by more than LagTolerance is stamped with the simulated time then:
//     earlier than its arrival by the lag, never later, so that the lag is
//     not added to every exchange with the real hosts. Those are counted
//     (BehindArrivals).
//   - The inbox holds a bounded number of arrivals: Post refuses more and
//     the caller counts the loss, so that a simulation far behind never
//     holds an unbounded backlog.
//
// Simplification: a simulated core that charges its work lazily may move
// the clock past the wall clock inside one event (AdvanceTo); the next
// event still waits for its own instant.
//
// Go's timers wake about a millisecond late for waits shorter than that
// on Linux, so the pacer sleeps on a timer (which an arrival cuts short)
// until timerMargin before the next event and then in slices of at most
// sliceMax, looking for arrivals between slices: on an idle host an event
// fires about 0.1 ms after its instant.
const (
	// LagTolerance is how far the simulation may trail the wall clock
	// before it counts as behind: about the granularity of the host's
	// sleeps, well under a 10 Mbit/s frame's 1.2 ms.
	LagTolerance = Millisecond

	timerMargin = 1500 * time.Microsecond
	sliceMax    = 50 * time.Microsecond
)

// Arrival is something from outside the simulation on its way in (a
// frame read from a TAP device).
type Arrival struct {
	// At is when it arrived, by the wall clock.
	At time.Time
	// Deliver runs on the kernel's goroutine with the clock at the
	// arrival's stamp; it may schedule events.
	Deliver func()
}

// PaceStats are a pacer's counters.
type PaceStats struct {
	// MaxLag is the most the simulation trailed the wall clock: the wall
	// clock's time less the time of the oldest event due.
	MaxLag Time
	// Behind is the wall-clock time during which the simulation trailed
	// by more than LagTolerance.
	Behind Time
	// Delivered counts the arrivals delivered; BehindArrivals those that
	// came while the simulation was more than LagTolerance behind, stamped
	// at the simulated time then.
	Delivered      uint64
	BehindArrivals uint64
	// MaxInboxWait is the longest wall-clock time an arrival waited
	// between Post and its delivery.
	MaxInboxWait Time
	// Waits counts the times the pacer slept for the wall clock.
	Waits uint64
}

// Pacer paces a kernel to the wall clock (see the policy above). Its
// methods other than Post run on the kernel's goroutine.
type Pacer struct {
	k       *Scheduler
	inbox   chan Arrival
	pending []Arrival
	stop    <-chan struct{}
	timer   *time.Timer

	started bool
	origin  time.Time // the wall-clock instant of simulated time base
	base    Time

	lastAt time.Time // when the lag was last measured
	behind bool      // whether it was more than LagTolerance then
	stats  PaceStats
}

// NewPacer returns a pacer for k whose inbox holds up to inbox arrivals.
func NewPacer(k *Scheduler, inbox int) *Pacer {
	return &Pacer{k: k, inbox: make(chan Arrival, max(inbox, 1))}
}

// Post hands an arrival to the simulation. It is safe from any goroutine
// and never blocks: it returns false, and the arrival is not taken, when
// the inbox is full.
func (p *Pacer) Post(a Arrival) bool {
	select {
	case p.inbox <- a:
		return true
	default:
		return false
	}
}

// SetStop makes Step return false, and any wait end, once stop is closed.
func (p *Pacer) SetStop(stop <-chan struct{}) { p.stop = stop }

// Start ties the kernel's current time to the wall clock's now. Step
// calls it the first time if it was not called.
func (p *Pacer) Start() {
	p.started = true
	p.origin = time.Now()
	p.base = p.k.Now()
	p.lastAt = p.origin
}

// Stats returns the counters so far.
func (p *Pacer) Stats() PaceStats { return p.stats }

// simAt is the simulated time the wall clock stands at at w.
func (p *Pacer) simAt(w time.Time) Time {
	return p.base + Time(w.Sub(p.origin).Nanoseconds())*Nanosecond
}

// until is how long the wall clock has to go until simulated time t.
func (p *Pacer) until(t Time) time.Duration {
	if t-p.base >= Time(24*time.Hour)*Nanosecond {
		return 24 * time.Hour
	}
	return time.Until(p.origin.Add(time.Duration((t - p.base) / Nanosecond)))
}

func (p *Pacer) stopped() bool {
	select {
	case <-p.stop:
		return true
	default:
		return false
	}
}

// Step does one stride of a paced run towards limit: it delivers what has
// arrived, then fires the events the wall clock has reached (at most
// budget of them, none after limit), or, when none is due, waits until
// one is or something arrives. It returns false when nothing is left to
// do before limit (the wall clock has passed it and nothing is due) or
// the stop channel is closed. A Stop of the kernel ends the stride at
// once, as it ends a Run* call.
func (p *Pacer) Step(limit Time, budget uint64) bool {
	if !p.started {
		p.Start()
	}
	if p.stopped() {
		return false
	}
	k := p.k
	p.collect()
	if !p.deliver(limit) {
		return true
	}
	wall := time.Now()
	now := p.simAt(wall)
	due := min(now, limit)
	if k.Next() <= due {
		k.RunEventsUntil(budget, due)
		p.measure()
		return true
	}
	p.measure()
	if now >= limit {
		return false
	}
	p.wait(min(k.Next(), limit))
	return true
}

// collect moves what the inbox holds to pending, at most its capacity at
// a time.
func (p *Pacer) collect() {
	for range cap(p.inbox) {
		select {
		case a := <-p.inbox:
			p.pending = append(p.pending, a)
		default:
			return
		}
	}
}

// deliver hands the pending arrivals to the simulation, each at its
// stamp (see the policy). It returns false when the kernel was stopped on
// the way; what is left stays pending.
func (p *Pacer) deliver(limit Time) bool {
	k := p.k
	for i, a := range p.pending {
		if at := min(p.simAt(a.At), limit); at > k.Now() {
			// Events due a little before it run first (the simulation
			// keeps up); far before it, the simulation is behind.
			if n := k.Next(); n <= at && at-n <= LagTolerance {
				k.RunEventsUntil(^uint64(0), at)
				if k.stopped {
					p.pending = append(p.pending[:0], p.pending[i:]...)
					return false
				}
			}
			// A core that charged its work lazily may have moved the
			// clock past it: then it arrives now.
			if at > k.Now() && !k.AdvanceTo(at) {
				p.stats.BehindArrivals++
			}
		}
		if w := Time(time.Since(a.At).Nanoseconds()) * Nanosecond; w > p.stats.MaxInboxWait {
			p.stats.MaxInboxWait = w
		}
		p.stats.Delivered++
		a.Deliver()
		p.pending[i] = Arrival{}
	}
	p.pending = p.pending[:0]
	return true
}

// measure takes the lag now.
func (p *Pacer) measure() {
	wall := time.Now()
	var lag Time
	if now, n := p.simAt(wall), p.k.Next(); n < now {
		lag = now - n
	}
	p.stats.MaxLag = max(p.stats.MaxLag, lag)
	if p.behind {
		p.stats.Behind += Time(wall.Sub(p.lastAt).Nanoseconds()) * Nanosecond
	}
	p.behind = lag > LagTolerance
	p.lastAt = wall
}

// wait sleeps until the wall clock reaches simulated time target, an
// arrival comes or the stop channel is closed.
func (p *Pacer) wait(target Time) {
	p.stats.Waits++
	if p.timer == nil {
		p.timer = time.NewTimer(time.Hour)
		p.timer.Stop()
	}
	for {
		d := p.until(target)
		switch {
		case d <= 0:
			return
		case d > 2*timerMargin:
			p.timer.Reset(d - timerMargin)
			select {
			case a := <-p.inbox:
				p.timer.Stop()
				p.pending = append(p.pending, a)
				return
			case <-p.stop:
				p.timer.Stop()
				return
			case <-p.timer.C:
			}
		default:
			select {
			case a := <-p.inbox:
				p.pending = append(p.pending, a)
				return
			case <-p.stop:
				return
			default:
			}
			shortSleep(min(d, sliceMax))
		}
	}
}
