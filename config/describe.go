package config

import (
	"fmt"
	"io"
	"reflect"
	"strings"
	"text/tabwriter"
)

// Param documents one parameter of a Params struct.
type Param struct {
	Key     string // full key path; elements of arrays of tables as "slot[].irq", map entries as "costs.<name>"
	Type    string // "frequency", "size", "duration", "bit rate", "integer", "number", "boolean", "string", "array of integer", "table of integer", ...
	Unit    string // unit tag, for plain numbers
	Default string // in the file's syntax; empty for none
	Min     string // min tag, verbatim
	Max     string // max tag, verbatim
	// NonEmpty: an array, table or string that must hold at least one
	// element (the nonempty tag).
	NonEmpty bool
	Help     string
}

// Params lists every parameter of v, a Params struct (or a pointer to one)
// holding its defaults, in struct field order. Nested tables are flattened
// into dotted keys under prefix ("" for none); arrays of tables are
// described by one element, starting from its SetDefaults when it has one.
func Params(prefix string, v any) []Param {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		panic(fmt.Sprintf("config: Params needs a struct, got %T", v))
	}
	var out []Param
	describeStruct(&out, prefix, rv)
	return out
}

// Describe writes the parameters of v (see [Params]) as an aligned table
// with the columns KEY, TYPE, DEFAULT, RANGE and HELP, for `simkron params`.
func Describe(w io.Writer, prefix string, v any) error {
	return WriteParams(w, Params(prefix, v))
}

// WriteParams writes ps as Describe does, so that the parameters of several
// components share one aligned table.
func WriteParams(w io.Writer, ps []Param) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tTYPE\tDEFAULT\tRANGE\tHELP")
	for _, p := range ps {
		typ := p.Type
		if p.Unit != "" {
			typ += " (" + p.Unit + ")"
		}
		var rng []string
		if p.NonEmpty {
			rng = append(rng, "non-empty")
		}
		if p.Min != "" || p.Max != "" {
			rng = append(rng, p.Min+".."+p.Max)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Key, typ, p.Default, strings.Join(rng, ", "), p.Help)
	}
	return tw.Flush()
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

func describeStruct(out *[]Param, prefix string, rv reflect.Value) {
	for _, fd := range fieldsOf(rv.Type()) {
		describeField(out, join(prefix, fd.name), rv.FieldByIndex(fd.index), fd)
	}
}

func describeField(out *[]Param, key string, rv reflect.Value, fd field) {
	t := rv.Type()
	if t.Kind() == reflect.Pointer && isTable(t.Elem()) {
		ev := reflect.New(t.Elem()).Elem()
		if !rv.IsNil() {
			ev.Set(rv.Elem())
		} else {
			setDefaults(ev)
		}
		rv, t = ev, t.Elem()
	}
	switch {
	case isTable(t):
		describeStruct(out, key, rv)
		return
	case (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && isTableOrPtr(t.Elem()):
		ev := reflect.New(t.Elem()).Elem()
		setDefaults(ev)
		describeField(out, key+"[]", ev, fd)
		return
	case t.Kind() == reflect.Map && isTableOrPtr(t.Elem()):
		ev := reflect.New(t.Elem()).Elem()
		setDefaults(ev)
		describeField(out, key+".<name>", ev, fd)
		return
	}
	*out = append(*out, Param{
		Key:      key,
		Type:     typeName(t),
		Unit:     fd.tag("unit"),
		Default:  format(rv),
		Min:      fd.tag("min"),
		Max:      fd.tag("max"),
		NonEmpty: fd.nonEmpty(),
		Help:     fd.tag("help"),
	})
}

// isTable reports whether values of t are TOML tables decoded field by field.
func isTable(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && t != timeType && !reflect.PointerTo(t).Implements(textUnmarshaler)
}

func isTableOrPtr(t reflect.Type) bool {
	return isTable(t) || t.Kind() == reflect.Pointer && isTable(t.Elem())
}

// typeName names t for Describe.
func typeName(t reflect.Type) string {
	if u, ok := unitTypes[t]; ok {
		return u.name
	}
	if t == timeType {
		return "date-time"
	}
	if reflect.PointerTo(t).Implements(textUnmarshaler) {
		return "string"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Bool:
		return "boolean"
	case reflect.String:
		return "string"
	case reflect.Pointer:
		return typeName(t.Elem())
	case reflect.Slice, reflect.Array:
		return "array of " + typeName(t.Elem())
	case reflect.Map:
		return "table of " + typeName(t.Elem())
	case reflect.Interface:
		return "any"
	}
	return strings.ToLower(t.Kind().String())
}
