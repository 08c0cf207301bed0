package config_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"simkron/config"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"",
		machine,
		"clock = \"33MHz\"\n[cache]\nways = 4\n[[slot]]\nirq = 5\n",
		"slot = [{base = 1}, {base = 2, irq = 4}]\nweights = [\n 1, # c\n 2,\n]\n",
		"a = \"\"\"x\n\\\"\"\" \"\"\"\"\"\nb = '''y'''\n[ t . \"u v\" ]\nw = 1979-05-27 07:32:00Z\n",
		"[a.b]\n[a]\nc = {d = 1, e.f = [1, {g = 2}]}\n[[h]]\n[[h.i]]\n[[h]]\n",
		"x = 1\r\n\"\\u00e9\\x41\\e\" = 2\n",
		"[cache\nways = 2",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := config.ParseBytes("fuzz.toml", data)
		if err != nil {
			if _, ok := errors.AsType[config.Errors](err); !ok {
				t.Fatalf("error is %T, want config.Errors", err)
			}
			return
		}
		// Every key the parser found must have a line.
		var walk func(path []string)
		walk = func(path []string) {
			for _, k := range file.Keys(path...) {
				p := append(slices.Clip(path), k)
				if file.Line(p...) == 0 {
					t.Fatalf("no line for key %q in %q", p, data)
				}
				walk(p)
			}
		}
		walk(nil)
		p := defaultParams()
		_ = file.DecodeInto(&p)
		_ = file.DecodeInto(&p, "cache")
		_ = file.CheckUnused()
	})
}

// FuzzSet feeds --set arguments to ParseSet and applies what it accepts
// to a file, which must never panic; an accepted key's parts, written
// back as TOML key names, must parse to the same parts, and no accepted
// argument may hold a line break.
func FuzzSet(f *testing.F) {
	for _, s := range []string{
		"workload.udp.sizes=[4, 1024]",
		`machine.costs."bcopy.word"=5`,
		"host[1].inet.mtu=9000",
		"slot.irq=4",
		"slot[0].name=\"x\"",
		"clock=33MHz",
		"a=3\n# dropped",
		`t.'x=y'."a\"b"[2]=z=1`,
		"weights=[]",
		"costs.load=-5",
		"load=nan",
		"cache = {ways = 4}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		key, value, err := config.ParseSet(arg)
		if err != nil {
			return
		}
		if strings.ContainsAny(arg, "\n\r") {
			t.Fatalf("ParseSet(%q) accepted a line break", arg)
		}
		parts, err := config.ParseKey(key)
		if err != nil {
			t.Fatalf("ParseSet(%q) gave key %q that ParseKey refuses: %v", arg, key, err)
		}
		names := make([]string, len(parts))
		for i, p := range parts {
			names[i] = toml.Key{p}.String()
		}
		again, err := config.ParseKey(strings.Join(names, "."))
		if err != nil || !slices.Equal(again, parts) {
			t.Fatalf("key %q: parts %q written back as %q parse to %q, %v", key, parts, strings.Join(names, "."), again, err)
		}
		file, err := config.ParseBytes("fuzz.toml", []byte(machine))
		if err != nil {
			t.Fatal(err)
		}
		if file.Set(key, value, "--set "+arg) != nil {
			return
		}
		p := defaultParams()
		_ = file.DecodeInto(&p)
		_ = file.CheckUnused()
	})
}
