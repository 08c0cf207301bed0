package config

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// MaxDepth is the deepest key path a file may hold: tables, dotted keys
// and array elements together (host[1].nic[0].faults.drop is 6 deep). It
// is far beyond what a configuration needs, and it keeps every walk over
// the parsed tree, and every message naming a key, short.
const MaxDepth = 64

// lineIndex maps key paths to the line where each key is defined. The TOML
// parser keeps positions to itself, so the index comes from a second,
// small scanner of the text. It runs before the parser (to refuse nesting
// deeper than MaxDepth, which the parser handles in quadratic time) and
// on text the parser refused (to name the key of the error), but it need
// not diagnose anything: on input it does not understand it stops and
// keeps what it indexed so far, and the parser reports the problem. It
// never panics and always terminates. (Nodes and lines are int32: a text
// would need gigabytes to overflow them, and Parse reads at most 4 MiB.)
//
// Paths are indexed as in the package documentation: elements of arrays of
// tables and of inline arrays get their decimal index as a path element.
//
// The index is a tree of key names, one node per key path, so that a key
// costs one node however deep it lies: scanning is linear in the text
// (a path kept as a list of strings, or as its dotted text, per key made
// nested arrays quadratic in their depth).
type lineIndex struct {
	s    string
	i    int
	line int
	// nodes[0] is the root (the empty path); kids finds a node's child.
	nodes []lnode
	kids  map[edge]int32
	// deep is the first line where a path grows past limit (MaxDepth; a
	// test raises it), 0 if none.
	deep  int
	limit int32
	// watch is a line to note keys at (0: none); watched the last node
	// defined there, -1 for none.
	watch   int
	watched int32
}

// lnode is one key path of the index.
type lnode struct {
	parent int32
	name   string
	index  bool  // name is an array index
	depth  int32 // path length
	line   int32 // 0 until defined
	aot    int32 // for an array of tables: its elements so far
}

type edge struct {
	parent int32
	name   string
}

func pathKey(path []string) string { return toml.Key(path).String() }

func newLineIndex(text string) *lineIndex {
	return &lineIndex{s: text, line: 1, nodes: []lnode{{parent: -1}}, kids: map[edge]int32{}, watched: -1, limit: MaxDepth}
}

// buildLineIndex indexes text, which the parser accepted.
func buildLineIndex(text string) *lineIndex {
	x := newLineIndex(text)
	x.top()
	return x
}

// keyAt returns the key defined last on line of text (whose parse failed
// there), written as in messages, or "".
func keyAt(text string, line int) string {
	x := newLineIndex(text)
	x.watch = line
	x.top()
	if x.watched <= 0 {
		return ""
	}
	return x.name(x.watched)
}

// child returns the node for key name under node n, made if missing, or
// -1 when it would be deeper than the limit (which stops the scan).
func (x *lineIndex) child(n int32, name string, index bool) int32 {
	if c, ok := x.kids[edge{n, name}]; ok {
		return c
	}
	d := x.nodes[n].depth + 1
	if d > x.limit {
		if x.deep == 0 {
			x.deep = x.line
		}
		return -1
	}
	c := int32(len(x.nodes))
	x.nodes = append(x.nodes, lnode{parent: n, name: name, index: index, depth: d})
	x.kids[edge{n, name}] = c
	return c
}

// find returns the node of path, or -1.
func (x *lineIndex) find(path []string) int32 {
	var n int32
	for _, k := range path {
		c, ok := x.kids[edge{n, k}]
		if !ok {
			return -1
		}
		n = c
	}
	return n
}

// get returns the line of path, 0 when not in the file.
func (x *lineIndex) get(path []string) int {
	if n := x.find(path); n >= 0 {
		return int(x.nodes[n].line)
	}
	return 0
}

// near returns the line of the longest prefix of path that has one.
func (x *lineIndex) near(path []string) int {
	var n int32
	line := 0
	for _, k := range path {
		c, ok := x.kids[edge{n, k}]
		if !ok {
			break
		}
		n = c
		if l := x.nodes[n].line; l > 0 {
			line = int(l)
		}
	}
	return line
}

// forget drops the line of path (a value replaced by File.Set).
func (x *lineIndex) forget(path []string) {
	if n := x.find(path); n > 0 {
		x.nodes[n].line = 0
	}
}

// name writes the path of node n as messages do: host[1].cpu.clock.
func (x *lineIndex) name(n int32) string {
	var parts []int32
	for ; n > 0; n = x.nodes[n].parent {
		parts = append(parts, n)
	}
	var b strings.Builder
	for i := len(parts) - 1; i >= 0; i-- {
		nd := x.nodes[parts[i]]
		switch {
		case nd.index:
			b.WriteString("[" + nd.name + "]")
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(toml.Key{nd.name}.String())
		}
	}
	return b.String()
}

func (x *lineIndex) eof() bool { return x.i >= len(x.s) }

func (x *lineIndex) peek() byte {
	if x.eof() {
		return 0
	}
	return x.s[x.i]
}

func (x *lineIndex) has(p string) bool { return strings.HasPrefix(x.s[x.i:], p) }

// adv moves over n bytes, counting newlines.
func (x *lineIndex) adv(n int) {
	for ; n > 0 && x.i < len(x.s); n-- {
		if x.s[x.i] == '\n' {
			x.line++
		}
		x.i++
	}
}

// skipSpace skips blanks, and with nl also newlines and comments.
func (x *lineIndex) skipSpace(nl bool) {
	for !x.eof() {
		switch c := x.peek(); {
		case c == ' ' || c == '\t':
			x.adv(1)
		case c == '#' && nl:
			for !x.eof() && x.peek() != '\n' {
				x.adv(1)
			}
		case (c == '\n' || c == '\r') && nl:
			x.adv(1)
		default:
			return
		}
	}
}

// endOfLine skips blanks and a comment and reports whether a newline or the
// end of the text follows.
func (x *lineIndex) endOfLine() bool {
	x.skipSpace(false)
	if x.peek() == '#' {
		for !x.eof() && x.peek() != '\n' {
			x.adv(1)
		}
	}
	switch {
	case x.has("\r\n"):
		x.adv(2)
		return true
	case x.peek() == '\n':
		x.adv(1)
		return true
	}
	return x.eof()
}

// set gives node n the line, unless it has one (a key is at the line
// where it is first defined), and notes it when the line is watched.
func (x *lineIndex) set(n int32, line int) {
	if x.nodes[n].line == 0 {
		x.nodes[n].line = int32(line)
	}
	if line == x.watch {
		x.watched = n
	}
}

// resolve returns the child name of table node cur; when that names an
// array of tables, the node of the array's last element, where the TOML
// spec puts keys and subtables that follow. It returns -1 past MaxDepth.
func (x *lineIndex) resolve(cur int32, name string) int32 {
	c := x.child(cur, name, false)
	if c < 0 {
		return -1
	}
	if n := x.nodes[c].aot; n > 0 {
		c = x.child(c, strconv.Itoa(int(n-1)), true)
	}
	return c
}

func (x *lineIndex) top() {
	var cur int32 // table in scope
	for {
		x.skipSpace(true)
		if x.eof() {
			return
		}
		line := x.line
		switch {
		case x.has("[["):
			x.adv(2)
			keys, ok := x.key()
			if !ok || !x.has("]]") {
				return
			}
			x.adv(2)
			var n int32
			for i, k := range keys {
				if i < len(keys)-1 {
					if n = x.resolve(n, k); n < 0 {
						return
					}
					x.set(n, line)
					continue
				}
				if n = x.child(n, k, false); n < 0 {
					return
				}
				x.set(n, line)
				el := x.nodes[n].aot
				x.nodes[n].aot++
				if n = x.child(n, strconv.Itoa(int(el)), true); n < 0 {
					return
				}
				x.set(n, line)
				x.nodes[n].line = int32(line)
			}
			cur = n
		case x.peek() == '[':
			x.adv(1)
			keys, ok := x.key()
			if !ok || x.peek() != ']' {
				return
			}
			x.adv(1)
			var n int32
			for _, k := range keys {
				if n = x.resolve(n, k); n < 0 {
					return
				}
				x.set(n, line)
			}
			// An explicit header defines the table here even when a
			// dotted key or subtable mentioned it earlier.
			x.nodes[n].line = int32(line)
			cur = n
		default:
			if !x.keyValue(cur) {
				return
			}
		}
		if !x.endOfLine() {
			return
		}
	}
}

// keyValue reads "key = value" in table node table and indexes the key
// and what is in the value.
func (x *lineIndex) keyValue(table int32) bool {
	line := x.line
	keys, ok := x.key()
	if !ok || x.peek() != '=' {
		return false
	}
	x.adv(1)
	n := table
	for _, k := range keys {
		if n = x.child(n, k, false); n < 0 {
			return false
		}
		x.set(n, line)
	}
	x.skipSpace(false)
	return x.value(n)
}

// key reads a dotted key and the blanks after it.
func (x *lineIndex) key() ([]string, bool) {
	var keys []string
	for {
		x.skipSpace(false)
		var k string
		var ok bool
		switch c := x.peek(); {
		case c == '"':
			k, ok = x.basicString()
		case c == '\'':
			k, ok = x.literalString()
		default:
			start := x.i
			for !x.eof() && isBare(x.peek()) {
				x.adv(1)
			}
			k, ok = x.s[start:x.i], x.i > start
		}
		if !ok {
			return nil, false
		}
		keys = append(keys, k)
		x.skipSpace(false)
		if x.peek() != '.' {
			return keys, true
		}
		x.adv(1)
	}
}

func isBare(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// value skips one value; arrays and inline tables are indexed under node.
func (x *lineIndex) value(node int32) bool {
	switch {
	case x.has(`"""`):
		return x.multiline(`"""`, true)
	case x.has(`'''`):
		return x.multiline(`'''`, false)
	case x.peek() == '"':
		_, ok := x.basicString()
		return ok
	case x.peek() == '\'':
		_, ok := x.literalString()
		return ok
	case x.peek() == '[':
		x.adv(1)
		for n := 0; ; n++ {
			x.skipSpace(true)
			if x.peek() == ']' {
				x.adv(1)
				return true
			}
			elem := x.child(node, strconv.Itoa(n), true)
			if elem < 0 {
				return false
			}
			x.set(elem, x.line)
			if !x.value(elem) {
				return false
			}
			x.skipSpace(true)
			if x.peek() == ',' {
				x.adv(1)
			} else if x.peek() != ']' {
				return false
			}
		}
	case x.peek() == '{':
		x.adv(1)
		for {
			// TOML 1.1 allows newlines, comments and a trailing comma.
			x.skipSpace(true)
			if x.peek() == '}' {
				x.adv(1)
				return true
			}
			if !x.keyValue(node) {
				return false
			}
			x.skipSpace(true)
			if x.peek() == ',' {
				x.adv(1)
			} else if x.peek() != '}' {
				return false
			}
		}
	}
	// A number, boolean or date-time: up to a delimiter. A date and a time
	// may be separated by one space ("1979-05-27 07:32:00Z").
	start := x.i
	x.scalar()
	if x.i-start == 10 && x.s[start+4] == '-' && x.peek() == ' ' &&
		x.i+1 < len(x.s) && x.s[x.i+1] >= '0' && x.s[x.i+1] <= '9' {
		x.adv(1)
		x.scalar()
	}
	return x.i > start
}

func (x *lineIndex) scalar() {
	for !x.eof() && !strings.ContainsRune(" \t\r\n,]}#", rune(x.peek())) {
		x.adv(1)
	}
}

// multiline skips a multi-line string opened by delim.
func (x *lineIndex) multiline(delim string, escapes bool) bool {
	x.adv(3)
	for !x.eof() {
		if escapes && x.peek() == '\\' {
			x.adv(2)
			continue
		}
		if x.has(delim) {
			x.adv(3)
			// Up to two quotes may end the content before the delimiter.
			for n := 0; n < 2 && x.peek() == delim[0]; n++ {
				x.adv(1)
			}
			return true
		}
		x.adv(1)
	}
	return false
}

func (x *lineIndex) literalString() (string, bool) {
	x.adv(1)
	start := x.i
	for !x.eof() && x.peek() != '\'' && x.peek() != '\n' {
		x.adv(1)
	}
	if x.peek() != '\'' {
		return "", false
	}
	s := x.s[start:x.i]
	x.adv(1)
	return s, true
}

// basicString reads a one-line "..." string and decodes its escapes.
func (x *lineIndex) basicString() (string, bool) {
	x.adv(1)
	var b strings.Builder
	for !x.eof() {
		c := x.peek()
		switch c {
		case '"':
			x.adv(1)
			return b.String(), true
		case '\n':
			return "", false
		case '\\':
			x.adv(1)
			e := x.peek()
			x.adv(1)
			switch e {
			case 'b':
				b.WriteByte('\b')
			case 't':
				b.WriteByte('\t')
			case 'n':
				b.WriteByte('\n')
			case 'f':
				b.WriteByte('\f')
			case 'r':
				b.WriteByte('\r')
			case 'e':
				b.WriteByte(0x1b)
			case '"', '\\':
				b.WriteByte(e)
			case 'x', 'u', 'U':
				n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
				if x.i+n > len(x.s) {
					return "", false
				}
				v, err := strconv.ParseUint(x.s[x.i:x.i+n], 16, 32)
				if err != nil {
					return "", false
				}
				x.adv(n)
				b.WriteRune(rune(v))
			default:
				return "", false
			}
		default:
			_, size := utf8.DecodeRuneInString(x.s[x.i:])
			b.WriteString(x.s[x.i : x.i+size])
			x.adv(size)
		}
	}
	return "", false
}
