package config

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// lineIndex maps key paths to the line where each key is defined. The TOML
// parser keeps positions to itself, so the index comes from a second,
// small scanner of the text. It runs only on text the parser accepted, so
// it need not diagnose anything: on input it does not understand it stops
// and keeps what it indexed so far. It never panics and always terminates.
//
// Paths are indexed as in the package documentation: elements of arrays of
// tables and of inline arrays get their decimal index as a path element.
type lineIndex struct {
	s     string
	i     int
	line  int
	lines map[string]int // pathKey(path) → line
	aot   map[string]int // pathKey(indexed path of an array of tables) → elements so far
}

func pathKey(path []string) string { return toml.Key(path).String() }

func buildLineIndex(text string) map[string]int {
	x := &lineIndex{s: text, line: 1, lines: map[string]int{}, aot: map[string]int{}}
	x.top()
	return x.lines
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

func (x *lineIndex) set(path []string, line int) {
	k := pathKey(path)
	if _, ok := x.lines[k]; !ok {
		x.lines[k] = line
	}
}

// resolve appends name to table path cur; when that names an array of
// tables, it also appends the index of the array's last element, where the
// TOML spec puts keys and subtables that follow.
func (x *lineIndex) resolve(cur []string, name string) []string {
	cur = append(cur, name)
	if n, ok := x.aot[pathKey(cur)]; ok && n > 0 {
		cur = append(cur, strconv.Itoa(n-1))
	}
	return cur
}

func (x *lineIndex) top() {
	var cur []string // table in scope
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
			var path []string
			for i, k := range keys {
				if i < len(keys)-1 {
					path = x.resolve(path, k)
					x.set(path, line)
					continue
				}
				path = append(path, k)
				x.set(path, line)
				pk := pathKey(path)
				n := x.aot[pk]
				x.aot[pk] = n + 1
				path = append(path, strconv.Itoa(n))
				x.lines[pathKey(path)] = line
			}
			cur = path
		case x.peek() == '[':
			x.adv(1)
			keys, ok := x.key()
			if !ok || x.peek() != ']' {
				return
			}
			x.adv(1)
			var path []string
			for _, k := range keys {
				path = x.resolve(path, k)
				x.set(path, line)
			}
			// An explicit header defines the table here even when a
			// dotted key or subtable mentioned it earlier.
			x.lines[pathKey(path)] = line
			cur = path
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

// keyValue reads "key = value" and indexes the key and what is in the value.
func (x *lineIndex) keyValue(table []string) bool {
	line := x.line
	keys, ok := x.key()
	if !ok || x.peek() != '=' {
		return false
	}
	x.adv(1)
	path := append([]string(nil), table...)
	for _, k := range keys {
		path = append(path, k)
		x.set(path, line)
	}
	x.skipSpace(false)
	return x.value(path)
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

// value skips one value; arrays and inline tables are indexed under path.
func (x *lineIndex) value(path []string) bool {
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
			elem := append(append([]string(nil), path...), strconv.Itoa(n))
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
			if !x.keyValue(path) {
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
