package kernel

import (
	"fmt"
	"math/bits"

	"simkron/memory"
)

// Allocator hands out buffers in simulated memory, kmalloc-style: sizes
// are rounded up to a power of two from 32 bytes to 16 MiB; each size
// class keeps a LIFO free list and is refilled from a bump pointer over
// the heap. Addresses are deterministic. Blocks are aligned to their size
// class up to 64 KiB (so a 2 KiB buffer never straddles more lines or
// pages than it must). Freed memory is not returned to the bump region.
//
//	heap: [ class-aligned blocks ... | bump → ............. | end ]
type Allocator struct {
	base, next, end memory.Addr
	free            [numClasses][]memory.Addr
	// live holds, for each 32-byte granule of the bump region, 1 + the
	// class of the live block that starts there, or 0: every block
	// starts on a multiple of 32 (its alignment), so a granule holds at
	// most one block's start. It grows with the bump pointer.
	live  []uint8
	inUse uint64
	peak  uint64
}

const (
	minClassShift = 5  // 32 bytes
	maxClassShift = 24 // 16 MiB
	numClasses    = maxClassShift - minClassShift + 1
)

// maxAlign caps the alignment of large blocks.
const maxAlign = 64 * 1024

// MaxAlloc is the largest single allocation.
const MaxAlloc = 1 << maxClassShift

// NewAllocator manages [base, base+size), which must lie within memSize.
func NewAllocator(base memory.Addr, size, memSize uint64) (*Allocator, error) {
	if uint64(base)+size > memSize {
		return nil, fmt.Errorf("heap [0x%x, 0x%x) does not fit in %d bytes of memory", uint64(base), uint64(base)+size, memSize)
	}
	return &Allocator{base: base, next: base, end: base + memory.Addr(size)}, nil
}

func classOf(n int) int {
	if n <= 1<<minClassShift {
		return 0
	}
	return bits.Len(uint(n-1)) - minClassShift
}

// Alloc returns a block of at least n bytes, or ok false when n is too
// large or the heap is exhausted.
func (a *Allocator) Alloc(n int) (memory.Addr, bool) {
	if n <= 0 || n > MaxAlloc {
		return 0, false
	}
	c := classOf(n)
	size := memory.Addr(1) << (c + minClassShift)
	var p memory.Addr
	if l := a.free[c]; len(l) > 0 {
		p = l[len(l)-1]
		a.free[c] = l[:len(l)-1]
	} else {
		align := min(size, maxAlign)
		p = (a.next + align - 1) &^ (align - 1)
		if p+size > a.end {
			return 0, false
		}
		a.next = p + size
	}
	g := a.granule(p)
	if g >= len(a.live) {
		a.live = append(a.live, make([]uint8, g+1-len(a.live))...)
	}
	a.live[g] = uint8(c + 1)
	a.inUse += uint64(size)
	a.peak = max(a.peak, a.inUse)
	return p, true
}

// granule returns the index in live of the granule holding p.
func (a *Allocator) granule(p memory.Addr) int { return int((p - a.base) >> minClassShift) }

// Free returns a block. Freeing an address that is not a live block is
// reported as an error (a guest double free).
func (a *Allocator) Free(p memory.Addr) error {
	g := -1
	if p%(1<<minClassShift) == 0 && p >= a.base && p < a.next {
		g = a.granule(p)
	}
	if g < 0 || g >= len(a.live) || a.live[g] == 0 {
		return fmt.Errorf("free of 0x%x, which is not an allocated block", uint64(p))
	}
	c := int(a.live[g]) - 1
	a.live[g] = 0
	a.free[c] = append(a.free[c], p)
	a.inUse -= uint64(1) << (c + minClassShift)
	return nil
}

// InUse returns the bytes in live blocks (rounded to classes) and the peak.
func (a *Allocator) InUse() (now, peak uint64) { return a.inUse, a.peak }

// Kmalloc allocates n bytes, charging the allocator's path to the caller's
// layer. It returns 0 and counts a failure when memory is exhausted.
func (k *Kernel) Kmalloc(n int) memory.Addr {
	c := k.cpu
	c.Enter(k.sym.kmalloc)
	p, ok := k.alloc.Alloc(n)
	if ok {
		// The free-list head and the block's first word are touched.
		c.Reference(p, memory.Read)
	} else {
		k.stats.AllocFailures++
	}
	c.Exit(k.sym.kmalloc)
	return p
}

// Kfree frees a block from Kmalloc; a bad free is a guest error.
func (k *Kernel) Kfree(p memory.Addr) {
	c := k.cpu
	c.Enter(k.sym.kfree)
	if err := k.alloc.Free(p); err != nil {
		k.sys.Guest.Report(c.LocalTime(), k.name, "kfree: %v", err)
	} else {
		c.Reference(p, memory.Write)
	}
	c.Exit(k.sym.kfree)
}
