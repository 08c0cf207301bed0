package tophost

import (
	"simkron/machine/part"
	"simkron/memory"
	"simkron/report"
	"simkron/stack/driver/pktdrv"
)

// The TOP environment drives an NE2000 with the station's resident packet
// driver (stack/driver/pktdrv, the Packet Driver Specification over the
// card's registers).
func init() {
	part.RegisterDriver(part.Driver{Environment: Name, Device: "ne2000",
		New: func(h *part.Host, d *part.DeviceSpec, a part.DriverArgs) (any, error) {
			pd, err := Station(h).AddPacketDriver(h.Name+"."+d.Name+".pktdrv", d.Space, memory.Addr(d.Base), d.IRQ, a.MAC)
			return residentDriver{pd}, err
		}})
}

// residentDriver is a station's packet driver as a card's driver: the
// station's start-up initialises it, and it has no kernel device queue.
type residentDriver struct{ *pktdrv.Driver }

func (residentDriver) Init()      {}
func (residentDriver) Queue() int { return -1 }

// Counters are the packet driver's figures for reports.
func (d residentDriver) Counters() []report.Counter {
	s := d.Stats()
	return []report.Counter{
		{Name: "pktdrv.tx_frames", Value: s.TxFrames}, {Name: "pktdrv.rx_frames", Value: s.RxFrames},
		{Name: "pktdrv.tx_errors", Value: s.TxErrors}, {Name: "pktdrv.rx_errors", Value: s.RxErrors},
		{Name: "pktdrv.rx_dropped", Value: s.RxDropped}, {Name: "pktdrv.overruns", Value: s.Overruns},
		{Name: "pktdrv.tx_waits", Value: s.TxWaits}, {Name: "pktdrv.loopback_frames", Value: s.LoopbackFrames},
	}
}
