package inet

// Internal tests of fragList, the pure bookkeeping of one datagram's
// fragments (no kernel, no memory): insert is fed fake buffers whose
// address encodes which fragment they came from, and the trim and drop
// callbacks it asks for are recorded.

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/memory"
	"simkron/stack/netdev"
)

// fragBase is where fake fragment id's data would start if its offset
// were 0: fragment id's buffer data begins at fragBase(id)+off, so a
// piece's address says which fragment it is and which datagram byte it
// starts at.
func fragBase(id int) memory.Addr { return memory.Addr(id+1) << 32 }

func fakeBuf(id, off, end int) netdev.Buf {
	return netdev.Buf{Addr: fragBase(id) + memory.Addr(off), Len: end - off}
}

// pieceID returns the fragment a piece's buffer came from.
func pieceID(p piece) int { return int(p.buf.Addr>>32) - 1 }

type trimEvent struct{ ID, N int }

// fragRecorder feeds a fragList and records the callbacks insert makes.
type fragRecorder struct {
	l     fragList
	trims []trimEvent
	drops []int
}

func newFragRecorder() *fragRecorder { return &fragRecorder{l: fragList{total: -1}} }

// trim does what the reassembler's trim does: skip n bytes of the
// piece's buffer and move its offset.
func (r *fragRecorder) trim(p piece, n int) piece {
	r.trims = append(r.trims, trimEvent{pieceID(p), n})
	p.buf.Pull(n)
	p.off += n
	return p
}

func (r *fragRecorder) drop(p piece) { r.drops = append(r.drops, pieceID(p)) }

func (r *fragRecorder) insert(id, off, end int, more bool) insertResult {
	return r.l.insert(off, end, more, fakeBuf(id, off, end), r.trim, r.drop)
}

// span is a kept piece as the tests write it: which fragment, which bytes.
type span struct{ ID, Off, End int }

func (r *fragRecorder) spans() []span {
	var out []span
	for _, p := range r.l.pieces {
		out = append(out, span{pieceID(p), p.off, p.end})
	}
	return out
}

// checkBufs verifies that each piece's buffer still holds exactly its
// bytes: data at fragBase(id)+off, Len = end-off.
func (r *fragRecorder) checkBufs(t *testing.T) {
	t.Helper()
	for _, p := range r.l.pieces {
		id := pieceID(p)
		if p.buf.Addr != fragBase(id)+memory.Addr(p.off) || p.buf.Len != p.end-p.off {
			t.Errorf("piece [%d, %d) of fragment %d: buffer at +%d len %d", p.off, p.end, id, p.buf.Addr-fragBase(id), p.buf.Len)
		}
	}
}

func (r insertResult) String() string {
	switch r {
	case insertAdded:
		return "added"
	case insertDuplicate:
		return "duplicate"
	case insertBad:
		return "bad"
	}
	return fmt.Sprintf("insertResult(%d)", uint8(r))
}

func TestFragListInsert(t *testing.T) {
	type step struct {
		off, end int
		more     bool
		want     insertResult
		complete bool // complete() after the step
	}
	const M, L = true, false // more fragments / last fragment
	tests := []struct {
		name   string
		steps  []step // fragment i of the datagram is steps[i]
		pieces []span
		total  int
		trims  []trimEvent
		drops  []int
	}{{
		name: "in order",
		steps: []step{
			{0, 1480, M, insertAdded, false},
			{1480, 2960, M, insertAdded, false},
			{2960, 3448, L, insertAdded, true},
		},
		pieces: []span{{0, 0, 1480}, {1, 1480, 2960}, {2, 2960, 3448}},
		total:  3448,
	}, {
		name: "reverse order, as Linux sends",
		steps: []step{
			{2960, 3448, L, insertAdded, false},
			{1480, 2960, M, insertAdded, false},
			{0, 1480, M, insertAdded, true},
		},
		pieces: []span{{2, 0, 1480}, {1, 1480, 2960}, {0, 2960, 3448}},
		total:  3448,
	}, {
		name: "middle first",
		steps: []step{
			{1480, 2960, M, insertAdded, false},
			{2960, 3000, L, insertAdded, false},
			{0, 1480, M, insertAdded, true},
		},
		pieces: []span{{2, 0, 1480}, {0, 1480, 2960}, {1, 2960, 3000}},
		total:  3000,
	}, {
		name: "single unfragmented-size last fragment at 0",
		steps: []step{
			{0, 100, L, insertAdded, true},
		},
		pieces: []span{{0, 0, 100}},
		total:  100,
	}, {
		name: "new fragment's front overlaps its predecessor: front trimmed",
		steps: []step{
			{0, 16, M, insertAdded, false},
			{8, 24, M, insertAdded, false},
			{24, 30, L, insertAdded, true},
		},
		pieces: []span{{0, 0, 16}, {1, 16, 24}, {2, 24, 30}},
		total:  30,
		trims:  []trimEvent{{1, 8}},
	}, {
		name: "new fragment overlaps the front of a later one: the later one is trimmed",
		steps: []step{
			{8, 24, M, insertAdded, false},
			{0, 16, M, insertAdded, false},
		},
		pieces: []span{{1, 0, 16}, {0, 16, 24}},
		total:  -1,
		trims:  []trimEvent{{0, 8}},
	}, {
		name: "overlaps on both sides",
		steps: []step{
			{0, 16, M, insertAdded, false},
			{24, 40, L, insertAdded, false},
			{8, 32, M, insertAdded, true},
		},
		pieces: []span{{0, 0, 16}, {2, 16, 32}, {1, 32, 40}},
		total:  40,
		trims:  []trimEvent{{2, 8}, {1, 8}},
	}, {
		name: "a fragment covering later ones drops them and trims the one it overlaps",
		steps: []step{
			{8, 16, M, insertAdded, false},
			{16, 24, M, insertAdded, false},
			{24, 40, L, insertAdded, false},
			{0, 32, M, insertAdded, true},
		},
		pieces: []span{{3, 0, 32}, {2, 32, 40}},
		total:  40,
		trims:  []trimEvent{{2, 8}},
		drops:  []int{0, 1},
	}, {
		name: "a fragment covering everything, the last included",
		steps: []step{
			{8, 16, M, insertAdded, false},
			{16, 24, L, insertAdded, false},
			{0, 24, L, insertAdded, true},
		},
		pieces: []span{{2, 0, 24}},
		total:  24,
		drops:  []int{0, 1},
	}, {
		name: "exact duplicate replaces the piece",
		steps: []step{
			{0, 8, M, insertAdded, false},
			{0, 8, M, insertAdded, false},
			{8, 12, L, insertAdded, true},
			{8, 12, L, insertAdded, true},
		},
		pieces: []span{{1, 0, 8}, {3, 8, 12}},
		total:  12,
		drops:  []int{0, 2},
	}, {
		name: "fragment inside its predecessor is a duplicate",
		steps: []step{
			{0, 32, M, insertAdded, false},
			{8, 16, M, insertDuplicate, false},
			{8, 32, M, insertDuplicate, false},
		},
		pieces: []span{{0, 0, 32}},
		total:  -1,
	}, {
		name: "two different last fragments",
		steps: []step{
			{16, 24, L, insertAdded, false},
			{32, 40, L, insertBad, false},
			{8, 16, L, insertBad, false},
			{0, 16, M, insertAdded, true},
		},
		pieces: []span{{3, 0, 16}, {0, 16, 24}},
		total:  24,
	}, {
		name: "last fragment ends before data already held",
		steps: []step{
			{0, 8, M, insertAdded, false},
			{8, 24, M, insertAdded, false},
			{8, 16, L, insertBad, false},
		},
		pieces: []span{{0, 0, 8}, {1, 8, 24}},
		total:  -1,
	}, {
		name: "middle fragment not a multiple of 8",
		steps: []step{
			{0, 12, M, insertBad, false},
			{0, 1481, M, insertBad, false},
		},
		total: -1,
	}, {
		name: "fragment beyond the total",
		steps: []step{
			{16, 24, L, insertAdded, false},
			{24, 32, M, insertBad, false},
			{16, 32, M, insertBad, false},
			{0, 16, M, insertAdded, true},
		},
		pieces: []span{{3, 0, 16}, {0, 16, 24}},
		total:  24,
	}, {
		name: "more fragment ending exactly at the total",
		steps: []step{
			{8, 16, L, insertAdded, false},
			{0, 16, M, insertAdded, true},
		},
		pieces: []span{{1, 0, 16}},
		total:  16,
		drops:  []int{0},
	}, {
		name: "empty and oversized fragments",
		steps: []step{
			{8, 8, M, insertBad, false},
			{16, 8, L, insertBad, false},
			{65528, 65544, L, insertBad, false},
		},
		total: -1,
	}, {
		name: "holes keep it incomplete",
		steps: []step{
			{0, 8, M, insertAdded, false},
			{16, 24, M, insertAdded, false},
			{32, 36, L, insertAdded, false},
			{24, 32, M, insertAdded, false},
			{8, 16, M, insertAdded, true},
		},
		pieces: []span{{0, 0, 8}, {4, 8, 16}, {1, 16, 24}, {3, 24, 32}, {2, 32, 36}},
		total:  36,
	}, {
		name: "all but the last: incomplete without a total",
		steps: []step{
			{0, 8, M, insertAdded, false},
			{8, 16, M, insertAdded, false},
		},
		pieces: []span{{0, 0, 8}, {1, 8, 16}},
		total:  -1,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newFragRecorder()
			for i, s := range tc.steps {
				before, total := slices.Clone(r.l.pieces), r.l.total
				nt, nd := len(r.trims), len(r.drops)
				got := r.insert(i, s.off, s.end, s.more)
				if got != s.want {
					t.Errorf("step %d [%d, %d) more=%v: %v, want %v", i, s.off, s.end, s.more, got, s.want)
				}
				if got != insertAdded {
					// Nothing may change: the caller frees the fragment
					// (or the whole queue) itself.
					if len(r.trims) != nt || len(r.drops) != nd || !slices.Equal(before, r.l.pieces) || total != r.l.total {
						t.Errorf("step %d: %v changed the list or made callbacks", i, got)
					}
				}
				if c := r.l.complete(); c != s.complete {
					t.Errorf("step %d: complete() = %v, want %v", i, c, s.complete)
				}
				r.checkBufs(t)
			}
			if diff := cmp.Diff(tc.pieces, r.spans()); diff != "" {
				t.Errorf("pieces (-want +got):\n%s", diff)
			}
			if r.l.total != tc.total {
				t.Errorf("total %d, want %d", r.l.total, tc.total)
			}
			if diff := cmp.Diff(tc.trims, r.trims); diff != "" {
				t.Errorf("trims (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.drops, r.drops); diff != "" {
				t.Errorf("drops (-want +got):\n%s", diff)
			}
		})
	}
}

// The pieces are never more than the fragments inserted, however they
// overlap: each insert adds at most one.
func TestFragListBounded(t *testing.T) {
	r := newFragRecorder()
	id := 0
	for round := range 50 {
		for off := 0; off < 800; off += 8 {
			end := off + 8 + 8*((off/8+round)%5)
			if res := r.insert(id, off, end, true); res == insertBad {
				t.Fatalf("insert [%d, %d): bad", off, end)
			}
			id++
			if len(r.l.pieces) > id {
				t.Fatalf("%d pieces after %d inserts", len(r.l.pieces), id)
			}
		}
	}
	// Every byte of [0, 832) is covered exactly once.
	at := 0
	for _, p := range r.l.pieces {
		if p.off != at || p.end <= p.off {
			t.Fatalf("pieces not contiguous at %d: %v", at, r.spans())
		}
		at = p.end
	}
	if at != 832 {
		t.Fatalf("covered [0, %d), want [0, 832)", at)
	}
	r.checkBufs(t)
	if len(r.drops)+len(r.l.pieces) > id {
		t.Fatalf("%d drops + %d pieces > %d inserts", len(r.drops), len(r.l.pieces), id)
	}
}
