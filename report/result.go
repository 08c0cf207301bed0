// Package report holds the machine-readable result of a run (a stable JSON
// schema) and renders it for people: the text summary, tables, CSV, SVG
// and PNG charts (gonum.org/v1/plot) and a self-contained HTML page.
// docs/design.md names it as the home for tables and charts; it reads results,
// it never runs a simulation.
//
// The report knows no workload. A result holds each workload's own
// sections, opaque here, and the figures the workload made in the generic
// shapes of package report/shape: tables, layer breakdowns, line charts
// and cost splits, which every format renders.
package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"simkron/report/shape"
)

// Schema identifies the result format; it changes only when a field
// changes meaning or disappears.
const Schema = "simkron.result/3"

// Result is everything a run produced. Every field is derived from the
// simulation alone, so the same config and seed give the same bytes.
//
// In JSON the fields come in a fixed order: the header (what ran),
// "sections" (the names of the workload's sections), each section under
// its name, then the trailer (segments, annotations and figures).
type Result struct {
	Header
	// Sections are the workload's own results, each under its name.
	Sections []Section
	Trailer
}

// Header says what ran and how far it got.
type Header struct {
	Schema      string `json:"schema"`
	Version     string `json:"simkron_version"`
	Experiment  string `json:"experiment"`
	Description string `json:"description,omitempty"`
	Seed        uint64 `json:"seed"`
	// Detail is the memory model's detail, "functional" when the run
	// charged calibrated averages instead of the caches; absent for full
	// detail (the default, and every result written before the field).
	Detail string `json:"detail,omitempty"`
	// Nondeterministic, when set, says why the same config and seed would
	// not give the same result: a bridge to real hosts, whose frames
	// arrive when the wall clock says. Absent for every other run.
	Nondeterministic string `json:"nondeterministic,omitempty"`
	Complete         bool   `json:"complete"`
	Incomplete       string `json:"incomplete_reason,omitempty"`
	// NonFinite lists the places (JSON paths) of values that were not
	// finite numbers (NaN, an infinity), which JSON cannot hold: each is
	// written as null. Absent when there are none.
	NonFinite []string     `json:"non_finite,omitempty"`
	SimTimePS int64        `json:"sim_time_ps"`
	Events    uint64       `json:"events"`
	Hosts     []HostResult `json:"hosts"`
	Workload  string       `json:"workload"`
}

// Trailer is what follows the workload's sections.
type Trailer struct {
	Segments []Segment `json:"segments,omitempty"`
	// Bridges and Realtime are a bridged run's (bridge.go).
	Bridges     []Bridge     `json:"bridges,omitempty"`
	Realtime    *Realtime    `json:"realtime,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
	// Figures are what the report draws.
	Figures shape.Figures `json:"figures"`
}

// Section is one named part of a workload's result: a Go value when the
// run made it, the JSON it was read from when read back.
type Section struct {
	Name  string
	Value any
}

// fixed is a result's JSON without its sections.
type fixed struct {
	Header
	Names []string `json:"sections"`
	Trailer
}

// fixedKeys are the JSON keys of fixed's fields.
var fixedKeys = []string{"schema", "simkron_version", "experiment", "description", "seed", "detail", "nondeterministic", "complete",
	"incomplete_reason", "non_finite", "sim_time_ps", "events", "hosts", "workload", "sections", "segments", "bridges", "realtime", "annotations", "figures"}

// MarshalJSON writes the fields in their fixed order.
func (r *Result) MarshalJSON() ([]byte, error) {
	hb, err := json.Marshal(r.Header)
	if err != nil {
		return nil, err
	}
	tb, err := json.Marshal(r.Trailer)
	if err != nil {
		return nil, err
	}
	names := []string{}
	for _, s := range r.Sections {
		names = append(names, s.Name)
	}
	nb, _ := json.Marshal(names)
	var b bytes.Buffer
	b.Write(hb[:len(hb)-1])
	b.WriteString(`,"sections":`)
	b.Write(nb)
	for _, s := range r.Sections {
		if slices.Contains(fixedKeys, s.Name) {
			return nil, fmt.Errorf("section %q has the name of a fixed field", s.Name)
		}
		v, err := json.Marshal(s.Value)
		if err != nil {
			return nil, fmt.Errorf("section %q: %w", s.Name, err)
		}
		k, _ := json.Marshal(s.Name)
		b.WriteByte(',')
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte(',')
	b.Write(tb[1:])
	return b.Bytes(), nil
}

// UnmarshalJSON reads a result strictly: the fixed fields with no field
// the schema lacks, and exactly the sections "sections" names.
func (r *Result) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	known := map[string]json.RawMessage{}
	for _, k := range fixedKeys {
		if v, ok := raw[k]; ok {
			known[k] = v
		}
	}
	kb, err := json.Marshal(known)
	if err != nil {
		return err
	}
	var f fixed
	dec := json.NewDecoder(bytes.NewReader(kb))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return err
	}
	*r = Result{Header: f.Header, Trailer: f.Trailer}
	for _, name := range f.Names {
		v, ok := raw[name]
		if !ok || slices.Contains(fixedKeys, name) {
			return fmt.Errorf("section %q is listed but not there", name)
		}
		r.Sections = append(r.Sections, Section{Name: name, Value: v})
	}
	for k := range raw {
		if !slices.Contains(fixedKeys, k) && !slices.Contains(f.Names, k) {
			return fmt.Errorf("json: unknown field %q", k)
		}
	}
	return nil
}

// Section decodes the section called name into v, strictly.
func (r *Result) Section(name string, v any) error {
	for _, s := range r.Sections {
		if s.Name != name {
			continue
		}
		data, ok := s.Value.(json.RawMessage)
		if !ok {
			var err error
			if data, err = json.Marshal(s.Value); err != nil {
				return err
			}
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		return dec.Decode(v)
	}
	return fmt.Errorf("the result has no section %q", name)
}

// Annotations is what the run's Tcl annotation scripts produced.
type Annotations struct {
	Scripts []string `json:"scripts"`
	Output  string   `json:"output,omitempty"` // what the scripts printed
	Buckets []Bucket `json:"buckets,omitempty"`
	Error   string   `json:"error,omitempty"` // the script error that stopped the run
}

// Bucket is one statistics accumulator of the scripts.
type Bucket struct {
	Name  string  `json:"name"`
	Count int     `json:"count"`
	Sum   float64 `json:"sum"`
	Mean  float64 `json:"mean"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
}

// Segment is one Ethernet segment's figures.
type Segment struct {
	Name       string `json:"name"`
	Rate       int64  `json:"rate_bps"`
	Mode       string `json:"mode"`
	Frames     uint64 `json:"frames"`
	Bytes      uint64 `json:"bytes"`
	Collisions uint64 `json:"collisions"`
	BusyPS     int64  `json:"busy_ps"`
}

// HostResult is one simulated machine's figures.
type HostResult struct {
	Name        string   `json:"name"`
	Machine     string   `json:"machine"`
	Description string   `json:"description,omitempty"`
	ClockHz     int64    `json:"clock_hz"`
	CPU         CPU      `json:"cpu"`
	Caches      []Cache  `json:"caches"`
	Memory      Memory   `json:"memory"`
	Kernel      Kernel   `json:"kernel"`
	Devices     []Device `json:"devices"`
	GuestErrors int      `json:"guest_errors"`
	GuestLog    []string `json:"guest_log,omitempty"`
	// Counters are every counter of every component of the host, named
	// under it (hostA.cpu0.cycles, hostA.inet.tcp_in_segs,
	// hostA.nic0.card.tx_frames): simkron counters lists them with their
	// meaning.
	Counters []Counter `json:"counters,omitempty"`
}

// CPU holds the core's counters.
type CPU struct {
	Cycles       int64  `json:"cycles"`
	IdleCycles   int64  `json:"idle_cycles"`
	Instructions int64  `json:"instructions"`
	Interrupts   uint64 `json:"interrupts"`
	Switches     uint64 `json:"context_switches"`
	Traps        uint64 `json:"traps"`
	IOAccesses   uint64 `json:"io_accesses"`
	IOCycles     int64  `json:"io_cycles"`
}

// Cache holds one cache's shape and counters.
type Cache struct {
	Name        string `json:"name"`
	Size        uint64 `json:"size"`
	Line        uint64 `json:"line"`
	Assoc       int    `json:"assoc"`
	WritePolicy string `json:"write_policy"`
	ReadHits    uint64 `json:"read_hits"`
	ReadMisses  uint64 `json:"read_misses"`
	WriteHits   uint64 `json:"write_hits"`
	WriteMisses uint64 `json:"write_misses"`
	FetchHits   uint64 `json:"fetch_hits"`
	FetchMisses uint64 `json:"fetch_misses"`
	Writebacks  uint64 `json:"writebacks"`
}

// Memory holds main memory's figures.
type Memory struct {
	Size         uint64 `json:"size"`
	PagesTouched int    `json:"pages_touched"`
	Reads        uint64 `json:"reads"`
	Writes       uint64 `json:"writes"`
}

// Kernel holds the simulated kernel's counters.
type Kernel struct {
	Syscalls    uint64 `json:"syscalls"`
	Ticks       uint64 `json:"ticks"`
	TimersFired uint64 `json:"timers_fired"`
	SoftirqRuns uint64 `json:"softirq_runs"`
	Schedules   uint64 `json:"schedules"`
	HeapPeak    uint64 `json:"heap_peak"`
}

// Device is one entry of the device registry with its counters.
type Device struct {
	Name     string    `json:"name"`
	Space    string    `json:"space"`
	Base     uint64    `json:"base"`
	Size     uint64    `json:"size"`
	Bus      string    `json:"bus,omitempty"`
	Counters []Counter `json:"counters,omitempty"`
}

// Counter is one named statistic.
type Counter struct {
	Name  string `json:"name"`
	Value uint64 `json:"value"`
}

// WriteJSON writes r, indented, with a final newline. A float that is
// not finite, which JSON cannot hold, is written as null and its place
// listed in "non_finite" (see nonfinite.go): the result is written
// whatever its values.
func (r *Result) WriteJSON(w io.Writer) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	err := enc.Encode(r)
	if _, ok := errors.AsType[*json.UnsupportedValueError](err); ok || err == nil && len(r.NonFinite) > 0 {
		b.Reset()
		err = r.writeNonFinite(&b)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(b.Bytes())
	return err
}

// ReadJSON reads a result: one JSON object with no field the schema
// lacks, and nothing after it.
func ReadJSON(rd io.Reader) (*Result, error) {
	var r Result
	dec := json.NewDecoder(rd)
	if err := dec.Decode(&r); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the result")
	}
	return &r, nil
}
