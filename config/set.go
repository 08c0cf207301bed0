package config

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// ParseKey splits a dotted key path as messages write it ("host[1].inet.mtu",
// "workload.udp.sizes", `costs."bcopy.word"`) into its parts: "host", "1",
// "inet", "mtu". A part is a bare key (letters, digits, '_' and '-') or a
// quoted one, "..." with TOML's escapes or '...' without, so that a name
// holding a dot can be set; each part may be followed by indices [N].
// Blanks around a part are ignored, as in TOML. A part without an index
// may stand for every element of an array of tables when the path is
// applied (File.Set).
func ParseKey(key string) ([]string, error) {
	if strings.TrimSpace(key) == "" {
		return nil, fmt.Errorf("empty key")
	}
	var out []string
	s := key
	blanks := func() { s = strings.TrimLeft(s, " \t") }
	for {
		blanks()
		var name string
		switch {
		case s == "" || s[0] == '.' || s[0] == '[':
			return nil, fmt.Errorf("key %q: an empty name", key)
		case s[0] == '"' || s[0] == '\'':
			n, rest, err := quotedKey(s)
			if err != nil {
				return nil, fmt.Errorf("key %q: %v", key, err)
			}
			name, s = n, rest
		default:
			i := 0
			for i < len(s) && isBare(s[i]) {
				i++
			}
			if i == 0 {
				return nil, fmt.Errorf("key %q: %q may not appear in a bare key: quote the name (\"...\")", key, s[:utf8Len(s)])
			}
			name, s = s[:i], s[i:]
		}
		out = append(out, name)
		blanks()
		for strings.HasPrefix(s, "[") {
			idx, rest, ok := strings.Cut(s[1:], "]")
			if _, err := strconv.ParseUint(idx, 10, 31); !ok || err != nil {
				return nil, fmt.Errorf("key %q: a bad index after %q", key, name)
			}
			out = append(out, idx)
			s = rest
			blanks()
		}
		if len(out) > MaxDepth {
			return nil, fmt.Errorf("key %q: deeper than %d levels", key, MaxDepth)
		}
		switch {
		case s == "":
			return out, nil
		case s[0] == '.':
			s = s[1:]
		default:
			return nil, fmt.Errorf("key %q: %q after %q: parts are separated by '.'", key, s[:utf8Len(s)], name)
		}
	}
}

// utf8Len returns the length of the first character of s.
func utf8Len(s string) int {
	_, n := utf8.DecodeRuneInString(s)
	return n
}

// quotedKey reads the quoted key at the start of s and returns it and
// what follows.
func quotedKey(s string) (name, rest string, err error) {
	q := s[0]
	end := 1
	for end < len(s) && s[end] != q {
		if q == '"' && s[end] == '\\' {
			end++
		}
		end++
	}
	if end >= len(s) {
		return "", "", fmt.Errorf("an unterminated quote")
	}
	var m map[string]any
	if _, err := toml.Decode(s[:end+1]+" = 0", &m); err != nil || len(m) != 1 {
		return "", "", fmt.Errorf("a bad quoted name %s", s[:end+1])
	}
	for k := range m {
		name = k
	}
	return name, s[end+1:], nil
}

// SplitSet splits a --set argument, KEY=VALUE, at the first '=' outside a
// quoted part of the key, and checks the key (ParseKey). Both are
// trimmed of blanks. A line break anywhere is refused: TOML would end the
// value there and drop the rest without a word.
func SplitSet(arg string) (key, value string, err error) {
	if i := strings.IndexAny(arg, "\n\r"); i >= 0 {
		return "", "", fmt.Errorf("--set %q: a line break in a --set argument (a value is one line; write a longer one in the file)", arg)
	}
	var q byte
	eq := -1
	for i := 0; i < len(arg) && eq < 0; i++ {
		switch c := arg[i]; {
		case q != 0:
			if c == '\\' && q == '"' {
				i++
			} else if c == q {
				q = 0
			}
		case c == '"' || c == '\'':
			q = c
		case c == '=':
			eq = i
		}
	}
	if eq < 0 {
		return "", "", fmt.Errorf("--set %q: want KEY=VALUE", arg)
	}
	key, value = strings.TrimSpace(arg[:eq]), strings.TrimSpace(arg[eq+1:])
	if _, err := ParseKey(key); err != nil {
		return "", "", fmt.Errorf("--set %q: %v", arg, err)
	}
	return key, value, nil
}

// ParseSet reads a --set argument, KEY=VALUE: SplitSet, then ParseValue
// of the value, refusing one nested deeper than MaxDepth.
func ParseSet(arg string) (key string, value any, err error) {
	key, text, err := SplitSet(arg)
	if err != nil {
		return "", nil, err
	}
	if x := buildLineIndex("v = " + text); x.deep > 0 {
		return "", nil, fmt.Errorf("--set %q: the value nests deeper than %d levels", arg, MaxDepth)
	}
	return key, ParseValue(text), nil
}

// ParseValue reads one value written in TOML ("9000", "[1024, 2048]",
// "true", "\"10Mbps\"") or, when that does not parse, takes the text as a
// string, so that units need no quotes on a command line (10Mbps). Text
// with a line break, or nested deeper than MaxDepth, is taken as a string
// too, whole: TOML would end the value at the line break and drop the rest.
func ParseValue(text string) any {
	if strings.ContainsAny(text, "\n\r") {
		return text
	}
	src := "v = " + text
	if x := buildLineIndex(src); x.deep > 0 {
		return text
	}
	var m map[string]any
	if _, err := toml.Decode(src, &m); err == nil && len(m) == 1 {
		if v, ok := m["v"]; ok {
			return v
		}
	}
	return text
}

// Set puts value (as ParseValue returns it) at key in the file's tree
// before anything is decoded, replacing what the file says there or
// adding it. A key part naming an array of tables without an index sets
// the key in every element ("host.inet.mtu": each [[host]]'s); missing
// tables are made. origin says in messages where the value came from
// ("--set host.inet.mtu=9000"): problems with it name origin instead of a
// line. Whether the key and value are valid is the decoders' to say, as
// for the file's own keys.
func (f *File) Set(key string, value any, origin string) error {
	path, err := ParseKey(key)
	if err != nil {
		return err
	}
	n, err := f.set(f.tree, nil, path, value, origin)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("key %q: the file has no element to set it in", key)
	}
	return nil
}

func (f *File) set(node map[string]any, at, path []string, value any, origin string) (int, error) {
	name := path[0]
	here := append(append([]string(nil), at...), name)
	if len(path) == 1 {
		node[name] = value
		f.origins[pathKey(here)] = origin
		f.lines.forget(here)
		return 1, nil
	}
	switch child := node[name].(type) {
	case nil:
		if _, isIndex := strconv.Atoi(path[1]); isIndex == nil {
			return 0, fmt.Errorf("%s: no array to index", f.keyName(here))
		}
		m := map[string]any{}
		node[name] = m
		f.origins[pathKey(here)] = origin // a table made for the value
		return f.set(m, here, path[1:], value, origin)
	case map[string]any:
		return f.set(child, here, path[1:], value, origin)
	case []map[string]any:
		if i, err := strconv.Atoi(path[1]); err == nil {
			if i >= len(child) {
				return 0, fmt.Errorf("%s: element %d of %d", f.keyName(here), i, len(child))
			}
			return f.set(child[i], append(here, path[1]), path[2:], value, origin)
		}
		total := 0
		for i, el := range child {
			n, err := f.set(el, append(append([]string(nil), here...), strconv.Itoa(i)), path[1:], value, origin)
			if err != nil {
				return 0, err
			}
			total += n
		}
		return total, nil
	default:
		return 0, fmt.Errorf("%s is a value, not a table", f.keyName(here))
	}
}

// origin returns where the value at path (or a table above it) came from
// when it was Set, "" when from the file.
func (f *File) origin(path []string) string {
	for n := len(path); n > 0; n-- {
		if o, ok := f.origins[pathKey(path[:n])]; ok {
			return o
		}
	}
	return ""
}
