package via_test

import (
	"testing"

	"simkron/sim"
	"simkron/stack/kernel"
	"simkron/stack/via"
)

// BenchmarkVIARoundTrip1KiB measures how many 1 KiB VIA round trips
// between the study's two machines the simulator runs per second of host
// time (b.N round trips in one simulation, after the connection).
func BenchmarkVIARoundTrip1KiB(b *testing.B) {
	k, _, ha, hb := pair(b, defaultOpts(), defaultOpts())
	ready, done := false, false
	var simStart sim.Time
	hb.kern.Spawn("server", func(th *kernel.Thread) {
		e, err := open(hb, th, 8192, via.ViAttributes{}, false)
		if err != nil {
			b.Error(err)
			return
		}
		e.postRecv(0, 0, 1024)
		e.postRecv(1, 1024, 1024)
		e.accept()
		for {
			r, rc := e.l.VipRecvWait(e.vi, 0)
			if rc != via.Success {
				return
			}
			slot := int(r-e.desc(0)) / descStride
			e.postSend(2, slot*1024, 1024)
			e.l.VipSendDone(e.vi)
			e.postRecv(slot, slot*1024, 1024)
		}
	})
	n := 0
	ha.kern.Spawn("client", func(th *kernel.Thread) {
		th.SleepFor(20 * sim.Millisecond)
		e, err := open(ha, th, 8192, via.ViAttributes{}, false)
		if err != nil {
			b.Error(err)
			return
		}
		e.postRecv(0, 0, 1024)
		e.postRecv(1, 1024, 1024)
		e.connect(hb)
		ready = true
		for range b.N {
			e.postSend(3, 4096, 1024)
			r, rc := e.l.VipRecvWait(e.vi, sim.Second)
			if rc != via.Success {
				b.Error(rc)
				break
			}
			slot := int(r-e.desc(0)) / descStride
			e.l.VipSendDone(e.vi)
			e.postRecv(slot, slot*1024, 1024)
			n++
		}
		done = true
	})
	runUntil(b, k, sim.Second, func() bool { return ready })
	simStart = k.Now()
	b.ResetTimer()
	runUntil(b, k, k.Now()+sim.Time(b.N+10)*sim.Millisecond, func() bool { return done })
	b.StopTimer()
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "roundtrips/s")
	b.ReportMetric(float64((k.Now()-simStart)/sim.Nanosecond)/float64(max(n, 1)), "sim-ns/roundtrip")
}
