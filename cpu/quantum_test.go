package cpu_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
)

// clockReg is a register that records the event clock at every access.
type clockReg struct {
	k    *sim.Scheduler
	seen []sim.Time
}

func (r *clockReg) Name() string                     { return "clock" }
func (r *clockReg) Read(off uint64, size int) uint64 { r.seen = append(r.seen, r.k.Now()); return 0 }
func (r *clockReg) Write(off uint64, size int, v uint64) {
	r.seen = append(r.seen, r.k.Now())
}

// With a sync quantum, a device access with an event due before the
// core's time is made at the event clock's time while the core is less
// than the quantum ahead, the event firing after it; an access with
// nothing due, or one the quantum ahead or more, catches up as without a
// quantum. Every kind of access (In, Out, InString, OutString) follows the
// rule, and the core's cycles are the same either way.
func TestSyncQuantum(t *testing.T) {
	const base = 0x100000
	type want struct {
		Seen         []sim.Time // the device's clock at each access
		Fired        sim.Time   // when the other event fired, as the core saw it
		Early, Cycle int64
	}
	run := func(t *testing.T, q sim.Time) want {
		r := newRig(t)
		r.c.SetSyncQuantum(q)
		dev := &clockReg{k: r.k}
		if err := r.sys.Devices.Map(memory.Mapping{Name: "clock", Space: memory.SpaceMem, Base: base, Size: 4, Dev: dev}); err != nil {
			t.Fatal(err)
		}
		var fired sim.Time = -1
		other := sim.NewEvent("other", func() { fired = r.k.Now() })
		x := r.c.NewContext("io", cpu.KindThread, func(*cpu.Context) {
			r.c.Sync()                           // at 0
			r.c.Out(memory.SpaceMem, base, 4, 1) // nothing due: at its time, 0
			r.k.Schedule(other, 500*cycle)
			r.c.Charge(1000)                              // the core at 1000 cycles (10 us)
			r.c.In(memory.SpaceMem, base, 4)              // "other" due at 5 us
			r.c.OutString(memory.SpaceMem, base, 4, 0, 8) // 1002 cycles
			r.c.Charge(2000)                              // 3003 cycles: 30.03 us ahead
			r.c.InString(memory.SpaceMem, base, 4, 0, 8)
		})
		r.c.Start(x)
		r.k.Run()
		return want{Seen: dev.seen, Fired: fired, Early: int64(r.c.Stats().SyncsEarly), Cycle: r.c.Cycles()}
	}
	// Out costs a cycle (no bus), so In is at cycle 1001; OutString's two
	// words are written at 1002, its buffer read charged after its sync;
	// InString syncs at 3015 cycles. The core's cycles never depend on
	// the quantum.
	exact := want{Seen: []sim.Time{0, 1001 * cycle, 1002 * cycle, 1002 * cycle, 3015 * cycle, 3015 * cycle}, Fired: 500 * cycle, Cycle: 3319}
	for _, tt := range []struct {
		name string
		q    sim.Time
		want want
	}{
		{"no quantum", 0, exact},
		{"quantum shorter than the lead", 5 * sim.Microsecond, exact},
		{"quantum longer than the first leads", 20 * sim.Microsecond,
			// In and OutString at 0 (10.01 and 10.02 us early), then
			// InString 30.15 us ahead: it catches up, "other" first.
			want{Seen: []sim.Time{0, 0, 0, 0, 3015 * cycle, 3015 * cycle}, Fired: 500 * cycle, Early: 2, Cycle: 3319}},
		{"quantum longer than every lead", 40 * sim.Microsecond,
			want{Seen: []sim.Time{0, 0, 0, 0, 0, 0}, Fired: 500 * cycle, Early: 3, Cycle: 3319}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, run(t, tt.q)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
