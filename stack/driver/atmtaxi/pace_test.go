package atmtaxi_test

import (
	"bytes"
	"testing"

	"simkron/ethersim/atmnet"
	"simkron/sim"
	atm "simkron/stack/driver/atmtaxi"
	"simkron/stack/inet"
	"simkron/stack/kernel"
)

// A VC with a peak cell rate starts writing its cells into the FIFO
// 1/PCR apart: on the line they leave 1/PCR apart on average, each gap
// within the variation of a cell write (cache misses on its data), and
// the datagram still arrives whole; without one, a PIO sender sends its
// cells closer together than that.
func TestPacing(t *testing.T) {
	const pcr = 20000 // cells/s: 50 us apart
	gap := sim.Second / pcr
	for _, tc := range []struct {
		name   string
		tx     string
		pcr    int
		minGap sim.Time // every gap between two cells of the datagram
		maxGap sim.Time // the smallest gap at most this
	}{
		{"pio unpaced", atm.PIO, 0, 0, gap / 2},
		{"pio paced", atm.PIO, pcr, gap - 2*sim.Microsecond, 2 * gap},
		{"dma-b paced", atm.DMAB, pcr, gap - 2*sim.Microsecond, 2 * gap},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dp := ipDriver(tc.tx, atm.PIO)
			dp.VCs = []atm.VCEntry{{PCR: tc.pcr}}
			r := ipRig(t, "ds5000-200", dp, ipParams(atm.DefaultMTU))
			var sent []sim.Time
			r.net.Trace.Connect(func(x atmnet.TraceRecord) {
				if x.Kind == atmnet.TraceTx && x.Where == "a.a" {
					sent = append(sent, x.At)
				}
			})
			const n = 4000 // 85 cells with UDP, IP, LLC/SNAP and the AAL5 trailer
			var got []byte
			r.b.kern.Spawn("rx", func(th *kernel.Thread) {
				s := r.b.ip
				fd, _ := s.Socket(th, inet.SockDgram)
				s.Bind(th, fd, 7)
				buf := r.b.kern.Kmalloc(n)
				m, _, _, err := s.RecvFrom(th, fd, buf, n, sim.Second)
				if err != 0 {
					t.Errorf("recvfrom: %v", err)
					return
				}
				got = make([]byte, m)
				r.b.sys.Phys.Read(buf, got)
			})
			r.a.kern.Spawn("tx", func(th *kernel.Thread) {
				s := r.a.ip
				fd, _ := s.Socket(th, inet.SockDgram)
				buf := r.a.kern.Kmalloc(n)
				r.a.c.Write(buf, patterned(0, n))
				th.SleepFor(10 * sim.Millisecond)
				if _, err := s.SendTo(th, fd, buf, n, ipB, 7); err != 0 {
					t.Errorf("sendto: %v", err)
				}
			})
			r.k.RunUntil(sim.Second)
			if !bytes.Equal(got, patterned(0, n)) {
				t.Fatalf("the datagram did not arrive whole (%d bytes)", len(got))
			}
			if len(sent) != 85 {
				t.Fatalf("%d cells sent, want 85", len(sent))
			}
			least := sent[1] - sent[0]
			for i := 1; i < len(sent); i++ {
				d := sent[i] - sent[i-1]
				least = min(least, d)
				if d < tc.minGap {
					t.Fatalf("cells %d and %d %v apart, the PCR allows %v", i-1, i, d, tc.minGap)
				}
			}
			if mean := (sent[len(sent)-1] - sent[0]) / sim.Time(len(sent)-1); tc.pcr > 0 && mean < gap {
				t.Errorf("cells %v apart on average, the PCR allows %v", mean, gap)
			}
			if least > tc.maxGap {
				t.Errorf("the closest cells are %v apart, want at most %v", least, tc.maxGap)
			}
			if st := r.a.drv.Stats(); (st.TxPaced > 0) != (tc.pcr > 0) {
				t.Errorf("paced %d cells with pcr %d", st.TxPaced, tc.pcr)
			}
			r.a.noGuestErrors(t)
			r.b.noGuestErrors(t)
			r.a.c.Shutdown()
			r.b.c.Shutdown()
		})
	}
}
