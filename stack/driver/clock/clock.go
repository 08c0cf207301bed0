// Package clock is the kernel's driver for the timer device: it learns the
// tick rate from the HZ register, turns on the periodic tick, and feeds
// every tick into the kernel's timer wheel. Layer KERN.
//
// It reaches the device only through its registers.
package clock

import (
	"simkron/cpu"
	"simkron/devices/timer"
	"simkron/memory"
	"simkron/stack/kernel"
)

var (
	defInit = cpu.Def{Name: "time_init", Layer: cpu.LayerKERN, Instructions: 60, CodeBytes: 256, Why: "read the RTC and tick rate, enable the tick, install the handler"}
	defIntr = cpu.Def{Name: "timer_interrupt", Layer: cpu.LayerKERN, Instructions: 25, CodeBytes: 192, Why: "read and acknowledge STATUS, count lost ticks"}
)

// Driver is the clock driver of one host.
type Driver struct {
	k         *kernel.Kernel
	space     memory.Space
	base      memory.Addr
	irq       int
	lastTicks uint32
	bootTime  uint32
	sym       struct{ init, intr *cpu.Symbol }
}

// New prepares the driver for the timer at base in space, on line irq.
func New(k *kernel.Kernel, space memory.Space, base memory.Addr, irq int) *Driver {
	d := &Driver{k: k, space: space, base: base, irq: irq}
	d.sym.init = k.Symbols().Define(defInit)
	d.sym.intr = k.Symbols().Define(defIntr)
	return d
}

// BootTime returns the RTC value read at initialisation (seconds since
// 1970).
func (d *Driver) BootTime() uint32 { return d.bootTime }

func (d *Driver) in(reg memory.Addr) uint32 {
	return uint32(d.k.CPU().In(d.space, d.base+reg, 4))
}

func (d *Driver) out(reg memory.Addr, v uint32) {
	d.k.CPU().Out(d.space, d.base+reg, 4, uint64(v))
}

// Init programs the device. It runs in a thread during boot.
func (d *Driver) Init() {
	c := d.k.CPU()
	c.Call(d.sym.init, func() {
		d.bootTime = d.in(timer.RegRTC)
		d.k.SetHZ(int(d.in(timer.RegHZ)))
		c.SetHandler(d.irq, "timer", d.interrupt)
		d.out(timer.RegStatus, timer.BitTick|timer.BitOneShot)
		d.out(timer.RegCtrl, timer.BitTick)
		d.lastTicks = 0
	})
}

func (d *Driver) interrupt() {
	c := d.k.CPU()
	c.Enter(d.sym.intr)
	st := d.in(timer.RegStatus)
	d.out(timer.RegStatus, st)
	var n uint32
	if st&timer.BitTick != 0 {
		now := d.in(timer.RegTicks)
		n = now - d.lastTicks
		d.lastTicks = now
	}
	c.Exit(d.sym.intr)
	for ; n > 0; n-- {
		d.k.Tick()
	}
}
