package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// JSON has no NaN or infinity, and encoding/json refuses a value that
// holds one. A completed run must not be lost for that, whatever made the
// value (a workload dividing by zero, a script's bucket): WriteJSON then
// writes every float that is not finite as null and lists where each was
// in the result's "non_finite" field, as JSON paths from the result's top
// ("annotations.buckets[0].sum", "udp[2].rtt_us"). Reading the result
// back gives 0 at those places, and writing it again null, as it was
// read.

// maxDepth bounds the walk over a value, as encoding/json bounds its own.
const maxDepth = 1000

// nonFinite is a copy of a value with each float that is not finite
// replaced by the marker, and the paths of those floats.
type nonFinite struct {
	marker float64
	paths  []string
	// listed are paths written as null whatever their value: those a
	// result read back lists (where it holds 0), so that it is written
	// again as it was read.
	listed map[string]bool
}

// markers are finite values that stand for a non-finite one while the
// copy is encoded; the first not otherwise in the result is used.
var markers = []float64{-1.2345678901234568e-300, -7.654321098765432e-299, -3.141592653589793e-298}

// writeNonFinite writes r as WriteJSON does, every non-finite float as
// null, listed in r's NonFinite.
func (r *Result) writeNonFinite(w *bytes.Buffer) error {
	var marker float64
	for _, m := range markers {
		if !r.holds(m) {
			marker = m
			break
		}
	}
	if marker == 0 {
		return errors.New("the result holds values that are not finite, and every marker for them")
	}
	nf := &nonFinite{marker: marker, listed: map[string]bool{}}
	for _, p := range r.NonFinite {
		nf.listed[p] = true
	}
	c := *r
	c.Header = nf.copy(reflect.ValueOf(r.Header), "", 0).Interface().(Header)
	c.Sections = make([]Section, len(r.Sections))
	for i, s := range r.Sections {
		c.Sections[i] = Section{Name: s.Name}
		if s.Value != nil {
			c.Sections[i].Value = nf.copy(reflect.ValueOf(s.Value), s.Name, 0).Interface()
		}
	}
	c.Trailer = nf.copy(reflect.ValueOf(r.Trailer), "", 0).Interface().(Trailer)
	c.NonFinite = r.NonFinite
	for _, p := range nf.paths {
		if !slices.Contains(c.NonFinite, p) {
			c.NonFinite = append(c.NonFinite, p)
		}
	}
	compact, err := json.Marshal(&c)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, replaceNumber(compact, marker), "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	w.Write(out.Bytes())
	return nil
}

// FindNonFinite returns the places (JSON paths) of r's values that are
// not finite numbers, which WriteJSON writes as null; none, nil.
func (r *Result) FindNonFinite() []string {
	nf := &nonFinite{}
	nf.copy(reflect.ValueOf(r.Header), "", 0)
	for _, s := range r.Sections {
		if s.Value != nil {
			nf.copy(reflect.ValueOf(s.Value), s.Name, 0)
		}
	}
	nf.copy(reflect.ValueOf(r.Trailer), "", 0)
	return nf.paths
}

// holds reports whether any float of r is v.
func (r *Result) holds(v float64) bool {
	found := false
	var walk func(x reflect.Value, depth int)
	walk = func(x reflect.Value, depth int) {
		if found || depth > maxDepth || !x.IsValid() {
			return
		}
		switch x.Kind() {
		case reflect.Float64:
			found = x.Float() == v
		case reflect.Pointer, reflect.Interface:
			if !x.IsNil() {
				walk(x.Elem(), depth+1)
			}
		case reflect.Struct:
			for i := range x.NumField() {
				if x.Type().Field(i).IsExported() {
					walk(x.Field(i), depth+1)
				}
			}
		case reflect.Slice, reflect.Array:
			if x.Type().Elem().Kind() == reflect.Uint8 {
				return
			}
			for i := range x.Len() {
				walk(x.Index(i), depth+1)
			}
		case reflect.Map:
			it := x.MapRange()
			for it.Next() {
				walk(it.Value(), depth+1)
			}
		}
	}
	walk(reflect.ValueOf(r.Header), 0)
	for _, s := range r.Sections {
		walk(reflect.ValueOf(s.Value), 0)
	}
	walk(reflect.ValueOf(r.Trailer), 0)
	return found
}

// copy returns a copy of v (at JSON path path) whose non-finite floats
// are the marker; what JSON does not encode is shared, not copied.
func (nf *nonFinite) copy(v reflect.Value, path string, depth int) reflect.Value {
	if depth > maxDepth {
		return v
	}
	t := v.Type()
	switch v.Kind() {
	case reflect.Float64:
		// (A float32 would round the marker to 0; results hold none.)
		f := v.Float()
		if !math.IsNaN(f) && !math.IsInf(f, 0) && !nf.listed[path] {
			return v
		}
		nf.paths = append(nf.paths, path)
		out := reflect.New(t).Elem()
		out.SetFloat(nf.marker)
		return out
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		out := reflect.New(t.Elem())
		out.Elem().Set(nf.copy(v.Elem(), path, depth+1))
		return out
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		out := reflect.New(t).Elem()
		out.Set(nf.copy(v.Elem(), path, depth+1))
		return out
	case reflect.Struct:
		out := reflect.New(t).Elem()
		out.Set(v)
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, skip := jsonName(f)
			if skip {
				continue
			}
			p := path
			if !f.Anonymous || f.Tag.Get("json") != "" {
				p = joinPath(path, name)
			}
			out.Field(i).Set(nf.copy(v.Field(i), p, depth+1))
		}
		return out
	case reflect.Slice:
		if v.IsNil() || t.Elem().Kind() == reflect.Uint8 {
			return v
		}
		out := reflect.MakeSlice(t, v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(nf.copy(v.Index(i), path+"["+strconv.Itoa(i)+"]", depth+1))
		}
		return out
	case reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return v
		}
		out := reflect.New(t).Elem()
		for i := range v.Len() {
			out.Index(i).Set(nf.copy(v.Index(i), path+"["+strconv.Itoa(i)+"]", depth+1))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(t, v.Len())
		it := v.MapRange()
		for it.Next() {
			out.SetMapIndex(it.Key(), nf.copy(it.Value(), joinPath(path, fmt.Sprint(it.Key().Interface())), depth+1))
		}
		return out
	}
	return v
}

// jsonName returns the name encoding/json gives field f, and whether it
// leaves the field out.
func jsonName(f reflect.StructField) (name string, skip bool) {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", true
	}
	name, _, _ = strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	return name, false
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// replaceNumber replaces every JSON number in data that is the marker
// with null, leaving strings alone.
func replaceNumber(data []byte, marker float64) []byte {
	var out bytes.Buffer
	inString, escaped := false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '-' || c >= '0' && c <= '9':
			j := i
			for j < len(data) && strings.IndexByte("+-.0123456789eE", data[j]) >= 0 {
				j++
			}
			if f, err := strconv.ParseFloat(string(data[i:j]), 64); err == nil && f == marker {
				out.WriteString("null")
			} else {
				out.Write(data[i:j])
			}
			i = j - 1
			continue
		}
		out.WriteByte(c)
	}
	return out.Bytes()
}
