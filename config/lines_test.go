package config

import (
	"runtime"
	"strings"
	"testing"
)

// allocs returns the bytes and the number of allocations f makes.
func allocs(f func()) (bytes, count uint64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, after.Mallocs - before.Mallocs
}

// deepInputs are inputs whose nesting or width made the line index
// quadratic: 100,000 nested arrays, a 100,000-part table header, and a
// long key name over many array elements.
func deepInputs(n int) map[string]string {
	return map[string]string{
		"nested arrays": "a = " + strings.Repeat("[", n) + strings.Repeat("]", n) + "\n",
		"long header":   "[" + strings.Repeat("t.", n-1) + "t]\nx = 1\n",
		"long name":     `"` + strings.Repeat("k", n) + `" = [` + strings.Repeat("1,", n/2) + "]\n",
		"nested tables": "a = " + strings.Repeat("{b = ", n/5) + "1" + strings.Repeat("}", n/5) + "\n",
		"dotted key":    strings.Repeat("t.", n/2) + "t = 1\n",
	}
}

// TestLineIndexLinear scans deep and wide inputs with the depth limit
// lifted and checks that the index allocates in proportion to the text:
// a quadratic index makes 100,000 levels cost gigabytes.
func TestLineIndexLinear(t *testing.T) {
	const n = 100_000
	for name, text := range deepInputs(n) {
		t.Run(name, func(t *testing.T) {
			var x *lineIndex
			bytes, count := allocs(func() {
				x = newLineIndex(text)
				x.limit = 1 << 30
				x.top()
			})
			if x.deep != 0 || len(x.nodes) < n/5 {
				t.Fatalf("indexed %d keys (deep at line %d); the input has about %d", len(x.nodes), x.deep, n)
			}
			// A node, its map entry and an index's digits cost about 100
			// bytes; the quadratic index copied the path (or its text)
			// at each level, thousands of bytes per byte of text.
			if max := 400 * uint64(len(text)); bytes > max {
				t.Errorf("%d bytes allocated for %d bytes of text; want at most %d", bytes, len(text), max)
			}
			if max := 8 * uint64(len(text)); count > max {
				t.Errorf("%d allocations for %d bytes of text; want at most %d", count, len(text), max)
			}
		})
	}
}

// TestParseDeep checks that the whole load of a deep file is refused at
// its line with little work, and that a long name over many elements
// decodes in proportion to its size. The TOML library's own parse is
// quadratic in the depth of a table header or a dotted key (10,000 parts
// allocate over a gigabyte), so the depth must be refused before it runs.
func TestParseDeep(t *testing.T) {
	for name, text := range deepInputs(10_000) {
		t.Run(name, func(t *testing.T) {
			var err error
			bytes, _ := allocs(func() {
				var f *File
				f, err = ParseBytes("deep.toml", []byte(text))
				if err != nil {
					return
				}
				var v struct {
					X int `toml:"x"`
				}
				err = f.DecodeInto(&v)
				if err == nil {
					err = f.CheckUnused()
				}
				f.MarkUsed()
			})
			if err == nil {
				t.Fatal("no error")
			}
			want := "deep.toml:1: tables and arrays nest deeper than 64 levels"
			if name == "long name" {
				want = `deep.toml:1: kkk`
			}
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error %.100q, want %q", err, want)
			}
			// The TOML library's own parse takes about 150 bytes per
			// byte of these texts.
			if max := 1000 * uint64(len(text)); bytes > max {
				t.Errorf("%d bytes allocated for %d bytes of text; want at most %d", bytes, len(text), max)
			}
		})
	}
}
