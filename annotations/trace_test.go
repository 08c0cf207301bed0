package annotations_test

import (
	"fmt"
	"strings"
	"testing"

	"simkron/annotations"
	"simkron/sim"
)

// traceSink records what scripts emit.
type traceSink struct{ got []string }

func (s *traceSink) Instant(host, name string, at sim.Time) {
	s.got = append(s.got, fmt.Sprintf("instant %s %s %d", host, name, at))
}

func (s *traceSink) Counter(host, name string, v float64, at sim.Time) {
	s.got = append(s.got, fmt.Sprintf("counter %s %s %g %d", host, name, v, at))
}

// `trace instant` and `trace counter` put events on the timeline at the
// body's host and time; Tcl's own trace subcommands still work beside
// them; without a timeline both do nothing.
func TestTraceCommands(t *testing.T) {
	const text = `
set sends 0
trace add variable sends write {apply {{args} { global seen; incr seen }}}
set seen 0
annotation set pc udp_sendmsg:START {
	global sends
	incr sends
	trace instant "udp send"
	trace counter sends $sends
}
annotation set sim exit { global seen; puts "writes seen: $seen" }
`
	for _, withSink := range []bool{true, false} {
		exp := loadUDP(t, []int{64}, 2)
		sink := &traceSink{}
		out := simulateWith(t, exp, script("t.tcl", text), func(e *annotations.Engine) {
			if withSink {
				e.SetTrace(sink)
			}
		})
		if out.finish != nil {
			t.Fatal(out.finish)
		}
		if !strings.Contains(out.e.Output(), "writes seen: 6") {
			t.Errorf("Tcl's trace add variable: output %q, want 6 writes seen (3 round trips, 2 hosts)", out.e.Output())
		}
		if !withSink {
			if len(sink.got) != 0 {
				t.Errorf("without a timeline: %v", sink.got)
			}
			continue
		}
		if len(sink.got) != 12 {
			t.Fatalf("emitted %d events, want 12 (an instant and a counter per send): %v", len(sink.got), sink.got)
		}
		for i, g := range sink.got {
			want := "instant"
			if i%2 == 1 {
				want = "counter"
			}
			if !strings.HasPrefix(g, want+" ") {
				t.Errorf("event %d: %q, want a %s", i, g, want)
			}
		}
		if !strings.Contains(sink.got[1], " sends 1 ") || !strings.Contains(sink.got[11], " sends 6 ") {
			t.Errorf("counter values: %v", sink.got)
		}
	}
}

// Bad uses are script errors naming the line; outside a body the
// commands say where they may be used.
func TestTraceCommandErrors(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`trace instant`, `wrong # args: should be "trace instant NAME"`},
		{`trace counter x`, `wrong # args: should be "trace counter NAME VALUE"`},
		{`trace counter x NaN`, `trace counter x: "NaN" is not a finite number`},
		{`trace counter x 1e999`, `trace counter x: "1e999" is not a finite number`},
		{`trace instant ""`, `trace instant: a name of 1 to 256 bytes, not 0`},
		{`trace instant [string repeat x 300]`, `trace instant: a name of 1 to 256 bytes, not 300`},
	} {
		exp := loadUDP(t, []int{64}, 1)
		r := simulateWith(t, exp, script("bad.tcl", "annotation set pc udp_sendmsg:START {\n"+c.body+"\n}\n"), nil)
		if r.e.Err() == nil || !strings.Contains(r.e.Err().Error(), c.want) || !strings.Contains(r.e.Err().Error(), "bad.tcl:2") {
			t.Errorf("%s: error %v, want bad.tcl:2 and %q", c.body, r.e.Err(), c.want)
		}
	}
	_, err := newEngine(t, script("load.tcl", "trace instant x\n"), "")
	if err == nil || !strings.Contains(err.Error(), "trace instant: only inside an annotation body") {
		t.Errorf("at load: %v", err)
	}
}
