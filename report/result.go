// Package report holds the machine-readable result of a run (a stable JSON
// schema) and renders it for people: the text summary, tables, CSV, SVG
// and PNG charts (gonum.org/v1/plot) and a self-contained HTML page.
// DESIGN.md names it as the home for tables and charts; it reads results,
// it never runs a simulation.
package report

import (
	"encoding/json"
	"errors"
	"io"

	"simkron/stack/apps/latency"
	"simkron/stack/apps/macbench"
	"simkron/stack/apps/membench"
	"simkron/stack/apps/ping"
	"simkron/stack/apps/ttcp"
	"simkron/stack/apps/udpbench"
)

// Schema identifies the result format; it changes only when a field
// changes meaning or disappears.
const Schema = "simkron.result/2"

// Result is everything a run produced. Every field is derived from the
// simulation alone, so the same config and seed give the same bytes.
type Result struct {
	Schema      string         `json:"schema"`
	Version     string         `json:"simkron_version"`
	Experiment  string         `json:"experiment"`
	Description string         `json:"description,omitempty"`
	Seed        uint64         `json:"seed"`
	Complete    bool           `json:"complete"`
	Incomplete  string         `json:"incomplete_reason,omitempty"`
	SimTimePS   int64          `json:"sim_time_ps"`
	Events      uint64         `json:"events"`
	Hosts       []Host         `json:"hosts"`
	Workload    string         `json:"workload"`
	Membench    []membench.Row `json:"membench,omitempty"`
	Mac         []macbench.Row `json:"mac,omitempty"`
	UDP         []udpbench.Row `json:"udp,omitempty"`
	TCP         []latency.Row  `json:"tcp,omitempty"`
	TTCP        []ttcp.Result  `json:"ttcp,omitempty"`
	Ping        *ping.Result   `json:"ping,omitempty"`
	Segments    []Segment      `json:"segments,omitempty"`
	Annotations *Annotations   `json:"annotations,omitempty"`
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

// Host is one simulated machine's figures.
type Host struct {
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

// WriteJSON writes r, indented, with a final newline.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// ReadJSON reads a result: one JSON object with no field the schema
// lacks, and nothing after it.
func ReadJSON(rd io.Reader) (*Result, error) {
	var r Result
	dec := json.NewDecoder(rd)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the result")
	}
	return &r, nil
}
