package kernel_test

import (
	"testing"

	"simkron/sim"
	"simkron/stack/kernel"
)

func TestPlaceHeap(t *testing.T) {
	p := kernel.Params{HeapSize: 4 * sim.MiB}
	for _, tc := range []struct {
		name         string
		textEnd, mem uint64
		base, end    uint64
		fits         bool
	}{
		// The heap starts on the first 64 KiB boundary TextRoom past the text.
		{"aligned text", 0x100000, 16 << 20, 0x140000, 0x540000, true},
		{"text ending mid-block", 0x100010, 16 << 20, 0x150000, 0x550000, true},
		// The config check places it after kernel_text + MaxBootText: one
		// MiB after a 64 KiB-aligned kernel_text, as before the check and
		// Boot shared this function.
		{"the check's placement", 0x100000 + uint64(kernel.MaxBootText), 16 << 20, 0x200000, 0x600000, true},
		{"too little memory", 0x100000, 0x540000 - 1, 0x140000, 0x540000, false},
		{"exactly enough", 0x100000, 0x540000, 0x140000, 0x540000, true},
	} {
		l, err := kernel.PlaceHeap(tc.textEnd, p, tc.mem)
		if l.HeapBase != tc.base || l.HeapEnd != tc.end || (err == nil) != tc.fits {
			t.Errorf("%s: heap [%#x, %#x), error %v; want [%#x, %#x), fits %v", tc.name, l.HeapBase, l.HeapEnd, err, tc.base, tc.end, tc.fits)
		}
	}
}

// Boot places the heap after the text it defined, never past where the
// config check placed it (after kernel_text + MaxBootText): a machine the
// check accepts boots.
func TestBootPlacesHeapWithinTheCheck(t *testing.T) {
	h := newHost(t)
	text := uint64(h.syms.TextStart())
	boot, err := kernel.PlaceHeap(uint64(h.syms.TextEnd()), kernel.DefaultParams(), 16<<20)
	if err != nil {
		t.Fatal(err)
	}
	check, err := kernel.PlaceHeap(text+uint64(kernel.MaxBootText), kernel.DefaultParams(), 16<<20)
	if err != nil {
		t.Fatal(err)
	}
	if boot.HeapBase > check.HeapBase {
		t.Errorf("Boot's heap at %#x, past the check's at %#x", boot.HeapBase, check.HeapBase)
	}
	a, ok := h.kern.Allocator().Alloc(64)
	if !ok || uint64(a) < boot.HeapBase || uint64(a) >= boot.HeapEnd {
		t.Errorf("the first block at %#x (%v), outside the heap [%#x, %#x)", a, ok, boot.HeapBase, boot.HeapEnd)
	}
}
