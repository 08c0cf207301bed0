package tophost

import (
	"simkron/machine/part"
	"simkron/memory"
	"simkron/stack/driver/pktdrv"
	"simkron/stats"
)

// The TOP environment drives an NE2000 with the station's resident packet
// driver (stack/driver/pktdrv, the Packet Driver Specification over the
// card's registers).
func init() {
	part.RegisterDriver(part.Driver{Environment: Name, Device: "ne2000",
		New: func(h *part.Host, d *part.DeviceSpec, a part.DriverArgs) (any, error) {
			pd, err := Station(h).AddPacketDriver(h.Name+"."+d.Name+".pktdrv", d.Space, memory.Addr(d.Base), d.IRQ, a.MAC)
			return residentDriver{pd}, err
		},
		Counters: []stats.Group{{Name: "pktdrv", Value: pktdrv.Stats{}}}})
}

// residentDriver is a station's packet driver as a card's driver: the
// station's start-up initialises it, and it has no kernel device queue.
type residentDriver struct{ *pktdrv.Driver }

func (residentDriver) Init()      {}
func (residentDriver) Queue() int { return -1 }

// Counters are the packet driver's counters.
func (d residentDriver) Counters() []stats.Group {
	return []stats.Group{{Name: "pktdrv", Value: d.Stats()}}
}
