package machine

import (
	"fmt"

	"simkron/cpu"
	"simkron/devices/timer"
	"simkron/memory"
	"simkron/report"
	"simkron/sim"
	"simkron/stack/driver/clock"
)

func init() {
	registerDevice(DeviceType{
		Name:     "timer",
		Help:     "real-time clock, periodic tick and one-shot timer (devices/timer)",
		Defaults: func() any { p := timer.DefaultParams(); return &p },
		Size:     timer.Size,
		build: func(h *Host, k *sim.Kernel, d *DeviceSpec, irq *cpu.IRQLine) (Device, error) {
			if irq == nil {
				return nil, fmt.Errorf("a timer needs an irq")
			}
			t, err := timer.New(k, h.Name+"."+d.Name, *d.Params.(*timer.Params), irq, h.Sys.Guest)
			if err != nil {
				return nil, err
			}
			drv := clock.New(h.Kernel, d.Space, memory.Addr(d.Base), d.IRQ)
			h.inits = append(h.inits, drv.Init)
			return timerDevice{t}, nil
		},
	})
}

type timerDevice struct{ *timer.Timer }

func (t timerDevice) Counters() []report.Counter {
	s := t.Stats()
	return []report.Counter{{Name: "ticks", Value: s.Ticks}, {Name: "one_shots", Value: s.OneShots}}
}
