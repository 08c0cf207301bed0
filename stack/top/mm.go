package top

import (
	"encoding/binary"
	"fmt"

	"simkron/cpu"
	"simkron/memory"
	"simkron/stack/osi"
)

// The memory manager. Transmission and reception have separate regions,
// since the two flows are independent; each region has three areas:
//
//	region ┌───────────────────┐
//	       │ primitive area    │ fixed 16-byte Primitive Structures
//	       ├───────────────────┤
//	       │ parameter area    │ fixed 32-byte Parameter Structures
//	       ├───────────────────┤ (osi descriptors)
//	       │ data area         │ variable-size blocks: PCIs, user data,
//	       │                   │ the other parameters of primitives
//	       └───────────────────┘
//
// Fixed-size structures come from a free list threaded through the free
// structures themselves (pop and push: no search, no fragmentation). The
// data area is first-fit over an address-ordered free list of extents,
// split on allocation and coalesced with its neighbours on free, so that
// fragmentation stays bounded. Every list word lives in simulated memory
// and is read and written through the caches.

// Extents of the data area are multiples of dataUnit; each allocated one
// starts with a 4-byte size word (allocHeader) before the caller's bytes.
const (
	dataUnit    = 8
	allocHeader = 8 // size word, padded to keep the caller's bytes 8-aligned
	primSize    = 16
)

// Owner tags in block headers.
const (
	ownerTxData uint16 = 1
	ownerRxData uint16 = 2
	ownerTxRing uint16 = 3
	ownerRxRing uint16 = 4
	ownerStatic uint16 = 5
)

var (
	defGetPrim  = cpu.Def{Name: "mm_get_prim", Layer: cpu.LayerInherit, Instructions: 14, CodeBytes: 96, Why: "the flow's pool (index scaled: 3), the free list's head (far load: 2), null test (2), the head's link into the list head (far load and store: 4), count (1), return (2)"}
	defPutPrim  = cpu.Def{Name: "mm_put_prim", Layer: cpu.LayerInherit, Instructions: 12, CodeBytes: 80, Why: "the region by address (compares with both pools' bounds: 4), the list head into the structure's link and the structure into the head (far load and stores: 6), return (2)"}
	defGetParam = cpu.Def{Name: "mm_get_param", Layer: cpu.LayerInherit, Instructions: 14, CodeBytes: 96, Why: "the flow's pool (index scaled: 3), the free list's head (far load: 2), null test (2), the head's link into the list head (far load and store: 4), count (1), return (2)"}
	defPutParam = cpu.Def{Name: "mm_put_param", Layer: cpu.LayerInherit, Instructions: 12, CodeBytes: 80, Why: "the region by address (compares with both pools' bounds: 4), the list head into the structure's link and the structure into the head (far load and stores: 6), return (2)"}
	defAlloc    = cpu.Def{Name: "mm_alloc", Layer: cpu.LayerInherit, Instructions: 30, CodeBytes: 256, Why: "size rounded up with its header word (4), the flow's list head (3), on the fitting extent the remainder tested and split or the extent unlinked (8), size word stored (2), pointer past the header returned (3), failure counted (4), prologue and epilogue (6); each free extent visited 4 more (size and link loaded, compared, advanced)"}
	defFree     = cpu.Def{Name: "mm_free", Layer: cpu.LayerInherit, Instructions: 34, CodeBytes: 288, Why: "the region by address (compares with both areas' bounds: 6), the size word (2), coalesced with the following extent (compare, add, relink: 8) and the preceding one (8), size and link stored and the predecessor relinked (6), return (4); each extent walked past 3 more"}
	defBlkFree  = cpu.Def{Name: "mm_block_free", Layer: cpu.LayerInherit, Instructions: 10, CodeBytes: 64, Why: "the block's owner tag (far load: 2), switch on it (3), the data area's or the circular buffer's free (call: 3), return (2)"}
)

// MemStats counts the memory manager's work.
type MemStats struct {
	PrimAllocs, ParamAllocs, DataAllocs uint64
	Failures                            uint64
	FitSteps                            uint64 // free extents visited by first fit
}

// fixedPool is a free list of same-size structures.
type fixedPool struct {
	head       memory.Addr // the list head word
	base, end  memory.Addr
	size       int
	inUse, max int
}

// varPool is the data area: free extents, address-ordered, each
// [size(4) next(4)] in its first octets; head word holds the first.
type varPool struct {
	head      memory.Addr
	base, end memory.Addr
	inUse     int
	peak      int
}

type region struct {
	name  string
	prims fixedPool
	descs fixedPool
	data  varPool
	owner uint16
}

// MemMgr is the memory manager of the host.
type MemMgr struct {
	h     *Runtime
	c     *cpu.CPU
	reg   [2]region // by osi.Dir
	stats MemStats
	tmp   [8]byte
	sym   struct{ getPrim, putPrim, getParam, putParam, alloc, free, blkFree *cpu.Symbol }
}

func (m *MemMgr) rd32(a memory.Addr) memory.Addr {
	m.c.Read(a, m.tmp[:4])
	return memory.Addr(binary.LittleEndian.Uint32(m.tmp[:4]))
}

func (m *MemMgr) wr32(a, v memory.Addr) {
	binary.LittleEndian.PutUint32(m.tmp[:4], uint32(v))
	m.c.Write(a, m.tmp[:4])
}

// poke writes a word of the program image, uncharged.
func (m *MemMgr) poke(a, v memory.Addr) {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(v))
	_ = m.c.System().Phys.Write(a, b[:])
}

// newMemMgr lays the two regions out from base and threads the free
// lists. The lists are written uncharged, as part of the program image:
// they are the initialised data a loader puts in place before the
// program runs.
func newMemMgr(h *Runtime, base memory.Addr, p Params) (*MemMgr, memory.Addr) {
	m := &MemMgr{h: h, c: h.c}
	m.sym.getPrim = h.define(defGetPrim, osi.CatMemory)
	m.sym.putPrim = h.define(defPutPrim, osi.CatMemory)
	m.sym.getParam = h.define(defGetParam, osi.CatMemory)
	m.sym.putParam = h.define(defPutParam, osi.CatMemory)
	m.sym.alloc = h.define(defAlloc, osi.CatMemory)
	m.sym.free = h.define(defFree, osi.CatMemory)
	m.sym.blkFree = h.define(defBlkFree, osi.CatMemory)
	a := base
	for i, r := range []struct {
		name         string
		prims, descs int
		data         int
		owner        uint16
	}{
		{"tx", p.TxPrims, p.TxParams, int(p.TxData), ownerTxData},
		{"rx", p.RxPrims, p.RxParams, int(p.RxData), ownerRxData},
	} {
		g := &m.reg[i]
		g.name, g.owner = r.name, r.owner
		// Three list head words, then the areas.
		g.prims.head, g.descs.head, g.data.head = a, a+4, a+8
		a += 16
		a = m.initFixed(&g.prims, a, primSize, r.prims)
		a = m.initFixed(&g.descs, a, osi.DescSize, r.descs)
		g.data.base = a
		g.data.end = a + memory.Addr(r.data)
		m.poke(a, memory.Addr(r.data))
		m.poke(a+4, 0)
		m.poke(g.data.head, a)
		a = g.data.end
	}
	return m, a
}

func (m *MemMgr) initFixed(f *fixedPool, a memory.Addr, size, n int) memory.Addr {
	f.base, f.size = a, size
	f.end = a + memory.Addr(size*n)
	next := memory.Addr(0)
	for i := n - 1; i >= 0; i-- {
		blk := a + memory.Addr(i*size)
		m.poke(blk, next)
		next = blk
	}
	m.poke(f.head, next)
	return f.end
}

// Stats returns the counters.
func (m *MemMgr) Stats() MemStats { return m.stats }

// InUse returns the data-area octets allocated now and at most, per
// region (tx, rx).
func (m *MemMgr) InUse() (tx, rx, txPeak, rxPeak int) {
	return m.reg[0].data.inUse, m.reg[1].data.inUse, m.reg[0].data.peak, m.reg[1].data.peak
}

// StructuresInUse returns the primitive and parameter structures held,
// per region (tx, rx).
func (m *MemMgr) StructuresInUse() (txPrims, txParams, rxPrims, rxParams int) {
	return m.reg[0].prims.inUse, m.reg[0].descs.inUse, m.reg[1].prims.inUse, m.reg[1].descs.inUse
}

func (m *MemMgr) pop(f *fixedPool) memory.Addr {
	blk := m.rd32(f.head)
	if blk == 0 {
		m.stats.Failures++
		return 0
	}
	m.wr32(f.head, m.rd32(blk))
	f.inUse++
	f.max = max(f.max, f.inUse)
	return blk
}

func (m *MemMgr) push(f *fixedPool, blk memory.Addr) {
	if blk < f.base || blk >= f.end || (blk-f.base)%memory.Addr(f.size) != 0 {
		panic(fmt.Sprintf("top: free of %#x, not a structure of its pool", uint64(blk)))
	}
	m.wr32(blk, m.rd32(f.head))
	m.wr32(f.head, blk)
	f.inUse--
}

// regionOf returns the region whose areas hold a, or nil.
func (m *MemMgr) regionOf(a memory.Addr, pick func(r *region) (lo, hi memory.Addr)) *region {
	for i := range m.reg {
		lo, hi := pick(&m.reg[i])
		if a >= lo && a < hi {
			return &m.reg[i]
		}
	}
	return nil
}

// GetPrim returns a Primitive Structure of region d, or 0.
func (m *MemMgr) GetPrim(d osi.Dir) memory.Addr {
	m.c.Enter(m.sym.getPrim)
	defer m.c.Exit(m.sym.getPrim)
	m.stats.PrimAllocs++
	return m.pop(&m.reg[d].prims)
}

// PutPrim returns a Primitive Structure.
func (m *MemMgr) PutPrim(a memory.Addr) {
	m.c.Enter(m.sym.putPrim)
	defer m.c.Exit(m.sym.putPrim)
	r := m.regionOf(a, func(r *region) (memory.Addr, memory.Addr) { return r.prims.base, r.prims.end })
	if r == nil {
		panic(fmt.Sprintf("top: %#x is not a primitive structure", uint64(a)))
	}
	m.push(&r.prims, a)
}

// AllocDesc implements osi.Mem: a Parameter Structure of region d.
func (m *MemMgr) AllocDesc(d osi.Dir) memory.Addr {
	m.c.Enter(m.sym.getParam)
	defer m.c.Exit(m.sym.getParam)
	m.stats.ParamAllocs++
	return m.pop(&m.reg[d].descs)
}

// FreeDesc implements osi.Mem.
func (m *MemMgr) FreeDesc(a memory.Addr) {
	m.c.Enter(m.sym.putParam)
	defer m.c.Exit(m.sym.putParam)
	r := m.regionOf(a, func(r *region) (memory.Addr, memory.Addr) { return r.descs.base, r.descs.end })
	if r == nil {
		panic(fmt.Sprintf("top: %#x is not a parameter structure", uint64(a)))
	}
	m.push(&r.descs, a)
}

// Alloc returns n octets of region d's data area (8-aligned), or 0.
func (m *MemMgr) Alloc(d osi.Dir, n int) memory.Addr {
	c := m.c
	c.Enter(m.sym.alloc)
	defer c.Exit(m.sym.alloc)
	g := &m.reg[d].data
	need := memory.Addr((n + allocHeader + dataUnit - 1) &^ (dataUnit - 1))
	prev := g.head // the word that points at cur
	for cur := m.rd32(g.head); cur != 0; {
		m.stats.FitSteps++
		c.Exec(4) // compare, advance
		size := m.rd32(cur)
		next := m.rd32(cur + 4)
		if size >= need {
			if rest := size - need; rest >= 2*dataUnit {
				// Split: the tail stays free.
				tail := cur + need
				m.wr32(tail, rest)
				m.wr32(tail+4, next)
				m.wr32(prev, tail)
			} else {
				need = size
				m.wr32(prev, next)
			}
			m.wr32(cur, need)
			m.stats.DataAllocs++
			g.inUse += int(need)
			g.peak = max(g.peak, g.inUse)
			return cur + allocHeader
		}
		prev, cur = cur+4, next
	}
	m.stats.Failures++
	return 0
}

// Free returns a data-area allocation.
func (m *MemMgr) Free(a memory.Addr) {
	c := m.c
	c.Enter(m.sym.free)
	defer c.Exit(m.sym.free)
	blk := a - allocHeader
	r := m.regionOf(blk, func(r *region) (memory.Addr, memory.Addr) { return r.data.base, r.data.end })
	if r == nil {
		panic(fmt.Sprintf("top: free of %#x, not in a data area", uint64(a)))
	}
	g := &r.data
	size := m.rd32(blk)
	g.inUse -= int(size)
	// Walk to the first free extent after blk.
	prevNode := memory.Addr(0)
	prev := g.head
	cur := m.rd32(g.head)
	for cur != 0 && cur < blk {
		c.Exec(3)
		prevNode, prev = cur, cur+4
		cur = m.rd32(cur + 4)
	}
	if cur == blk {
		panic(fmt.Sprintf("top: double free of %#x", uint64(a)))
	}
	// Coalesce with the following extent.
	if cur != 0 && blk+size == cur {
		size += m.rd32(cur)
		cur = m.rd32(cur + 4)
	}
	// And with the preceding one.
	if prevNode != 0 {
		psize := m.rd32(prevNode)
		if prevNode+psize == blk {
			m.wr32(prevNode, psize+size)
			m.wr32(prevNode+4, cur)
			return
		}
	}
	m.wr32(blk, size)
	m.wr32(blk+4, cur)
	m.wr32(prev, blk)
}

// AllocBlock implements osi.Mem: a data block from the data area of
// region d.
func (m *MemMgr) AllocBlock(d osi.Dir, n int) memory.Addr {
	a := m.Alloc(d, osi.BlockHeader+n)
	if a == 0 {
		return 0
	}
	m.h.bufs.InitBlock(a, m.reg[d].owner, n)
	return a
}

// FreeBlock implements osi.Mem: a block whose uses reached zero goes
// back to where its owner tag says it came from.
func (m *MemMgr) FreeBlock(blk memory.Addr) {
	c := m.c
	c.Enter(m.sym.blkFree)
	defer c.Exit(m.sym.blkFree)
	switch owner := m.h.bufs.BlockOwner(blk); owner {
	case ownerTxData, ownerRxData:
		m.Free(blk)
	case ownerRxRing, ownerTxRing:
		m.h.ringFree(blk)
	case ownerStatic:
		// A program's own data (its message buffer): never freed.
	default:
		panic(fmt.Sprintf("top: block %#x has owner tag %d", uint64(blk), owner))
	}
}

// Copy implements osi.Mem with the program's memcpy.
func (m *MemMgr) Copy(dst, src memory.Addr, n int) { m.h.copier.Copy(dst, src, n) }

var _ osi.Mem = (*MemMgr)(nil)
