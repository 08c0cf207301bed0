package kernel

import (
	"fmt"

	"simkron/sim"
)

// The kernel's memory layout: its text from the machine's kernel_text,
// then room for the protocol code defined after boot, then the heap.
//
//	kernel_text   TextEnd at boot      HeapBase (64 KiB aligned)   HeapEnd
//	|  boot text  |  TextRoom ...      |  heap_size                |
//
// Boot places the heap with PlaceHeap after the text it has defined; the
// machine file's check places it with PlaceHeap after kernel_text +
// MaxBootText, which is never before Boot places it, so that a machine
// the check accepts always boots.
const (
	// TextRoom is the room left after the text at boot for the code the
	// drivers, protocols and programs define later.
	TextRoom = 256 * sim.KiB
	// MaxBootText bounds the text the kernel defines at boot (it defines
	// a few KiB); Boot panics beyond it, as the check would be wrong.
	MaxBootText = 768 * sim.KiB
)

// Layout is where the kernel's heap lies in physical memory.
type Layout struct {
	HeapBase, HeapEnd uint64
}

// PlaceHeap places the heap of a kernel whose text ends at textEnd, with
// params p, in memSize bytes of memory: on the first 64 KiB boundary
// TextRoom past textEnd, heap_size long. The error says it does not fit.
func PlaceHeap(textEnd uint64, p Params, memSize uint64) (Layout, error) {
	base := (textEnd + uint64(TextRoom) + 0xFFFF) &^ 0xFFFF
	l := Layout{HeapBase: base, HeapEnd: base + uint64(p.HeapSize)}
	if l.HeapEnd > memSize {
		return l, fmt.Errorf("heap [0x%x, 0x%x) does not fit in %d bytes of memory", l.HeapBase, l.HeapEnd, memSize)
	}
	return l, nil
}
