package pktdrv_test

import (
	"errors"
	"testing"

	"simkron/devices/ne2000"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/driver/pktdrv"
	"simkron/stack/top/toptest"
)

func newDriver(t *testing.T, loop bool) (*toptest.Bare, *pktdrv.Driver) {
	t.Helper()
	b := toptest.New(t, "pc")
	line, _ := b.H.CPU().Line(3, false)
	card := ne2000.New(b.K, "pc.nic0", ne2000.DefaultParams(), line, b.Sys.Guest)
	isa := memory.NewBus(memory.BusParams{Name: "isa", AccessTime: sim.Microsecond, Width: 2})
	if err := b.Sys.Devices.Map(memory.Mapping{Name: "nic0", Space: memory.SpaceIO, Base: 0x300, Size: ne2000.Size, Dev: card, Bus: isa}); err != nil {
		t.Fatal(err)
	}
	p := pktdrv.DefaultParams()
	p.Loopback = loop
	d, err := pktdrv.New(b.H.CPU(), b.H.Symbols(), "pc.pktdrv", memory.SpaceIO, 0x300, 3, b.H.Static(32), p)
	if err != nil {
		t.Fatal(err)
	}
	return b, d
}

// The specification's calls and their errors.
func TestCalls(t *testing.T) {
	b, d := newDriver(t, true)
	recv := func(pktdrv.Handle, int, memory.Addr, int) memory.Addr { return 0 }
	b.H.OnStart(func() {
		d.Init()
		if !d.Ready() {
			t.Fatal("driver not ready")
		}
		if info := d.DriverInfo(); info.Class != pktdrv.ClassDIX || info.Name != "NE2000" || !info.BasicOnly {
			t.Errorf("driver_info %+v", info)
		}
		for _, tc := range []struct {
			class, typ, number int
			want               error
		}{
			{5, pktdrv.AnyType, 0, pktdrv.ErrNoClass},
			{pktdrv.ClassDIX, 77, 0, pktdrv.ErrNoType},
			{pktdrv.ClassDIX, pktdrv.AnyType, 1, pktdrv.ErrNoNumber},
		} {
			if _, err := d.AccessType(tc.class, tc.typ, tc.number, nil, recv); !errors.Is(err, tc.want) {
				t.Errorf("access_type(%d, %d, %d) = %v, want %v", tc.class, tc.typ, tc.number, err, tc.want)
			}
		}
		h1, err := d.AccessType(pktdrv.ClassDIX, pktdrv.AnyType, 0, []byte{0x08, 0x00}, recv)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.AccessType(pktdrv.ClassDIX, pktdrv.AnyType, 0, []byte{0x08}, recv); !errors.Is(err, pktdrv.ErrTypeInUse) {
			t.Errorf("an overlapping type: %v, want TYPE_INUSE", err)
		}
		h2, err := d.AccessType(pktdrv.Class8023, pktdrv.AnyType, 0, []byte{0xFE, 0xFE}, recv)
		if err != nil {
			t.Fatal(err)
		}
		buf := b.H.Mem().Alloc(0, 8)
		if _, err := d.GetAddress(h1, buf, 4); !errors.Is(err, pktdrv.ErrNoSpace) {
			t.Errorf("get_address into 4 bytes: %v", err)
		}
		if n, err := d.GetAddress(h2, buf, 6); n != 6 || err != nil {
			t.Errorf("get_address = %d, %v", n, err)
		}
		if err := d.ReleaseType(h1); err != nil {
			t.Error(err)
		}
		if err := d.ReleaseType(h1); !errors.Is(err, pktdrv.ErrBadHandle) {
			t.Errorf("second release_type: %v", err)
		}
		if err := d.SendPkt(buf, 8); !errors.Is(err, pktdrv.ErrCantSend) {
			t.Errorf("send_pkt of 8 bytes: %v", err)
		}
	})
	b.H.Start()
	b.K.RunUntil(10 * sim.Millisecond)
	if b.Sys.Guest.Count() != 0 {
		t.Errorf("guest errors: %v", b.Sys.Guest.Records())
	}
}

// In loopback a sent frame goes to the handle whose type matches, by the
// two upcalls around the copy; one no handle takes is a counted drop.
func TestLoopbackMatch(t *testing.T) {
	b, d := newDriver(t, true)
	var calls []int
	var got []byte
	var dst memory.Addr
	recv := func(h pktdrv.Handle, flag int, buf memory.Addr, n int) memory.Addr {
		calls = append(calls, flag)
		if flag == 0 {
			return dst
		}
		got = make([]byte, n)
		_ = b.Sys.Phys.Read(buf, got)
		return 0
	}
	b.H.OnStart(func() {
		d.Init()
		if _, err := d.AccessType(pktdrv.Class8023, pktdrv.AnyType, 0, []byte{0xFE, 0xFE}, recv); err != nil {
			t.Fatal(err)
		}
		dst = b.H.Mem().Alloc(0, 64)
		src := b.H.Mem().Alloc(0, 64)
		f := make([]byte, 60)
		f[12], f[13], f[14], f[15], f[16] = 0, 3, 0xFE, 0xFE, 0x03
		b.H.CPU().Write(src, f)
		if err := d.SendPkt(src, 60); err != nil {
			t.Fatal(err)
		}
		f[14] = 0x42 // another SAP: no handle
		b.H.CPU().Write(src, f)
		if err := d.SendPkt(src, 60); err != nil {
			t.Fatal(err)
		}
	})
	b.H.Start()
	b.K.RunUntil(10 * sim.Millisecond)
	if len(calls) != 2 || calls[0] != 0 || calls[1] != 1 || len(got) != 60 || got[14] != 0xFE {
		t.Errorf("upcalls %v, frame % x", calls, got)
	}
	if st := d.Stats(); st.LoopbackFrames != 2 || st.RxFrames != 1 || st.RxDropped != 1 {
		t.Errorf("stats %+v", st)
	}
}
