package memory

import "fmt"

// StateDiff describes the first difference between the replacement state
// of two caches, or returns "": each entry's tag and dirty and stale
// flags, and within each set the order of the ways' LRU stamps (which
// replacement depends on; the stamps' values may differ, as when a range
// of words on one line bumps its stamp once). Tests use it to prove two
// ways of driving a hierarchy leave it in the same state.
func StateDiff(want, got *Cache) string {
	for i := range want.ways {
		if want.ways[i].tag != got.ways[i].tag || want.flags[i] != got.flags[i] {
			return fmt.Sprintf("%s: entry %d is %+v flags %#x, want %+v flags %#x",
				got.name, i, got.ways[i], got.flags[i], want.ways[i], want.flags[i])
		}
	}
	for set := 0; set < len(want.ways); set += want.assoc {
		for i := set; i < set+want.assoc; i++ {
			for j := i + 1; j < set+want.assoc; j++ {
				if (want.ways[i].stamp < want.ways[j].stamp) != (got.ways[i].stamp < got.ways[j].stamp) {
					return fmt.Sprintf("%s: entries %d and %d are in LRU order %d, %d; want %d, %d",
						got.name, i, j, got.ways[i].stamp, got.ways[j].stamp, want.ways[i].stamp, want.ways[j].stamp)
				}
			}
		}
	}
	return ""
}
