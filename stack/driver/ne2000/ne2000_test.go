package ne2000_test

// The driver against the card model and a simulated Ethernet segment, two
// small hosts built by hand (CPU, memory, kernel, device layer, ISA bus,
// card, driver): frames go from a thread on host A through A's driver and
// card, over the segment, into B's card, ring and driver, and up to a
// handler that copies them out of B's memory.

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/cpu"
	"simkron/devices/ne2000"
	"simkron/ethersim"
	"simkron/memory"
	"simkron/sim"
	drv "simkron/stack/driver/ne2000"
	"simkron/stack/kernel"
	"simkron/stack/netdev"
)

const (
	ioBase    = 0x300
	irqLine   = 3
	etherType = 0x88B5 // IEEE 802 local experimental
	fddiMTU   = 4352   // RFC 1390
	fddiFrame = 14 + fddiMTU + 4
)

type host struct {
	c    *cpu.CPU
	sys  *memory.System
	kern *kernel.Kernel
	ns   *netdev.Stack
	card *ne2000.NE2000
	drv  *drv.Driver
	mac  ethersim.MAC
	got  [][]byte // frames delivered to etherType, FCS not included
}

func newHost(t testing.TB, k *sim.Scheduler, seg *ethersim.Segment, name string, last byte, cp ne2000.Params, dp drv.Params) *host {
	t.Helper()
	l1 := &memory.CacheParams{Size: 8 * sim.KiB, Line: 16, Assoc: 4, HitLatency: 1, WritePolicy: memory.WriteBack, WriteAllocate: true}
	hier, err := memory.NewHierarchy(memory.HierarchyParams{L1: l1, MemLatency: 10, MemWriteLatency: 2})
	if err != nil {
		t.Fatal(err)
	}
	h := &host{sys: memory.NewSystem(k, name, memory.NewPhys(16*sim.MiB), hier), mac: ethersim.MAC{2, 0, 0, 0, 0, last}}
	p := cpu.Params{Clock: 33 * sim.MHz, CPI: 2, TrapCycles: 100, IRQEntryCycles: 100, IRQExitCycles: 70, SwitchCycles: 300, Lines: 16}
	if h.c, err = cpu.New(k, name+".cpu0", p, h.sys); err != nil {
		t.Fatal(err)
	}
	if h.kern, err = kernel.Boot(name, h.c, cpu.NewSymbolTable(0x100000, nil), kernel.DefaultParams()); err != nil {
		t.Fatal(err)
	}
	line, err := h.c.Line(irqLine, false)
	if err != nil {
		t.Fatal(err)
	}
	cp.MAC = h.mac
	h.card = ne2000.New(k, name+".nic0", cp, line, h.sys.Guest)
	isa := memory.NewBus(memory.BusParams{Name: "isa", AccessTime: sim.Microsecond, Width: 2})
	if err := h.sys.Devices.Map(memory.Mapping{Name: "nic0", Space: memory.SpaceIO, Base: ioBase, Size: ne2000.Size, Dev: h.card, Bus: isa}); err != nil {
		t.Fatal(err)
	}
	port, err := seg.Attach(name+".nic0", h.card, ethersim.FaultParams{})
	if err != nil {
		t.Fatal(err)
	}
	port.OnTxDone = h.card.TxDone
	h.card.SetWire(port)
	h.ns = netdev.New(h.kern)
	if h.drv, err = drv.New(h.kern, h.ns, "eth0", memory.SpaceIO, ioBase, irqLine, dp); err != nil {
		t.Fatal(err)
	}
	err = h.ns.Register(etherType, func(b netdev.Buf) {
		p := make([]byte, b.Len)
		h.c.Read(b.Addr, p)
		h.got = append(h.got, p)
		b.Free(h.kern)
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// pair builds hosts A (sender) and B on one segment; B's init runs at
// once, A's when run starts its sender.
func pair(t testing.TB, sp ethersim.SegmentParams, cardA, cardB ne2000.Params, drvA, drvB drv.Params) (*sim.Scheduler, *host, *host) {
	t.Helper()
	k := sim.NewScheduler(1)
	seg, err := ethersim.NewNetwork(k).NewSegment("lan0", sp)
	if err != nil {
		t.Fatal(err)
	}
	a := newHost(t, k, seg, "a", 1, cardA, drvA)
	b := newHost(t, k, seg, "b", 2, cardB, drvB)
	b.kern.Spawn("init", func(*kernel.Thread) { b.drv.Init() })
	return k, a, b
}

// frameTo builds a frame without FCS: header, then payload bytes derived
// from seed.
func frameTo(dst, src ethersim.MAC, payload int, seed byte) []byte {
	f := make([]byte, 14+payload)
	copy(f, dst[:])
	copy(f[6:], src[:])
	binary.BigEndian.PutUint16(f[12:], etherType)
	for i := range payload {
		f[14+i] = seed + byte(i*7+i>>8)
	}
	return f
}

// run initialises A's driver, sends frames from a thread on A, one after
// another as the device queue takes them, and runs the simulation out.
func run(t testing.TB, k *sim.Scheduler, a *host, frames [][]byte) {
	t.Helper()
	a.kern.Spawn("send", func(th *kernel.Thread) {
		a.drv.Init()
		for _, f := range frames {
			buf, ok := netdev.Alloc(a.kern, 0, len(f))
			if !ok {
				t.Error("out of kernel memory")
				return
			}
			a.c.Write(buf.Addr, f)
			for !a.ns.Transmit(a.drv.Queue(), buf) {
				th.Sleep(a.ns.RoomQueue(a.drv.Queue()))
			}
		}
	})
	k.Run()
}

func noGuestErrors(t testing.TB, hs ...*host) {
	t.Helper()
	for _, h := range hs {
		if n := h.sys.Guest.Count(); n != 0 {
			t.Errorf("%s: %d guest errors, first: %v", h.card.Name(), n, h.sys.Guest.Records()[0])
		}
	}
}

// pageRegs reads PSTART, PSTOP and TPSR through register page 2.
func pageRegs(card *ne2000.NE2000) (pstart, pstop, tpsr byte) {
	card.Write(ne2000.RegCR, 1, 0xA2) // page 2, started, no DMA
	pstart = byte(card.Read(ne2000.P2PSTART, 1))
	pstop = byte(card.Read(ne2000.P2PSTOP, 1))
	tpsr = byte(card.Read(ne2000.P2TPSR, 1))
	card.Write(ne2000.RegCR, 1, 0x22)
	return
}

func fddiParams() (ethersim.SegmentParams, ne2000.Params, drv.Params) {
	sp := ethersim.DefaultSegmentParams()
	sp.MaxFrame = fddiFrame
	cp := ne2000.DefaultParams()
	cp.MaxFrame = fddiFrame
	dp := drv.DefaultParams()
	dp.MTU = fddiMTU
	return sp, cp, dp
}

// TestFDDIFrames sends maximum frames of MTU 4352 (4366 bytes, 4370 on
// the wire) and a few shorter ones through both cards and the segment,
// byte for byte. B's 46-page ring holds two 18-page frames; the third
// crosses PSTOP, and eight wrap the ring twice.
func TestFDDIFrames(t *testing.T) {
	sp, cp, dp := fddiParams()
	k, a, b := pair(t, sp, cp, cp, dp, dp)
	var want [][]byte
	for i := range 8 {
		want = append(want, frameTo(b.mac, a.mac, fddiMTU, byte(i)))
	}
	want = append(want, frameTo(b.mac, a.mac, 1500, 8), frameTo(b.mac, a.mac, 46, 9), frameTo(b.mac, a.mac, fddiMTU-1, 10))
	run(t, k, a, want)

	if d := cmp.Diff(want, b.got); d != "" {
		t.Errorf("frames delivered on B (-want +got):\n%s", d)
	}
	if got := a.drv.MTU(); got != fddiMTU {
		t.Errorf("MTU() = %d, want %d", got, fddiMTU)
	}
	as, bs := a.card.Stats(), b.card.Stats()
	wireBytes := uint64(8*fddiFrame + (1500 + 18) + 64 + (fddiFrame - 1))
	if as.TxFrames != 11 || as.TxBytes != wireBytes || as.TxErrors != 0 {
		t.Errorf("A's card sent %d frames, %d bytes, %d errors; want 11, %d, 0", as.TxFrames, as.TxBytes, as.TxErrors, wireBytes)
	}
	if bs.RxFrames != 11 || bs.RxBytes != wireBytes || bs.Overflows != 0 || bs.Missed != 0 {
		t.Errorf("B's card stored %d frames, %d bytes, %d overflows, %d missed; want 11, %d, 0, 0", bs.RxFrames, bs.RxBytes, bs.Overflows, bs.Missed, wireBytes)
	}
	if ds := b.drv.Stats(); ds.RxFrames != 11 || ds.RxErrors != 0 {
		t.Errorf("B's driver received %d frames with %d errors, want 11 and 0", ds.RxFrames, ds.RxErrors)
	}
	// One 18-page transmit slot, a ring of the 46 pages after it.
	pstart, pstop, tpsr := pageRegs(b.card)
	if pstart != 0x52 || pstop != 0x80 || tpsr != 0x40 {
		t.Errorf("PSTART %#x PSTOP %#x TPSR %#x, want 0x52 0x80 0x40", pstart, pstop, tpsr)
	}
	// Pages per frame, 1 + (4 + frame with FCS)/256: 8 frames of 18, then
	// 6, 1 and 18: 169 pages into a 46-page ring from 0x52 leave CURR
	// 169 % 46 = 31 pages on.
	b.card.Write(ne2000.RegCR, 1, 0x62)
	if cur := byte(b.card.Read(ne2000.P1CURR, 1)); cur != 0x52+31 {
		t.Errorf("CURR %#x after the ring wrapped, want %#x", cur, 0x52+31)
	}
	noGuestErrors(t, a, b)
}

// TestTwoSlotsFDDI: with tx_buffers = 2 the largest MTU is 3826 (two
// 15-page slots, a 34-page ring of which two 16-page frames take all but
// the BNRY page); frames of that size cross the wire and round the ring.
func TestTwoSlotsFDDI(t *testing.T) {
	const mtu = 3826
	sp, cp, dp := fddiParams()
	dp.MTU, dp.TxBuffers = mtu, 2
	k, a, b := pair(t, sp, cp, cp, dp, dp)
	var want [][]byte
	for i := range 6 {
		want = append(want, frameTo(b.mac, a.mac, mtu, byte(i)))
	}
	run(t, k, a, want)
	if d := cmp.Diff(want, b.got); d != "" {
		t.Errorf("frames delivered on B (-want +got):\n%s", d)
	}
	if pstart, _, _ := pageRegs(b.card); pstart != 0x40+2*15 {
		t.Errorf("PSTART %#x, want %#x", pstart, 0x40+2*15)
	}
	noGuestErrors(t, a, b)
}

// TestDefaultsUnchanged: with the default parameters the layout is the
// one before the MTU was a parameter (a 6-page slot per tx_buffer, the
// ring after them), 1514-byte frames cross byte for byte, and the MTU is
// 1500.
func TestDefaultsUnchanged(t *testing.T) {
	if p := drv.DefaultParams(); p.MTU != 1500 || p.TxBuffers != 1 || p.MaxFrame() != 1518 {
		t.Errorf("defaults: mtu %d, tx_buffers %d, max frame %d", p.MTU, p.TxBuffers, p.MaxFrame())
	}
	for _, slots := range []int{1, 2} {
		t.Run(strconv.Itoa(slots), func(t *testing.T) {
			dp := drv.DefaultParams()
			dp.TxBuffers = slots
			cp := ne2000.DefaultParams()
			k, a, b := pair(t, ethersim.DefaultSegmentParams(), cp, cp, dp, dp)
			var want [][]byte
			for i := range 40 {
				want = append(want, frameTo(b.mac, a.mac, 1500-i%3*700, byte(i)))
			}
			run(t, k, a, want)
			if d := cmp.Diff(want, b.got); d != "" {
				t.Errorf("frames delivered on B (-want +got):\n%s", d)
			}
			if got := a.drv.MTU(); got != 1500 {
				t.Errorf("MTU() = %d", got)
			}
			pstart, pstop, _ := pageRegs(b.card)
			if want := byte(0x40 + 6*slots); pstart != want || pstop != 0x80 {
				t.Errorf("ring [%#x, %#x), want [%#x, 0x80)", pstart, pstop, want)
			}
			if s := b.drv.Stats(); s.RxErrors != 0 || s.RxFrames != 40 {
				t.Errorf("B's driver: %d frames, %d errors", s.RxFrames, s.RxErrors)
			}
			noGuestErrors(t, a, b)
		})
	}
}

// TestTooLongFrames: a frame longer than mtu + 14 never reaches the card
// (it would overrun its slot); a frame longer than mtu + 18 in the ring is
// a bad length to the receiver, which the DP8390 stored all the same (it
// has no receive maximum), and the ring goes on working after it.
func TestTooLongFrames(t *testing.T) {
	sp, cp, dp := fddiParams()
	k, a, b := pair(t, sp, cp, ne2000.DefaultParams(), dp, drv.DefaultParams())
	want := frameTo(b.mac, a.mac, 1500, 2)
	run(t, k, a, [][]byte{
		frameTo(b.mac, a.mac, fddiMTU+1, 0), // A drops it
		frameTo(b.mac, a.mac, fddiMTU, 1),   // B's card stores it, B's driver refuses it
		want,
	})
	if d := cmp.Diff([][]byte{want}, b.got); d != "" {
		t.Errorf("frames delivered on B (-want +got):\n%s", d)
	}
	if s := a.drv.Stats(); s.TxTooLong != 1 || s.TxErrors != 1 || s.TxFrames != 2 {
		t.Errorf("A's driver: TxTooLong %d TxErrors %d TxFrames %d, want 1 1 2", s.TxTooLong, s.TxErrors, s.TxFrames)
	}
	if s := b.card.Stats(); s.RxFrames != 2 {
		t.Errorf("B's card stored %d frames, want 2", s.RxFrames)
	}
	if s := b.drv.Stats(); s.RxErrors != 1 || s.RxFrames != 1 {
		t.Errorf("B's driver: RxErrors %d RxFrames %d, want 1 1", s.RxErrors, s.RxFrames)
	}
	noGuestErrors(t, a, b)
}

// TestRefusedBySegment: a card allowed FDDI frames on a segment that is
// not sends into a refusal, which the guest sees as a transmit error.
func TestRefusedBySegment(t *testing.T) {
	_, cp, dp := fddiParams()
	k, a, b := pair(t, ethersim.DefaultSegmentParams(), cp, cp, dp, dp)
	run(t, k, a, [][]byte{frameTo(b.mac, a.mac, fddiMTU, 0)})
	if len(b.got) != 0 {
		t.Error("a frame longer than the segment's max_frame arrived")
	}
	if s := a.drv.Stats(); s.TxErrors != 1 {
		t.Errorf("A's driver TxErrors %d, want 1", s.TxErrors)
	}
	if a.sys.Guest.Count() != 1 {
		t.Errorf("A: %d guest errors, want the refusal", a.sys.Guest.Count())
	}
}

func TestParamsValidate(t *testing.T) {
	with := func(mtu, slots int) drv.Params {
		p := drv.DefaultParams()
		p.MTU, p.TxBuffers = mtu, slots
		return p
	}
	tests := []struct {
		name string
		p    drv.Params
		want string // error prefix; "" for none
	}{
		{"defaults", drv.DefaultParams(), ""},
		{"defaults, two slots", with(1500, 2), ""},
		{"minimum", with(68, 1), ""},
		{"below the minimum", with(67, 1), "mtu: 67 is below"},
		{"FDDI", with(fddiMTU, 1), ""},
		{"FDDI, two slots", with(fddiMTU, 2), "mtu: 4352 does not fit the card's 16 KiB of packet RAM with tx_buffers = 2"},
		{"largest, one slot", with(5353, 1), ""},
		{"too large, one slot", with(5354, 1), "mtu: 5354 does not fit"},
		{"largest, two slots", with(3826, 2), ""},
		{"too large, two slots", with(3827, 2), "mtu: 3827 does not fit"},
		{"far too large", with(60000, 1), "mtu: 60000 does not fit"},
		{"three slots", with(1500, 3), "tx_buffers: 3"},
	}
	for _, tt := range tests {
		err := tt.p.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want)):
			t.Errorf("%s: error %v, want one starting %q", tt.name, err, tt.want)
		}
	}
	// New refuses what Validate refuses.
	k := sim.NewScheduler(1)
	seg, _ := ethersim.NewNetwork(k).NewSegment("lan0", ethersim.DefaultSegmentParams())
	h := newHost(t, k, seg, "h", 1, ne2000.DefaultParams(), drv.DefaultParams())
	if _, err := drv.New(h.kern, h.ns, "eth1", memory.SpaceIO, ioBase, irqLine, with(fddiMTU, 2)); err == nil {
		t.Error("New accepted MTU 4352 with two transmit slots")
	}
	// The max tag simkron params prints is the largest MTU one slot takes.
	f, _ := reflect.TypeFor[drv.Params]().FieldByName("MTU")
	if f.Tag.Get("max") != "5353" || f.Tag.Get("min") != "68" {
		t.Errorf("mtu tags min %q max %q, want 68 and 5353", f.Tag.Get("min"), f.Tag.Get("max"))
	}
}

// The frames of a larger MTU must fit the card: MaxFrame is what the
// machine compares with the card's max_frame.
func TestMaxFrame(t *testing.T) {
	p := drv.DefaultParams()
	p.MTU = fddiMTU
	if got := p.MaxFrame(); got != fddiFrame {
		t.Errorf("MaxFrame() = %d, want %d", got, fddiFrame)
	}
	if !bytes.Equal(frameTo(ethersim.MAC{}, ethersim.MAC{}, 1, 0)[12:14], []byte{0x88, 0xB5}) {
		t.Error("frameTo lost the EtherType")
	}
}
