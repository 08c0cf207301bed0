package timeline_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"simkron/internal/machinetest"
)

// counterSample is one sample of a counter track, as the file holds it.
type counterSample struct {
	ts    float64
	value float64
}

// The kernel's queues as counter tracks, in the trace of one 8 KiB UDP
// echo on configs/udp-ne2000.toml: each host's device transmit queue
// (the six fragments queue behind the card, which takes one at a time),
// its receive backlog and the echo socket's and the client socket's
// receive queues. Each track begins empty, goes up and comes back to 0,
// a frame or a datagram at a time; the run is the same with the trace as
// without.
func TestTraceQueueCounters(t *testing.T) {
	exp := machinetest.Edit(t, "../configs/udp-ne2000.toml").Set("workload.udp.sizes", []int64{1024, 8192}).
		Set("workload.udp.messages", 3).Set("workload.udp.warmup", 1).Experiment()
	plain := runTraced(t, exp, nil)
	a := runTraced(t, exp, window(t, "message=udp:8192:2"))
	if a.hash != plain.hash || a.events != plain.events || resultJSON(t, a.res) != resultJSON(t, plain.res) {
		t.Error("the run changed with the trace")
	}
	var file struct {
		TraceEvents []struct {
			Ph, Name, Cat string
			PID           int
			TS            float64
			Args          map[string]any
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(a.trace, &file); err != nil {
		t.Fatal(err)
	}
	hosts := map[int]string{}
	tracks := map[string][]counterSample{} // "host: name (unit)"
	for _, e := range file.TraceEvents {
		if e.Ph == "M" && e.Name == "process_name" {
			hosts[e.PID] = e.Args["name"].(string)
		}
		if e.Ph != "C" || e.Cat != "queue" {
			continue
		}
		if len(e.Args) != 1 {
			t.Fatalf("counter %s: args %v, want one", e.Name, e.Args)
		}
		for unit, v := range e.Args {
			key := hosts[e.PID] + ": " + e.Name + " (" + unit + ")"
			tracks[key] = append(tracks[key], counterSample{e.TS, v.(float64)})
		}
	}
	var names []string
	for key, samples := range tracks {
		names = append(names, key)
		// In the order the model made them (the file's, host by host):
		// from empty, one at a time, back to empty.
		prev := 0.0
		peak := 0.0
		for _, s := range samples {
			if d := s.value - prev; d != 1 && d != -1 {
				t.Errorf("%s: %v after %v at %vus", key, s.value, prev, s.ts)
			}
			prev = s.value
			peak = max(peak, s.value)
		}
		if prev != 0 || peak < 1 {
			t.Errorf("%s: up to %v, ends at %v", key, peak, prev)
		}
		// And in time: the last sample is the empty queue.
		last := slices.MaxFunc(samples, func(a, b counterSample) int {
			if a.ts < b.ts {
				return -1
			}
			if a.ts > b.ts {
				return 1
			}
			return 0
		})
		if last.value != 0 {
			t.Errorf("%s: %v at the end", key, last.value)
		}
		if strings.Contains(key, "tx queue") && peak < 2 {
			t.Errorf("%s: at most %v frame queued while six fragments went", key, peak)
		}
	}
	slices.Sort(names)
	want := []string{
		"pcA: backlog (frames)", "pcA: eth0 tx queue (frames)", "pcA: udp 32768 receive queue (datagrams)",
		"pcB: backlog (frames)", "pcB: eth0 tx queue (frames)", "pcB: udp 7 receive queue (datagrams)",
	}
	if !slices.Equal(names, want) {
		t.Errorf("counter tracks %q, want %q", names, want)
	}
}
