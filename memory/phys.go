package memory

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"simkron/sim"
)

// Addr is a physical address (memory space) or a port number (I/O space).
type Addr uint64

// Page geometry of Phys. Pages are the unit of host allocation only; they
// have nothing to do with the guest's virtual memory.
const (
	pageShift = 12
	pageSize  = 1 << pageShift
	pageMask  = pageSize - 1
	leafShift = 9 // pages per leaf table: 512, so one leaf spans 2 MiB
	leafSize  = 1 << leafShift
	leafMask  = leafSize - 1
)

type page [pageSize]byte

type leaf [leafSize]*page

// zeroPage backs read-only views of untouched pages. It must never be
// written.
var zeroPage page

// Phys is sparse physical memory. Only pages that have been written exist,
// found through a two-level radix table:
//
//	address: | top index | leaf index (9 bits) | offset (12 bits) |
//	           top[]  ──►  *leaf[512]  ──►  *page[4096]
//
// Reads of untouched pages return zeros without allocating, so a 64 MiB
// machine that uses a few hundred KiB costs the host about that much.
type Phys struct {
	size   uint64
	top    []*leaf
	pages  int
	leaves int
}

// NewPhys returns zeroed physical memory of the given size.
func NewPhys(size sim.Size) *Phys {
	npages := (uint64(size) + pageMask) >> pageShift
	return &Phys{size: uint64(size), top: make([]*leaf, (npages+leafMask)>>leafShift)}
}

// Size returns the size of memory.
func (m *Phys) Size() sim.Size { return sim.Size(m.size) }

// InRange reports whether [a, a+n) lies inside memory.
func (m *Phys) InRange(a Addr, n uint64) bool {
	return n <= m.size && uint64(a) <= m.size-n
}

func (m *Phys) rangeError(op string, a Addr, n uint64) error {
	return fmt.Errorf("memory: %s of %d bytes at %#x exceeds physical memory of %v", op, n, uint64(a), sim.Size(m.size))
}

// lookup returns the page holding a, or nil if it was never written. a must
// be in range.
func (m *Phys) lookup(a Addr) *page {
	l := m.top[uint64(a)>>(pageShift+leafShift)]
	if l == nil {
		return nil
	}
	return l[(uint64(a)>>pageShift)&leafMask]
}

// touch returns the page holding a, creating it. a must be in range.
func (m *Phys) touch(a Addr) *page {
	ti := uint64(a) >> (pageShift + leafShift)
	l := m.top[ti]
	if l == nil {
		l = new(leaf)
		m.top[ti] = l
		m.leaves++
	}
	pi := (uint64(a) >> pageShift) & leafMask
	p := l[pi]
	if p == nil {
		p = new(page)
		l[pi] = p
		m.pages++
	}
	return p
}

// Read copies len(p) bytes at a into p. It fails, copying nothing, if the
// range leaves memory.
func (m *Phys) Read(a Addr, p []byte) error {
	if !m.InRange(a, uint64(len(p))) {
		return m.rangeError("read", a, uint64(len(p)))
	}
	for len(p) > 0 {
		off := uint64(a) & pageMask
		n := min(uint64(len(p)), pageSize-off)
		if pg := m.lookup(a); pg != nil {
			copy(p[:n], pg[off:])
		} else {
			clear(p[:n])
		}
		p = p[n:]
		a += Addr(n)
	}
	return nil
}

// Write copies p into memory at a. It fails, writing nothing, if the range
// leaves memory.
func (m *Phys) Write(a Addr, p []byte) error {
	if !m.InRange(a, uint64(len(p))) {
		return m.rangeError("write", a, uint64(len(p)))
	}
	for len(p) > 0 {
		off := uint64(a) & pageMask
		n := copy(m.touch(a)[off:], p)
		p = p[n:]
		a += Addr(n)
	}
	return nil
}

// Uint32 returns the little-endian word at a, or 0 if [a, a+4) leaves
// memory (check with InRange when that matters).
func (m *Phys) Uint32(a Addr) uint32 {
	if !m.InRange(a, 4) {
		return 0
	}
	off := uint64(a) & pageMask
	if off <= pageSize-4 {
		pg := m.lookup(a)
		if pg == nil {
			return 0
		}
		return binary.LittleEndian.Uint32(pg[off:])
	}
	var b [4]byte
	_ = m.Read(a, b[:])
	return binary.LittleEndian.Uint32(b[:])
}

// PutUint32 stores v little-endian at a; it does nothing if [a, a+4) leaves
// memory.
func (m *Phys) PutUint32(a Addr, v uint32) {
	if !m.InRange(a, 4) {
		return
	}
	off := uint64(a) & pageMask
	if off <= pageSize-4 {
		binary.LittleEndian.PutUint32(m.touch(a)[off:], v)
		return
	}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	_ = m.Write(a, b[:])
}

// Chunks calls fn with page-contiguous views of [a, a+n), in address order,
// without copying. With write set the views are writable and the pages are
// created; otherwise they are read-only and untouched pages appear as a
// shared zero page that fn must not write. fn must not keep the views. It
// fails, calling fn not at all, if the range leaves memory.
func (m *Phys) Chunks(a Addr, n uint64, write bool, fn func(b []byte)) error {
	if !m.InRange(a, n) {
		return m.rangeError("access", a, n)
	}
	for n > 0 {
		off := uint64(a) & pageMask
		c := min(n, pageSize-off)
		var pg *page
		if write {
			pg = m.touch(a)
		} else if pg = m.lookup(a); pg == nil {
			pg = &zeroPage
		}
		fn(pg[off : off+c : off+c])
		n -= c
		a += Addr(c)
	}
	return nil
}

// View returns a view of [a, a+n) without copying when the range lies in
// memory and within one page, as Chunks would give it in one piece:
// writable, its page created, with write set; otherwise read-only (an
// untouched page reads as the shared zero page, which must not be
// written). ok is false, and nothing is done, for any other range. The
// caller must not keep the view.
func (m *Phys) View(a Addr, n uint64, write bool) (b []byte, ok bool) {
	off := uint64(a) & pageMask
	if n > pageSize-off || !m.InRange(a, n) {
		return nil, false
	}
	var pg *page
	if write {
		pg = m.touch(a)
	} else if pg = m.lookup(a); pg == nil {
		pg = &zeroPage
	}
	return pg[off : off+n : off+n], true
}

// PagesTouched returns how many 4 KiB pages exist (have been written).
func (m *Phys) PagesTouched() int { return m.pages }

// HostBytes returns approximately how much host memory m uses.
func (m *Phys) HostBytes() uint64 {
	const ptr = uint64(unsafe.Sizeof(uintptr(0)))
	return uint64(unsafe.Sizeof(*m)) + uint64(len(m.top))*ptr +
		uint64(m.leaves)*uint64(unsafe.Sizeof(leaf{})) + uint64(m.pages)*pageSize
}
