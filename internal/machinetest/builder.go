package machinetest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/BurntSushi/toml"

	"simkron/config"
	"simkron/machine"
)

// Builder edits a config file by its keys, not its text: a test starts
// from a shipped experiment or machine file, sets, deletes and appends
// tables at key paths as simkron's --set names them ("host[0].atm[0].vc[0].pcr",
// "workload.udp.sizes"), and loads or writes the result. A path that
// names nothing fails the test, so that a config reformatted or changed
// in shape never leaves an edit silently undone (as replacing its text
// would).
type Builder struct {
	t    testing.TB
	path string
	tree map[string]any
}

// Edit returns a builder of the config file at path.
func Edit(t testing.TB, path string) *Builder {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return EditText(t, path, string(b))
}

// EditText returns a builder of a config's text, as if read from path
// (its machine files are relative to path's folder).
func EditText(t testing.TB, path, text string) *Builder {
	t.Helper()
	tree := map[string]any{}
	if _, err := toml.Decode(text, &tree); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &Builder{t: t, path: path, tree: tree}
}

// walk returns the table holding the last part of key and that part;
// with create, missing tables on the way are made.
func (b *Builder) walk(key string, create bool) (map[string]any, string) {
	b.t.Helper()
	parts, err := config.ParseKey(key)
	if err != nil {
		b.t.Fatalf("%s: %v", b.path, err)
	}
	node := b.tree
	for i := 0; i < len(parts)-1; i++ {
		v, ok := node[parts[i]]
		if !ok {
			if !create {
				b.t.Fatalf("%s: %s: no %q", b.path, key, parts[i])
			}
			next := map[string]any{}
			node[parts[i]] = next
			node = next
			continue
		}
		switch x := v.(type) {
		case map[string]any:
			node = x
		case []map[string]any:
			if i+1 >= len(parts)-1 {
				b.t.Fatalf("%s: %s: %q is an array of tables: give an index and a key in it", b.path, key, parts[i])
			}
			n, err := strconv.Atoi(parts[i+1])
			if err != nil || n < 0 || n >= len(x) {
				b.t.Fatalf("%s: %s: %q has no table [%s]", b.path, key, parts[i], parts[i+1])
			}
			node = x[n]
			i++
		default:
			b.t.Fatalf("%s: %s: %q is a value, not a table", b.path, key, parts[i])
		}
	}
	return node, parts[len(parts)-1]
}

// Set sets key to v (a string, an int, a float, a bool, a []any or a
// map[string]any table), making the tables on the way that are missing.
func (b *Builder) Set(key string, v any) *Builder {
	b.t.Helper()
	node, last := b.walk(key, true)
	node[last] = v
	return b
}

// Delete removes key, which must be there.
func (b *Builder) Delete(key string) *Builder {
	b.t.Helper()
	node, last := b.walk(key, false)
	if _, ok := node[last]; !ok {
		b.t.Fatalf("%s: no key %s to delete", b.path, key)
	}
	delete(node, last)
	return b
}

// Append adds table to the array of tables at key ([[key]]), making it
// when there is none.
func (b *Builder) Append(key string, table map[string]any) *Builder {
	b.t.Helper()
	node, last := b.walk(key, true)
	arr, _ := node[last].([]map[string]any)
	if node[last] != nil && arr == nil {
		b.t.Fatalf("%s: %s is not an array of tables", b.path, key)
	}
	node[last] = append(arr, table)
	return b
}

// Text returns the config as TOML.
func (b *Builder) Text() string {
	b.t.Helper()
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(b.tree); err != nil {
		b.t.Fatal(err)
	}
	return buf.String()
}

// Experiment loads the edited experiment as if it were the file the
// builder started from (its machine files found beside it), failing the
// test on an error.
func (b *Builder) Experiment() *machine.Experiment {
	b.t.Helper()
	exp, err := machine.LoadExperimentBytes(b.path, []byte(b.Text()), nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return exp
}

// Write writes the edited config into dir as name and returns its path;
// an experiment's machine files are named by their absolute paths, so
// that it loads from anywhere.
func (b *Builder) Write(dir, name string) string {
	b.t.Helper()
	if hosts, ok := b.tree["host"].([]map[string]any); ok {
		for _, h := range hosts {
			if m, ok := h["machine"].(string); ok && !filepath.IsAbs(m) {
				abs, err := filepath.Abs(filepath.Join(filepath.Dir(b.path), m))
				if err != nil {
					b.t.Fatal(err)
				}
				h["machine"] = abs
			}
		}
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(b.Text()), 0o644); err != nil {
		b.t.Fatal(err)
	}
	return p
}
