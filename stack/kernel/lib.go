package kernel

import (
	"encoding/binary"
	"math/bits"

	"simkron/cpu"
	"simkron/memory"
)

// Library routines every layer calls. Their layer is the caller's, so a
// copy made by UDP counts as UDP.
var (
	defBcopy    = cpu.Def{Name: "bcopy", Layer: cpu.LayerInherit, Instructions: 14, CodeBytes: 128, Why: "argument checks, alignment of the head, loop set-up, tail bytes"}
	defCksum    = cpu.Def{Name: "in_cksum", Layer: cpu.LayerInherit, Instructions: 18, CodeBytes: 192, Why: "set-up, odd-byte handling, fold to 16 bits and complement (RFC 1071)"}
	defCsumCopy = cpu.Def{Name: "csum_partial_copy", Layer: cpu.LayerInherit, Instructions: 22, CodeBytes: 256, Why: "set-up, alignment, tail bytes of the fused copy and checksum (Linux)"}
)

// Per-word loop costs, overridable in [costs] like a function's.
const (
	costBcopyWord    = "bcopy.word"
	costCksumWord    = "in_cksum.word"
	costCsumCopyWord = "csum_partial_copy.word"
)

type lib struct {
	bcopy, cksum, csumCopy             *cpu.Symbol
	bcopyWord, cksumWord, csumCopyWord int64
	scratch                            []byte
}

func (k *Kernel) defineLib() {
	k.lib.bcopy = k.syms.Define(defBcopy)
	k.lib.cksum = k.syms.Define(defCksum)
	k.lib.bcopyWord = k.syms.Cost(costBcopyWord, 3, "load, store, loop branch per 32-bit word (4.4BSD bcopy inner loop)")
	k.lib.cksumWord = k.syms.Cost(costCksumWord, 3, "load, add with carry, loop branch per 32-bit word (Linux csum_partial)")
	k.lib.csumCopy = k.syms.Define(defCsumCopy)
	k.lib.csumCopyWord = k.syms.Cost(costCsumCopyWord, 4, "load, add with carry, store, loop branch per 32-bit word (Linux csum_partial_copy)")
}

// Bcopy copies n bytes from src to dst in simulated memory (overlap
// allowed), charging the loop's instructions and its interleaved data
// references.
func (k *Kernel) Bcopy(dst, src memory.Addr, n int) {
	c := k.cpu
	c.Enter(k.lib.bcopy)
	if n > 0 {
		k.move(dst, src, n, "bcopy")
		c.ReferenceCopy(dst, src, uint64(n))
		c.Exec(int64((n+3)/4) * k.lib.bcopyWord)
	}
	c.Exit(k.lib.bcopy)
}

// move copies n bytes of simulated memory from src to dst (overlap
// allowed) and returns them, for reading before the next move; a range
// outside memory is a guest error of the routine called what.
func (k *Kernel) move(dst, src memory.Addr, n int, what string) []byte {
	// Each range within a page: one copy in place (copy moves
	// overlapping bytes as memmove does), the bytes returned where they
	// now are.
	if from, ok := k.sys.Phys.View(src, uint64(n), false); ok {
		if to, ok := k.sys.Phys.View(dst, uint64(n), true); ok {
			copy(to, from)
			return to
		}
	}
	if cap(k.lib.scratch) < n {
		k.lib.scratch = make([]byte, n)
	}
	buf := k.lib.scratch[:n]
	if err := k.sys.Phys.Read(src, buf); err != nil {
		k.sys.Guest.Report(k.cpu.LocalTime(), k.name, "%s: %v", what, err)
	} else if err := k.sys.Phys.Write(dst, buf); err != nil {
		k.sys.Guest.Report(k.cpu.LocalTime(), k.name, "%s: %v", what, err)
	}
	return buf
}

// Cksum returns the Internet checksum (RFC 1071: the complement of the
// one's-complement sum of 16-bit big-endian words) of n bytes at a, read
// from simulated memory, charging a load per word.
func (k *Kernel) Cksum(a memory.Addr, n int) uint16 {
	return ^Fold(k.CsumPartial(a, n, 0))
}

// CsumPartial adds the n bytes at a to the running one's-complement sum
// (Linux csum_partial), charging a load per word. The bytes must start an
// even number of bytes into the checksummed data.
func (k *Kernel) CsumPartial(a memory.Addr, n int, sum uint32) uint32 {
	c := k.cpu
	c.Enter(k.lib.cksum)
	if n > 0 {
		odd := false
		err := k.sys.Phys.Chunks(a, uint64(n), false, func(b []byte) {
			sum, odd = SumBytes(sum, b, odd)
		})
		if err != nil {
			k.sys.Guest.Report(c.LocalTime(), k.name, "in_cksum: %v", err)
		}
		c.ReferenceRange(a, uint64(n), memory.Read)
		c.Exec(int64((n+3)/4) * k.lib.cksumWord)
	}
	c.Exit(k.lib.cksum)
	return sum
}

// CsumCopy copies n bytes from src to dst and adds them to the running
// sum in the same pass (Linux csum_partial_copy: a load, an add and a
// store per word). The bytes must start an even number of bytes into the
// checksummed data.
func (k *Kernel) CsumCopy(dst, src memory.Addr, n int, sum uint32) uint32 {
	c := k.cpu
	c.Enter(k.lib.csumCopy)
	if n > 0 {
		sum, _ = SumBytes(sum, k.move(dst, src, n, "csum_partial_copy"), false)
		c.ReferenceCopy(dst, src, uint64(n))
		c.Exec(int64((n+3)/4) * k.lib.csumCopyWord)
	}
	c.Exit(k.lib.csumCopy)
	return sum
}

// SumBytes adds b to a one's-complement running sum. odd says the bytes so
// far were odd in number, so b starts with the low half of a word; the new
// parity is returned. The sum stays below 2^32 by folding as it goes.
func SumBytes(sum uint32, b []byte, odd bool) (uint32, bool) {
	i := 0
	if odd && len(b) > 0 {
		sum += uint32(b[0])
		i = 1
		odd = false
	}
	// Whole 8-byte steps: their one's-complement sum as 64-bit words
	// (RFC 1071 sec. 2(A), (C): deferred carries, any word width), folded
	// back below 2^31. That is the sum of the 16-bit words modulo 0xffff,
	// and zero only when they all are, so it folds to the same checksum.
	if n := (len(b) - i) &^ 7; n > 0 {
		acc := onesAdd(sum64(b[i:i+n]), uint64(sum))
		acc = acc>>32 + acc&0xffffffff
		for acc >= 1<<31 {
			acc = acc&0xffff + acc>>16
		}
		sum = uint32(acc)
		i += n
	}
	for ; i+1 < len(b); i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
		if sum >= 1<<31 {
			sum = sum&0xffff + sum>>16
		}
	}
	if i < len(b) {
		sum += uint32(b[i]) << 8
		odd = true
	}
	return sum, odd
}

// sum64 is the one's-complement sum of b as big-endian 64-bit words (len(b)
// a multiple of 8), with end-around carry: two chains of add-with-carry,
// one instruction for every 8 bytes.
func sum64(b []byte) uint64 {
	var x, y, cx, cy uint64
	for len(b) >= 32 {
		p := (*[32]byte)(b)
		x, cx = bits.Add64(x, binary.BigEndian.Uint64(p[0:]), cx)
		y, cy = bits.Add64(y, binary.BigEndian.Uint64(p[8:]), cy)
		x, cx = bits.Add64(x, binary.BigEndian.Uint64(p[16:]), cx)
		y, cy = bits.Add64(y, binary.BigEndian.Uint64(p[24:]), cy)
		b = b[32:]
	}
	for ; len(b) >= 8; b = b[8:] {
		x, cx = bits.Add64(x, binary.BigEndian.Uint64(b), cx)
	}
	return onesAdd(onesAdd(x, cx+cy), y)
}

// onesAdd is a + b with end-around carry. The carry cannot come round
// again: with it, the sum is at most 2^64 - 2.
func onesAdd(a, b uint64) uint64 {
	s, c := bits.Add64(a, b, 0)
	return s + c
}

// Fold reduces a running sum to 16 bits with end-around carry.
func Fold(sum uint32) uint16 {
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return uint16(sum)
}
