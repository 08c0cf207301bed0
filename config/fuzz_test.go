package config_test

import (
	"errors"
	"slices"
	"testing"

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
