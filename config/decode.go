package config

import (
	"encoding"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"simkron/sim"
)

var (
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	textMarshaler   = reflect.TypeFor[encoding.TextMarshaler]()
	timeType        = reflect.TypeFor[time.Time]()
)

// unitTypes names the unit types of package sim in messages and in
// Describe, with an example of their syntax.
var unitTypes = map[reflect.Type]struct{ name, example string }{
	reflect.TypeFor[sim.Time]():      {"duration", "100ns"},
	reflect.TypeFor[sim.Frequency](): {"frequency", "33MHz"},
	reflect.TypeFor[sim.Size]():      {"size", "8KiB"},
	reflect.TypeFor[sim.BitRate]():   {"bit rate", "10Mbps"},
}

// Validator is implemented by Params types that check relations between
// their fields. See the package documentation for what Validate may return.
type Validator interface {
	Validate() error
}

// defaulter is implemented by element types of slices that want defaults
// other than the zero value.
type defaulter interface {
	SetDefaults()
}

// DecodeInto decodes the table at key path (the whole file when empty)
// strictly into v, a non-nil pointer to a struct already holding its
// defaults; only what the file sets is overwritten. It then checks min/max
// bounds and calls Validate methods. Keys under the table that v has no
// field for, and that no earlier decoder consumed, are reported as unknown,
// with the nearest valid key as a suggestion when one is close.
//
// DecodeInto returns nil or [Errors] holding every problem, in file order.
// A path not in the file decodes nothing but still checks v. It panics when
// v is not a pointer or its type breaks the tag conventions (a missing toml
// tag, a bound that does not parse): those are simulator bugs.
func (f *File) DecodeInto(v any, key ...string) error { return f.decode(v, key, true) }

// DecodePartial is DecodeInto without the unknown-key check: it takes the
// keys v has fields for and leaves the rest of the table to later decoders
// and [File.CheckUnused]. A registry uses it to read `type = "ne2000"`
// before choosing the Params to decode the same table into.
func (f *File) DecodePartial(v any, key ...string) error { return f.decode(v, key, false) }

type decoder struct {
	f      *File
	strict bool
	errs   Errors
	paths  [][]string // paths[i] is where errs[i] was found
}

func (f *File) decode(v any, key []string, strict bool) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		panic(fmt.Sprintf("config: DecodeInto needs a non-nil pointer, got %T", v))
	}
	d := &decoder{f: f, strict: strict}
	path := slices.Clone(key)
	if val, ok := f.lookup(path); ok {
		for n := 1; n <= len(path); n++ {
			f.used[pathKey(path[:n])] = true
		}
		d.value(path, val, rv.Elem())
	}
	d.check(path, rv.Elem())
	return sortErrors(d.errs)
}

func (d *decoder) errorf(path []string, format string, args ...any) {
	d.add(path, d.f.errorAt(path, fmt.Sprintf(format, args...)))
}

func (d *decoder) add(path []string, e *Error) {
	d.errs = append(d.errs, e)
	d.paths = append(d.paths, slices.Clone(path))
}

// failedUnder reports whether a problem was found at path or below it.
func (d *decoder) failedUnder(path []string) bool {
	for _, p := range d.paths {
		if len(p) >= len(path) && slices.Equal(p[:len(path)], path) {
			return true
		}
	}
	return false
}

func (d *decoder) typeError(path []string, t reflect.Type, val any) {
	d.errorf(path, "expected %s, got %s", expected(t), describe(val))
}

// expected says what a value of type t is written as.
func expected(t reflect.Type) string {
	if u, ok := unitTypes[t]; ok {
		return fmt.Sprintf("a %s string like %q", u.name, u.example)
	}
	if t == timeType {
		return "a date-time"
	}
	if reflect.PointerTo(t).Implements(textUnmarshaler) {
		return "a string"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "a boolean"
	case reflect.String:
		return "a string"
	case reflect.Struct, reflect.Map:
		return "a table"
	case reflect.Pointer:
		return expected(t.Elem())
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return t.String()
}

// describe says what TOML value val is, for "got ..." in messages.
func describe(val any) string {
	switch v := val.(type) {
	case int64:
		return fmt.Sprintf("integer %d", v)
	case float64:
		switch {
		case math.IsNaN(v):
			return "float nan" // as TOML writes it
		case math.IsInf(v, 1):
			return "float inf"
		case math.IsInf(v, -1):
			return "float -inf"
		}
		return "float " + strconv.FormatFloat(v, 'g', -1, 64)
	case string:
		return fmt.Sprintf("string %q", v)
	case bool:
		return fmt.Sprintf("boolean %t", v)
	case time.Time:
		return "date-time " + v.Format(time.RFC3339Nano)
	case map[string]any:
		return "a table"
	case []map[string]any:
		return "an array of tables"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("%T", val)
}

// value decodes TOML value val, found at path, into rv, which is settable.
func (d *decoder) value(path []string, val any, rv reflect.Value) {
	t := rv.Type()
	if t == timeType {
		if tv, ok := val.(time.Time); ok {
			rv.Set(reflect.ValueOf(tv))
			return
		}
	}
	if reflect.PointerTo(t).Implements(textUnmarshaler) {
		s, ok := val.(string)
		if !ok {
			d.typeError(path, t, val)
			return
		}
		// Decode into a copy so that a failed parse leaves the default.
		nv := reflect.New(t)
		nv.Elem().Set(rv)
		if err := nv.Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
			d.errorf(path, "%s", err)
			return
		}
		rv.Set(nv.Elem())
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		// A fresh copy: the default may be shared with other Params.
		nv := reflect.New(t.Elem())
		if !rv.IsNil() {
			nv.Elem().Set(rv.Elem())
		}
		d.value(path, val, nv.Elem())
		rv.Set(nv)
	case reflect.Struct:
		d.table(path, val, rv)
	case reflect.Map:
		d.mapping(path, val, rv)
	case reflect.Slice, reflect.Array:
		d.array(path, val, rv)
	case reflect.Interface:
		if t.NumMethod() > 0 {
			panic(fmt.Sprintf("config: %s: cannot decode into interface %s", d.f.keyName(path), t))
		}
		rv.Set(reflect.ValueOf(val))
		d.f.markAll(path)
	case reflect.String:
		if s, ok := val.(string); ok {
			rv.SetString(s)
		} else {
			d.typeError(path, t, val)
		}
	case reflect.Bool:
		if b, ok := val.(bool); ok {
			rv.SetBool(b)
		} else {
			d.typeError(path, t, val)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := val.(int64)
		switch {
		case !ok:
			d.typeError(path, t, val)
		case rv.OverflowInt(n):
			bits := t.Bits()
			d.errorf(path, "%d is out of range for %s (%d to %d)", n, t.Kind(), -1<<(bits-1), 1<<(bits-1)-1)
		default:
			rv.SetInt(n)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n, ok := val.(int64)
		switch {
		case !ok || n < 0:
			d.typeError(path, t, val)
		case rv.OverflowUint(uint64(n)):
			d.errorf(path, "%d is out of range for %s (0 to %d)", n, t.Kind(), uint64(1)<<t.Bits()-1)
		default:
			rv.SetUint(uint64(n))
		}
	case reflect.Float32, reflect.Float64:
		var x float64
		switch v := val.(type) {
		case int64:
			x = float64(v)
		case float64:
			x = v
		default:
			d.typeError(path, t, val)
			return
		}
		switch {
		case math.IsNaN(x) || math.IsInf(x, 0):
			// No parameter gives nan or inf a meaning, and either would
			// pass every min and max (nan compares false) into cycle
			// arithmetic.
			d.errorf(path, "expected a finite number, got %s", describe(val))
		case rv.OverflowFloat(x):
			d.errorf(path, "%g is out of range for %s", x, t.Kind())
		default:
			rv.SetFloat(x)
		}
	default:
		panic(fmt.Sprintf("config: %s: cannot decode into %s", d.f.keyName(path), t))
	}
}

// table decodes a TOML table into struct rv.
func (d *decoder) table(path []string, val any, rv reflect.Value) {
	m, ok := val.(map[string]any)
	if !ok {
		d.typeError(path, rv.Type(), val)
		return
	}
	fields := fieldsOf(rv.Type())
	names := make([]string, len(fields))
	byName := make(map[string]*field, len(fields))
	for i := range fields {
		names[i] = fields[i].name
		byName[fields[i].name] = &fields[i]
	}
	pk := pathKey(path)
	d.f.known[pk] = append(d.f.known[pk], names...)
	for _, k := range d.f.ordered(path, m) {
		child := append(slices.Clip(path), k)
		ck := pathKey(child)
		fd := byName[k]
		if fd == nil {
			if d.strict && !d.f.used[ck] && !d.f.reported[ck] && !d.f.wholeAbove(child) {
				d.f.reported[ck] = true
				d.add(child, d.f.unknown(child, names))
			}
			continue
		}
		d.f.used[ck] = true
		d.value(child, m[k], rv.FieldByIndex(fd.index))
	}
}

// mapping merges a TOML table into a copy of map rv.
func (d *decoder) mapping(path []string, val any, rv reflect.Value) {
	t := rv.Type()
	if t.Key().Kind() != reflect.String {
		panic(fmt.Sprintf("config: %s: map keys must be strings, not %s", d.f.keyName(path), t.Key()))
	}
	m, ok := val.(map[string]any)
	if !ok {
		d.typeError(path, t, val)
		return
	}
	nm := reflect.MakeMapWithSize(t, rv.Len()+len(m))
	for it := rv.MapRange(); it.Next(); {
		nm.SetMapIndex(it.Key(), it.Value())
	}
	for _, k := range d.f.ordered(path, m) {
		child := append(slices.Clip(path), k)
		d.f.used[pathKey(child)] = true
		kv := reflect.ValueOf(k).Convert(t.Key())
		ev := reflect.New(t.Elem()).Elem()
		if old := nm.MapIndex(kv); old.IsValid() {
			ev.Set(old)
		} else {
			setDefaults(ev)
		}
		before := len(d.errs)
		d.value(child, m[k], ev)
		if len(d.errs) == before {
			nm.SetMapIndex(kv, ev)
		}
	}
	rv.Set(nm)
}

// array decodes a TOML array (of values or of tables) into slice or array rv.
func (d *decoder) array(path []string, val any, rv reflect.Value) {
	var elems []any
	switch v := val.(type) {
	case []any:
		elems = v
	case []map[string]any:
		elems = make([]any, len(v))
		for i := range v {
			elems[i] = v[i]
		}
	default:
		d.typeError(path, rv.Type(), val)
		return
	}
	t := rv.Type()
	var nv reflect.Value
	if t.Kind() == reflect.Array {
		if len(elems) != t.Len() {
			d.errorf(path, "expected an array of %d elements, got %d", t.Len(), len(elems))
			return
		}
		nv = reflect.New(t).Elem()
	} else {
		nv = reflect.MakeSlice(t, len(elems), len(elems))
	}
	for i, e := range elems {
		ev := nv.Index(i)
		setDefaults(ev)
		d.value(append(slices.Clip(path), strconv.Itoa(i)), e, ev)
	}
	rv.Set(nv)
}

// setDefaults calls SetDefaults on a fresh element that has it.
func setDefaults(rv reflect.Value) {
	if rv.Kind() == reflect.Pointer && rv.IsNil() && rv.Type().Elem().Kind() == reflect.Struct {
		rv.Set(reflect.New(rv.Type().Elem()))
		rv = rv.Elem()
	}
	if rv.CanAddr() {
		if s, ok := rv.Addr().Interface().(defaulter); ok {
			s.SetDefaults()
		}
	}
}

// check walks the decoded value: bounds on every field, then Validate on
// every struct whose fields all decoded cleanly, innermost first.
func (d *decoder) check(path []string, rv reflect.Value) {
	t := rv.Type()
	if t == timeType || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		if !rv.IsNil() {
			d.check(path, rv.Elem())
		}
		return
	case reflect.Struct:
		for _, fd := range fieldsOf(t) {
			child := append(slices.Clip(path), fd.name)
			fv := rv.FieldByIndex(fd.index)
			if !d.failedUnder(child) {
				d.bounds(child, fv, fd)
			}
			d.check(child, fv)
		}
	case reflect.Slice, reflect.Array:
		if !composite(t.Elem()) {
			return
		}
		for i := 0; i < rv.Len(); i++ {
			d.check(append(slices.Clip(path), strconv.Itoa(i)), rv.Index(i))
		}
		return
	case reflect.Map:
		if !composite(t.Elem()) {
			return
		}
		keys := rv.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		for _, k := range keys {
			ev := reflect.New(t.Elem()).Elem() // addressable, for pointer-receiver Validate
			ev.Set(rv.MapIndex(k))
			d.check(append(slices.Clip(path), k.String()), ev)
		}
		return
	default:
		return
	}
	if d.failedUnder(path) {
		return
	}
	var target any
	if rv.CanAddr() {
		target = rv.Addr().Interface()
	} else {
		target = rv.Interface()
	}
	if v, ok := target.(Validator); ok {
		if err := v.Validate(); err != nil {
			d.validation(path, keyed(t, err))
		}
	}
}

// composite reports whether values of t may hold structs to check.
func composite(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Struct, reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return t != timeType && !reflect.PointerTo(t).Implements(textUnmarshaler)
	}
	return false
}

// keyed turns a plain error whose text starts with "key: " (or
// "key.sub: "), where key is a field of struct type t, into a FieldError
// for that key. Hardware and
// kernel packages cannot import this package (they import only sim), so
// their Validate methods name the offending key this way.
func keyed(t reflect.Type, err error) error {
	switch err.(type) {
	case *FieldError, FieldErrors, *Error, Errors, interface{ Unwrap() []error }:
		return err
	}
	key, msg, ok := strings.Cut(err.Error(), ": ")
	if !ok {
		return err
	}
	first, _, _ := strings.Cut(key, ".")
	for _, fd := range fieldsOf(t) {
		if fd.name == first {
			return &FieldError{Key: key, Msg: msg}
		}
	}
	return err
}

// validation records the error a Validate method at path returned.
func (d *decoder) validation(path []string, err error) {
	switch e := err.(type) {
	case *FieldError:
		p := path
		if e.Key != "" {
			p = append(slices.Clip(path), strings.Split(e.Key, ".")...)
		}
		d.errorf(p, "%s", e.Msg)
	case FieldErrors:
		for _, fe := range e {
			d.validation(path, fe)
		}
	case *Error:
		d.add(path, e)
	case Errors:
		for _, x := range e {
			d.add(path, x)
		}
	case interface{ Unwrap() []error }: // errors.Join
		for _, x := range e.Unwrap() {
			if x != nil {
				d.validation(path, x)
			}
		}
	default:
		d.errorf(path, "%s", err)
	}
}

// bounds checks the nonempty, min and max tags of field fd, whose value rv
// is at path. On a slice, array or map field min and max bound every
// element. nonempty is checked where the file gives the value: an empty
// default is the component's (a table of cases the user must write,
// decoded for a workload that may not run).
func (d *decoder) bounds(path []string, rv reflect.Value, fd field) {
	if fd.nonEmpty() && rv.Len() == 0 && d.f.Has(path...) {
		d.errorf(path, "is empty: give at least one value")
		return
	}
	lo, hi := fd.bounds()
	if !lo.IsValid() && !hi.IsValid() {
		return
	}
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		for i := 0; i < rv.Len(); i++ {
			d.bound(append(slices.Clip(path), strconv.Itoa(i)), rv.Index(i), fd, lo, hi)
		}
		return
	case reflect.Map:
		keys := rv.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		for _, k := range keys {
			d.bound(append(slices.Clip(path), k.String()), rv.MapIndex(k), fd, lo, hi)
		}
		return
	}
	d.bound(path, rv, fd, lo, hi)
}

func (d *decoder) bound(path []string, rv reflect.Value, fd field, lo, hi reflect.Value) {
	switch {
	case lo.IsValid() && compare(rv, lo) < 0:
		d.errorf(path, "%s is below the minimum %s", format(rv), fd.tag("min"))
	case hi.IsValid() && compare(rv, hi) > 0:
		d.errorf(path, "%s is above the maximum %s", format(rv), fd.tag("max"))
	}
}

// compare orders two numbers of the same type.
func compare(a, b reflect.Value) int {
	switch a.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return cmpOrdered(a.Int(), b.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return cmpOrdered(a.Uint(), b.Uint())
	case reflect.Float32, reflect.Float64:
		return cmpOrdered(a.Float(), b.Float())
	}
	panic("config: compare of " + a.Type().String())
}

func cmpOrdered[T int64 | uint64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
