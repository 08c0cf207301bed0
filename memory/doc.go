// Package memory is the memory side of a simulated host: sparse physical
// memory, a tags-only cache hierarchy, uncached regions, the device registry
// that maps physical and I/O addresses to device models, buses with their
// access timing, and DMA ports through which devices reach host memory.
//
// # Layer
//
// memory sits directly above the event scheduler (package sim) and below the
// CPU model (package cpu), the device models and the simulated software. It
// imports only sim and the standard library.
//
// # Contract
//
//   - All guest data lives in Phys. Every byte a protocol stack copies or
//     checksums is a byte of Phys; Chunks gives page-contiguous views so
//     those loops run over real bytes without copying.
//   - The cache hierarchy decides only what a reference costs, in CPU
//     cycles, and keeps statistics. Callers (the CPU model) turn cycles into
//     time with their own clock.
//   - Devices are reached only through the Registry (address → Device); a
//     device access costs Bus.Cost, in simulated time.
//   - A guest (simulated software, or a device programmed by it) that misuses
//     hardware — DMA outside memory, a DMA read of unflushed dirty lines, a
//     CPU read of a line that non-coherent DMA overwrote — is reported to the
//     System's GuestLog. It is never a Go panic. A broken invariant of the
//     simulator itself panics.
//
// # The reference model and its fast paths
//
// hierarchy.go is the cache model's specification: reference (one
// reference of up to a word, through read, miss, write, writeMiss, fill
// and writeback) and the maintenance operations (Flush, Invalidate,
// SnoopInvalidate, MarkStale, DirtyIn). Every other path that charges
// references is a fast path that gives exactly what the reference model
// gives, in cycles, counters, LRU order and stale reports, and lives in a
// file of its own that opens by naming the function it specialises and
// the test that holds the two equal:
//
//	fast_access.go  Access: reference with the first-level hit inline
//	fast_fetch.go   FetchLines, FetchLinesMemo: Access(line, Fetch) per line
//	fast_range.go   AccessRange: Access per word
//	fast_copy.go    CopyRange, CopyWords: a load and a store per word
//	fast_486.go     the loops of the 486's arrangement (Arrangement486)
//
// # Simplifications
//
//   - Caches hold tags only: no data. Reads always return Phys contents, so a
//     stale read is detected and reported (StaleReads, GuestLog) but the
//     guest still sees the fresh bytes.
//   - The hierarchy is non-inclusive: fills go to both L1 and L2, an L2
//     eviction does not invalidate L1. A dirty L1 victim is written to L2 if
//     L2 holds the line, otherwise straight to memory; victim write-backs are
//     buffered (they cost the CPU nothing) and are not counted as demand
//     accesses of L2.
//   - A level's HitLatency is the total latency, seen by the CPU, of a
//     reference served by that level (not an increment over L1).
//   - One reference is at most one word and is charged to the line holding
//     its first byte.
//   - DMA moves all bytes at the start of a transfer and returns how long the
//     transfer takes; the caller schedules the completion.
//   - Coherent DMA writes drop cached copies (even dirty ones: the device's
//     data wins); coherent DMA reads see Phys, which is what the cache would
//     supply.
package memory
