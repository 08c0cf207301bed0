package machine_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"simkron/machine"
	"simkron/machine/part"
	"simkron/stats"

	"github.com/google/go-cmp/cmp"
)

// declaredCounters returns every counter the parts declare (simkron
// counters lists them), named as a host reports them with HOST and
// DEVICE for the host's and the device's names, and for each device model
// the names relative to a device.
func declaredCounters(t *testing.T) (all map[string]bool, byDevice map[string]map[string]bool) {
	t.Helper()
	all, byDevice = map[string]bool{}, map[string]map[string]bool{}
	add := func(prefix string, gs []stats.Group, into map[string]bool) {
		for _, g := range gs {
			// Describe panics on a stats struct that breaks the tag
			// conventions.
			for _, c := range stats.Describe(stats.Join(prefix, g.Name), g.Value) {
				if into[c.Name] {
					t.Errorf("counter %s declared twice", c.Name)
				}
				into[c.Name] = true
			}
		}
	}
	add("HOST", machine.CoreCounters(), all)
	for _, e := range part.Environments() {
		add("HOST", e.Counters, all)
	}
	for _, f := range part.Families() {
		add("HOST", f.Counters, all)
	}
	for _, d := range part.DeviceTypes() {
		rel := map[string]bool{}
		add("", d.Counters, rel)
		for _, drv := range part.Drivers(d.Name) {
			add("", drv.Counters, rel)
		}
		byDevice[d.Name] = rel
		for n := range rel {
			all["HOST.DEVICE."+n] = true
		}
		for _, n := range d.Summary {
			if !rel[n] {
				t.Errorf("device type %s: its summary names %s, which it does not count", d.Name, n)
			}
		}
	}
	return all, byDevice
}

// Every counter a built host reports is one its parts declare: simkron
// counters lists every counter a result can hold. Each shipped config's
// hosts are built (every technology, environment, family and device model
// among them) and run for a moment.
func TestCountersDeclared(t *testing.T) {
	declared, _ := declaredCounters(t)
	cfgs, err := filepath.Glob("../configs/*.toml")
	if err != nil || len(cfgs) == 0 {
		t.Fatalf("no configs: %v", err)
	}
	seen := map[string]bool{}
	for _, cfg := range cfgs {
		exp, err := machine.LoadExperimentWith(cfg, []machine.Override{{Key: "experiment.stop_at", Value: "2ms", Origin: "test"}})
		if err != nil {
			t.Fatalf("%s: %v", cfg, err)
		}
		if machine.RefuseBridges(exp, "test") != nil {
			continue
		}
		r, err := machine.New(exp, machine.Options{NoCapture: true})
		if err != nil {
			t.Fatalf("%s: %v", cfg, err)
		}
		if _, err := r.Execute(machine.Options{}); err != nil {
			t.Fatalf("%s: %v", cfg, err)
		}
		for _, h := range r.Hosts {
			devs := map[string]bool{}
			for _, d := range h.Spec.Devices {
				devs[d.Name] = true
			}
			for _, c := range machine.Counters(h) {
				rest, _ := strings.CutPrefix(c.Name, h.Name+".")
				name := "HOST." + rest
				if dev, sub, ok := strings.Cut(rest, "."); ok && devs[dev] {
					name = "HOST.DEVICE." + sub
				}
				if !declared[name] {
					t.Errorf("%s: host %s reports %s, which no part declares (simkron counters does not list it)", filepath.Base(cfg), h.Name, c.Name)
				}
				seen[name] = true
			}
		}
	}
	// The shipped configs exercise most of what is declared; what none
	// does is said, so that a part declaring what it never reports shows.
	var unseen []string
	for n := range declared {
		if !seen[n] {
			unseen = append(unseen, n)
		}
	}
	slices.Sort(unseen)
	groups := map[string]int{}
	for _, n := range unseen {
		groups[n[:strings.LastIndex(n, ".")]]++
	}
	for g, n := range groups {
		t.Logf("no shipped config reports the %d counters of %s", n, g)
	}
}

// fieldNames returns the counter names a stats struct declares, read
// from its tags here (not by package stats): every exported field but
// those tagged "-", a struct field's under its name.
func fieldNames(prefix string, v any) []string {
	rv := reflect.Indirect(reflect.ValueOf(v))
	if !rv.IsValid() {
		return nil
	}
	var out []string
	for i := range rv.NumField() {
		sf := rv.Type().Field(i)
		tag := sf.Tag.Get("stat")
		if !sf.IsExported() || tag == "-" {
			continue
		}
		if sf.Type.Kind() == reflect.Struct {
			out = append(out, fieldNames(prefix+"."+tag, rv.Field(i).Interface())...)
			continue
		}
		out = append(out, prefix+"."+tag)
	}
	return out
}

// Every counter of every component of every host is in result.json:
// walking each component's stats struct by its fields finds each in the
// host's counters of the result as written and read back, and the result
// has no other.
func TestEveryCounterInResult(t *testing.T) {
	for _, cfg := range []string{"udp-ne2000", "atm-ip", "top-upper", "simos-study"} {
		exp, err := machine.LoadExperimentWith("../configs/"+cfg+".toml", []machine.Override{{Key: "experiment.stop_at", Value: "20ms", Origin: "test"}})
		if err != nil {
			t.Fatal(err)
		}
		r, err := machine.New(exp, machine.Options{NoCapture: true})
		if err != nil {
			t.Fatal(err)
		}
		res, err := r.Execute(machine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := res.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		var back struct {
			Hosts []struct {
				Name     string
				Counters []struct{ Name string }
			}
		}
		if err := json.Unmarshal(b.Bytes(), &back); err != nil {
			t.Fatal(err)
		}
		for i, h := range r.Hosts {
			var want []string
			for _, g := range machine.CoreCounters() {
				want = append(want, fieldNames(h.Name+"."+g.Name, h.CPU.Stats())...)
			}
			for _, g := range h.Counters() {
				want = append(want, fieldNames(strings.TrimSuffix(h.Name+"."+g.Name, "."), g.Value)...)
			}
			for j, d := range h.Devices {
				for _, g := range d.Counters() {
					want = append(want, fieldNames(strings.TrimSuffix(h.Name+"."+h.Spec.Devices[j].Name+"."+g.Name, "."), g.Value)...)
				}
			}
			var got []string
			for _, c := range back.Hosts[i].Counters {
				got = append(got, c.Name)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%s: host %s: result counters (-the components' stats structs +result.json):\n%s", cfg, h.Name, d)
			}
			if len(got) < 50 {
				t.Errorf("%s: host %s reports only %d counters", cfg, h.Name, len(got))
			}
		}
	}
}
