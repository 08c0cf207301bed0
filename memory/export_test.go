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

// SetArrangement makes h take the fast paths of arrangement a, if its
// caches are so arranged (ArrangementGeneral always is), so that a test
// can hold the loops made for the 486's caches (copyThrough, readThrough,
// throughWords) to the general ones.
func SetArrangement(h *Hierarchy, a Arrangement) {
	if a == ArrangementGeneral || a == h.arranged() {
		h.arrangement = a
	}
}

// SetPieces sends every copy of h through the general piece loop, so that a
// test can hold the loops for runs of hits (copyHits, copyThrough) to it.
func SetPieces(h *Hierarchy, on bool) { h.pieces = on }

// Reference is h's reference model of one reference (reference), which
// Access specialises.
func Reference(h *Hierarchy, a Addr, kind AccessKind) int64 { return h.reference(a, kind) }

// ExactStateDiff describes the first difference between two caches'
// whole replacement state, or returns "": every entry's tag, flags and
// LRU stamp (the values themselves, not only their order), the LRU clock,
// and the generations FetchMemo relies on. Two ways of driving a
// hierarchy that each take one clock tick per reference leave exactly
// the same state.
func ExactStateDiff(want, got *Cache) string {
	if d := StateDiff(want, got); d != "" {
		return d
	}
	for i := range want.stamps {
		if want.stamps[i] != got.stamps[i] {
			return fmt.Sprintf("%s: entry %d has stamp %d, want %d", got.name, i, got.stamps[i], want.stamps[i])
		}
	}
	if want.clock != got.clock {
		return fmt.Sprintf("%s: clock %d, want %d", got.name, got.clock, want.clock)
	}
	if want.epoch != got.epoch {
		return fmt.Sprintf("%s: epoch %d, want %d", got.name, got.epoch, want.epoch)
	}
	for s := range want.gen {
		if want.gen[s] != got.gen[s] {
			return fmt.Sprintf("%s: set %d has generation %d, want %d", got.name, s, got.gen[s], want.gen[s])
		}
	}
	return ""
}

// Victim4 is the way a fill takes in a four-way set with stamps s.
func Victim4(s [4]uint64) int { return victim4(&s) }
