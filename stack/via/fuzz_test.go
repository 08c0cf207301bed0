package via_test

import (
	"encoding/binary"
	"hash/crc32"
	"testing"

	"simkron/ethersim"
	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/kernel"
	"simkron/stack/via"
)

// FuzzReceive sends a connected server VI frames of random bytes under
// VIA's EtherType, from its peer's address or another: headers of any
// type, sequence, offset and length (with some fields steered towards the
// connection so that the deep paths are reached), truncated or padded.
// The agent must not panic, report no guest error, keep every receive
// descriptor's Length within its buffer and never write outside the
// program's data room.
func FuzzReceive(f *testing.F) {
	f.Add([]byte{1, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 5})
	f.Add([]byte{0x83, 5, 0, 0, 0, 1, 0, 1, 0, 0, 0, 3})
	f.Add([]byte{0x40, 1, 1, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0x40, 0, 0, 0, 0x20, 0, 0xde, 0xad, 0, 0, 0x05, 0xc0, 0, 0})
	f.Add([]byte{0xc1, 2, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12, 0, 0, 0, 1, 0, 3, 0, 0, 0, 0, 'a', 'b', 'c'})
	f.Fuzz(func(t *testing.T, data []byte) {
		const room, slots, each = 16 << 10, 8, 2048
		k, _, a, b := pair(t, defaultOpts(), defaultOpts())
		var srv *ep
		ready := false
		b.kern.Spawn("server", func(th *kernel.Thread) {
			e, err := open(b, th, room+4096, via.ViAttributes{}, false)
			if err != nil {
				t.Error(err)
				return
			}
			for i := range slots {
				e.postRecv(i, i*each, each)
			}
			e.pattern(room, 4096, 0x5A) // beyond what the receives may touch
			srv = e
			e.accept()
		})
		a.kern.Spawn("client", func(th *kernel.Thread) {
			th.SleepFor(20 * sim.Millisecond)
			e, _ := open(a, th, 4096, via.ViAttributes{}, false)
			if e.connect(b) == nil {
				ready = true
			}
		})
		runUntil(t, k, sim.Second, func() bool { return ready })
		guard := srv.read(room, 4096)
		for len(data) > 0 {
			n := min(len(data), 1+int(data[0])*8)
			chunk := data[1:n]
			mode := data[0]
			data = data[n:]
			var body [header.VIAHeaderLen + 1472]byte
			m := copy(body[:], chunk)
			if mode&0x80 != 0 && m >= 8 {
				// Steer: version 1, a known type, towards VI 1 from VI 1.
				body[0] = header.VIAVersion
				body[1] = 1 + body[1]%6
				binary.BigEndian.PutUint16(body[4:], 1)
				binary.BigEndian.PutUint16(body[6:], 1)
				m = max(m, header.VIAHeaderLen+int(mode&0x3F)*16)
			}
			src := a.mac
			if mode&0x40 != 0 {
				src = ethersim.MAC{2, 0, 0, 0, 0, 9}
			}
			fr := make([]byte, 14, 14+m+4)
			copy(fr, b.mac[:])
			copy(fr[6:], src[:])
			binary.BigEndian.PutUint16(fr[12:], header.EtherTypeVIA)
			fr = append(fr, body[:m]...)
			for len(fr) < 60 {
				fr = append(fr, 0)
			}
			fr = binary.LittleEndian.AppendUint32(fr, crc32.ChecksumIEEE(fr))
			b.card.Receive(fr)
			k.RunUntil(k.Now() + 50*sim.Microsecond)
		}
		k.RunUntil(k.Now() + sim.Millisecond)
		for i := range slots {
			if l, st, _ := srv.status(srv.desc(i)); st&via.StatusDone != 0 && l > each {
				t.Fatalf("descriptor %d completed with %d bytes in a %d-byte buffer", i, l, each)
			}
		}
		if got := srv.read(room, 4096); string(got) != string(guard) {
			t.Fatal("the agent wrote past the receive buffers")
		}
		noGuestErrors(t, a, b)
	})
}
