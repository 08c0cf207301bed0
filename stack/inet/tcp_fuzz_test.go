package inet_test

// FuzzTCPInput throws segments made from the fuzz input at a live
// connection: a station on lan0 forges segments from pcA's address and
// port to pcB's connection, with sequence and acknowledgment numbers near
// the ones pcB expects (so they land in and around the windows), any
// flags, windows, lengths and option bytes, while pcA and pcB exchange
// data. Nothing may panic, the run must end, and every connection's
// state must stay consistent: snd_una <= snd_nxt <= snd_max, windows
// within 16 bits, buffer counts within the buffers.

import (
	"encoding/binary"
	"testing"

	"simkron/ethersim"
	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/inet"
	"simkron/stack/kernel"
)

// fuzzSeg is one forged segment, decoded from 8 bytes of input.
type fuzzSeg struct {
	flags   header.TCPFlags
	delay   sim.Time // after the previous one
	seqOff  int32    // from pcB's rcv_nxt
	ackOff  int32    // from pcB's snd_una
	n       int      // data bytes
	window  uint16
	options []byte
	corrupt bool
}

func decodeFuzzSegs(data []byte) []fuzzSeg {
	var out []fuzzSeg
	for len(data) >= 8 && len(out) < 24 {
		b := data[:8]
		data = data[8:]
		g := fuzzSeg{
			flags:  header.TCPFlags(b[0]),
			delay:  sim.Time(b[1]) * 100 * sim.Microsecond,
			seqOff: int32(int16(binary.LittleEndian.Uint16(b[2:]))),
			ackOff: int32(int16(binary.LittleEndian.Uint16(b[4:]))),
			n:      min(int(b[6])*8, 1460),
			window: uint16(b[7]&0xf0) << 8,
		}
		if b[7]&1 != 0 {
			g.options = []byte{header.TCPOptionMSS, b[7] >> 4, b[6], b[2]}
		}
		g.corrupt = b[7]&2 != 0
		if b[7]&4 != 0 {
			g.seqOff *= 4096 // far outside the window
		}
		out = append(out, g)
	}
	return out
}

func checkTCPInvariants(t *testing.T, when string, h *machine.Host) {
	t.Helper()
	for _, c := range machinetest.Inet(h).TCPConns() {
		if int32(c.SndNxt-c.SndUna) < 0 || int32(c.SndMax-c.SndNxt) < 0 {
			t.Fatalf("%s: %s: snd_una %d snd_nxt %d snd_max %d out of order (%+v)", when, h.Name, c.SndUna, c.SndNxt, c.SndMax, c)
		}
		if c.SndWnd < 0 || c.SndWnd > 65535 || c.Cwnd <= 0 || c.Cwnd > 65535 {
			t.Fatalf("%s: %s: snd_wnd %d cwnd %d (%+v)", when, h.Name, c.SndWnd, c.Cwnd, c)
		}
		if int32(c.RcvAdv-c.RcvNxt) < 0 && c.State != "SYN_SENT" && c.State != "CLOSED" {
			t.Fatalf("%s: %s: rcv_adv %d behind rcv_nxt %d (%+v)", when, h.Name, c.RcvAdv, c.RcvNxt, c)
		}
		if c.Queued < 0 || c.Queued > 32*1024 || c.Unread < 0 || c.Unread > 32*1024 {
			t.Fatalf("%s: %s: %d bytes queued, %d unread (%+v)", when, h.Name, c.Queued, c.Unread, c)
		}
	}
}

func FuzzTCPInput(f *testing.F) {
	f.Add([]byte{0x10, 10, 0, 0, 0, 0, 0, 0x70})                                          // a duplicate ACK
	f.Add([]byte{0x18, 10, 0, 0, 0, 0, 20, 0x70, 0x18, 3, 0x40, 0, 0, 0, 20, 0x70})       // in-window data, then a gap
	f.Add([]byte{0x04, 50, 0, 0, 0, 0, 0, 0})                                             // RST in window
	f.Add([]byte{0x02, 50, 0, 0, 0, 0, 0, 0x01})                                          // SYN in window, bad MSS
	f.Add([]byte{0x11, 20, 5, 0, 0, 1, 0, 0x04, 0x10, 20, 0, 0, 0x10, 0, 0, 0x00})        // FIN far away; ACK of unsent data
	f.Add([]byte{0x10, 20, 0, 0, 0, 0, 0, 0x00, 0x10, 200, 0, 0, 0, 0, 0, 0xf0})          // window closes, then opens
	f.Add([]byte{0xff, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 1, 0, 0, 0, 0, 0, 3}) // everything at once
	f.Add([]byte{0x18, 10, 0, 0, 0, 0, 20, 0x70, 7})                                      // data to a BSD-style stack with keep-alive
	f.Fuzz(func(t *testing.T, data []byte) {
		segs := decodeFuzzSegs(data)
		// A byte after the last whole segment chooses the stacks' style:
		// bit 0 4.4BSD delayed ACKs, bit 1 BSD MSS rounding (to 512),
		// bit 2 keep-alive on pcB with short timers.
		var style byte
		if len(data)%8 != 0 {
			style = data[len(data)-1]
		}
		exp := loadUDP(t, []int{4}, 1, 0)
		for i := range 2 {
			p := machinetest.InetParams(ownMachine(exp, i))
			p.TCPMSL = 100 * sim.Millisecond
			if style&1 != 0 {
				p.TCPDelAckStyle = inet.DelAckBSD
			}
			if style&2 != 0 {
				p.TCPMSSCluster = 512
			}
			p.TCPKeepIdle, p.TCPKeepIntvl, p.TCPKeepProbes = sim.Second, 200*sim.Millisecond, 2
		}
		tr := newThreadRun(t, exp)
		const size = 16 * 1024
		payload := pattern(size, 5)
		tr.spawn("pcB", func(th *kernel.Thread, h *machine.Host) {
			s := machinetest.Inet(h)
			lfd, _ := s.Socket(th, inet.SockStream)
			if style&4 != 0 {
				s.SetOption(th, lfd, inet.OptKeepAlive, 1)
			}
			s.Bind(th, lfd, tcpPort)
			s.Listen(th, lfd, 2)
			fd, _, _, err := s.Accept(th, lfd)
			if err != 0 {
				return
			}
			buf := userBuf(h, 4096, nil)
			for {
				n, err := s.Recv(th, fd, buf, 4096, 3*sim.Second)
				if n == 0 || err != 0 {
					break
				}
			}
			out := userBuf(h, size, payload)
			s.Send(th, fd, out, size)
			s.Close(th, fd)
			s.Close(th, lfd)
		})
		tr.spawn("pcA", func(th *kernel.Thread, h *machine.Host) {
			s := machinetest.Inet(h)
			th.SleepFor(10 * sim.Millisecond)
			fd, _ := s.Socket(th, inet.SockStream)
			if s.Connect(th, fd, ipB, tcpPort) != 0 {
				return
			}
			out := userBuf(h, size, payload)
			s.Send(th, fd, out, size)
			s.Shutdown(th, fd, inet.ShutWr)
			buf := userBuf(h, 4096, nil)
			for {
				n, err := s.Recv(th, fd, buf, 4096, 3*sim.Second)
				if n == 0 || err != 0 {
					break
				}
			}
			s.Close(th, fd)
		})

		ha, hb := host(t, tr.r, "pcA"), host(t, tr.r, "pcB")
		src := ethersim.MAC{2, 0, 0, 0, 0, 0x0e}
		dst := machinetest.NICs(hb)[0].Spec.MAC
		att, err := lan0(t, tr.r).Attach("rogue", rogue{}, ethersim.FaultParams{})
		if err != nil {
			t.Fatal(err)
		}
		k := tr.r.Sched
		var ev *sim.Event
		i := 0
		ev = sim.NewEvent("tcpfuzz", func() {
			checkTCPInvariants(t, "before forged segment", ha)
			checkTCPInvariants(t, "before forged segment", hb)
			if i >= len(segs) {
				return
			}
			g := segs[i]
			i++
			var rcvNxt, sndUna uint32
			if cs := machinetest.Inet(hb).TCPConns(); len(cs) > 0 {
				rcvNxt, sndUna = cs[0].RcvNxt, cs[0].SndUna
			}
			hl := header.TCPMinimumSize + (len(g.options)+3)&^3
			g.n = min(g.n, 1480-hl)
			seg := make([]byte, hl+g.n)
			tv := header.TCP(seg)
			tv.Encode(&header.TCPFields{SrcPort: 32768, DstPort: tcpPort, SeqNum: rcvNxt + uint32(g.seqOff),
				AckNum: sndUna + uint32(g.ackOff), Flags: g.flags, Window: g.window, Options: g.options})
			for j := hl; j < len(seg); j++ {
				seg[j] = byte(j * 7)
			}
			tv.SetChecksum(tv.CalculateChecksum(ipA, ipB))
			if g.corrupt {
				seg[len(seg)-1] ^= 0x5a
			}
			fr := make([]byte, header.EthernetHeaderLen+header.IPv4MinimumSize, header.EthernetHeaderLen+header.IPv4MinimumSize+len(seg)+4)
			header.Ethernet(fr).Encode(&header.EthernetFields{Dst: dst, Src: src, Type: header.EtherTypeIPv4})
			ip := header.IPv4(fr[header.EthernetHeaderLen:])
			ip.Encode(&header.IPv4Fields{TotalLength: uint16(header.IPv4MinimumSize + len(seg)), ID: uint16(i),
				TTL: 64, Protocol: header.IPv4ProtocolTCP, Src: ipA, Dst: ipB})
			ip.SetChecksum(ip.CalculateChecksum())
			fr = append(fr, seg...)
			for len(fr) < ethersim.MinFrame-4 {
				fr = append(fr, 0)
			}
			if !att.Busy() {
				if err := att.Transmit(ethersim.AppendFCS(fr)); err != nil {
					t.Fatal(err)
				}
			}
			k.Schedule(ev, k.Now()+max(g.delay, 50*sim.Microsecond))
		})
		k.Schedule(ev, 20*sim.Millisecond)
		tr.execute()
		checkTCPInvariants(t, "at the end", ha)
		checkTCPInvariants(t, "at the end", hb)
	})
}
