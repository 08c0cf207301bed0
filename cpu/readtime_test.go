package cpu_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
)

// reg is a one-register device.
type reg struct{ v uint64 }

func (r *reg) Name() string                         { return "reg" }
func (r *reg) Read(off uint64, size int) uint64     { return r.v }
func (r *reg) Write(off uint64, size int, v uint64) { r.v = v }

// A bus with a read_time charges it for register and string reads and
// access_time for writes; without one, both cost access_time, as before
// read_time existed.
func TestBusReadTime(t *testing.T) {
	for _, tt := range []struct {
		name string
		read sim.Time
		want [3]int64 // cycles of In, Out, and a 12-word InString's bus part
	}{
		{"access time only", 0, [3]int64{4, 4, 4 * 12}},
		{"slower reads", 600 * sim.Nanosecond, [3]int64{60, 4, 60 * 12}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			bus := memory.NewBus(memory.BusParams{Name: "tc", AccessTime: 40 * sim.Nanosecond, Width: 4, ReadTime: tt.read})
			if got := bus.ReadCost(8); got != 2*max(tt.read, 40*sim.Nanosecond) {
				t.Errorf("ReadCost(8) = %v", got)
			}
			const base = 0x100000
			if err := r.sys.Devices.Map(memory.Mapping{Name: "reg", Space: memory.SpaceMem, Base: base, Size: 0x400, Dev: &reg{}, Bus: bus}); err != nil {
				t.Fatal(err)
			}
			var got [3]int64
			x := r.c.NewContext("io", cpu.KindThread, func(*cpu.Context) {
				c0 := r.c.Cycles()
				r.c.In(memory.SpaceMem, base, 4)
				got[0] = r.c.Cycles() - c0
				c0 = r.c.Cycles()
				r.c.Out(memory.SpaceMem, base, 4, 1)
				got[1] = r.c.Cycles() - c0
				io0 := r.c.Stats().IOCycles
				r.c.InString(memory.SpaceMem, base, 4, 0x1000, 48)
				got[2] = r.c.Stats().IOCycles - io0
			})
			r.c.Start(x)
			r.k.Run()
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("bus cycles (-want +got):\n%s", d)
			}
		})
	}
	if err := (memory.BusParams{Name: "tc", Width: 4, ReadTime: -1}).Validate(); err == nil {
		t.Error("a negative read_time validates")
	}
}

// Register accesses that alternate between devices on different buses, in
// both spaces, at every size, each cost their own device's bus cycles and
// reach their own device: the core's table of the last device's costs
// never answers for another.
func TestBusCostsFollowTheDevice(t *testing.T) {
	r := newRig(t)
	clock := sim.NewClock(r.c.Params().Clock)
	slow := memory.NewBus(memory.BusParams{Name: "isa", AccessTime: 125 * sim.Nanosecond, Width: 2, ReadTime: 250 * sim.Nanosecond})
	fast := memory.NewBus(memory.BusParams{Name: "tc", AccessTime: 40 * sim.Nanosecond, Width: 4})
	devs := []struct {
		space memory.Space
		base  memory.Addr
		bus   *memory.Bus
		reg   *reg
	}{
		{memory.SpaceIO, 0x300, slow, &reg{}},
		{memory.SpaceMem, 0x300, fast, &reg{}}, // the same address in the other space
		{memory.SpaceIO, 0x320, nil, &reg{}},   // no bus: a cycle
		{memory.SpaceMem, 0x100000, slow, &reg{}},
	}
	for i, d := range devs {
		if err := r.sys.Devices.Map(memory.Mapping{Name: fmt.Sprint("r", i), Space: d.space, Base: d.base, Size: 0x20, Dev: d.reg, Bus: d.bus}); err != nil {
			t.Fatal(err)
		}
	}
	want := func(bus *memory.Bus, size int, read bool) int64 {
		switch {
		case bus == nil:
			return 1
		case read:
			return clock.Cycles(bus.ReadCost(size))
		}
		return clock.Cycles(bus.Cost(size))
	}
	x := r.c.NewContext("io", cpu.KindThread, func(*cpu.Context) {
		v := uint64(0)
		for round := range 3 {
			for _, size := range []int{1, 2, 4, 8, 12} {
				for i, d := range devs {
					v++
					io0 := r.c.Stats().IOCycles
					r.c.Out(d.space, d.base+4, size, v)
					if got, w := r.c.Stats().IOCycles-io0, want(d.bus, size, false); got != w {
						t.Errorf("round %d: write of %d bytes to device %d cost %d cycles, want %d", round, size, i, got, w)
					}
					io0 = r.c.Stats().IOCycles
					if got := r.c.In(d.space, d.base+8, size); got != v {
						t.Errorf("round %d: device %d read %d, want %d", round, i, got, v)
					}
					if got, w := r.c.Stats().IOCycles-io0, want(d.bus, size, true); got != w {
						t.Errorf("round %d: read of %d bytes from device %d cost %d cycles, want %d", round, size, i, got, w)
					}
				}
			}
		}
	})
	r.c.Start(x)
	r.k.Run()
}
