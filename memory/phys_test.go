package memory_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/memory"
	"simkron/sim"
)

func TestPhysSparse(t *testing.T) {
	m := memory.NewPhys(64 * sim.MiB)
	if m.Size() != 64*sim.MiB {
		t.Fatalf("Size = %v", m.Size())
	}
	buf := make([]byte, 10000)
	for i := range buf {
		buf[i] = 0xff
	}
	if err := m.Read(0x123456, buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf, make([]byte, len(buf))) {
		t.Errorf("untouched memory is not zero")
	}
	if got := m.Uint32(0x3ffff00); got != 0 {
		t.Errorf("Uint32 of untouched = %#x", got)
	}
	if err := m.Chunks(0, 1<<20, false, func([]byte) {}); err != nil {
		t.Fatal(err)
	}
	if m.PagesTouched() != 0 {
		t.Fatalf("PagesTouched after reads = %d, want 0", m.PagesTouched())
	}
	if hb := m.HostBytes(); hb > 4096 {
		t.Errorf("HostBytes of empty 64 MiB = %d, want under 4 KiB", hb)
	}

	// A write straddling a page boundary touches two pages.
	data := []byte("hello, simulated world")
	a := memory.Addr(2*4096 - 5)
	if err := m.Write(a, data); err != nil {
		t.Fatal(err)
	}
	m.PutUint32(64*1024*1024-4, 0xdeadbeef) // last word, far away
	if got := m.PagesTouched(); got != 3 {
		t.Errorf("PagesTouched = %d, want 3", got)
	}
	got := make([]byte, len(data))
	if err := m.Read(a, got); err != nil || !bytes.Equal(got, data) {
		t.Errorf("Read back = %q, %v; want %q", got, err, data)
	}
	if v := m.Uint32(64*1024*1024 - 4); v != 0xdeadbeef {
		t.Errorf("Uint32 = %#x, want 0xdeadbeef", v)
	}
	// Little-endian word across the page boundary: bytes "hell" at a.
	if v := m.Uint32(a); v != 0x6c6c6568 {
		t.Errorf("Uint32 across pages = %#x, want 0x6c6c6568", v)
	}
	m.PutUint32(a+1, 0x04030201)
	if v := m.Uint32(a); v != 0x03020168 {
		t.Errorf("after PutUint32 across pages = %#x, want 0x03020168", v)
	}
	if hb := m.HostBytes(); hb < 3*4096 || hb > 3*4096+3*4096+4096 {
		t.Errorf("HostBytes = %d, want about 3 pages plus tables", hb)
	}
}

func TestPhysRange(t *testing.T) {
	m := memory.NewPhys(8 * sim.KiB)
	tests := []struct {
		name string
		a    memory.Addr
		n    uint64
		ok   bool
	}{
		{"whole", 0, 8192, true},
		{"empty at end", 8192, 0, true},
		{"last byte", 8191, 1, true},
		{"one past", 8191, 2, false},
		{"start past", 8192, 1, false},
		{"huge n", 1, ^uint64(0), false},
		{"huge a", memory.Addr(^uint64(0)), 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := m.InRange(tt.a, tt.n); got != tt.ok {
				t.Errorf("InRange = %v, want %v", got, tt.ok)
			}
			if tt.n > 1<<20 {
				return
			}
			p := make([]byte, tt.n)
			for _, err := range []error{
				m.Read(tt.a, p), m.Write(tt.a, p),
				m.Chunks(tt.a, tt.n, true, func([]byte) {}),
			} {
				if (err == nil) != tt.ok {
					t.Errorf("error = %v, want ok %v", err, tt.ok)
				}
				if err != nil && !strings.Contains(err.Error(), "exceeds physical memory of 8KiB") {
					t.Errorf("error %q does not say why", err)
				}
			}
		})
	}
	m = memory.NewPhys(8 * sim.KiB)
	m.PutUint32(8190, 1) // out of range: ignored
	if m.Uint32(8190) != 0 || m.PagesTouched() != 0 {
		t.Errorf("out-of-range PutUint32 changed memory")
	}
}

func TestPhysChunks(t *testing.T) {
	m := memory.NewPhys(1 * sim.MiB)
	a, n := memory.Addr(4096-100), uint64(100+4096+50)
	var lens []int
	i := byte(0)
	if err := m.Chunks(a, n, true, func(b []byte) {
		lens = append(lens, len(b))
		for j := range b {
			b[j] = i
			i++
		}
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{100, 4096, 50}, lens); diff != "" {
		t.Errorf("chunk lengths (-want +got):\n%s", diff)
	}
	if m.PagesTouched() != 3 {
		t.Errorf("PagesTouched = %d, want 3", m.PagesTouched())
	}
	got := make([]byte, n)
	if err := m.Read(a, got); err != nil {
		t.Fatal(err)
	}
	for j := range got {
		if got[j] != byte(j) {
			t.Fatalf("byte %d = %d, want %d", j, got[j], byte(j))
		}
	}
	// Read-only views see the same bytes and do not create pages; their
	// capacity ends at the view so an append cannot spill into the page.
	var sum, chunks int
	if err := m.Chunks(a, n+8192, false, func(b []byte) {
		if cap(b) != len(b) {
			t.Errorf("view cap %d != len %d", cap(b), len(b))
		}
		chunks++
		for _, x := range b {
			sum += int(x)
		}
	}); err != nil {
		t.Fatal(err)
	}
	want := 0
	for j := range n {
		want += int(byte(j))
	}
	if sum != want || chunks != 5 || m.PagesTouched() != 3 {
		t.Errorf("read chunks: sum %d (want %d), chunks %d (want 5), pages %d (want 3)", sum, want, chunks, m.PagesTouched())
	}
}

func TestGuestLog(t *testing.T) {
	var l memory.GuestLog
	var seen int
	l.OnReport = func(memory.GuestError) { seen++ }
	for i := range 150 {
		l.Report(sim.Time(i)*sim.Nanosecond, "hostA.nic0", "bad thing %d", i)
	}
	recs := l.Records()
	if l.Count() != 150 || len(recs) != 100 || seen != 150 {
		t.Fatalf("Count %d, records %d, seen %d; want 150, 100, 150", l.Count(), len(recs), seen)
	}
	want := memory.GuestError{Time: 99 * sim.Nanosecond, Component: "hostA.nic0", Msg: "bad thing 99"}
	if diff := cmp.Diff(want, recs[99]); diff != "" {
		t.Errorf("record 99 (-want +got):\n%s", diff)
	}
	if got := recs[99].String(); got != "99ns hostA.nic0: bad thing 99" {
		t.Errorf("String() = %q", got)
	}
}

// View gives a range within one page in place, as Chunks would in one
// piece, and refuses one that crosses a page or leaves memory.
func TestPhysView(t *testing.T) {
	m := memory.NewPhys(64 * sim.KiB)
	for _, tc := range []struct {
		a    memory.Addr
		n    uint64
		want bool
	}{
		{0, 4096, true}, {100, 3996, true}, {100, 3997, false}, {4095, 1, true}, {4095, 2, false},
		{60 * 1024, 4096, true}, {64*1024 - 8, 8, true}, {64*1024 - 8, 9, false}, {64 * 1024, 1, false},
	} {
		b, ok := m.View(tc.a, tc.n, false)
		if ok != tc.want || ok && uint64(len(b)) != tc.n || ok && cap(b) != len(b) {
			t.Errorf("View(%#x, %d): %d bytes (cap %d), %v; want %v", uint64(tc.a), tc.n, len(b), cap(b), ok, tc.want)
		}
	}
	// A read-only view of an untouched page reads zeros and makes no page.
	b, _ := m.View(0x2000, 16, false)
	if string(b) != string(make([]byte, 16)) || m.PagesTouched() != 0 {
		t.Errorf("untouched view %v, %d pages", b, m.PagesTouched())
	}
	// A writable view makes the page, and what is written through it is
	// memory's.
	w, _ := m.View(0x2010, 4, true)
	copy(w, "abcd")
	got := make([]byte, 4)
	if err := m.Read(0x2010, got); err != nil || string(got) != "abcd" || m.PagesTouched() != 1 {
		t.Errorf("read back %q (%v), %d pages", got, err, m.PagesTouched())
	}
}
