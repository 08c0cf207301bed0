package kernel

import "simkron/cpu"

// Softirq numbers, in the order pending ones run (lowest first).
const (
	SoftirqTimer = 0
	SoftirqNetTx = 1
	SoftirqNetRx = 2
)

type softirq struct {
	sym *cpu.Symbol
	fn  func()
}

// OpenSoftirq installs the deferred-work handler for number n.
func (k *Kernel) OpenSoftirq(n int, sym *cpu.Symbol, fn func()) {
	k.softirqs[n] = softirq{sym: sym, fn: fn}
}

// RaiseSoftirq marks deferred work n pending; it runs on the way out of
// the outermost interrupt, or at the next RunSoftirqs.
func (k *Kernel) RaiseSoftirq(n int) { k.softPending |= 1 << n }

// maxSoftirqRounds bounds how often pending work is rescanned in one run,
// as Linux's do_softirq does (MAX_SOFTIRQ_RESTART = 10).
const maxSoftirqRounds = 10

// runSoftirqs is the core's interrupt-exit hook. Nested interrupts during
// a run find it busy and leave their work to the running loop.
func (k *Kernel) runSoftirqs() {
	if k.inSoftirq || k.softPending == 0 {
		return
	}
	k.inSoftirq = true
	c := k.cpu
	c.Enter(k.sym.softirq)
	for round := 0; round < maxSoftirqRounds && k.softPending != 0; round++ {
		pending := k.softPending
		k.softPending = 0
		for n := 0; pending != 0; n++ {
			if pending&1 != 0 && k.softirqs[n].fn != nil {
				k.stats.SoftirqRuns++
				s := k.softirqs[n]
				if s.sym != nil {
					c.Call(s.sym, s.fn)
				} else {
					s.fn()
				}
			}
			pending >>= 1
		}
	}
	c.Exit(k.sym.softirq)
	k.inSoftirq = false
}

// RunSoftirqs runs pending deferred work now; code that raises softirqs
// outside an interrupt (a send path) calls it, as local_bh_enable does.
func (k *Kernel) RunSoftirqs() { k.runSoftirqs() }
