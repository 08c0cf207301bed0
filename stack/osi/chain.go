package osi

import (
	"encoding/binary"
	"fmt"

	"simkron/cpu"
	"simkron/memory"
)

// Chain is a PDU: the address of its first descriptor, 0 for none.
type Chain memory.Addr

// Descriptor (Parameter Structure) layout, little-endian as on the x86:
//
//	off  size  field
//	0    4     link: the next descriptor of the chain, 0 at the end
//	4    4     data: address of this piece's first octet
//	8    2     len: octets in this piece
//	10   2     nalloc: holders of this descriptor (allocation count)
//	12   4     other: the primitive's other parameters, 0 for none
//	16   4     block: the data block the piece lies in; one of the
//	           block's uses is this descriptor's
//	20   12    reserved
const (
	DescSize    = 32
	descLink    = 0
	descData    = 4
	descLen     = 8
	descNalloc  = 10
	descOther   = 12
	descBlock   = 16
	descHotSize = 20 // the fields a walk reads
)

// Data block header, in front of the data:
//
//	off  size  field
//	0    2     uses: descriptors pointing into the block
//	2    2     owner: the environment's tag (which region or buffer)
//	4    4     size: data octets after the header
const (
	BlockHeader = 8
	blkUses     = 0
	blkOwner    = 2
	blkSize     = 4
)

// desc is a descriptor's hot fields, read in one go.
type desc struct {
	link, data memory.Addr
	n, nalloc  int
	block      memory.Addr
}

// Bufs is the chain machinery over an environment's Mem. Its functions
// are library routines: their layer is the caller's.
type Bufs struct {
	c   *cpu.CPU
	mem Mem
	tmp [DescSize]byte
	sym struct {
		alloc, prepend, slice, free, hold, pull, length, read, copyOut, appnd *cpu.Symbol
	}
	// Stats count the operations.
	Stats BufStats
}

// BufStats counts chain operations and failures.
type BufStats struct {
	Descs, Blocks      uint64 // allocated
	DescFrees, Blocks0 uint64 // freed (Blocks0: blocks whose count fell to 0)
	AllocFailures      uint64
	Copied             uint64 // octets copied out contiguously
}

// Costs of the chain routines, in instructions per call: small C
// functions of a few field loads and stores each (the loads and stores
// themselves are charged as references at the descriptors' addresses).
var (
	defBufAlloc   = cpu.Def{Name: "pdu_alloc", Layer: cpu.LayerInherit, Instructions: 30, CodeBytes: 160, Why: "a Parameter Structure and a data block (two calls with the flow: 8), failure tests (4), the descriptor's link, data, length, allocation count and block (5 far stores: 10), the chain returned (2), prologue and epilogue (6)"}
	defBufPrepend = cpu.Def{Name: "pdu_prepend", Layer: cpu.LayerInherit, Instructions: 35, CodeBytes: 192, Why: "PCI insertion by chaining: the PCI's block and its descriptor (two calls: 8), failure tests and undo (5), the descriptor's fields with the link to the SDU's chain (5 far stores: 10), the PCI's address returned (4), counted (2), prologue and epilogue (6)"}
	defBufSlice   = cpu.Def{Name: "pdu_slice", Layer: cpu.LayerInherit, Instructions: 40, CodeBytes: 256, Why: "segmentation by pointer manipulation: set-up, the walk to the offset and the chain's end (20); each piece made 20 more: its descriptor (call: 4), the block's use raised (far load and store: 4), its fields (far stores: 8), linked (4)"}
	defBufFree    = cpu.Def{Name: "pdu_free", Layer: cpu.LayerInherit, Instructions: 20, CodeBytes: 160, Why: "per descriptor: its allocation count loaded and decremented (far: 4), still held: stored, stop (3); at zero the block's use dropped (call: 4), the descriptor freed (call: 4), the link followed (2), loop (3); each further descriptor 10 more"}
	defBufHold    = cpu.Def{Name: "pdu_hold", Layer: cpu.LayerInherit, Instructions: 8, CodeBytes: 48, Why: "retention without a copy: the head's allocation count loaded, incremented, stored (far: 5), return (3)"}
	defBufPull    = cpu.Def{Name: "pdu_pull", Layer: cpu.LayerInherit, Instructions: 14, CodeBytes: 96, Why: "strip a received header: per piece the data pointer advanced and the length shortened (far loads and stores: 8), what is left to strip and the link (4), return (2)"}
	defBufLen     = cpu.Def{Name: "pdu_len", Layer: cpu.LayerInherit, Instructions: 6, CodeBytes: 64, Why: "per descriptor: its length added and its link followed (far loads: 4), loop (2)"}
	defBufRead    = cpu.Def{Name: "pdu_read", Layer: cpu.LayerInherit, Instructions: 16, CodeBytes: 128, Why: "gather header octets: set-up (4), per piece the offset test and the octets moved (REP MOVSB set-up: 6), advance (4), return (2)"}
	defBufCopyOut = cpu.Def{Name: "pdu_copyout", Layer: cpu.LayerInherit, Instructions: 12, CodeBytes: 128, Why: "the contiguous copy: per piece its pointer and length (far loads: 4), memcpy (call with three arguments: 5), the destination advanced (3)"}
	defBufAppend  = cpu.Def{Name: "pdu_append", Layer: cpu.LayerInherit, Instructions: 8, CodeBytes: 64, Why: "reassembly by chaining: the walk to the last descriptor (loop set-up: 4), the next chain linked (far store: 2), return (2)"}
)

// NewBufs returns the chain machinery. define places and files each
// routine (Env.Define).
func NewBufs(c *cpu.CPU, define func(cpu.Def, Category) *cpu.Symbol, mem Mem) *Bufs {
	b := &Bufs{c: c, mem: mem}
	b.sym.alloc = define(defBufAlloc, CatMemory)
	b.sym.prepend = define(defBufPrepend, CatMemory)
	b.sym.slice = define(defBufSlice, CatMemory)
	b.sym.free = define(defBufFree, CatMemory)
	b.sym.hold = define(defBufHold, CatMemory)
	b.sym.pull = define(defBufPull, CatOther)
	b.sym.length = define(defBufLen, CatOther)
	b.sym.read = define(defBufRead, CatOther)
	b.sym.copyOut = define(defBufCopyOut, CatOther)
	b.sym.appnd = define(defBufAppend, CatOther)
	return b
}

// Mem returns the memory the chains live in.
func (b *Bufs) Mem() Mem { return b.mem }

func (b *Bufs) load(d memory.Addr) desc {
	p := b.tmp[:descHotSize]
	b.c.Read(d, p)
	return desc{
		link:   memory.Addr(binary.LittleEndian.Uint32(p[descLink:])),
		data:   memory.Addr(binary.LittleEndian.Uint32(p[descData:])),
		n:      int(binary.LittleEndian.Uint16(p[descLen:])),
		nalloc: int(binary.LittleEndian.Uint16(p[descNalloc:])),
		block:  memory.Addr(binary.LittleEndian.Uint32(p[descBlock:])),
	}
}

func (b *Bufs) store(d memory.Addr, x desc) {
	p := b.tmp[:descHotSize]
	binary.LittleEndian.PutUint32(p[descLink:], uint32(x.link))
	binary.LittleEndian.PutUint32(p[descData:], uint32(x.data))
	binary.LittleEndian.PutUint16(p[descLen:], uint16(x.n))
	binary.LittleEndian.PutUint16(p[descNalloc:], uint16(x.nalloc))
	binary.LittleEndian.PutUint32(p[descOther:], 0)
	binary.LittleEndian.PutUint32(p[descBlock:], uint32(x.block))
	b.c.Write(d, p)
}

func (b *Bufs) put32(a memory.Addr, v uint32) {
	binary.LittleEndian.PutUint32(b.tmp[:4], v)
	b.c.Write(a, b.tmp[:4])
}

func (b *Bufs) put16(a memory.Addr, v uint16) {
	binary.LittleEndian.PutUint16(b.tmp[:2], v)
	b.c.Write(a, b.tmp[:2])
}

func (b *Bufs) get16(a memory.Addr) uint16 {
	b.c.Read(a, b.tmp[:2])
	return binary.LittleEndian.Uint16(b.tmp[:2])
}

// BlockUses returns a block's use count (read in simulated memory).
func (b *Bufs) BlockUses(blk memory.Addr) int { return int(b.get16(blk + blkUses)) }

// InitBlock writes a fresh block's header: one use, owner tag, size. The
// environment's AllocBlock calls it.
func (b *Bufs) InitBlock(blk memory.Addr, owner uint16, size int) {
	var h [BlockHeader]byte
	binary.LittleEndian.PutUint16(h[blkUses:], 1)
	binary.LittleEndian.PutUint16(h[blkOwner:], owner)
	binary.LittleEndian.PutUint32(h[blkSize:], uint32(size))
	b.c.Write(blk, h[:])
}

// BlockOwner returns the owner tag of a block (uncharged: the
// environment's free routine has just read the header).
func (b *Bufs) BlockOwner(blk memory.Addr) uint16 {
	var h [2]byte
	_ = b.c.System().Phys.Read(blk+blkOwner, h[:])
	return binary.LittleEndian.Uint16(h[:])
}

// UseBlock adds one use to blk: a program that lends its own buffer to
// a chain again and again keeps one use for itself.
func (b *Bufs) UseBlock(blk memory.Addr) {
	b.put16(blk+blkUses, b.get16(blk+blkUses)+1)
}

// dropBlock removes one use of blk and frees it at zero.
func (b *Bufs) dropBlock(blk memory.Addr) {
	n := b.get16(blk + blkUses)
	if n == 0 {
		panic(fmt.Sprintf("osi: block %#x used with a zero use count", uint64(blk)))
	}
	n--
	b.put16(blk+blkUses, n)
	if n == 0 {
		b.Stats.Blocks0++
		b.mem.FreeBlock(blk)
	}
}

// Wrap returns a one-piece chain over n octets at data inside blk,
// taking over one use of blk (the caller's). It returns 0 when no
// descriptor is left; the use is then still the caller's.
func (b *Bufs) Wrap(dir Dir, blk, data memory.Addr, n int) Chain {
	c := b.c
	c.Enter(b.sym.alloc)
	defer c.Exit(b.sym.alloc)
	d := b.mem.AllocDesc(dir)
	if d == 0 {
		b.Stats.AllocFailures++
		return 0
	}
	b.Stats.Descs++
	b.store(d, desc{data: data, n: n, nalloc: 1, block: blk})
	return Chain(d)
}

// New returns a one-piece chain over a fresh block of n octets and the
// address of its data, or 0 when memory is exhausted.
func (b *Bufs) New(dir Dir, n int) (Chain, memory.Addr) {
	c := b.c
	c.Enter(b.sym.alloc)
	defer c.Exit(b.sym.alloc)
	blk := b.mem.AllocBlock(dir, n)
	if blk == 0 {
		b.Stats.AllocFailures++
		return 0, 0
	}
	b.Stats.Blocks++
	d := b.mem.AllocDesc(dir)
	if d == 0 {
		b.Stats.AllocFailures++
		b.dropBlock(blk)
		return 0, 0
	}
	b.Stats.Descs++
	data := blk + BlockHeader
	b.store(d, desc{data: data, n: n, nalloc: 1, block: blk})
	return Chain(d), data
}

// Prepend chains a new n-octet piece in front of ch (PCI insertion) and
// returns the new chain and the piece's address, where the caller writes
// its header. On exhaustion it returns 0 and ch is untouched.
func (b *Bufs) Prepend(dir Dir, ch Chain, n int) (Chain, memory.Addr) {
	c := b.c
	c.Enter(b.sym.prepend)
	defer c.Exit(b.sym.prepend)
	blk := b.mem.AllocBlock(dir, n)
	if blk == 0 {
		b.Stats.AllocFailures++
		return 0, 0
	}
	b.Stats.Blocks++
	d := b.mem.AllocDesc(dir)
	if d == 0 {
		b.Stats.AllocFailures++
		b.dropBlock(blk)
		return 0, 0
	}
	b.Stats.Descs++
	data := blk + BlockHeader
	b.store(d, desc{link: memory.Addr(ch), data: data, n: n, nalloc: 1, block: blk})
	return Chain(d), data
}

// Hold raises the allocation count of ch's head: the chain survives one
// more Free. A layer that must keep a PDU (for retransmission) holds it
// before passing it down.
func (b *Bufs) Hold(ch Chain) {
	c := b.c
	c.Enter(b.sym.hold)
	defer c.Exit(b.sym.hold)
	a := memory.Addr(ch) + descNalloc
	b.put16(a, b.get16(a)+1)
}

// Free releases ch: walking from the head, each descriptor's count goes
// down; one that reaches zero gives up its block use and is freed, and
// the walk goes on to the next; one still held stops the walk (its holder
// owns the rest of the chain).
func (b *Bufs) Free(ch Chain) {
	if ch == 0 {
		return
	}
	c := b.c
	c.Enter(b.sym.free)
	defer c.Exit(b.sym.free)
	for d := memory.Addr(ch); d != 0; {
		x := b.load(d)
		if x.nalloc <= 0 {
			panic(fmt.Sprintf("osi: free of descriptor %#x with allocation count %d", uint64(d), x.nalloc))
		}
		if x.nalloc > 1 {
			b.put16(d+descNalloc, uint16(x.nalloc-1))
			return
		}
		c.Exec(defBufFree.Instructions / 2) // the next round of the walk
		if x.block != 0 {
			b.dropBlock(x.block)
		}
		b.mem.FreeDesc(d)
		b.Stats.DescFrees++
		d = x.link
	}
}

// Len returns the octets of ch.
func (b *Bufs) Len(ch Chain) int {
	c := b.c
	c.Enter(b.sym.length)
	defer c.Exit(b.sym.length)
	n := 0
	for d := memory.Addr(ch); d != 0; {
		x := b.load(d)
		n += x.n
		d = x.link
		c.Exec(defBufLen.Instructions)
	}
	return n
}

// Pull strips n octets from the front of ch (a received header), by
// moving data pointers; emptied pieces stay in the chain. Pulling more
// than the chain holds is a simulator bug.
func (b *Bufs) Pull(ch Chain, n int) {
	c := b.c
	c.Enter(b.sym.pull)
	defer c.Exit(b.sym.pull)
	for d := memory.Addr(ch); n > 0; {
		if d == 0 {
			panic(fmt.Sprintf("osi: pull past the end of chain %#x", uint64(ch)))
		}
		x := b.load(d)
		k := min(n, x.n)
		if k > 0 {
			b.put32(d+descData, uint32(x.data)+uint32(k))
			b.put16(d+descLen, uint16(x.n-k))
		}
		n -= k
		d = x.link
	}
}

// Truncate shortens ch to its first n octets (an 802.3 frame's padding
// after the length its header gives); pieces past n become empty.
func (b *Bufs) Truncate(ch Chain, n int) {
	c := b.c
	c.Enter(b.sym.pull)
	defer c.Exit(b.sym.pull)
	for d := memory.Addr(ch); d != 0; {
		x := b.load(d)
		if x.n > n {
			b.put16(d+descLen, uint16(n))
			x.n = n
		}
		n -= x.n
		d = x.link
	}
}

// Read copies octets [off, off+len(p)) of ch into p (a header to parse)
// and returns how many there were.
func (b *Bufs) Read(ch Chain, off int, p []byte) int {
	c := b.c
	c.Enter(b.sym.read)
	defer c.Exit(b.sym.read)
	got := 0
	for d := memory.Addr(ch); d != 0 && got < len(p); {
		x := b.load(d)
		if off < x.n {
			k := min(x.n-off, len(p)-got)
			c.Read(x.data+memory.Addr(off), p[got:got+k])
			got += k
			off = 0
		} else {
			off -= x.n
		}
		d = x.link
	}
	return got
}

// Pieces calls fn for each non-empty piece of ch, in order, with its
// address and length (for a checksum over the chain). It charges the
// walk's descriptor loads.
func (b *Bufs) Pieces(ch Chain, fn func(a memory.Addr, n int)) {
	for d := memory.Addr(ch); d != 0; {
		x := b.load(d)
		if x.n > 0 {
			fn(x.data, x.n)
		}
		d = x.link
	}
}

// CopyOut copies the octets of ch contiguously to dst and returns how
// many: the copy a controller that needs contiguous data forces on the
// layer above it.
func (b *Bufs) CopyOut(ch Chain, dst memory.Addr) int {
	c := b.c
	c.Enter(b.sym.copyOut)
	defer c.Exit(b.sym.copyOut)
	n := 0
	for d := memory.Addr(ch); d != 0; {
		x := b.load(d)
		if x.n > 0 {
			b.mem.Copy(dst+memory.Addr(n), x.data, x.n)
			n += x.n
		}
		d = x.link
	}
	b.Stats.Copied += uint64(n)
	return n
}

// Slice returns a new chain of n octets starting off octets into ch,
// made of new descriptors pointing into ch's blocks (each block gains a
// use): segmentation and reassembly trimming without a copy. ch is not
// changed. It returns 0 when descriptors run out (nothing is left
// allocated then) or when the range is empty or leaves ch.
func (b *Bufs) Slice(dir Dir, ch Chain, off, n int) Chain {
	c := b.c
	c.Enter(b.sym.slice)
	defer c.Exit(b.sym.slice)
	if n <= 0 || off < 0 {
		return 0
	}
	var head, tail memory.Addr
	var tailDesc desc
	for d := memory.Addr(ch); d != 0 && n > 0; {
		x := b.load(d)
		if off >= x.n {
			off -= x.n
			d = x.link
			continue
		}
		k := min(x.n-off, n)
		nd := b.mem.AllocDesc(dir)
		if nd == 0 {
			b.Stats.AllocFailures++
			if tail != 0 {
				b.store(tail, tailDesc) // terminate, then free what was made
			}
			b.Free(Chain(head))
			return 0
		}
		b.Stats.Descs++
		c.Exec(defBufSlice.Instructions / 2)
		if x.block != 0 {
			b.UseBlock(x.block)
		}
		nx := desc{data: x.data + memory.Addr(off), n: k, nalloc: 1, block: x.block}
		if tail == 0 {
			head = nd
		} else {
			tailDesc.link = nd
			b.store(tail, tailDesc)
		}
		tail, tailDesc = nd, nx
		b.store(nd, nx)
		n -= k
		off = 0
		d = x.link
	}
	if n > 0 {
		if head != 0 {
			b.Free(Chain(head))
		}
		return 0
	}
	return Chain(head)
}

// Append links chain next after the last descriptor of ch and returns the
// joined chain (ch, or next when ch is empty).
func (b *Bufs) Append(ch, next Chain) Chain {
	if ch == 0 {
		return next
	}
	c := b.c
	c.Enter(b.sym.appnd)
	defer c.Exit(b.sym.appnd)
	d := memory.Addr(ch)
	for {
		x := b.load(d)
		if x.link == 0 {
			b.put32(d+descLink, uint32(next))
			return ch
		}
		d = x.link
	}
}
