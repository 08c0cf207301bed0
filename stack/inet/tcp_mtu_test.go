package inet_test

import (
	"bytes"
	"testing"

	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/sim"
	"simkron/stack/inet"
	"simkron/stack/kernel"
)

// TCP hands its segments to ip_queue_xmit, which never fragments what TCP
// builds: every segment fits the MTU the connection was opened with. An
// interface whose MTU is lowered under an open connection (SetMTU, as
// `ifconfig mtu` between runs) gets segments larger than it carries; IP
// fragments them from the segment's buffer, as Linux's ip_fragment does,
// and the peer reassembles them: the stream arrives whole, nothing is
// sent twice, and the write queue's clones and blocks all go back to the
// kernel.
func TestTCPSegmentsOverLoweredMTU(t *testing.T) {
	exp := loadUDP(t, []int{4}, 1, 0)
	for i := range 2 {
		machinetest.InetParams(ownMachine(exp, i)).TCPMSL = 500 * sim.Millisecond
	}
	tr := newThreadRun(t, exp)
	up := pattern(20000, 5)
	var got []byte
	tr.spawn("pcB", func(th *kernel.Thread, h *machine.Host) {
		s := machinetest.Inet(h)
		lfd, _ := s.Socket(th, inet.SockStream)
		if err := s.Bind(th, lfd, tcpPort); err != 0 {
			tr.errorf("bind: %v", err)
			return
		}
		if err := s.Listen(th, lfd, 1); err != 0 {
			tr.errorf("listen: %v", err)
			return
		}
		fd, _, _, err := s.Accept(th, lfd)
		if err != 0 {
			tr.errorf("accept: %v", err)
			return
		}
		got = recvAll(tr, th, h, fd, "server")
		s.Close(th, fd)
		s.Close(th, lfd)
		th.SleepFor(2 * sim.Second)
	})
	tr.spawn("pcA", func(th *kernel.Thread, h *machine.Host) {
		s := machinetest.Inet(h)
		th.SleepFor(10 * sim.Millisecond)
		fd, _ := s.Socket(th, inet.SockStream)
		if err := s.Connect(th, fd, ipB, tcpPort); err != 0 {
			tr.errorf("connect: %v", err)
			return
		}
		if err := s.SetMTU(576); err != nil {
			tr.errorf("SetMTU: %v", err)
			return
		}
		sendAll(tr, th, h, fd, up, 4096, "client")
		s.Close(th, fd)
		th.SleepFor(2 * sim.Second)
	})
	tr.execute()
	if !bytes.Equal(got, up) {
		t.Fatalf("server got %d bytes, want the %d sent", len(got), len(up))
	}
	a, b := host(t, tr.r, "pcA"), host(t, tr.r, "pcB")
	sa, sb := machinetest.Inet(a).Stats(), machinetest.Inet(b).Stats()
	// 1460-byte segments over a 576-byte MTU: three fragments each.
	if sa.IPFragCreates < 3*uint64(len(up)/1460) || sb.IPReasmOKs < uint64(len(up)/1460) {
		t.Errorf("fragments sent %d, datagrams reassembled %d, for %d bytes in 1460-byte segments", sa.IPFragCreates, sb.IPReasmOKs, len(up))
	}
	if sa.TCPRetransSegs != 0 || sa.NoBuffers != 0 {
		t.Errorf("pcA: %d segments resent, %d buffers wanted", sa.TCPRetransSegs, sa.NoBuffers)
	}
	if now, _ := machinetest.Kernel(a).Allocator().InUse(); now > 1<<16 {
		t.Errorf("pcA: %d bytes of heap still in use", now)
	}
}
