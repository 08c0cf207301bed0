package timeline

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"simkron/sim"
	"simkron/workload"
)

// Window limits a trace to a part of the run: a span of simulated time,
// or the round trip of one measured message. The zero Window is the whole
// run.
type Window struct {
	// From and To are a span of simulated time [From, To); To is 0 for a
	// message window and for the whole run.
	From, To sim.Time
	// Message, when set, is the measured message whose round trip the
	// window holds: from its client's send to the last of its
	// measurements.
	Message *workload.MessageID
}

// ParseWindow reads a window as --trace-window gives it: "FROM:TO", two
// durations ("1ms:2ms", "1.5ms:1.6ms"; FROM before TO), or
// "message=PROTOCOL:SIZE:N", the Nth measured message (from 1) of SIZE
// bytes over PROTOCOL ("message=udp:1024:3").
func ParseWindow(s string) (Window, error) {
	if spec, ok := strings.CutPrefix(s, "message="); ok {
		parts := strings.Split(spec, ":")
		if len(parts) != 3 || parts[0] == "" {
			return Window{}, fmt.Errorf("%q: want message=PROTOCOL:SIZE:N, such as message=udp:1024:3", s)
		}
		size, err := strconv.Atoi(parts[1])
		if err != nil || size <= 0 {
			return Window{}, fmt.Errorf("%q: the size %q is not a positive number of bytes", s, parts[1])
		}
		n, err := strconv.Atoi(parts[2])
		if err != nil || n <= 0 {
			return Window{}, fmt.Errorf("%q: N %q is not a positive number (the first measured message is 1)", s, parts[2])
		}
		return Window{Message: &workload.MessageID{Protocol: strings.ToLower(parts[0]), Size: size, N: n}}, nil
	}
	from, to, ok := strings.Cut(s, ":")
	if !ok {
		return Window{}, fmt.Errorf("%q: want FROM:TO (two durations, such as 1ms:2ms) or message=PROTOCOL:SIZE:N", s)
	}
	f, err := sim.ParseTime(from)
	if err != nil {
		return Window{}, fmt.Errorf("%q: FROM: %v", s, err)
	}
	t, err := sim.ParseTime(to)
	if err != nil {
		return Window{}, fmt.Errorf("%q: TO: %v", s, err)
	}
	if t <= f {
		return Window{}, fmt.Errorf("%q: TO (%v) is not after FROM (%v)", s, t, f)
	}
	return Window{From: f, To: t}, nil
}

// String is the window as ParseWindow reads it; "" for the whole run.
func (w Window) String() string {
	switch {
	case w.Message != nil:
		return "message=" + w.Message.String()
	case w.To > 0:
		return w.From.String() + ":" + w.To.String()
	}
	return ""
}

// Check finds what makes the window match nothing before the run: a span
// that begins at or after the run's stop time, a message the workload
// does not measure (kinds lists what it measures; nil: a workload that
// measures no messages).
func (w Window) Check(stopAt sim.Time, kinds []workload.MessageKind) error {
	if w.Message == nil {
		if w.To > 0 && w.From >= stopAt {
			return fmt.Errorf("the window begins at or after the run's stop time (stop_at %v): nothing would be traced", stopAt)
		}
		return nil
	}
	m := *w.Message
	if kinds == nil {
		return fmt.Errorf("the workload measures no messages one by one (a window of time, FROM:TO, works for any)")
	}
	var protocols, sizes []string
	for _, k := range kinds {
		if !slices.Contains(protocols, k.Protocol) {
			protocols = append(protocols, k.Protocol)
		}
		if k.Protocol != m.Protocol {
			continue
		}
		sizes = append(sizes, strconv.Itoa(k.Size))
		if k.Size == m.Size {
			if m.N > k.Count {
				return fmt.Errorf("the workload measures %d messages of %d bytes over %s, not %d", k.Count, k.Size, k.Protocol, m.N)
			}
			return nil
		}
	}
	if sizes == nil {
		return fmt.Errorf("the workload measures no %s messages (its protocols: %s)", m.Protocol, strings.Join(protocols, ", "))
	}
	return fmt.Errorf("the workload measures no %s messages of %d bytes (its sizes: %s)", m.Protocol, m.Size, strings.Join(sizes, ", "))
}
