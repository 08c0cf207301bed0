package cpu_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/cpu"
	"simkron/sim"
)

// The sources an observer of a whole core needs: switches, requests,
// halts and deferred work, each where the package says, and the reading
// of the stacks and handlers in progress (Active, AppendFrames, Layer)
// for an observer that starts mid-run.
func TestObservingSources(t *testing.T) {
	r := newRig(t)
	line, err := r.c.Line(3, true)
	if err != nil {
		t.Fatal(err)
	}
	tab := cpu.NewSymbolTable(0x1000, nil)
	work := tab.Define(cpu.Def{Name: "work", Layer: cpu.LayerUDP, Instructions: 10})
	lib := tab.Define(cpu.Def{Name: "lib", Instructions: 10}) // the caller's layer
	isr := tab.Define(cpu.Def{Name: "isr", Layer: cpu.LayerDEV, Instructions: 10})
	bh := tab.Define(cpu.Def{Name: "bh", Layer: cpu.LayerKERN, Instructions: 10})
	var got []string
	note := func(format string, args ...any) {
		got = append(got, fmt.Sprintf("%d ", r.c.Cycles())+fmt.Sprintf(format, args...))
	}
	var during []string // what the readings say inside the handler and the deferred work
	reading := func(where string) {
		var fs []string
		for _, f := range r.c.Current().AppendFrames(nil) {
			fs = append(fs, f.Symbol.Name+"/"+string(f.Layer))
		}
		during = append(during, fmt.Sprintf("%s: %v %+v layer %q", where, fs, r.c.Active(), r.c.Layer()))
	}
	r.c.SetHandler(3, "nic", func() {
		r.c.Call(isr, func() { r.c.Charge(100); reading("handler") })
	})
	r.c.OnIRQExit = func() { r.c.Call(bh, func() { r.c.Charge(50); reading("deferred") }) }
	r.c.Trace.Switch.Connect(func(x *cpu.Context) { note("switch %s", x.Name()) })
	r.c.Trace.Raise.Connect(func(n int) { // a device's request, at event time
		got = append(got, fmt.Sprintf("%d raise %d", r.k.Now()/cycle, n))
	})
	r.c.Trace.Halt.Connect(func(on bool) { note("halt %v", on) })
	r.c.Trace.Deferred.Connect(func(on bool) { note("deferred %v", on) })
	r.c.Trace.Interrupt.Connect(func(i cpu.Interrupt) { note("interrupt %d %v", i.Line, i.Entry) })
	r.c.Trace.Taken.Connect(func(tk cpu.Taken) {
		note("taken at %d begin %v delay %d (taking %v)", tk.At, tk.Begin, tk.Delay, r.c.Taking())
	})
	x := r.c.NewContext("thread", cpu.KindThread, func(*cpu.Context) {
		r.c.Call(work, func() {
			r.c.Call(lib, func() {
				if r.c.Layer() != cpu.LayerUDP {
					t.Errorf("inside an inheriting call the layer is %q, want the caller's UDP", r.c.Layer())
				}
				r.c.Charge(1000)
				r.c.Sync()
			})
		})
	})
	r.k.Schedule(sim.NewEvent("pulse", line.Pulse), 5*sim.Microsecond)  // during the work
	r.k.Schedule(sim.NewEvent("pulse", line.Pulse), 50*sim.Microsecond) // while halted
	r.c.Start(x)
	r.k.Run()
	want := []string{
		"0 switch thread",
		"500 raise 3",
		"500 taken at 500 begin true delay 0 (taking [500])",
		"500 interrupt 3 true", // at its arrival, the work charged ahead waiting
		"717 deferred true", "804 deferred false",
		"844 interrupt 3 false",
		"844 taken at 500 begin false delay 344 (taking [])", // the work charged past 500 now ends 344 cycles later
		"1718 switch idle",
		"1718 halt true",
		"5000 raise 3",
		"5000 halt false", // woken at the request
		"5000 taken at 5000 begin true delay 0 (taking [5000])",
		"5000 interrupt 3 true",
		"5190 deferred true", "5250 deferred false",
		"5290 interrupt 3 false",
		"5290 taken at 5000 begin false delay 290 (taking [])",
		"5290 halt true",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	wantDuring := []string{
		`handler: [work/UDP lib/UDP isr/DEV] [{Line:3 Base:2 Deferred:-1}] layer "DEV"`,
		`deferred: [work/UDP lib/UDP bh/KERN] [{Line:3 Base:2 Deferred:2}] layer "KERN"`,
		`handler: [isr/DEV] [{Line:3 Base:0 Deferred:-1}] layer "DEV"`,
		`deferred: [bh/KERN] [{Line:3 Base:0 Deferred:0}] layer "KERN"`,
	}
	if d := cmp.Diff(wantDuring, during); d != "" {
		t.Errorf("readings (-want +got):\n%s", d)
	}
	if len(r.c.Active()) != 0 || r.c.Halted() != true {
		t.Errorf("at the end: active %v, halted %v; want none, halted", r.c.Active(), r.c.Halted())
	}
	var names []string
	for _, x := range r.c.Contexts() {
		names = append(names, x.Name())
	}
	if d := cmp.Diff([]string{"idle"}, names); d != "" {
		t.Errorf("contexts not ended (-want +got):\n%s", d)
	}
	if r.c.HandlerName(3) != "nic" || r.c.HandlerName(4) != "" || r.c.HandlerName(99) != "" {
		t.Errorf("handler names: %q %q %q", r.c.HandlerName(3), r.c.HandlerName(4), r.c.HandlerName(99))
	}
}
