package netdev

import (
	"encoding/binary"
	"fmt"

	"simkron/cpu"
	"simkron/memory"
	"simkron/stack/kernel"
)

// Shared buffers: a protocol that keeps what it sent until it is
// acknowledged (TCP's write queue) hands the device a clone that shares
// the data, as Linux 2.x's skb_clone does, and copies the buffer instead
// while an earlier clone is still in the device's hands (skb_copy), so
// that the headers it pushes for the new transmission cannot overwrite
// the ones of a frame the card has not sent yet (Linux 2.2
// net/core/skbuff.c; tcp_retransmit_skb chooses between the two).
//
//	Head          Addr          Addr+Len          DataRef
//	 │ headroom    │ data         │ tailroom         │ count (4 bytes)
//	 └─────────────┴──────────────┴──────────────────┴───────┘
//
// The count lives in the block, where Linux keeps it, so taking and
// dropping a reference touches its cache line. An original buffer's head
// is part of its block, as for every buffer of the model (Alloc makes the
// head and the data one block); a clone has a head of its own, a block of
// SkbHeadSize bytes.

// SkbHeadSize is the size of Linux 2.2's struct sk_buff on a 32-bit
// machine, without the firewall and shaper fields: list links, owner,
// time stamp, device, the three header pointers, dst, cb[48], len, csum,
// five flag bytes, priority, users, protocol, security, truesize, the
// four data pointers and the destructor (include/linux/skbuff.h). It is
// what skb_clone allocates and copies.
const SkbHeadSize = 144

const dataRefLen = 4

var (
	defSkbClone = cpu.Def{Name: "skb_clone", Layer: cpu.LayerInherit, Instructions: 150, CodeBytes: 256,
		Why: "memcpy of the 144-byte head (36 words at bcopy's 3 and its 14 of set-up: 122), dataref and the allocation counters incremented, dst_clone, the clone's links, owner, users and destructor (28); the head's allocation is a kmalloc"}
	defSkbCopy = cpu.Def{Name: "skb_copy", Layer: cpu.LayerInherit, Instructions: 100, CodeBytes: 384,
		Why: "alloc_skb's set-up of the new buffer (20), the offset and reserve/put (10), the head's fields and pointers moved by the offset (34), memcpy of cb[48] (36); the block is a kmalloc and its bytes a bcopy, charged apart"}
)

// AllocShared returns an empty buffer (Len 0) with headroom bytes before
// its data and room bytes after it, in a block that ends with its data
// reference count, set to 1, so that Cloner can share it; ok false when
// the kernel is out of memory.
func AllocShared(k *kernel.Kernel, headroom, room int) (Buf, bool) {
	blk := k.Kmalloc(headroom + room + dataRefLen)
	if blk == 0 {
		return Buf{}, false
	}
	b := Buf{Head: blk, Addr: blk + memory.Addr(headroom), DataRef: blk + memory.Addr(headroom+room)}
	setDataRef(k, b.DataRef, 1)
	return b, true
}

// Tailroom returns the bytes free after the data of a buffer from
// AllocShared (0 for any other).
func (b *Buf) Tailroom() int {
	if b.DataRef == 0 {
		return 0
	}
	return int(b.DataRef - b.Addr - memory.Addr(b.Len))
}

// Cloned reports whether a shared buffer's block has another holder
// (skb_cloned), reading its count. A driver's completion interrupt drops
// the count of the clone it frees, so the core catches up with the clock
// first.
func Cloned(k *kernel.Kernel, b Buf) bool {
	if b.DataRef == 0 {
		return false
	}
	k.CPU().Sync()
	return dataRef(k, b.DataRef) > 1
}

// Cloner clones and copies shared buffers. A protocol that keeps its
// buffers to send them again makes one when it starts: skb_clone and
// skb_copy are placed in the kernel's text then, with the protocol's own
// functions.
type Cloner struct {
	k           *kernel.Kernel
	clone, copy *cpu.Symbol
}

// NewCloner defines skb_clone and skb_copy in k's symbol table.
func NewCloner(k *kernel.Kernel) *Cloner {
	syms := k.Symbols()
	return &Cloner{k: k, clone: syms.Define(defSkbClone), copy: syms.Define(defSkbCopy)}
}

// Clone returns a buffer that shares b's block and data (skb_clone): a
// head of its own, the same data and headroom, the count taken. b must
// come from AllocShared. ok is false when no head could be had.
func (cl *Cloner) Clone(b Buf) (Buf, bool) {
	if b.DataRef == 0 {
		panic(fmt.Sprintf("netdev: clone of a buffer that is not shared: %+v", b))
	}
	k := cl.k
	c := k.CPU()
	c.Enter(cl.clone)
	defer c.Exit(cl.clone)
	h := k.Kmalloc(SkbHeadSize)
	if h == 0 {
		return Buf{}, false
	}
	// memcpy(n, skb, sizeof(*n)): its instructions are in the count,
	// its stores charged here. The original's head is the start of its
	// block in this model, where the headers go, not a structure of its
	// own: its loads are not charged (in Linux they hit, the head having
	// just been written by alloc_skb and the caller).
	c.ReferenceRange(h, SkbHeadSize, memory.Write)
	addDataRef(k, b.DataRef, 1)
	n := b
	n.CloneHead = h
	return n, true
}

// Copy returns a private copy of b (skb_copy): a new block of the same
// size with every byte of the old one, headroom and tailroom included, as
// Linux copies from head to end, its count 1. ok is false when the
// kernel is out of memory.
func (cl *Cloner) Copy(b Buf) (Buf, bool) {
	if b.DataRef == 0 {
		panic(fmt.Sprintf("netdev: copy of a buffer that is not shared: %+v", b))
	}
	k := cl.k
	c := k.CPU()
	c.Enter(cl.copy)
	defer c.Exit(cl.copy)
	size := int(b.DataRef - b.Head)
	blk := k.Kmalloc(size + dataRefLen)
	if blk == 0 {
		return Buf{}, false
	}
	k.Bcopy(blk, b.Head, size)
	n := b
	n.Head, n.CloneHead = blk, 0
	n.Addr = blk + (b.Addr - b.Head)
	n.DataRef = blk + memory.Addr(size)
	setDataRef(k, n.DataRef, 1)
	return n, true
}

func dataRef(k *kernel.Kernel, a memory.Addr) uint32 {
	var w [dataRefLen]byte
	k.CPU().Read(a, w[:])
	return binary.BigEndian.Uint32(w[:])
}

func setDataRef(k *kernel.Kernel, a memory.Addr, n uint32) {
	var w [dataRefLen]byte
	binary.BigEndian.PutUint32(w[:], n)
	k.CPU().Write(a, w[:])
}

// addDataRef adds d to the count at a and returns the new count. A count
// that would fall below zero is a double free of the guest's.
func addDataRef(k *kernel.Kernel, a memory.Addr, d int) uint32 {
	n := dataRef(k, a)
	if d < 0 && n == 0 {
		c := k.CPU()
		c.System().Guest.Report(c.LocalTime(), k.Name(), "kfree_skb: buffer at 0x%x freed more often than it was held", uint64(a))
		return 1 // keep the block: it is already gone
	}
	n = uint32(int64(n) + int64(d))
	setDataRef(k, a, n)
	return n
}
