package via_test

import (
	"simkron/cpu"
)

// call is one measured call of a symbol: the host's cycles from its entry
// to its return and their split by layer. Every cycle of the host in that
// span counts — the calling thread's, and the interrupts and deferred work
// that ran meanwhile (the study's "cycles to perform" the call, as SimOS's
// annotations count them) — with the core's idle cycles (waiting for a
// device or the wire) counted as DMA; the layers sum to cycles exactly.
type call struct {
	cycles int64
	idle   int64 // of which the core was idle
	layers map[string]int64
}

// callWatch measures the calls of one symbol on a host, by the thread
// that makes them; it only looks.
type callWatch struct {
	h      *host
	sym    *cpu.Symbol
	open   map[*cpu.Context]cpu.Account
	onCall func(call)
}

func newWatch(h *host, name string) *callWatch {
	s, ok := h.kern.Symbols().Lookup(name)
	if !ok {
		panic("no symbol " + name)
	}
	w := &callWatch{h: h, sym: s, open: map[*cpu.Context]cpu.Account{}}
	c := h.c
	st := c.SymbolTrace(s)
	st.Enter.Connect(func(*cpu.Symbol) {
		if !c.InInterrupt() {
			w.open[c.Current()] = c.AccountAt(c.LocalTime())
		}
	})
	st.Exit.Connect(func(*cpu.Symbol) {
		if c.InInterrupt() {
			return
		}
		start, ok := w.open[c.Current()]
		if !ok {
			return
		}
		delete(w.open, c.Current())
		if w.onCall != nil {
			w.onCall(between(start, c.AccountAt(c.LocalTime())))
		}
	})
	return w
}

// between is the span of a core's counters from start to end.
func between(start, end cpu.Account) call {
	c := call{cycles: end.Cycle - start.Cycle, idle: end.Idle - start.Idle, layers: map[string]int64{}}
	if c.idle != 0 {
		c.layers["DMA"] = c.idle
	}
	for i, l := range end.Layers {
		v := l.Cycles
		if i < len(start.Layers) {
			v -= start.Layers[i].Cycles
		}
		if v == 0 {
			continue
		}
		name := string(l.Layer)
		switch l.Layer {
		case cpu.LayerInherit:
			name = "-"
		case cpu.LayerIDLE:
			name = "DMA" // the idle loop's own cycles: waiting too
			c.idle += v
		}
		c.layers[name] += v
	}
	return c
}
