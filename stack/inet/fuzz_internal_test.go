package inet

// FuzzReassembly feeds fragList arbitrary fragment sequences of one
// datagram and checks the bookkeeping against a byte-level model. Every
// fragment carries the reference datagram's bytes at its offset (its fake
// buffer, see frag_internal_test.go, records where they came from), so
// whatever pieces insert keeps, trims or drops, the bytes they hold must
// be the reference bytes, and must cover exactly what was inserted.

import (
	"encoding/binary"
	"simkron/stack/header"
	"testing"

	"simkron/memory"
)

// refByte is byte i of the reference datagram (not periodic below 64 KiB,
// so a piece pointing at the wrong offset shows).
func refByte(i int) byte { return byte(i*31 + i>>8 + i>>13) }

const maxFuzzFrags = 64

// fuzzFrag is one decoded fragment.
type fuzzFrag struct {
	off, end int
	more     bool
}

// decodeFrags turns the fuzz input into fragments, 4 bytes each:
//
//	b0, b1: offset in 8-byte units: b0 mod 64 (0-504 bytes) unless b3's
//	        top bit is set, then the 13-bit field from b0 and b1
//	b2, b3: length: b2 + 256 * (b3 & 7) (0-2047 bytes)
//	b3 & 8: more fragments
//	b3 & 16: length rounded down to a multiple of 8 (middle fragments
//	        that are well formed)
//
// At most maxFuzzFrags are decoded, so that one input stays fast.
func decodeFrags(data []byte) []fuzzFrag {
	var out []fuzzFrag
	for len(data) >= 4 && len(out) < maxFuzzFrags {
		b := data[:4]
		data = data[4:]
		off := int(b[0]%64) * 8
		if b[3]&0x80 != 0 {
			off = int(binary.LittleEndian.Uint16(b)&0x1fff) * 8
		}
		n := int(b[2]) + int(b[3]&7)<<8
		if b[3]&16 != 0 {
			n &^= 7
		}
		out = append(out, fuzzFrag{off: off, end: off + n, more: b[3]&8 != 0})
	}
	return out
}

func encodeFrags(fs ...fuzzFrag) []byte {
	var out []byte
	for _, f := range fs {
		units, n := f.off/8, f.end-f.off
		var b [4]byte
		binary.LittleEndian.PutUint16(b[:], uint16(units))
		b[2] = byte(n)
		b[3] = byte(n>>8)&7 | 0x80
		if f.more {
			b[3] |= 8
		}
		out = append(out, b[:]...)
	}
	return out
}

func FuzzReassembly(f *testing.F) {
	f.Add(encodeFrags(fuzzFrag{0, 1480, true}, fuzzFrag{1480, 2960, true}, fuzzFrag{2960, 3448, false}))
	f.Add(encodeFrags(fuzzFrag{2960, 3448, false}, fuzzFrag{1480, 2960, true}, fuzzFrag{0, 1480, true}))
	f.Add(encodeFrags(fuzzFrag{8, 24, true}, fuzzFrag{0, 16, true}, fuzzFrag{16, 40, false}, fuzzFrag{0, 8, true}))
	f.Add(encodeFrags(fuzzFrag{16, 24, false}, fuzzFrag{32, 40, false}, fuzzFrag{0, 24, true}, fuzzFrag{0, 16, true}))
	f.Add(encodeFrags(fuzzFrag{0, 16, true}, fuzzFrag{0, 16, true}, fuzzFrag{8, 16, true}, fuzzFrag{16, 17, false}))
	f.Add(encodeFrags(fuzzFrag{65504, 65515, false}, fuzzFrag{0, 2040, true}))
	f.Add(encodeFrags(fuzzFrag{65528, 65535, false}, fuzzFrag{0, 2040, true}))
	f.Add([]byte{1, 0, 200, 8, 0, 0, 16, 24, 2, 0, 3, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		frags := decodeFrags(data)
		var (
			l        fragList
			covered  []bool // bytes of every fragment the list accepted
			ncovered int
			total    int          // the model's total, -1 until a last fragment
			maxEnd   int          // the highest byte accepted
			inserts  int          // inserts since the list was started
			live     map[int]bool // fragments whose buffers the list holds
			src      map[int]fuzzFrag
		)
		covered = make([]bool, maxDatagram+2048)
		reset := func() {
			l = fragList{total: -1}
			clear(covered[:maxEnd])
			ncovered, total, maxEnd, inserts = 0, -1, 0, 0
			live, src = map[int]bool{}, map[int]fuzzFrag{}
		}
		reset()
		for id, fr := range frags {
			// What insert must decide about consistency (RFC 791 and
			// Linux ip_frag_queue): anything else is added or a duplicate.
			wantBad := fr.end <= fr.off || fr.end > maxDatagram-header.IPv4MinimumSize ||
				!fr.more && (total >= 0 && total != fr.end || maxEnd > fr.end) ||
				fr.more && (fr.end%8 != 0 || total >= 0 && fr.end > total)

			liveBefore := len(live)
			var trimmed, dropped []int
			trim := func(p piece, n int) piece {
				pid := pieceID(p)
				if pid != id && !live[pid] {
					t.Fatalf("insert %d: trim of fragment %d, which the list does not hold", id, pid)
				}
				if n <= 0 || n >= p.end-p.off {
					t.Fatalf("insert %d: trim of %d bytes of piece [%d, %d)", id, n, p.off, p.end)
				}
				trimmed = append(trimmed, pid)
				p.buf.Pull(n)
				p.off += n
				return p
			}
			drop := func(p piece) {
				pid := pieceID(p)
				if !live[pid] {
					t.Fatalf("insert %d: drop of fragment %d, which the list does not hold (double free)", id, pid)
				}
				delete(live, pid)
				dropped = append(dropped, pid)
			}
			src[id] = fr
			res := l.insert(fr.off, fr.end, fr.more, fakeBuf(id, fr.off, fr.end), trim, drop)
			inserts++

			switch {
			case wantBad && res != insertBad:
				t.Fatalf("insert %d %+v: %v, want bad (total %d, max end %d)", id, fr, res, total, maxEnd)
			case !wantBad && res == insertBad:
				t.Fatalf("insert %d %+v: bad, want accepted (total %d, max end %d)", id, fr, total, maxEnd)
			}
			switch res {
			case insertBad:
				if len(trimmed)+len(dropped) > 0 {
					t.Fatalf("insert %d: bad after trimming %v and dropping %v", id, trimmed, dropped)
				}
				// The reassembler drops the whole queue.
				reset()
				continue
			case insertDuplicate:
				if len(trimmed)+len(dropped) > 0 {
					t.Fatalf("insert %d: duplicate after trimming %v and dropping %v", id, trimmed, dropped)
				}
				for i := fr.off; i < fr.end; i++ {
					if !covered[i] {
						t.Fatalf("insert %d %+v: called a duplicate, but byte %d was not held", id, fr, i)
					}
				}
			case insertAdded:
				live[id] = true
			default:
				t.Fatalf("insert %d: result %d", id, res)
			}
			if !fr.more {
				total = fr.end
			}
			maxEnd = max(maxEnd, fr.end)
			for i := fr.off; i < fr.end; i++ {
				if !covered[i] {
					covered[i] = true
					ncovered++
				}
			}

			// Ownership: the list holds exactly the fragments it did, less
			// those it dropped, plus the new one if added.
			if want := liveBefore - len(dropped) + btoi(res == insertAdded); len(live) != want || len(l.pieces) != want {
				t.Fatalf("insert %d: %d pieces, %d live buffers, want %d", id, len(l.pieces), len(live), want)
			}
			if len(l.pieces) > inserts {
				t.Fatalf("insert %d: %d pieces after %d inserts", id, len(l.pieces), inserts)
			}
			if l.total != total {
				t.Fatalf("insert %d: total %d, model %d", id, l.total, total)
			}

			// Pieces: sorted, disjoint, non-empty, inside the datagram,
			// each one its fragment's buffer at the right place, holding
			// the reference bytes; together exactly the bytes inserted.
			held := 0
			at := 0
			for k, p := range l.pieces {
				pid := pieceID(p)
				s, ok := src[pid]
				if !ok || !live[pid] {
					t.Fatalf("insert %d: piece %d is from unknown fragment %d", id, k, pid)
				}
				if p.off >= p.end || p.off < at || p.off < 0 || (total >= 0 && p.end > total) || p.end > maxDatagram-header.IPv4MinimumSize {
					t.Fatalf("insert %d: piece %d [%d, %d) after %d, total %d", id, k, p.off, p.end, at, total)
				}
				if p.off < s.off || p.end > s.end {
					t.Fatalf("insert %d: piece %d [%d, %d) outside its fragment %d %+v", id, k, p.off, p.end, pid, s)
				}
				if p.buf.Addr != fragBase(pid)+memory.Addr(p.off) || p.buf.Len != p.end-p.off {
					t.Fatalf("insert %d: piece %d [%d, %d) has buffer at +%d len %d", id, k, p.off, p.end, p.buf.Addr-fragBase(pid), p.buf.Len)
				}
				at = p.end
				held += p.end - p.off
			}
			if held != ncovered {
				t.Fatalf("insert %d: pieces hold %d bytes, %d were inserted", id, held, ncovered)
			}
			for _, p := range l.pieces {
				for i := p.off; i < p.end; i++ {
					if !covered[i] {
						t.Fatalf("insert %d: byte %d held but never inserted", id, i)
					}
				}
			}

			wantComplete := total >= 0 && ncovered == total
			if got := l.complete(); got != wantComplete {
				t.Fatalf("insert %d: complete() = %v, want %v (total %d, %d bytes held)", id, got, wantComplete, total, ncovered)
			}
			if wantComplete {
				// ip_glue: copy each piece's bytes from its fragment
				// (whose data is the reference at the fragment's offset)
				// and compare with the reference.
				whole := make([]byte, total)
				for _, p := range l.pieces {
					s := src[pieceID(p)]
					start := int(p.buf.Addr-fragBase(pieceID(p))) - s.off
					for i := range p.buf.Len {
						whole[p.off+i] = refByte(s.off + start + i)
					}
				}
				for i := range whole {
					if whole[i] != refByte(i) {
						t.Fatalf("insert %d: reassembled byte %d is %#x, want %#x", id, i, whole[i], refByte(i))
					}
				}
				reset()
			}
		}
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
