package netdev_test

import (
	"fmt"
	"slices"
	"testing"

	"simkron/stack/netdev"
	"simkron/trace"
)

// takingDev is a device that takes frames while it has room (room < 0:
// always), freeing each at once.
type takingDev struct {
	h    *host
	room int
}

func (d *takingDev) Name() string { return "fake0" }
func (d *takingDev) MAC() [6]byte { return [6]byte{2, 0, 0, 0, 0, 1} }
func (d *takingDev) MTU() int     { return 1500 }
func (d *takingDev) Busy() bool   { return false }
func (d *takingDev) StartXmit(b netdev.Buf) bool {
	switch {
	case d.room == 0:
		return false
	case d.room > 0:
		d.room--
	}
	b.Free(d.h.kern)
	return true
}

// frame allocates a 60-byte frame of an EtherType nobody handles.
func frame(t *testing.T, h *host) netdev.Buf {
	t.Helper()
	b, ok := netdev.Alloc(h.kern, 0, 60)
	if !ok {
		t.Fatal("no buffer")
	}
	b.Len = 60
	h.kern.CPU().Write(b.Addr, make([]byte, 14)) // EtherType 0: none
	return b
}

// Gauges fires the device queue's length as frames join it and the
// driver takes them, a driver that has no room leaving them queued until
// it wakes the queue; and the backlog's as frames arrive and the receive
// softirq delivers them.
func TestGaugesShowQueueLengths(t *testing.T) {
	h := newHost(t)
	var got []string
	h.run(t, func() {
		s := netdev.New(h.kern)
		dev := &takingDev{h: h, room: 1}
		i := s.AddDevice(dev)
		s.Gauges().Connect(func(g trace.Gauge) { got = append(got, fmt.Sprintf("%s=%d %s", g.Name, g.Value, g.Unit)) })
		for range 3 {
			if !s.Transmit(i, frame(t, h)) {
				t.Fatal("the queue refused a frame")
			}
		}
		dev.room = 5
		s.WakeQueue(i)
		h.kern.RunSoftirqs()
		s.Rx(frame(t, h))
		s.Rx(frame(t, h))
		h.kern.RunSoftirqs()
	})
	want := []string{
		"fake0 tx queue=1 frames", "fake0 tx queue=0 frames", // taken at once
		"fake0 tx queue=1 frames", // the driver has no room
		"fake0 tx queue=2 frames",
		"fake0 tx queue=1 frames", "fake0 tx queue=0 frames", // woken
		"backlog=1 frames", "backlog=2 frames", "backlog=1 frames", "backlog=0 frames",
	}
	if !slices.Equal(got, want) {
		t.Errorf("gauges\n got %q\nwant %q", got, want)
	}
}
