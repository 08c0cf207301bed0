package timeline

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"simkron/sim"
	"simkron/workload"
)

// Trace is a trace this package wrote, read back (Read): what each host
// ran when, the frames between them, and the workload's measurements.
type Trace struct {
	Window string
	Hosts  []*HostTrace
	// Frames are the frames on the networks, in the order they arrived.
	Frames []Frame
}

// HostTrace is one host's part of a trace.
type HostTrace struct {
	Name    string
	pid     int
	ClockHz int64
	// Atoms are the stretches of the host's time in which one thing ran,
	// in order, from the window's opening to its closing (see atoms).
	Atoms []Atom
	// DMA are the bursts of the host's cards' DMA engines, in ps.
	DMA []Span
	// Measures are the workload's measurements at the host.
	Measures []Measure
	// Open and Close are the core's counters when the window opened and
	// closed.
	Open, Close Reading

	threads map[int]*thread
}

// Atom is a stretch of a host's time, [From, To) in picoseconds, in which
// the core ran one call (or was halted, or ran no call) on one track.
type Atom struct {
	From, To int64
	// Track is the thread it ran on: a context's ("udpecho", "idle"), an
	// interrupt line's ("irq 3 (nic0)") or the deferred work's
	// ("softirq").
	Track string
	// Interrupt says that Track is an interrupt handler's or the deferred
	// work's.
	Interrupt bool
	// Call is the innermost call's name ("" when none ran), Layer the
	// layer its cycles count in ("-" for none, "halted" when the core
	// was halted).
	Call, Layer string
}

// Span is a stretch of time in picoseconds.
type Span struct{ From, To int64 }

// Frame is a frame on a network: from its sender's hand-over to its
// arrival at a card.
type Frame struct {
	Name     string
	Network  string
	From, To int64
	Sender   string // the sending host
	Receiver string // the host it arrived at
	Bytes    int
}

// Measure is a measurement the workload made at a host, as the trace
// holds it.
type Measure struct {
	Name      string
	Message   string
	Direction string
	Layers    map[string]float64
	Pieces    []workload.Piece
	IdleAsDMA bool
}

// Reading is a host core's counters at an edge of the window.
type Reading struct {
	Cycle, Idle int64
	Layers      map[string]int64
}

type thread struct {
	name   string
	slices []slice
}

type slice struct {
	name, cat string
	from, to  int64
}

// rawEvent is one event as the file holds it.
type rawEvent struct {
	Ph   string          `json:"ph"`
	Name string          `json:"name"`
	Cat  string          `json:"cat"`
	PID  int             `json:"pid"`
	TID  int             `json:"tid"`
	TS   json.Number     `json:"ts"`
	Dur  json.Number     `json:"dur"`
	ID   uint64          `json:"id"`
	Args json.RawMessage `json:"args"`
}

// maxClockHz bounds a host's clock rate in a trace read back: far above
// any core simkron models (config's bound is lower still).
const maxClockHz = 100_000_000_000

// maxEvents bounds the events Read takes: a trace of a window, not of a
// long run.
const maxEvents = 5_000_000

// Read reads a trace written by this package (a file simkron run --trace
// wrote): its events, then each host's atoms. A file that is not one is
// an error that says what is wrong.
func Read(data []byte) (*Trace, error) {
	var top struct {
		OtherData struct {
			Generator string `json:"generator"`
			Window    string `json:"window"`
		} `json:"otherData"`
		TraceEvents []rawEvent `json:"traceEvents"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil {
		return nil, fmt.Errorf("not a trace: %v", err)
	}
	if top.OtherData.Generator != "simkron" {
		return nil, errors.New(`not a trace simkron wrote (its otherData.generator is not "simkron")`)
	}
	if len(top.TraceEvents) > maxEvents {
		return nil, fmt.Errorf("%d events, more than the %d a trace read back may hold", len(top.TraceEvents), maxEvents)
	}
	t := &Trace{Window: top.OtherData.Window}
	procs := map[int]string{}
	hosts := map[int]*HostTrace{}
	type open struct {
		name, cat string
		pid       int
		from      int64
		args      json.RawMessage
	}
	async := map[uint64]open{}
	for i := range top.TraceEvents {
		e := &top.TraceEvents[i]
		if e.Ph == "M" {
			var a struct{ Name string }
			if err := json.Unmarshal(e.Args, &a); err != nil {
				return nil, fmt.Errorf("event %d: args: %v", i, err)
			}
			switch e.Name {
			case "process_name":
				procs[e.PID] = a.Name
			case "thread_name":
				h := hosts[e.PID]
				if h == nil {
					h = &HostTrace{Name: procs[e.PID], pid: e.PID, threads: map[int]*thread{}}
					hosts[e.PID] = h
					t.Hosts = append(t.Hosts, h)
				}
				h.threads[e.TID] = &thread{name: a.Name}
			}
			continue
		}
		ts, err := parsePS(e.TS)
		if err != nil {
			return nil, fmt.Errorf("event %d (%s): ts: %v", i, e.Name, err)
		}
		switch e.Ph {
		case "X":
			dur, err := parsePS(e.Dur)
			if err != nil || dur < 0 {
				return nil, fmt.Errorf("event %d (%s): dur %q", i, e.Name, e.Dur)
			}
			h := hosts[e.PID]
			if h == nil || h.threads[e.TID] == nil {
				return nil, fmt.Errorf("event %d (%s): a slice on thread %d of process %d, which is not named", i, e.Name, e.TID, e.PID)
			}
			th := h.threads[e.TID]
			th.slices = append(th.slices, slice{name: e.Name, cat: e.Cat, from: ts, to: ts + dur})
		case "b":
			if _, dup := async[e.ID]; dup {
				return nil, fmt.Errorf("event %d (%s): async id %d begun twice", i, e.Name, e.ID)
			}
			async[e.ID] = open{name: e.Name, cat: e.Cat, pid: e.PID, from: ts, args: e.Args}
		case "e":
			b, ok := async[e.ID]
			if !ok || b.name != e.Name {
				return nil, fmt.Errorf("event %d (%s): the end of async id %d, which was not begun", i, e.Name, e.ID)
			}
			delete(async, e.ID)
			if err := t.async(hosts, procs, b.cat, b.name, b.pid, b.from, ts, b.args); err != nil {
				return nil, fmt.Errorf("event %d (%s): %v", i, e.Name, err)
			}
		case "i":
			if e.Name == "window opens" || e.Name == "window closes" {
				h := hosts[e.PID]
				if h == nil {
					return nil, fmt.Errorf("event %d (%s): in process %d, which has no thread", i, e.Name, e.PID)
				}
				var r struct {
					Cycle, Idle int64
					Layers      map[string]int64
					ClockHz     int64 `json:"clock_hz"`
				}
				if err := json.Unmarshal(e.Args, &r); err != nil {
					return nil, fmt.Errorf("event %d (%s): args: %v", i, e.Name, err)
				}
				h.ClockHz = r.ClockHz
				rd := Reading{Cycle: r.Cycle, Idle: r.Idle, Layers: r.Layers}
				if e.Name == "window opens" {
					h.Open = rd
				} else {
					h.Close = rd
				}
			}
		}
	}
	if len(async) > 0 {
		return nil, fmt.Errorf("%d async slices never end", len(async))
	}
	for _, h := range t.Hosts {
		if h.ClockHz <= 0 || h.ClockHz > maxClockHz {
			return nil, fmt.Errorf("host %s: clock rate %d Hz (its window readings missing or not simkron's)", h.Name, h.ClockHz)
		}
		if err := h.atoms(); err != nil {
			return nil, fmt.Errorf("host %s: %v", h.Name, err)
		}
	}
	return t, nil
}

// async files an async slice that has ended.
func (t *Trace) async(hosts map[int]*HostTrace, procs map[int]string, cat, name string, pid int, from, to int64, args json.RawMessage) error {
	switch cat {
	case "dma":
		if h := hosts[pid]; h != nil {
			h.DMA = append(h.DMA, Span{from, to})
		}
	case "wire":
		f := Frame{Name: name, Network: procs[pid], From: from, To: to}
		// "mipsA.nic0 → mipsB.nic0 1066B"
		if a, b, ok := strings.Cut(name, " → "); ok {
			f.Sender, _, _ = strings.Cut(a, ".")
			f.Receiver, _, _ = strings.Cut(b, ".")
		}
		var a struct{ Bytes int }
		if len(args) > 0 {
			if err := json.Unmarshal(args, &a); err != nil {
				return fmt.Errorf("args: %v", err)
			}
		}
		f.Bytes = a.Bytes
		t.Frames = append(t.Frames, f)
	case "measure":
		h := hosts[pid]
		if h == nil {
			return fmt.Errorf("a measurement in process %d, which has no thread", pid)
		}
		var a struct {
			Message, Direction string
			Layers             map[string]float64
			Pieces             []struct {
				From, To int64
				Count    string
				Context  string
			}
			IdleAsDMA bool `json:"idle_as_dma"`
		}
		if err := json.Unmarshal(args, &a); err != nil {
			return fmt.Errorf("args: %v", err)
		}
		m := Measure{Name: name, Message: a.Message, Direction: a.Direction, Layers: a.Layers, IdleAsDMA: a.IdleAsDMA}
		for _, p := range a.Pieces {
			c, ok := workload.ParseCount(p.Count)
			if !ok {
				return fmt.Errorf("a piece counts %q", p.Count)
			}
			m.Pieces = append(m.Pieces, workload.Piece{From: p.From, To: p.To, Count: c, Context: p.Context})
		}
		h.Measures = append(h.Measures, m)
	}
	return nil
}

// parsePS reads microseconds as this package writes them (digits, a
// point and up to six decimals) as picoseconds.
func parsePS(n json.Number) (int64, error) {
	s := string(n)
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || strings.TrimLeft(whole, "0123456789") != "" || len(frac) > 6 || strings.TrimLeft(frac, "0123456789") != "" || len(whole) > 12 {
		return 0, fmt.Errorf("%q is not a time as simkron writes it (microseconds, up to six decimals)", s)
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, err
	}
	f := int64(0)
	if frac != "" {
		f, _ = strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 64)
	}
	return w*1e6 + f, nil
}

// atoms works out the host's atoms: the overview thread (the one with
// the "cpu" slices) says which track ran at each moment, that track's
// innermost slice what it ran.
func (h *HostTrace) atoms() error {
	var overview *thread
	byName := map[string]*thread{}
	for _, tid := range slices.Sorted(maps.Keys(h.threads)) {
		th := h.threads[tid]
		if len(th.slices) > 0 && th.slices[0].cat == catCPU {
			overview = th
			continue
		}
		byName[th.name] = th
	}
	if overview == nil {
		return nil // nothing ran in the window
	}
	flat := map[string][]flatSeg{}
	cursor := map[string]int{}
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		th := byName[name]
		segs, err := flatten(th.slices)
		if err != nil {
			return fmt.Errorf("thread %s: %v", name, err)
		}
		flat[name] = segs
	}
	over, err := flatten(overview.slices)
	if err != nil {
		return fmt.Errorf("thread %s: %v", overview.name, err)
	}
	for _, o := range over {
		if o.s == nil {
			continue // nothing known to run: outside the window
		}
		track := o.s.name
		intr := strings.HasPrefix(track, "irq ") || track == softirqName
		segs := flat[track]
		i := cursor[track]
		for i < len(segs) && segs[i].to <= o.from {
			i++
		}
		at := o.from
		for j := i; at < o.to; j++ {
			a := Atom{From: at, Track: track, Interrupt: intr, Layer: catNone}
			if j >= len(segs) || segs[j].from >= o.to {
				a.To = o.to
			} else if segs[j].from > at {
				a.To = segs[j].from
				j--
			} else {
				a.To = min(segs[j].to, o.to)
				if s := segs[j].s; s != nil {
					a.Call, a.Layer = s.name, s.cat
				}
			}
			if a.To > a.From {
				h.Atoms = append(h.Atoms, a)
			}
			at = a.To
		}
		cursor[track] = i
	}
	return nil
}

// flatSeg is a stretch in which one slice (or none) is innermost.
type flatSeg struct {
	from, to int64
	s        *slice
}

// flatten returns the stretches of a thread's nested slices, each with
// its innermost slice, gaps with none. Slices that overlap without
// nesting are an error.
func flatten(ss []slice) ([]flatSeg, error) {
	order := slices.Clone(ss)
	slices.SortStableFunc(order, func(a, b slice) int {
		if a.from != b.from {
			return cmp.Compare(a.from, b.from)
		}
		return cmp.Compare(b.to, a.to) // the longer encloses
	})
	var out []flatSeg
	var stack []*slice
	cur := int64(math.MinInt64)
	emit := func(to int64) {
		var s *slice
		if len(stack) > 0 {
			s = stack[len(stack)-1]
		}
		if to > cur && cur != math.MinInt64 {
			out = append(out, flatSeg{cur, to, s})
		}
		cur = to
	}
	for i := range order {
		s := &order[i]
		for len(stack) > 0 && stack[len(stack)-1].to <= s.from {
			emit(stack[len(stack)-1].to)
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 && s.to > stack[len(stack)-1].to {
			top := stack[len(stack)-1]
			return nil, fmt.Errorf("%s [%d, %d] and %s [%d, %d] overlap without nesting", top.name, top.from, top.to, s.name, s.from, s.to)
		}
		emit(s.from)
		stack = append(stack, s)
	}
	for len(stack) > 0 {
		emit(stack[len(stack)-1].to)
		stack = stack[:len(stack)-1]
	}
	return out, nil
}

// cycle is the core's cycle at time ps: the inverse of its clock's
// Time.
func (h *HostTrace) cycle(ps int64) int64 {
	return sim.NewClock(sim.Frequency(h.ClockHz)).Cycle(sim.Time(ps))
}
