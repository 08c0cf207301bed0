package dos_test

import (
	"bytes"
	"testing"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/dos"
)

// The copy moves the bytes and charges a load and a store per 16-bit
// word through the caches plus the loop: with every reference an L1 hit
// of 1 cycle (write-back L1, lines warmed), 1024 bytes cost 512 words ×
// (2 references + 2 instructions at CPI 1) and the set-up.
func TestCopy(t *testing.T) {
	k := sim.NewScheduler(1)
	l1 := &memory.CacheParams{Size: 8 * sim.KiB, Line: 16, Assoc: 4, HitLatency: 1, WritePolicy: memory.WriteBack, WriteAllocate: true}
	hier, err := memory.NewHierarchy(memory.HierarchyParams{L1: l1, MemLatency: 10, MemWriteLatency: 2})
	if err != nil {
		t.Fatal(err)
	}
	sys := memory.NewSystem(k, "pc", memory.NewPhys(sim.MiB), hier)
	c, err := cpu.New(k, "pc.cpu0", cpu.Params{Clock: 33 * sim.MHz, CPI: 1, Lines: 16}, sys)
	if err != nil {
		t.Fatal(err)
	}
	syms := cpu.NewSymbolTable(0x10000, nil)
	cp := dos.NewCopier(c, syms, "memcpy")
	src := bytes.Repeat([]byte{1, 2, 3, 4, 5}, 205)[:1024]
	_ = sys.Phys.Write(0x20000, src)
	var cycles int64
	x := c.NewContext("main", cpu.KindThread, func(*cpu.Context) {
		cp.Copy(0x30000, 0x20000, 1024) // warm the lines and the code
		before := c.Cycles()
		cp.Copy(0x30000, 0x20000, 1024)
		cycles = c.Cycles() - before
		c.Halt()
	})
	c.Start(x)
	k.Run()
	got := make([]byte, 1024)
	_ = sys.Phys.Read(0x30000, got)
	if !bytes.Equal(got, src) {
		t.Error("the copy's bytes differ")
	}
	if want := int64(512*(2+2) + 10); cycles != want {
		t.Errorf("copy of 1024 bytes took %d cycles, want %d", cycles, want)
	}
}
