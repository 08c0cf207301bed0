package config

import (
	"encoding"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// field is one decodable field of a Params struct.
type field struct {
	name  string // TOML key
	index []int  // for reflect.Value.FieldByIndex
	sf    reflect.StructField
	owner reflect.Type // the struct it belongs to, for panics
}

func (fd field) tag(name string) string { return fd.sf.Tag.Get(name) }

// fieldsOf lists the decodable fields of struct type t in declaration
// order, with the fields of untagged embedded structs inlined. It panics on
// a missing toml tag or a key used twice: those are simulator bugs.
func fieldsOf(t reflect.Type) []field {
	var out []field
	var walk func(st reflect.Type, index []int)
	walk = func(st reflect.Type, index []int) {
		for i := range st.NumField() {
			sf := st.Field(i)
			idx := append(slices.Clip(index), i)
			tag, tagged := sf.Tag.Lookup("toml")
			if sf.Anonymous && !tagged && sf.Type.Kind() == reflect.Struct {
				walk(sf.Type, idx)
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if !sf.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				panic(fmt.Sprintf("config: field %s.%s has no toml tag", st, sf.Name))
			}
			for _, o := range out {
				if o.name == name {
					panic(fmt.Sprintf("config: %s has two fields with key %q", t, name))
				}
			}
			out = append(out, field{name: name, index: idx, sf: sf, owner: st})
		}
	}
	walk(t, nil)
	return out
}

// nonEmpty reports whether the field has the tag nonempty:"true": a
// slice, array, map or string that must hold at least one element. It
// panics on the tag on another kind, or with another value.
func (fd field) nonEmpty() bool {
	v, ok := fd.sf.Tag.Lookup("nonempty")
	if !ok {
		return false
	}
	switch fd.sf.Type.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map, reflect.String:
	default:
		panic(fmt.Sprintf("config: field %s.%s: nonempty on a %s", fd.owner, fd.sf.Name, fd.sf.Type.Kind()))
	}
	if v != "true" {
		panic(fmt.Sprintf("config: field %s.%s: nonempty:%q, want nonempty:\"true\"", fd.owner, fd.sf.Name, v))
	}
	return true
}

// bounds parses the min and max tags in the syntax of the field's type (of
// its elements, for a slice, array or map). A missing tag gives an invalid
// Value.
func (fd field) bounds() (lo, hi reflect.Value) {
	t := fd.sf.Type
	if k := t.Kind(); k == reflect.Slice || k == reflect.Array || k == reflect.Map {
		t = t.Elem()
	}
	parse := func(which string) reflect.Value {
		s, ok := fd.sf.Tag.Lookup(which)
		if !ok {
			return reflect.Value{}
		}
		v, err := parseBound(t, s)
		if err != nil {
			panic(fmt.Sprintf("config: field %s.%s: bad %s tag %q: %v", fd.owner, fd.sf.Name, which, s, err))
		}
		return v
	}
	return parse("min"), parse("max")
}

func parseBound(t reflect.Type, s string) (reflect.Value, error) {
	v := reflect.New(t)
	if !numeric(t) {
		return v, fmt.Errorf("bounds need a numeric type, not %s", t)
	}
	if u, ok := v.Interface().(encoding.TextUnmarshaler); ok {
		return v.Elem(), u.UnmarshalText([]byte(s))
	}
	e := v.Elem()
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(s, 0, t.Bits())
		e.SetInt(n)
		return e, err
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n, err := strconv.ParseUint(s, 0, t.Bits())
		e.SetUint(n)
		return e, err
	default:
		x, err := strconv.ParseFloat(s, t.Bits())
		e.SetFloat(x)
		return e, err
	}
}

func numeric(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// format renders a value the way a configuration file writes it: with
// MarshalText when the type has it, strings quoted, arrays and tables in
// TOML syntax.
func format(rv reflect.Value) string {
	if !rv.IsValid() {
		return ""
	}
	t := rv.Type()
	if t == timeType {
		return rv.Interface().(time.Time).Format(time.RFC3339Nano)
	}
	if t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(textMarshaler) {
		v := reflect.New(t)
		v.Elem().Set(rv)
		if b, err := v.Interface().(encoding.TextMarshaler).MarshalText(); err == nil {
			return string(b)
		}
	}
	switch t.Kind() {
	case reflect.String:
		return strconv.Quote(rv.String())
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(rv.Float(), 'g', -1, t.Bits())
	case reflect.Pointer:
		if rv.IsNil() {
			return ""
		}
		return format(rv.Elem())
	case reflect.Slice, reflect.Array:
		parts := make([]string, rv.Len())
		for i := range parts {
			parts[i] = format(rv.Index(i))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case reflect.Map:
		keys := rv.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = toml.Key{k.String()}.String() + " = " + format(rv.MapIndex(k))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(rv.Interface())
}
