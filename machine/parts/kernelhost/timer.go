package kernelhost

import (
	"fmt"

	"simkron/cpu"
	"simkron/devices/timer"
	"simkron/machine/part"
	"simkron/memory"
	"simkron/stack/driver/clock"
	"simkron/stats"
)

func init() {
	part.RegisterDevice(part.DeviceType{
		Name:     "timer",
		Help:     "real-time clock, periodic tick and one-shot timer (devices/timer)",
		Defaults: func() any { p := timer.DefaultParams(); return &p },
		Size:     timer.Size,
		Counters: []stats.Group{{Value: timer.Stats{}}},
		Summary:  []string{"ticks", "one_shots"},
		Build: func(h *part.Host, d *part.DeviceSpec, irq *cpu.IRQLine) (part.Device, error) {
			if irq == nil {
				return nil, fmt.Errorf("a timer needs an irq")
			}
			t, err := timer.New(h.Sched, h.Name+"."+d.Name, *d.Params.(*timer.Params), irq, h.Sys.Guest)
			if err != nil {
				return nil, err
			}
			if _, err := part.NewDriver(h, d, part.DriverArgs{}); err != nil {
				return nil, err
			}
			return timerDevice{t}, nil
		},
	})
	part.RegisterDriver(part.Driver{Environment: Name, Device: "timer",
		New: func(h *part.Host, d *part.DeviceSpec, _ part.DriverArgs) (any, error) {
			drv := clock.New(Kernel(h), d.Space, memory.Addr(d.Base), d.IRQ)
			h.AddInit(drv.Init)
			return drv, nil
		}})
}

type timerDevice struct{ *timer.Timer }

func (t timerDevice) Counters() []stats.Group { return []stats.Group{{Value: t.Stats()}} }
