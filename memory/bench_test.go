package memory_test

import (
	"math/rand/v2"
	"testing"

	"simkron/memory"
	"simkron/sim"
)

// benchHierarchy is a mid-1990s workstation: split 8 KiB 2-way L1s with
// 32 B lines, a 256 KiB 4-way L2 with 64 B lines.
func benchHierarchy(b *testing.B) *memory.Hierarchy {
	return newHierarchy(b, memory.HierarchyParams{
		L1I:        cp(8*sim.KiB, 32, 2, 1, memory.WriteBack, true),
		L1D:        cp(8*sim.KiB, 32, 2, 1, memory.WriteBack, true),
		L2:         cp(256*sim.KiB, 64, 4, 8, memory.WriteBack, true),
		MemLatency: 40, MemWriteLatency: 10,
	})
}

// stream builds n references. Of every 100: 30 fetches walking a 12 KiB
// code footprint in order (loops), 20 sequential words of a copy (half
// reads, half writes), randPct random words within twice the L2 size (20%
// writes), the rest random words of a hot 4 KiB (stack, headers; 30%
// writes).
func stream(n, randPct int) ([]memory.Addr, []memory.AccessKind) {
	addrs := make([]memory.Addr, n)
	kinds := make([]memory.AccessKind, n)
	rng := rand.New(rand.NewPCG(7, 7))
	var pc, cp uint64
	for i := range addrs {
		r := rng.IntN(100)
		switch {
		case r < 30:
			pc = (pc + 4) % (12 * 1024)
			addrs[i], kinds[i] = memory.Addr(0x10000+pc), memory.Fetch
		case r < 50:
			cp += 4
			addrs[i] = memory.Addr(0x200000 + cp%(1<<20))
			if r < 40 {
				addrs[i] += 1 << 20
				kinds[i] = memory.Write
			}
		case r < 50+randPct:
			addrs[i] = memory.Addr(rng.IntN(512*1024)) &^ 3
			if rng.IntN(5) == 0 {
				kinds[i] = memory.Write
			}
		default:
			addrs[i] = memory.Addr(0x80000+rng.IntN(4096)) &^ 3
			if rng.IntN(10) < 3 {
				kinds[i] = memory.Write
			}
		}
	}
	return addrs, kinds
}

func benchAccess(b *testing.B, randPct int) {
	h := benchHierarchy(b)
	const n = 1 << 16
	addrs, kinds := stream(n, randPct)
	b.ReportAllocs()
	var cycles int64
	i := 0
	for b.Loop() {
		cycles += h.Access(addrs[i&(n-1)], kinds[i&(n-1)])
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Maccess/s")
	b.ReportMetric(h.L1D().Stats().MissRate()*100, "L1D-miss%")
	b.ReportMetric(h.L2().Stats().MissRate()*100, "L2-miss%")
}

// BenchmarkCacheAccess: a protocol-processing-like stream with 5% random
// references within twice the L2 size.
func BenchmarkCacheAccess(b *testing.B) { benchAccess(b, 5) }

// BenchmarkCacheAccessStress: 30% random references within twice the L2
// size, so about a third of data references miss L1.
func BenchmarkCacheAccessStress(b *testing.B) { benchAccess(b, 30) }

// BenchmarkAccessRange copies 4 KiB: a read range and a write range per op,
// walking through 1 MiB of source and destination.
func BenchmarkAccessRange(b *testing.B) {
	h := benchHierarchy(b)
	b.ReportAllocs()
	b.SetBytes(4096)
	i := 0
	for b.Loop() {
		off := memory.Addr(i&255) * 4096
		h.AccessRange(0x100000+off, 4096, memory.Read)
		h.AccessRange(0x400000+off, 4096, memory.Write)
		i++
	}
	words := float64(b.N) * 2 * 1024
	b.ReportMetric(words/b.Elapsed().Seconds()/1e6, "Mword/s")
}

// BenchmarkPhysChunks checksums 64 KiB through read-only views and fills
// 64 KiB through writable ones.
func BenchmarkPhysChunks(b *testing.B) {
	m := memory.NewPhys(64 * sim.MiB)
	const n = 64 * 1024
	b.ReportAllocs()
	b.SetBytes(2 * n)
	var sum uint32
	sumFn := func(p []byte) {
		for _, x := range p {
			sum += uint32(x)
		}
	}
	fill := func(p []byte) {
		for j := range p {
			p[j] = byte(j)
		}
	}
	for b.Loop() {
		_ = m.Chunks(0x10000, n, true, fill)
		_ = m.Chunks(0x10000, n, false, sumFn)
	}
	_ = sum
}

// BenchmarkCopyRange486 is the 486's copy loop (a unified four-way
// write-through L1 of 16 B lines over a direct-mapped write-back L2): 1 KiB
// copied two bytes out of word alignment, as a payload after a 14-byte
// Ethernet header is, from eight source buffers in turn (so that the
// sources miss the first level) into one destination.
func BenchmarkCopyRange486(b *testing.B) {
	h := newHierarchy(b, memory.HierarchyParams{
		L1:         cp(8*sim.KiB, 16, 4, 1, memory.WriteThrough, false),
		L2:         cp(256*sim.KiB, 16, 1, 3, memory.WriteBack, true),
		MemLatency: 12, MemWriteLatency: 4,
	})
	const dst = 0x30000
	i := 0
	for b.Loop() {
		src := memory.Addr(0x10000 + 0x800*(i%8) + 2)
		h.CopyRange(dst, src, 1024)
		i++
	}
}
