package tophost

import (
	"fmt"

	"simkron/cpu"
	"simkron/devices/pit"
	"simkron/machine/part"
	"simkron/stats"
)

func init() {
	part.RegisterDevice(part.DeviceType{
		Name:     "pit",
		Help:     "the PC's 8253/8254 interval timer, counter 0 on an edge-triggered line (devices/pit); programmed by the TOP environment's BIOS for the 18.2 Hz tick, no kernel driver",
		Defaults: func() any { p := pit.DefaultParams(); return &p },
		Size:     pit.Size,
		NoDriver: true,
		Counters: []stats.Group{{Value: pit.Stats{}}},
		Summary:  []string{"interrupts"},
		Build: func(h *part.Host, d *part.DeviceSpec, _ *cpu.IRQLine) (part.Device, error) {
			if d.IRQ < 0 {
				return nil, fmt.Errorf("a pit needs an irq (the PC's is 0)")
			}
			// OUT0 feeds the 8259 edge-triggered (IBM PC Technical
			// Reference): the line is made edge-triggered here.
			line, err := h.CPU.Line(d.IRQ, true)
			if err != nil {
				return nil, err
			}
			return pitDevice{pit.New(h.Sched, h.Name+"."+d.Name, *d.Params.(*pit.Params), line, h.Sys.Guest)}, nil
		},
	})
}

type pitDevice struct{ *pit.PIT }

func (t pitDevice) Counters() []stats.Group { return []stats.Group{{Value: t.Stats()}} }
