package memory

import "fmt"

// StateDiff describes the first difference between the replacement state
// of two caches (tags, LRU stamps, dirty and stale flags, LRU clock), or
// returns "": tests use it to prove two ways of driving a hierarchy leave
// it bit for bit the same.
func StateDiff(want, got *Cache) string {
	if want.clock != got.clock {
		return fmt.Sprintf("%s: LRU clock %d, want %d", got.name, got.clock, want.clock)
	}
	for i := range want.ways {
		if want.ways[i] != got.ways[i] || want.flags[i] != got.flags[i] {
			return fmt.Sprintf("%s: entry %d is %+v flags %#x, want %+v flags %#x",
				got.name, i, got.ways[i], got.flags[i], want.ways[i], want.flags[i])
		}
	}
	return ""
}
