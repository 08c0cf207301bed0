package config

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// ParseKey splits a dotted key path as messages write it ("host[1].inet.mtu",
// "workload.udp.sizes") into its parts: "host", "1", "inet", "mtu". A part
// without an index may stand for every element of an array of tables when
// the path is applied (File.Set).
func ParseKey(key string) ([]string, error) {
	if key == "" {
		return nil, fmt.Errorf("empty key")
	}
	var out []string
	for _, part := range strings.Split(key, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name == "" {
			return nil, fmt.Errorf("key %q: an empty name", key)
		}
		out = append(out, name)
		for rest != "" {
			idx, after, ok := strings.Cut(rest, "]")
			if _, err := strconv.ParseUint(idx, 10, 31); !ok || err != nil || (after != "" && after[0] != '[') {
				return nil, fmt.Errorf("key %q: a bad index in %q", key, part)
			}
			out = append(out, idx)
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return out, nil
}

// ParseValue reads one value written in TOML ("9000", "[1024, 2048]",
// "true", "\"10Mbps\"") or, when that does not parse, takes the text as a
// string, so that units need no quotes on a command line (10Mbps).
func ParseValue(text string) any {
	var m map[string]any
	if _, err := toml.Decode("v = "+text, &m); err == nil {
		return m["v"]
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
