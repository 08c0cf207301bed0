package netdev_test

import (
	"testing"

	"simkron/stack/kernel"
	"simkron/stack/netdev"
	"simkron/trace"
)

// benchTransmit queues b.N frames on a device that takes each at once,
// in a kernel thread, with the gauges listened to or not, and reports
// the host time of a frame's dev_queue_xmit (its allocation and free
// besides).
func benchTransmit(b *testing.B, listened bool) {
	h := newHost(b)
	done := false
	h.kern.Spawn("bench", func(*kernel.Thread) {
		s := netdev.New(h.kern)
		i := s.AddDevice(&takingDev{h: h, room: -1})
		n := 0
		if listened {
			s.Gauges().Connect(func(g trace.Gauge) { n += int(g.Value) })
		}
		b.ResetTimer()
		for range b.N {
			f, _ := netdev.Alloc(h.kern, 0, 60)
			f.Len = 60
			s.Transmit(i, f)
		}
		b.StopTimer()
		done = true
	})
	h.k.RunWhile(func() bool { return !done })
	if !done {
		b.Fatal("the thread did not finish")
	}
}

// BenchmarkTransmitUnlistened is dev_queue_xmit with nobody listening to
// the queue's length: it costs what it did before the gauges.
func BenchmarkTransmitUnlistened(b *testing.B) { benchTransmit(b, false) }

// BenchmarkTransmitListened is the same with a listener.
func BenchmarkTransmitListened(b *testing.B) { benchTransmit(b, true) }
