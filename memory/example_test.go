package memory_test

import (
	"fmt"
	"os"

	"simkron/memory"
	"simkron/sim"
)

// A host with split L1 caches and an L2, a non-coherent NIC that DMAs a
// frame into memory, and a driver that forgets to invalidate.
func Example() {
	k := sim.NewScheduler(1)
	l1 := memory.CacheParams{Size: 8 * sim.KiB, Line: 32, Assoc: 2, HitLatency: 1, WriteAllocate: true}
	l2 := memory.CacheParams{Size: 256 * sim.KiB, Line: 64, Assoc: 4, HitLatency: 8, WriteAllocate: true}
	h, err := memory.NewHierarchy(memory.HierarchyParams{L1I: &l1, L1D: &l1, L2: &l2, MemLatency: 40, MemWriteLatency: 10})
	if err != nil {
		panic(err)
	}
	host := memory.NewSystem(k, "hostA", memory.NewPhys(64*sim.MiB), h)
	nic := host.NewDMAPort("nic0", 12_500_000, false) // 100 Mbit/s

	fmt.Println("first read:", host.Reference(0x8000, memory.Read), "cycles")
	fmt.Println("second read:", host.Reference(0x8000, memory.Read), "cycles")
	d, _ := nic.Write(0x8000, make([]byte, 1500))
	fmt.Println("DMA of 1500 bytes takes", d)
	host.Reference(0x8004, memory.Read) // hits the stale line
	for _, e := range host.Guest.Records() {
		fmt.Println(e.Component+":", e.Msg)
	}

	isa := memory.NewBus(memory.BusParams{Name: "isa", AccessTime: 1 * sim.Microsecond, Width: 2})
	_ = host.Devices.Map(memory.Mapping{Name: "nic0", Space: memory.SpaceIO, Base: 0x300, Size: 0x20, Bus: isa})
	host.Devices.WriteTable(os.Stdout)
	// Output:
	// first read: 40 cycles
	// second read: 1 cycles
	// DMA of 1500 bytes takes 120us
	// hostA.cache: CPU read of 0x8004 returned stale data: DMA wrote the line while it was cached (non-coherent DMA; flush/invalidate before reading)
	// SPACE  NAME  START   END     SIZE  BUS  DEVICE
	// io     nic0  0x0300  0x031f  32B   isa  -
}

// The same host calibrated, then in functional detail: a full-detail run
// measures the average cost of each kind of reference, and functional
// detail charges those averages with no cache at all (the fractions
// carried, so four reads of 1.25 cycles cost 5), and DMA leaves nothing
// stale, as nothing is cached.
func Example_functionalDetail() {
	l1 := memory.CacheParams{Size: 8 * sim.KiB, Line: 32, Assoc: 2, HitLatency: 1, WriteAllocate: true}
	newHost := func() *memory.System {
		h, err := memory.NewHierarchy(memory.HierarchyParams{L1I: &l1, L1D: &l1, MemLatency: 40, MemWriteLatency: 10})
		if err != nil {
			panic(err)
		}
		return memory.NewSystem(sim.NewScheduler(1), "hostA", memory.NewPhys(64*sim.MiB), h)
	}
	full := newHost()
	for range 4 {
		full.ReferenceRange(0x8000, 256, memory.Read) // cold, then warm
	}
	p := full.Calibration().Params(1)
	fmt.Printf("calibrated: %.3f cycles per word read\n", p.Read)

	fn := newHost()
	fn.SetFunctional(memory.FunctionalParams{Read: 1.25})
	var cycles int64
	for range 4 {
		cycles += fn.Reference(0x8000, memory.Read)
	}
	fmt.Println("four reads:", cycles, "cycles")
	nic := fn.NewDMAPort("nic0", 12_500_000, false)
	nic.Write(0x8000, make([]byte, 64))
	fn.Reference(0x8000, memory.Read)
	fmt.Println("guest errors:", fn.Guest.Count())
	// Output:
	// calibrated: 2.219 cycles per word read
	// four reads: 5 cycles
	// guest errors: 0
}
