package machine_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	"simkron/annotations/cycleprof"
	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/stack/apps/udp"
)

// profiled runs exp with a cycles profile when rec is set and returns the
// run, result.json's bytes and a hash of the event trace (time and name
// of every event).
func profiled(t *testing.T, exp *machine.Experiment, rec *cycleprof.Recorder) (*machine.Run, []byte, uint64) {
	t.Helper()
	tr := machinetest.NewEventTrace()
	opt := machine.Options{NoCapture: true, CyclesProfile: rec, Trace: tr.Fire}
	r, err := machine.New(exp, opt)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute(opt)
	if err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := res.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	return r, js.Bytes(), tr.Sum()
}

// readProfile writes rec's profile as a file would hold it and reads it
// back with pprof's own parser.
func readProfile(t *testing.T, rec *cycleprof.Recorder) *profile.Profile {
	t.Helper()
	var b bytes.Buffer
	if err := rec.Write(&b); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&b)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	if len(p.SampleType) != 1 || p.SampleType[0].Type != "cycles" {
		t.Fatalf("sample types %v, want cycles alone", p.SampleType)
	}
	return p
}

// label is a sample's one value of label key.
func label(t *testing.T, s *profile.Sample, key string) string {
	t.Helper()
	if len(s.Label[key]) != 1 {
		t.Fatalf("sample %v has label %s = %q, want one value", s.Location, key, s.Label[key])
	}
	return s.Label[key][0]
}

// A cycles profile holds every busy cycle of every host once, by the
// layer the core counted it to, and changes nothing of the run. Every
// shipped config runs (for 20 ms of simulated time, which reaches every
// environment, card and protocol family with work in flight), and
// udp-ne2000 to its end: with and without the profile, result.json is
// the same bytes and the event trace hashes the same. In the profile,
// read back with pprof's parser, each host's cycles are its core's busy
// cycles as result.json reports them (cycles less idle_cycles; a run
// stopped in an interrupt handler is the exception said below), and its
// cycles labelled with each layer are the core's whole-run cycles of that
// layer (cpu.CPU.LayerCycles): the counters every workload's layer
// breakdown is read from, so the labels sum to the breakdowns' parts.
func TestCyclesProfileCountsEveryBusyCycle(t *testing.T) {
	cfgs, err := filepath.Glob("../configs/*.toml")
	if err != nil || len(cfgs) == 0 {
		t.Fatalf("no configs: %v", err)
	}
	type run struct {
		cfg    string
		stopAt string // empty: the config's own
	}
	runs := []run{{"../configs/udp-ne2000.toml", ""}}
	for _, cfg := range cfgs {
		runs = append(runs, run{cfg, "200ms"})
	}
	// stopped[true] counts the runs whose every host stopped in an
	// interrupt (their totals compared with the layer counters alone).
	stopped := map[bool]int{}
	defer func() {
		if stopped[true] > stopped[false]/4 {
			t.Errorf("%d runs of %d stopped with every host in an interrupt: too few totals compared", stopped[true], stopped[true]+stopped[false])
		}
	}()
	for _, ru := range runs {
		name := filepath.Base(ru.cfg)
		if ru.stopAt != "" {
			name += "@" + ru.stopAt
		}
		t.Run(name, func(t *testing.T) {
			load := func() *machine.Experiment {
				var sets []machine.Override
				if ru.stopAt != "" {
					sets = append(sets, machine.Override{Key: "experiment.stop_at", Value: ru.stopAt, Origin: "test"})
				}
				exp, err := machine.LoadExperimentWith(ru.cfg, sets)
				if err != nil {
					t.Fatal(err)
				}
				return exp
			}
			exp := load()
			if machine.RefuseBridges(exp, "test") != nil {
				t.Skip("bridged to real hosts")
			}
			_, plain, plainHash := profiled(t, exp, nil)
			rec := &cycleprof.Recorder{}
			r, js, hash := profiled(t, load(), rec)
			if !bytes.Equal(js, plain) {
				t.Errorf("result.json differs with a cycles profile")
			}
			if hash != plainHash {
				t.Errorf("event trace hashes %x with a cycles profile, %x without", hash, plainHash)
			}
			var result struct {
				Hosts []struct {
					Name string
					CPU  struct {
						Cycles     int64 `json:"cycles"`
						IdleCycles int64 `json:"idle_cycles"`
					}
				}
			}
			if err := json.Unmarshal(js, &result); err != nil {
				t.Fatal(err)
			}
			p := readProfile(t, rec)
			total := map[string]int64{}
			layers := map[string]map[string]int64{}
			for _, s := range p.Sample {
				h, l := label(t, s, "host"), label(t, s, "layer")
				total[h] += s.Value[0]
				if layers[h] == nil {
					layers[h] = map[string]int64{}
				}
				layers[h][l] += s.Value[0]
			}
			if len(result.Hosts) != len(r.Hosts) {
				t.Fatalf("result.json has %d hosts, the run %d", len(result.Hosts), len(r.Hosts))
			}
			stoppedInIRQ := 0
			for i, rh := range result.Hosts {
				busy := rh.CPU.Cycles - rh.CPU.IdleCycles
				if busy == 0 {
					t.Errorf("%s: no busy cycles: the run did nothing", rh.Name)
				}
				if r.Hosts[i].CPU.InInterrupt() {
					// Stopped in a handler that interrupted charged work:
					// the cycle counter stands at the handler's time, short
					// of the work charged before it, which the layer
					// counters (checked below) and the profile hold.
					stoppedInIRQ++
					if total[rh.Name] < busy {
						t.Errorf("%s: stopped in an interrupt, the profile holds %d cycles, fewer than the %d busy", rh.Name, total[rh.Name], busy)
					}
				} else if total[rh.Name] != busy {
					t.Errorf("%s: the profile holds %d cycles; result.json says %d busy (%d cycles, %d idle)",
						rh.Name, total[rh.Name], busy, rh.CPU.Cycles, rh.CPU.IdleCycles)
				}
				want := map[string]int64{}
				for _, l := range r.Hosts[i].CPU.LayerCycles() {
					name := string(l.Layer)
					if name == "" {
						name = "-"
					}
					if l.Cycles != 0 {
						want[name] = l.Cycles
					}
				}
				if diff := cmp.Diff(want, layers[rh.Name]); diff != "" {
					t.Errorf("%s: layer labels differ from the core's layer cycles (-core +profile):\n%s", rh.Name, diff)
				}
			}
			stopped[stoppedInIRQ == len(result.Hosts)]++
		})
	}
}

// The profile's stacks agree with a workload's own layer breakdown: the
// UDP series' send breakdown is the sending thread's own cycles inside
// sys_sendto (interrupts apart), by layer, averaged over the measured
// messages. With every message measured (no warm-up) and one size, the
// client host's samples whose stack holds sys_sendto, which only its
// client thread calls, sum by layer label to the breakdown times the
// messages, to the cycle: an interrupt counted under the call, or a
// cycle of the call counted elsewhere, would show.
func TestCyclesProfileAgreesWithSendBreakdown(t *testing.T) {
	for _, size := range []int{64, 4096} {
		exp, err := machine.LoadExperiment("../configs/udp-ne2000.toml")
		if err != nil {
			t.Fatal(err)
		}
		const messages = 6
		p := udpParams(exp)
		p.Sizes, p.Warmup, p.Messages = []int{size}, 0, messages
		sendSym := udp.Protocol{}.Info().SendSymbol
		rec := &cycleprof.Recorder{}
		_, js, _ := profiled(t, exp, rec)
		var res struct {
			UDP []struct {
				Messages int `json:"messages"`
				Send     struct {
					N int `json:"n"`
				} `json:"send_cycles"`
				SendLayers []struct {
					Layer  string  `json:"layer"`
					Cycles float64 `json:"cycles"`
				} `json:"send_layers"`
			} `json:"udp"`
		}
		if err := json.Unmarshal(js, &res); err != nil {
			t.Fatal(err)
		}
		if len(res.UDP) != 1 || res.UDP[0].Messages != messages || res.UDP[0].Send.N != 2*messages {
			t.Fatalf("size %d: udp rows %+v, want one of %d messages, each sent by both hosts", size, res.UDP, messages)
		}
		want := map[string]float64{}
		for _, l := range res.UDP[0].SendLayers {
			want[l.Layer] = l.Cycles
		}
		sums := map[string]int64{}
		for _, s := range readProfile(t, rec).Sample {
			if !slices.ContainsFunc(s.Location, func(l *profile.Location) bool { return l.Line[0].Function.Name == sendSym }) {
				continue
			}
			sums[label(t, s, "layer")] += s.Value[0]
		}
		got := map[string]float64{}
		for l, n := range sums {
			// The series' own arithmetic: a sum of whole cycles over the
			// messages.
			got[l] = float64(n) / float64(res.UDP[0].Send.N)
		}
		if len(want) < 3 {
			t.Fatalf("size %d: send breakdown %v: too few layers to compare", size, want)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("size %d: send breakdown by layer (-workload +profile):\n%s", size, diff)
		}
	}
}
