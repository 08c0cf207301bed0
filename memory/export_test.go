package memory

import "fmt"

// StateDiff describes the first difference between the replacement state
// of two caches, or returns "": each entry's tag and dirty and stale
// flags, and within each set the order of the ways' LRU stamps (which
// replacement depends on; the stamps' values may differ, as when a range
// of words on one line bumps its stamp once). Tests use it to prove two
// ways of driving a hierarchy leave it in the same state.
func StateDiff(want, got *Cache) string {
	for i := range want.tags {
		if want.tags[i] != got.tags[i] || want.flags[i] != got.flags[i] {
			return fmt.Sprintf("%s: entry %d is tag %#x stamp %d flags %#x, want tag %#x stamp %d flags %#x",
				got.name, i, got.tags[i], got.stamps[i], got.flags[i], want.tags[i], want.stamps[i], want.flags[i])
		}
	}
	for set := 0; set < len(want.tags); set += want.assoc {
		for i := set; i < set+want.assoc; i++ {
			for j := i + 1; j < set+want.assoc; j++ {
				if (want.stamps[i] < want.stamps[j]) != (got.stamps[i] < got.stamps[j]) {
					return fmt.Sprintf("%s: entries %d and %d are in LRU order %d, %d; want %d, %d",
						got.name, i, j, got.stamps[i], got.stamps[j], want.stamps[i], want.stamps[j])
				}
			}
		}
	}
	return ""
}

// SetThrough turns the loops made for the 486's caches (copyThrough,
// readThrough, throughWords) off or back on, so that a test can hold them to the
// general code.
func SetThrough(h *Hierarchy, on bool) { h.through = on && h.is486() }

// SetPieces sends every copy of h through the general piece loop, so that a
// test can hold the loops for runs of hits (copyHits, copyThrough) to it.
func SetPieces(h *Hierarchy, on bool) { h.pieces = on }
