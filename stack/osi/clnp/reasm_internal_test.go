package clnp

import (
	"testing"
)

// FuzzPieceList inserts spans in any order, overlapping and repeated:
// the kept pieces stay sorted and disjoint, cover exactly the union of
// what was inserted, and complete means that union is [0, total).
func FuzzPieceList(f *testing.F) {
	f.Add(uint16(100), []byte{0, 10, 5, 20, 0, 255})
	f.Add(uint16(8), []byte{0, 8})
	f.Fuzz(func(t *testing.T, total uint16, ops []byte) {
		tot := int(total%4096) + 1
		l := pieceList{total: tot}
		cover := make([]bool, tot)
		for i := 0; i+1 < len(ops); i += 2 {
			off := int(ops[i]) * tot / 256
			end := min(tot, off+int(ops[i+1])*tot/256+1)
			for _, g := range l.gaps(off, end) {
				if g.off < off || g.end > end || g.off >= g.end {
					t.Fatalf("gap %v outside [%d, %d)", g, off, end)
				}
				l.add(g)
			}
			for x := off; x < end; x++ {
				cover[x] = true
			}
			at := -1
			for _, s := range l.spans {
				if s.off < at || s.off >= s.end {
					t.Fatalf("spans overlap or are empty: %v", l.spans)
				}
				at = s.end
			}
		}
		kept := make([]bool, tot)
		for _, s := range l.spans {
			for x := s.off; x < s.end; x++ {
				kept[x] = true
			}
		}
		all := true
		for x := range cover {
			if cover[x] != kept[x] {
				t.Fatalf("octet %d inserted %v, kept %v", x, cover[x], kept[x])
			}
			all = all && cover[x]
		}
		if l.complete() != all {
			t.Fatalf("complete() = %v, union covers all: %v", l.complete(), all)
		}
	})
}
