package config

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"simkron/internal/infile"
)

// File is one parsed TOML file. It keeps the parsed tree, a line for every
// key path, and which keys decoders have consumed, so that a key nobody
// decoded can be reported once, with its line, by [File.CheckUnused].
//
// A File is not safe for concurrent use.
type File struct {
	path     string
	tree     map[string]any
	lines    *lineIndex          // key path → line where the key is defined
	used     map[string]bool     // pathKey → consumed by a decoder or MarkUsed
	whole    map[string]bool     // pathKey → consumed with everything under it
	reported map[string]bool     // pathKey → already reported as unknown
	known    map[string][]string // pathKey of a table → keys its decoder accepts
	origins  map[string]string   // pathKey → where a Set value came from
}

// Parse reads and parses the TOML file at path. A syntax error stops it and
// is returned as [Errors] with the line; an I/O error as [Errors] whose
// single [Error] wraps the cause. The file must be a regular file of at
// most [infile.Config] bytes: a FIFO, a device or a larger file is
// refused before it is read (see package internal/infile).
func Parse(path string) (*File, error) {
	data, err := infile.Read(path, infile.Config)
	if err != nil {
		msg := err.Error()
		if pe, ok := errors.AsType[*fs.PathError](err); ok {
			msg = pe.Err.Error() // the path is already in Error.File
		}
		return nil, Errors{{File: path, Msg: msg, Err: err}}
	}
	return ParseBytes(path, data)
}

// ParseBytes parses data as the TOML file name. The name only appears in
// error messages. A key path deeper than [MaxDepth] is an error at its
// line.
func ParseBytes(name string, data []byte) (*File, error) {
	text := strings.TrimPrefix(string(data), "\ufeff")
	// The index comes first: its scan is linear, and it refuses nesting
	// that would make the TOML library's parse quadratic in its depth
	// (a 100,000-part table header takes it a minute).
	lines := buildLineIndex(text)
	if lines.deep > 0 {
		return nil, Errors{{File: name, Line: lines.deep, Msg: fmt.Sprintf("tables and arrays nest deeper than %d levels", MaxDepth)}}
	}
	var tree map[string]any
	if _, err := toml.Decode(text, &tree); err != nil {
		if pe, ok := errors.AsType[toml.ParseError](err); ok {
			line := pe.Position.Line
			// The parser puts an error at a newline on the next line; the
			// byte offset says which line the user has to fix.
			if s := pe.Position.Start; s >= 0 && s < len(text) {
				line = 1 + strings.Count(text[:s], "\n")
			}
			// A value the parser refuses (an integer out of range) is
			// named by its key, as the decoder's problems are.
			return nil, Errors{{File: name, Line: line, Key: keyAt(text, line), Msg: pe.Message, Err: err}}
		}
		return nil, Errors{{File: name, Msg: err.Error(), Err: err}}
	}
	if tree == nil {
		tree = map[string]any{}
	}
	return &File{
		path:     name,
		tree:     tree,
		lines:    lines,
		used:     map[string]bool{},
		whole:    map[string]bool{},
		reported: map[string]bool{},
		known:    map[string][]string{},
		origins:  map[string]string{},
	}, nil
}

// Path returns the name the file was parsed under.
func (f *File) Path() string { return f.path }

// Line returns the line where the key at path is defined: a key's own line,
// a table's header (or the first line that implies the table), an array of
// tables' first header. It returns 0 for a path not in the file.
func (f *File) Line(key ...string) int { return f.lines.get(key) }

// lineNear returns the line of the longest prefix of path that is in the
// file, so that a problem with a key left at its default points at its table.
func (f *File) lineNear(path []string) int { return f.lines.near(path) }

// Has reports whether the file defines the key at path. The empty path is
// the whole file and always present.
func (f *File) Has(key ...string) bool {
	_, ok := f.lookup(key)
	return ok
}

// lookup returns the value at path.
func (f *File) lookup(path []string) (any, bool) {
	var node any = f.tree
	for _, k := range path {
		switch n := node.(type) {
		case map[string]any:
			v, ok := n[k]
			if !ok {
				return nil, false
			}
			node = v
		case []map[string]any:
			i, ok := index(k, len(n))
			if !ok {
				return nil, false
			}
			node = n[i]
		case []any:
			i, ok := index(k, len(n))
			if !ok {
				return nil, false
			}
			node = n[i]
		default:
			return nil, false
		}
	}
	return node, true
}

// index parses an array index written in a key path.
func index(k string, n int) (int, bool) {
	i, err := strconv.Atoi(k)
	if err != nil || i < 0 || i >= n || strconv.Itoa(i) != k {
		return 0, false
	}
	return i, true
}

// Keys returns the keys of the table at path in file order, or for an
// array the indices of its elements ("0", "1", ...). It returns nil for a
// path that is not in the file or names a plain value.
func (f *File) Keys(key ...string) []string {
	v, _ := f.lookup(key)
	switch n := v.(type) {
	case map[string]any:
		return f.ordered(key, n)
	case []map[string]any:
		return indices(len(n))
	case []any:
		return indices(len(n))
	}
	return nil
}

func indices(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strconv.Itoa(i)
	}
	return out
}

// ordered returns the keys of table m, found at path, in file order.
func (f *File) ordered(path []string, m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	table := f.lines.find(path)
	line := func(k string) int {
		l := 0
		if table >= 0 {
			if n, ok := f.lines.kids[edge{table, k}]; ok {
				l = int(f.lines.nodes[n].line)
			}
		}
		if l == 0 {
			l = int(^uint(0) >> 1) // unknown lines last
		}
		return l
	}
	slices.SortFunc(keys, func(a, b string) int {
		if la, lb := line(a), line(b); la != lb {
			return la - lb
		}
		return strings.Compare(a, b)
	})
	return keys
}

// Accept adds names to the keys the table at path accepts, for the
// suggestion made when a key there is unknown: a registry whose entries
// decode sub-tables by name (the registered workloads under [workload])
// declares them so.
func (f *File) Accept(path []string, names ...string) {
	pk := pathKey(path)
	f.known[pk] = append(f.known[pk], names...)
}

// MarkUsed marks the key at path and everything under it as consumed, for
// callers that read part of the file by other means than a decoder.
func (f *File) MarkUsed(key ...string) {
	if _, ok := f.lookup(key); ok {
		f.markAll(key)
	}
}

// markAll marks path and everything under it as consumed, at the cost of
// one key however large the value is.
func (f *File) markAll(path []string) {
	if len(path) == 0 {
		return
	}
	pk := pathKey(path)
	f.used[pk] = true
	f.whole[pk] = true
}

// wholeAbove reports whether a table above path was consumed whole.
func (f *File) wholeAbove(path []string) bool {
	for n := len(path) - 1; n > 0; n-- {
		if f.whole[pathKey(path[:n])] {
			return true
		}
	}
	return false
}

// CheckUnused reports every key that no decoder consumed (and that was not
// reported as unknown already), each once, with its line. Under an unused
// table only the table itself is reported. Call it after all DecodeInto
// calls on the file; it returns nil or [Errors].
func (f *File) CheckUnused() error {
	var errs Errors
	// The walk appends to one path as it goes down (nothing keeps it), so
	// that a deep value costs its depth, not its depth squared.
	var walk func(path []string, v any)
	walk = func(path []string, v any) {
		switch n := v.(type) {
		case map[string]any:
			for _, k := range f.ordered(path, n) {
				child := append(path, k)
				pk := pathKey(child)
				switch {
				case f.reported[pk]:
				case f.whole[pk]:
				case f.used[pk]:
					walk(child, n[k])
				default:
					f.reported[pk] = true
					errs = append(errs, f.unknown(slices.Clone(child), f.known[pathKey(path)]))
				}
			}
		case []map[string]any:
			for i, c := range n {
				walk(append(path, strconv.Itoa(i)), c)
			}
		case []any:
			for i, c := range n {
				if holdsTable(c) {
					walk(append(path, strconv.Itoa(i)), c)
				}
			}
		}
	}
	walk(nil, f.tree)
	return sortErrors(errs)
}

// unknown makes the error for a key no decoder accepts, with a suggestion
// from the keys that were acceptable in its table.
func (f *File) unknown(path []string, valid []string) *Error {
	msg := "unknown key"
	if s := suggest(path[len(path)-1], valid); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return f.errorAt(path, msg)
}

// Errorf returns an error at the key at path, for problems callers find
// after decoding (overlapping device addresses, a name used twice). A path
// not in the file gets the line of its nearest enclosing table.
func (f *File) Errorf(key []string, format string, args ...any) *Error {
	return f.errorAt(key, fmt.Sprintf(format, args...))
}

func (f *File) errorAt(path []string, msg string) *Error {
	if o := f.origin(path); o != "" {
		return &Error{File: f.path + ": " + o, Key: f.keyName(path), Msg: msg}
	}
	return &Error{File: f.path, Line: f.lineNear(path), Key: f.keyName(path), Msg: msg}
}

// keyName renders a path for messages: dotted keys, quoted where TOML needs
// quotes, with array elements as [i]: host[1].cpu.clock.
func (f *File) keyName(path []string) string {
	var b strings.Builder
	var node any = f.tree
	for _, k := range path {
		isIndex := false
		switch n := node.(type) {
		case map[string]any:
			node = n[k]
		case []map[string]any:
			if i, ok := index(k, len(n)); ok {
				node, isIndex = n[i], true
			}
		case []any:
			if i, ok := index(k, len(n)); ok {
				node, isIndex = n[i], true
			}
		default:
			// Beyond the file (a default value): digits are an index.
			node = nil
			_, err := strconv.ParseUint(k, 10, 31)
			isIndex = err == nil && b.Len() > 0
		}
		if isIndex {
			b.WriteString("[" + k + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(toml.Key{k}.String())
	}
	return b.String()
}

// sortErrors puts errs in file order; problems without a line go last.
// It returns nil for no errors, so that the result compares equal to nil
// as an error.
func sortErrors(errs Errors) error {
	if len(errs) == 0 {
		return nil
	}
	slices.SortStableFunc(errs, func(a, b *Error) int {
		la, lb := a.Line, b.Line
		if la == 0 {
			la = int(^uint(0) >> 1)
		}
		if lb == 0 {
			lb = int(^uint(0) >> 1)
		}
		return la - lb
	})
	return errs
}

// holdsTable reports whether a value of an inline array may hold a table,
// which may have keys to report.
func holdsTable(v any) bool {
	switch v.(type) {
	case map[string]any, []map[string]any, []any:
		return true
	}
	return false
}
