package machine_test

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/report"
	"simkron/sim"

	"github.com/google/go-cmp/cmp"
)

// The shipped experiments in more than one island: the TOP study's, whose
// remote pair and loopback PC no network joins. Every other one is whole,
// as is any run asked to be.
func TestIslandsOfShippedConfigs(t *testing.T) {
	want := map[string]int{"top-lower": 2, "top-upper": 2}
	configs, err := filepath.Glob(machinetest.Config("*.toml"))
	if err != nil || len(configs) == 0 {
		t.Fatalf("no configs: %v", err)
	}
	for _, cfg := range configs {
		name := strings.TrimSuffix(filepath.Base(cfg), ".toml")
		exp, err := machine.LoadExperiment(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, whole := range []bool{false, true} {
			r, err := machine.New(exp, machine.Options{NoCapture: true, Whole: whole})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			n := max(want[name], 1)
			if whole {
				n = 1
			}
			if got := r.Islands(); got != n {
				t.Errorf("%s (whole %v): %d islands, want %d", name, whole, got, n)
			}
			if (r.Sched == nil) != (n > 1) {
				t.Errorf("%s (whole %v): Sched %v with %d islands", name, whole, r.Sched, n)
			}
			r.Close()
		}
	}
}

// islandRun is one run's result as JSON and its captures.
type islandRun struct {
	result   string
	captures []machine.Capture
	islands  int
	windows  uint64 // the linked islands' windows
	res      *report.Result
}

func runIslands(t *testing.T, exp *machine.Experiment, opt machine.Options) islandRun {
	t.Helper()
	r, err := machine.New(exp, opt)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute(opt)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return islandRun{result: string(b), captures: r.Net.Captures(), islands: r.Islands(), windows: r.LinkedWindows(), res: res}
}

// A run in islands simulates what the whole run does, byte for byte but
// for the simulator's own counts, whichever island ends last, when one is
// idle from the start, and when stop_at comes first; and it is the same
// at any number of threads and GOMAXPROCS, captures included.
func TestIslandsSameAsWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the TOP study's users a few times over")
	}
	base := func(t *testing.T) *machinetest.Builder {
		return machinetest.Edit(t, machinetest.Config("top-lower.toml")).
			Set("workload.top.messages", 40).Set("workload.top.sizes", []any{128, 1152}).
			Set("workload.top.split_sizes", []any{128}).Set("segment[0].pcap", true)
	}
	for _, tc := range []struct {
		name     string
		edit     func(*machinetest.Builder)
		complete bool
	}{
		{"remote ends last", func(*machinetest.Builder) {}, true},
		{"loopback ends last", func(b *machinetest.Builder) {
			b.Set("workload.top.case[0].levels", []any{"pktdrv", "mac", "llc", "clns"}).
				Append("workload.top.case", map[string]any{"name": "more", "levels": []any{"clns"}, "remote": false, "loopback": true, "chart": "more"})
		}, true},
		{"loopback idle throughout", func(b *machinetest.Builder) { b.Set("workload.top.case[0].loopback", false) }, true},
		{"remote idle throughout", func(b *machinetest.Builder) { b.Set("workload.top.case[0].remote", false) }, true},
		{"stop_at first", func(b *machinetest.Builder) { b.Set("experiment.stop_at", "150ms") }, false},
		{"upper users", func(*machinetest.Builder) {}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := base(t)
			if tc.name == "upper users" {
				b = machinetest.Edit(t, machinetest.Config("top-upper.toml")).
					Set("workload.top.messages", 20).Set("workload.top.sizes", []any{128, 1152}).
					Set("workload.top.split_sizes", []any{128}).Set("segment[0].pcap", true)
			}
			tc.edit(b)
			if got := sameAsWhole(t, b.Experiment(), 2, tc.complete); got.windows != 0 {
				t.Errorf("%d linked windows in islands that no link joins", got.windows)
			}
		})
	}
}

// sameAsWhole checks that exp, run in islands (want of them) at 1, 2 and
// 8 threads and at GOMAXPROCS=1, simulates what it does whole, byte for
// byte but for the simulator's own counts, captures included; that each
// run is complete or not as complete says; and that all give the same
// bytes and meet at the same linked windows. It returns the run on one
// thread.
func sameAsWhole(t *testing.T, exp *machine.Experiment, want int, complete bool) islandRun {
	t.Helper()
	whole := runIslands(t, exp, machine.Options{Whole: true})
	if whole.islands != 1 || whole.windows != 0 {
		t.Fatalf("whole run in %d islands, %d linked windows", whole.islands, whole.windows)
	}
	var first islandRun
	for i, cores := range []int{1, 2, 8} {
		got := runIslands(t, exp, machine.Options{Cores: machine.NewCores(cores)})
		if got.islands != want {
			t.Fatalf("%d islands, want %d", got.islands, want)
		}
		if got.res.Complete != complete {
			t.Errorf("complete %v (%s), want %v", got.res.Complete, got.res.Incomplete, complete)
		}
		if i == 0 {
			first = got
			if diff := cmp.Diff(machinetest.ModelOnly(t, whole.res), machinetest.ModelOnly(t, got.res)); diff != "" {
				t.Errorf("islands simulate otherwise than the whole run (-whole +islands):\n%s", diff)
			}
			if !reflect.DeepEqual(whole.captures, got.captures) {
				t.Errorf("captures differ from the whole run's")
			}
			continue
		}
		if got.result != first.result || !reflect.DeepEqual(got.captures, first.captures) {
			t.Errorf("%d threads: result or captures differ from 1 thread's", cores)
		}
		if got.windows != first.windows {
			t.Errorf("%d threads: %d linked windows, 1 thread %d", cores, got.windows, first.windows)
		}
	}
	old := runtime.GOMAXPROCS(1)
	one := runIslands(t, exp, machine.Options{Cores: machine.NewCores(4)})
	runtime.GOMAXPROCS(old)
	if one.result != first.result || !reflect.DeepEqual(one.captures, first.captures) || one.windows != first.windows {
		t.Errorf("GOMAXPROCS=1: result, captures or linked windows differ")
	}
	return first
}

// Each island's hosts hold its own scheduler and no other: every
// *sim.Scheduler reachable from a host (its core, memory, devices,
// environment, protocol families, cards and its island's network) is its
// island's, so that no model can read another island's clock. (A
// closure's captured variables are beyond reflection; the race detector
// sees those when the islands run at once: go test -race.)
func TestIslandsHoldOwnScheduler(t *testing.T) {
	exp, err := machine.LoadExperiment(machinetest.Config("top-upper.toml"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := machine.New(exp, machine.Options{NoCapture: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Islands() != 2 {
		t.Fatalf("%d islands", r.Islands())
	}
	byHost := map[string]*sim.Scheduler{}
	for _, h := range r.Hosts {
		byHost[h.Name] = h.Sched
	}
	if byHost["pcA"] != byHost["pcB"] || byHost["pcA"] == byHost["pcL"] {
		t.Fatalf("pcA, pcB, pcL on schedulers %p %p %p: want the pair on one, the loopback PC on another", byHost["pcA"], byHost["pcB"], byHost["pcL"])
	}
	// Each island's random streams are the run's: a component's stream
	// is named, and derives from the master seed and its name alone.
	for _, k := range []*sim.Scheduler{byHost["pcA"], byHost["pcL"]} {
		if k.Seed() != exp.Info.Seed || k.Stream("lan0/faults").Uint64() != sim.NewScheduler(exp.Info.Seed).Stream("lan0/faults").Uint64() {
			t.Errorf("an island's scheduler has seed %d (want %d) or another stream", k.Seed(), exp.Info.Seed)
		}
	}
	holdOwnScheduler(t, r.Hosts)
}

// holdOwnScheduler checks that every *sim.Scheduler reachable from each
// of hosts is the host's own.
func holdOwnScheduler(t *testing.T, hosts []*machine.Host) {
	t.Helper()
	for _, h := range hosts {
		found := schedulersFrom(reflect.ValueOf(h))
		if len(found) == 0 {
			t.Errorf("%s: no scheduler reachable", h.Name)
		}
		for _, k := range found {
			if k != h.Sched {
				t.Errorf("%s reaches a scheduler %p other than its own %p", h.Name, k, h.Sched)
			}
		}
	}
}

var schedType = reflect.TypeFor[*sim.Scheduler]()

// schedulersFrom returns every distinct *sim.Scheduler reachable from v
// through pointers, structs (unexported fields too), slices, arrays, maps
// and interfaces.
func schedulersFrom(v reflect.Value) []*sim.Scheduler {
	type visit struct {
		p uintptr
		t reflect.Type
	}
	seen := map[visit]bool{}
	var out []*sim.Scheduler
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		if !v.IsValid() || !mayHoldPointer(v.Type()) {
			return
		}
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() {
				return
			}
			key := visit{v.Pointer(), v.Type()}
			if seen[key] {
				return
			}
			seen[key] = true
			if v.Type() == schedType {
				k := (*sim.Scheduler)(unsafe.Pointer(v.Pointer()))
				if !slices.Contains(out, k) {
					out = append(out, k)
				}
				return
			}
			walk(v.Elem())
		case reflect.Interface:
			walk(v.Elem())
		case reflect.Struct:
			for i := range v.NumField() {
				walk(v.Field(i))
			}
		case reflect.Slice, reflect.Array:
			if !mayHoldPointer(v.Type().Elem()) {
				return
			}
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Map:
			it := v.MapRange()
			for it.Next() {
				walk(it.Key())
				walk(it.Value())
			}
		}
	}
	walk(v)
	return out
}

// mayHoldPointer reports whether a value of type t can lead to a
// scheduler (functions and channels are not followed).
func mayHoldPointer(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice:
		return true
	case reflect.Array:
		return t.Len() > 0 && mayHoldPointer(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if mayHoldPointer(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}
