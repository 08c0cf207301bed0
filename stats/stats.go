// Package stats reads the counters of simkron's components, declared
// once: each component keeps its counters in a stats struct whose fields
// carry their name and help as struct tags, the idiom package config
// uses for parameters (gem5 declares its stats with a name and a
// description the same way):
//
//	type Stats struct {
//		TxFrames uint64   `stat:"tx_frames" help:"frames handed to the wire"`
//		DMABusy  sim.Time `stat:"dma_busy_ps" help:"time the DMA engine was busy, in picoseconds"`
//	}
//
// Walk reads every counter of a stats struct under a prefix, so that the
// result (result.json's hosts[].counters), the summary and simkron
// counters list them without a hand-written list. A field is a counter
// of any integer type (sim.Time counts picoseconds); a struct field with
// a stat tag is a group whose counters are named under it; `stat:"-"`
// leaves a field out. An exported field without a stat tag, a name taken
// twice, a counter without help or a negative count is a simulator bug
// and panics: the tests walk every declared stats struct.
//
// The package imports nothing of the simulator.
package stats

import (
	"fmt"
	"reflect"
	"slices"
	"sync"
)

// Counter is one counter: its full name, its help and its value.
type Counter struct {
	Name  string
	Help  string
	Value uint64
}

// Group is one stats struct of a component, under a name relative to the
// component's ("card", "driver"; "" for the component's own counters).
// Value is the struct, or a pointer to it; nil means the group is absent
// (an entity a family did not make).
type Group struct {
	Name  string
	Value any
}

// Join joins the parts of a counter's name with dots, leaving out empty
// ones: Join("hostA", "nic0", "card") is "hostA.nic0.card".
func Join(parts ...string) string {
	out := ""
	for _, p := range parts {
		switch {
		case p == "":
		case out == "":
			out = p
		default:
			out += "." + p
		}
	}
	return out
}

// Walk returns the counters of the stats struct v (a struct or a pointer
// to one), each named prefix.name, in field order; none for a nil v.
func Walk(prefix string, v any) []Counter { return AppendWalk(nil, prefix, v) }

// AppendWalk appends the counters Walk returns to out and returns the
// extended slice: a host's counters gathered into one slice without one
// of their own for each struct.
func AppendWalk(out []Counter, prefix string, v any) []Counter {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() || rv.Kind() == reflect.Pointer && rv.IsNil() {
		return out
	}
	return appendValue(out, prefix, reflect.Indirect(rv))
}

func appendValue(out []Counter, prefix string, rv reflect.Value) []Counter {
	out = slices.Grow(out, countOf(rv.Type()))
	for _, f := range fieldsOf(rv.Type()) {
		fv := rv.FieldByIndex(f.index)
		name := Join(prefix, f.name)
		if f.group {
			out = appendValue(out, name, fv)
			continue
		}
		var n uint64
		if fv.CanInt() {
			if fv.Int() < 0 {
				panic(fmt.Sprintf("stats: counter %s is %d: a count is never negative", name, fv.Int()))
			}
			n = uint64(fv.Int())
		} else {
			n = fv.Uint()
		}
		out = append(out, Counter{Name: name, Help: f.help, Value: n})
	}
	return out
}

// WalkGroups returns the counters of every group, each under
// prefix.group.
func WalkGroups(prefix string, gs []Group) []Counter { return AppendGroups(nil, prefix, gs) }

// AppendGroups appends the counters WalkGroups returns to out.
func AppendGroups(out []Counter, prefix string, gs []Group) []Counter {
	for _, g := range gs {
		out = AppendWalk(out, Join(prefix, g.Name), g.Value)
	}
	return out
}

// Describe returns the counters a stats struct type declares, each named
// prefix.name with its help (values zero): Walk of a zero value.
func Describe(prefix string, v any) []Counter {
	t := reflect.TypeOf(v)
	if t == nil {
		return nil
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return Walk(prefix, reflect.New(t).Interface())
}

// field is a counter or group of a stats struct type.
type field struct {
	index []int
	name  string
	help  string
	group bool
}

var cache sync.Map // reflect.Type -> []field

var counts sync.Map // reflect.Type -> int

// countOf returns how many counters struct type t has, its groups'
// included.
func countOf(t reflect.Type) int {
	if n, ok := counts.Load(t); ok {
		return n.(int)
	}
	n := 0
	for _, f := range fieldsOf(t) {
		if f.group {
			n += countOf(t.FieldByIndex(f.index).Type)
		} else {
			n++
		}
	}
	counts.Store(t, n)
	return n
}

// fieldsOf returns the counters and groups of struct type t, checking
// its tags.
func fieldsOf(t reflect.Type) []field {
	if fs, ok := cache.Load(t); ok {
		return fs.([]field)
	}
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("stats: %v is not a stats struct", t))
	}
	var out []field
	seen := map[string]bool{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		name, ok := sf.Tag.Lookup("stat")
		if !ok {
			panic(fmt.Sprintf("stats: %v.%s has no stat tag (a name, or \"-\" to leave it out)", t, sf.Name))
		}
		if name == "-" {
			continue
		}
		if name == "" || seen[name] {
			panic(fmt.Sprintf("stats: %v.%s: counter name %q is empty or taken twice", t, sf.Name, name))
		}
		seen[name] = true
		f := field{index: sf.Index, name: name, help: sf.Tag.Get("help")}
		switch k := sf.Type.Kind(); {
		case k == reflect.Struct:
			f.group = true
		case k >= reflect.Int && k <= reflect.Uint64:
			if f.help == "" {
				panic(fmt.Sprintf("stats: %v.%s (%s) has no help", t, sf.Name, name))
			}
		default:
			panic(fmt.Sprintf("stats: %v.%s is a %v, not a count", t, sf.Name, sf.Type))
		}
		out = append(out, f)
	}
	cache.Store(t, out)
	return out
}
