package simoseth_test

import (
	"encoding/binary"
	"hash/crc32"
	"testing"

	"simkron/devices/simoseth"
	"simkron/ethersim"
	"simkron/memory"
	"simkron/sim"
)

// The tests drive the card the way a driver would, but from the test:
// descriptors are written straight into physical memory and registers
// through Read/Write, with a fake wire and interrupt line.

var (
	ownMAC   = ethersim.MAC{0x02, 0, 0, 0, 0, 0x01}
	peerMAC  = ethersim.MAC{0x02, 0, 0, 0, 0, 0x02}
	bcastMAC = ethersim.MAC{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}
)

const (
	txRing = 0x10000
	rxRing = 0x20000
	bufs   = 0x40000
)

type irq struct {
	level bool
	rises int
}

func (l *irq) Set(on bool) {
	if on && !l.level {
		l.rises++
	}
	l.level = on
}

// wire records frames and ends each transmission after rate's byte time.
type wire struct {
	k      *sim.Scheduler
	n      *simoseth.NIC
	rate   sim.BitRate
	sent   [][]byte
	at     []sim.Time // when each transmission started
	doneEv *sim.Event
	busy   bool
}

func (w *wire) Transmit(f []byte) error {
	if w.busy {
		panic("card transmitted while the wire was busy")
	}
	w.busy = true
	w.sent = append(w.sent, append([]byte(nil), f...))
	w.at = append(w.at, w.k.Now())
	w.k.ScheduleAfter(w.doneEv, w.rate.ByteTime(len(f)))
	return nil
}

type rig struct {
	t   testing.TB
	k   *sim.Scheduler
	sys *memory.System
	n   *simoseth.NIC
	irq *irq
	w   *wire
}

func newRig(t testing.TB, p simoseth.Params) *rig {
	t.Helper()
	k := sim.NewScheduler(1)
	l1 := &memory.CacheParams{Size: 8 * sim.KiB, Line: 32, Assoc: 2, HitLatency: 1, WritePolicy: memory.WriteBack, WriteAllocate: true}
	h, err := memory.NewHierarchy(memory.HierarchyParams{L1: l1, MemLatency: 10, MemWriteLatency: 2})
	if err != nil {
		t.Fatal(err)
	}
	sys := memory.NewSystem(k, "h", memory.NewPhys(4*sim.MiB), h)
	r := &rig{t: t, k: k, sys: sys, irq: &irq{}}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	r.n = simoseth.New(k, "h.nic0", p, r.irq, sys)
	r.w = &wire{k: k, n: r.n, rate: sim.Gbps}
	r.w.doneEv = sim.NewEvent("wire.done", func() {
		r.w.busy = false
		r.n.TxDone(ethersim.TxStatus{OK: true})
	})
	r.n.SetWire(r.w)
	return r
}

func (r *rig) out(off uint64, v uint32) { r.n.Write(off, 4, uint64(v)) }
func (r *rig) in(off uint64) uint32     { return uint32(r.n.Read(off, 4)) }

func (r *rig) putDesc(ring uint32, i int, status, ctrl, buf uint32) {
	var b [simoseth.DescSize]byte
	binary.LittleEndian.PutUint32(b[0:], status)
	binary.LittleEndian.PutUint32(b[4:], ctrl)
	binary.LittleEndian.PutUint32(b[8:], buf)
	if err := r.sys.Phys.Write(memory.Addr(ring)+memory.Addr(i*simoseth.DescSize), b[:]); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) status(ring uint32, i int) uint32 {
	return r.sys.Phys.Uint32(memory.Addr(ring) + memory.Addr(i*simoseth.DescSize))
}

// start programs both rings (tx descriptors all the driver's, rx
// descriptors the card's with bufLen-byte buffers) and switches both
// engines on.
func (r *rig) start(ntx, nrx, bufLen int, imr uint32) {
	for i := range ntx {
		r.putDesc(txRing, i, 0, 0, 0)
	}
	for i := range nrx {
		r.putDesc(rxRing, i, simoseth.DescOwn, uint32(bufLen), uint32(bufs+i*bufLen))
	}
	r.out(simoseth.RegTxBase, txRing)
	r.out(simoseth.RegTxCount, uint32(ntx))
	r.out(simoseth.RegRxBase, rxRing)
	r.out(simoseth.RegRxCount, uint32(nrx))
	r.out(simoseth.RegIMR, imr)
	r.out(simoseth.RegCtrl, simoseth.CtrlTxEn|simoseth.CtrlRxEn|simoseth.CtrlBcast)
}

// frame returns a frame to dst of n bytes without FCS, payload bytes from
// seed.
func frame(dst, src ethersim.MAC, n int, seed byte) []byte {
	f := make([]byte, n)
	copy(f, dst[:])
	copy(f[6:], src[:])
	binary.BigEndian.PutUint16(f[12:], 0x88B5)
	for i := 14; i < n; i++ {
		f[i] = seed + byte(i*13+i>>8)
	}
	return f
}

// withFCS appends the Ethernet FCS.
func withFCS(f []byte) []byte {
	return binary.LittleEndian.AppendUint32(append([]byte(nil), f...), crc32.ChecksumIEEE(f))
}

func (r *rig) noGuestErrors() {
	r.t.Helper()
	if n := r.sys.Guest.Count(); n != 0 {
		r.t.Errorf("%d guest errors, first: %v", n, r.sys.Guest.Records()[0])
	}
}
