package netdev_test

import (
	"bytes"
	"testing"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/kernel"
	"simkron/stack/netdev"
)

// host is a booted kernel on a core with a small cache, and its memory.
type host struct {
	k    *sim.Scheduler
	kern *kernel.Kernel
	sys  *memory.System
}

func newHost(t testing.TB) *host {
	t.Helper()
	k := sim.NewScheduler(1)
	l1 := &memory.CacheParams{Size: 8 * sim.KiB, Line: 16, Assoc: 4, HitLatency: 1, WritePolicy: memory.WriteBack, WriteAllocate: true}
	hier, err := memory.NewHierarchy(memory.HierarchyParams{L1: l1, MemLatency: 1, MemWriteLatency: 1})
	if err != nil {
		t.Fatal(err)
	}
	sys := memory.NewSystem(k, "h", memory.NewPhys(16*sim.MiB), hier)
	c, err := cpu.New(k, "h.cpu0", cpu.Params{Clock: 100 * sim.MHz, CPI: 1, TrapCycles: 100, IRQEntryCycles: 80, IRQExitCycles: 40, SwitchCycles: 300, Lines: 16}, sys)
	if err != nil {
		t.Fatal(err)
	}
	kern, err := kernel.Boot("h", c, cpu.NewSymbolTable(0x100000, nil), kernel.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	return &host{k: k, kern: kern, sys: sys}
}

// run runs body in a kernel thread to its end.
func (h *host) run(t *testing.T, body func()) {
	t.Helper()
	done := false
	h.kern.Spawn("test", func(*kernel.Thread) { body(); done = true })
	h.k.RunUntil(sim.Second)
	if !done {
		t.Fatal("the test thread did not finish")
	}
	if n := h.sys.Guest.Count(); n != 0 {
		t.Fatalf("%d guest errors: %v", n, h.sys.Guest.Records())
	}
}

func (h *host) inUse() uint64 {
	now, _ := h.kern.Allocator().InUse()
	return now
}

// A clone shares its original's data and headroom and has a head of its
// own; the block goes back to the kernel when the last holder frees it,
// in either order, and Cloned says whether another holder is left.
func TestCloneSharesUntilLastFree(t *testing.T) {
	for _, order := range []string{"clone first", "original first"} {
		t.Run(order, func(t *testing.T) {
			h := newHost(t)
			h.run(t, func() {
				base := h.inUse()
				cl := netdev.NewCloner(h.kern)
				b, ok := netdev.AllocShared(h.kern, 64, 100)
				if !ok {
					t.Fatal("AllocShared failed")
				}
				if b.Len != 0 || b.Headroom() != 64 || b.Tailroom() != 100 {
					t.Fatalf("new buffer: len %d, headroom %d, tailroom %d", b.Len, b.Headroom(), b.Tailroom())
				}
				data := []byte("shared payload")
				h.kern.CPU().Write(b.Addr, data)
				b.Len = len(data)
				if netdev.Cloned(h.kern, b) {
					t.Error("a buffer with one holder is cloned")
				}
				n, ok := cl.Clone(b)
				if !ok {
					t.Fatal("Clone failed")
				}
				if n.Addr != b.Addr || n.Head != b.Head || n.Len != b.Len || n.CloneHead == 0 {
					t.Fatalf("clone %+v of %+v", n, b)
				}
				if !netdev.Cloned(h.kern, b) || !netdev.Cloned(h.kern, n) {
					t.Error("original and clone not reported cloned")
				}
				first, second := n, b
				if order == "original first" {
					first, second = b, n
				}
				first.Free(h.kern)
				if netdev.Cloned(h.kern, second) {
					t.Error("the last holder is still reported cloned")
				}
				got := make([]byte, len(data))
				h.kern.CPU().Read(second.Addr, got)
				if !bytes.Equal(got, data) {
					t.Errorf("data after the first free: %q", got)
				}
				if h.inUse() == base {
					t.Error("the block went with the first free")
				}
				second.Free(h.kern)
				if h.inUse() != base {
					t.Errorf("%d bytes still allocated after both frees", h.inUse()-base)
				}
			})
		})
	}
}

// A copy is a block of its own with every byte of the original, headroom
// included, at the same offsets; freeing one leaves the other whole.
func TestCopyIsPrivate(t *testing.T) {
	h := newHost(t)
	h.run(t, func() {
		base := h.inUse()
		cl := netdev.NewCloner(h.kern)
		b, _ := netdev.AllocShared(h.kern, 32, 64)
		c := h.kern.CPU()
		hdr, data := []byte("HDR!"), []byte("the segment's data")
		b.Push(len(hdr))
		c.Write(b.Addr, hdr)
		b.Pull(len(hdr))
		c.Write(b.Addr, data)
		b.Len = len(data)
		clone, _ := cl.Clone(b) // held by the card
		cp, ok := cl.Copy(b)
		if !ok {
			t.Fatal("Copy failed")
		}
		if cp.Head == b.Head || cp.Headroom() != b.Headroom() || cp.Len != b.Len || cp.Tailroom() != b.Tailroom() || cp.CloneHead != 0 {
			t.Fatalf("copy %+v of %+v", cp, b)
		}
		if netdev.Cloned(h.kern, cp) {
			t.Error("a fresh copy is reported cloned")
		}
		got := make([]byte, len(hdr)+len(data))
		c.Read(cp.Addr-memory.Addr(len(hdr)), got)
		if want := append(append([]byte{}, hdr...), data...); !bytes.Equal(got, want) {
			t.Errorf("copy holds %q, want %q", got, want)
		}
		c.Write(cp.Addr, []byte("XX"))
		c.Read(b.Addr, got[:2])
		if string(got[:2]) != "th" {
			t.Errorf("writing the copy changed the original: %q", got[:2])
		}
		for _, x := range []netdev.Buf{clone, b, cp} {
			x.Free(h.kern)
		}
		if h.inUse() != base {
			t.Errorf("%d bytes still allocated", h.inUse()-base)
		}
	})
}

// Freeing a shared buffer more often than it was held is the guest's
// double free: reported, and the kernel's blocks are left alone.
func TestSharedDoubleFreeReported(t *testing.T) {
	h := newHost(t)
	done := false
	h.kern.Spawn("test", func(*kernel.Thread) {
		b, _ := netdev.AllocShared(h.kern, 16, 16)
		b.Free(h.kern)
		b.Free(h.kern)
		done = true
	})
	h.k.RunUntil(sim.Second)
	if !done {
		t.Fatal("the test thread did not finish")
	}
	if h.sys.Guest.Count() == 0 {
		t.Error("a double free of a shared buffer was not reported")
	}
}
