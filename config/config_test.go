package config_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/config"
	"simkron/sim"
)

var allowUnexported = cmp.AllowUnexported(testParams{})

func parse(t *testing.T, text string) *config.File {
	t.Helper()
	f, err := config.ParseBytes("x.toml", []byte(text))
	if err != nil {
		t.Fatalf("ParseBytes: %v", err)
	}
	return f
}

// lines splits an error into its lines; nil gives nil.
func lines(err error) []string {
	if err == nil {
		return nil
	}
	return strings.Split(err.Error(), "\n")
}

func TestDecodeValues(t *testing.T) {
	tests := []struct {
		name string
		text string
		edit func(*testParams) // applied to the defaults to give the wanted result
	}{
		{"empty file keeps defaults", "", func(*testParams) {}},
		{"comments only", "# nothing\n\n", func(*testParams) {}},
		{"one key", `clock = "66MHz"`, func(p *testParams) { p.Clock = 66 * sim.MHz }},
		{"embedded field", `trace = true`, func(p *testParams) { p.Trace = true }},
		{"nested table keeps its other defaults", "[cache]\nways = 4", func(p *testParams) { p.Cache.Ways = 4 }},
		{"dotted key", `cache.size = "16KiB"`, func(p *testParams) { p.Cache.Size = 16 * sim.KiB }},
		{"pointer table", "[link]\nrate = \"100Mbps\"", func(p *testParams) {
			p.Link = &linkParams{Rate: 100 * sim.Mbps, Delay: 5 * sim.Microsecond}
		}},
		{"integer into float", `load = 1`, func(p *testParams) { p.Load = 1 }},
		{"float", `load = 0.25`, func(p *testParams) { p.Load = 0.25 }},
		{"int8 limits", `small = -128`, func(p *testParams) { p.Small = -128 }},
		{"array replaces default", `weights = [3, 4, 5]`, func(p *testParams) { p.Weights = []int{3, 4, 5} }},
		{"map merges into defaults", "[costs]\nstore = 9\ntrap = 40", func(p *testParams) {
			p.Costs = map[string]int64{"load": 2, "store": 9, "trap": 40}
		}},
		{"array of tables with element defaults", "[[slot]]\nbase = 0x300\n[[slot]]\nbase = 0x320\nirq = 5\nname = \"ne1\"", func(p *testParams) {
			p.Slots = []slotParams{{IRQ: 3, Base: 0x300}, {IRQ: 5, Base: 0x320, Name: "ne1"}}
		}},
		{"inline array of tables", `slot = [{base = 1}, {base = 2, irq = 4}]`, func(p *testParams) {
			p.Slots = []slotParams{{IRQ: 3, Base: 1}, {IRQ: 4, Base: 2}}
		}},
		{"every unit", "clock = \"0.5GHz\"\n[cache]\nsize = \"1MiB\"\nline = \"64B\"\n[link]\nrate = \"64kbps\"\ndelay = \"1.5us\"", func(p *testParams) {
			p.Clock = 500 * sim.MHz
			p.Cache.Size, p.Cache.Line = sim.MiB, 64
			p.Link = &linkParams{Rate: 64 * sim.Kbps, Delay: 1500 * sim.Nanosecond}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := parse(t, tt.text)
			got := defaultParams()
			if err := f.DecodeInto(&got); err != nil {
				t.Fatalf("DecodeInto: %v", err)
			}
			want := defaultParams()
			tt.edit(&want)
			if diff := cmp.Diff(want, got, allowUnexported); diff != "" {
				t.Errorf("decoded params (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDefaultsNotShared checks that decoding does not write through to the
// maps and pointers of the defaults it started from.
func TestDefaultsNotShared(t *testing.T) {
	base := defaultParams()
	p := base
	f := parse(t, "[costs]\nload = 1\n[link]\nrate = \"1Gbps\"")
	if err := f.DecodeInto(&p); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(defaultParams(), base, allowUnexported); diff != "" {
		t.Errorf("defaults changed (-want +got):\n%s", diff)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"unknown top-level key with suggestion", "clokc = \"1MHz\"",
			[]string{`x.toml:1: clokc: unknown key (did you mean "clock"?)`}},
		{"unknown key differing in case", "Clock = \"1MHz\"",
			[]string{`x.toml:1: Clock: unknown key (did you mean "clock"?)`}},
		{"unknown key without suggestion", "\n\ncolour = \"red\"",
			[]string{`x.toml:3: colour: unknown key`}},
		{"unknown nested key", "[cache]\nways = 2\nwasy = 4",
			[]string{`x.toml:3: cache.wasy: unknown key (did you mean "ways"?)`}},
		{"unknown table reported once", "[cahce]\nsize = \"1KiB\"\nways = 2",
			[]string{`x.toml:1: cahce: unknown key (did you mean "cache"?)`}},
		{"unknown key in array of tables", "[[slot]]\nirq = 1\n[[slot]]\nirk = 2",
			[]string{`x.toml:4: slot[1].irk: unknown key (did you mean "irq"?)`}},
		{"quoted unknown key", `"a b" = 1`,
			[]string{`x.toml:1: "a b": unknown key`}},
		{"integer for a frequency", "clock = 33",
			[]string{`x.toml:1: clock: expected a frequency string like "33MHz", got integer 33`}},
		{"integer for a size", "cache.size = 8192",
			[]string{`x.toml:1: cache.size: expected a size string like "8KiB", got integer 8192`}},
		{"float for a duration", "[link]\ndelay = 1.5",
			[]string{`x.toml:2: link.delay: expected a duration string like "100ns", got float 1.5`}},
		{"boolean for a bit rate", "[link]\nrate = true",
			[]string{`x.toml:2: link.rate: expected a bit rate string like "10Mbps", got boolean true`}},
		{"string for an integer", `cycles = "100"`,
			[]string{`x.toml:1: cycles: expected an integer, got string "100"`}},
		{"float for an integer", "cycles = 1.5",
			[]string{`x.toml:1: cycles: expected an integer, got float 1.5`}},
		{"whole float for an integer", "cycles = 2.0",
			[]string{`x.toml:1: cycles: expected an integer, got float 2`}},
		{"string for a float", `load = "half"`,
			[]string{`x.toml:1: load: expected a number, got string "half"`}},
		{"integer for a string", "name = 1",
			[]string{`x.toml:1: name: expected a string, got integer 1`}},
		{"string for a boolean", `trace = "yes"`,
			[]string{`x.toml:1: trace: expected a boolean, got string "yes"`}},
		{"value for a table", "cache = 3",
			[]string{`x.toml:1: cache: expected a table, got integer 3`}},
		{"table for a value", "[clock]\nx = 1",
			[]string{`x.toml:1: clock: expected a frequency string like "33MHz", got a table`}},
		{"value for an array", "weights = 1",
			[]string{`x.toml:1: weights: expected an array, got integer 1`}},
		{"wrong element type", "weights = [1, \"two\"]",
			[]string{`x.toml:1: weights[1]: expected an integer, got string "two"`}},
		{"wrong map value", "[costs]\nload = \"fast\"",
			[]string{`x.toml:2: costs.load: expected an integer, got string "fast"`}},
		{"map value out of bounds", "[costs]\nload = -1\nstore = 1001\nfetch = 1000",
			[]string{`x.toml:2: costs.load: -1 is below the minimum 0`, `x.toml:3: costs.store: 1001 is above the maximum 1000`}},
		{"nan", "load = nan",
			[]string{`x.toml:1: load: expected a finite number, got float nan`}},
		{"infinity", "load = -inf",
			[]string{`x.toml:1: load: expected a finite number, got float -inf`}},
		{"empty array", "weights = []",
			[]string{`x.toml:1: weights: is empty: give at least one value`}},
		{"bad unit", `clock = "33MHZ"`,
			[]string{`x.toml:1: clock: frequency "33MHZ" needs a unit (one of GHz, MHz, kHz, KHz, Hz)`}},
		{"bad number", `cache.size = "x KiB"`,
			[]string{`x.toml:1: cache.size: size "x KiB": "x" is not a decimal number`}},
		{"below minimum", `clock = "100kHz"`,
			[]string{`x.toml:1: clock: 100kHz is below the minimum 1MHz`}},
		{"above maximum", `clock = "2GHz"`,
			[]string{`x.toml:1: clock: 2GHz is above the maximum 1GHz`}},
		{"integer below minimum", "cycles = -1",
			[]string{`x.toml:1: cycles: -1 is below the minimum 0`}},
		{"float above maximum", "load = 1.5",
			[]string{`x.toml:1: load: 1.5 is above the maximum 1`}},
		{"element below minimum", "weights = [\n  1,\n  0,\n]",
			[]string{`x.toml:3: weights[1]: 0 is below the minimum 1`}},
		{"overflow", "small = 128",
			[]string{`x.toml:1: small: 128 is out of range for int8 (-128 to 127)`}},
		{"overflow unsigned", "[[slot]]\nirq = 300",
			[]string{`x.toml:2: slot[0].irq: 300 is out of range for uint8 (0 to 255)`}},
		{"negative unsigned", "[[slot]]\nbase = -1",
			[]string{`x.toml:2: slot[0].base: expected a non-negative integer, got integer -1`}},
		{"bound of an array-of-tables element", "[[slot]]\nirq = 5\n[[slot]]\nirq = 16",
			[]string{`x.toml:4: slot[1].irq: 16 is above the maximum 15`}},
		{"Validate error at its key", "[cache]\nsize = \"8KiB\"\nways = 3\n",
			[]string{`x.toml:1: cache.line: 32B × 3 ways does not divide 8KiB`}},
		{"Validate error at the key set", "[cache]\nways = 2\nline = \"48B\"\n",
			[]string{`x.toml:3: cache.line: 48B × 2 ways does not divide 8KiB`}},
		{"Validate skipped after a field error", "[cache]\nways = 3\nsize = \"big\"",
			[]string{`x.toml:3: cache.size: size "big" needs a unit (one of GiB, MiB, KiB, GB, MB, kB, KB, B)`}},
		{"FieldErrors from top-level Validate", "name = \"forbidden\"\n[[slot]]\nbase = 1\n[[slot]]\nbase = 2\n[[slot]]\nbase = 1",
			[]string{
				`x.toml:1: name: is reserved`,
				`x.toml:7: slot[2].base: base 0x1 already used by slot 0`,
			}},
		{"plain error from Validate", `name = "plain"`,
			[]string{`x.toml: plain error`}},
		{"syntax error", "clock = \"33MHz\"\n[cache\nways = 2",
			[]string{`x.toml:2: expected '.' or ']' to end table name, but got '\n' instead`}},
		{"unterminated string", "name = \"host\nclock = 1",
			[]string{`x.toml:1: name: strings cannot contain newlines`}},
		{"duplicate key", "clock = \"1MHz\"\nclock = \"2MHz\"",
			[]string{`x.toml:2: clock: Key 'clock' has already been defined.`}},
		{"integer out of range names its key", "[cache]\nways = 99999999999999999999",
			[]string{`x.toml:2: cache.ways: 99999999999999999999 is out of range for int64`}},
		{"too deep", "a = " + strings.Repeat("[", 70) + strings.Repeat("]", 70),
			[]string{`x.toml:1: tables and arrays nest deeper than 64 levels`}},
		{"too deep a header", "x = 1\n[" + strings.Repeat("t.", 64) + "t]",
			[]string{`x.toml:2: tables and arrays nest deeper than 64 levels`}},
		{"many problems in file order", strings.Join([]string{
			`clock = 33`,
			`[cache]`,
			`size = "1B"`,
			`wasy = 2`,
			`[[slot]]`,
			`irq = 99`,
			`[link]`,
			`rate = "fast"`,
			`[costs]`,
			`load = 1.0`,
		}, "\n"), []string{
			`x.toml:1: clock: expected a frequency string like "33MHz", got integer 33`,
			`x.toml:3: cache.size: 1B is below the minimum 1KiB`,
			`x.toml:4: cache.wasy: unknown key (did you mean "ways"?)`,
			`x.toml:6: slot[0].irq: 99 is above the maximum 15`,
			`x.toml:8: link.rate: bit rate "fast" needs a unit (one of Gbps, Mbps, kbps, Kbps, bps)`,
			`x.toml:10: costs.load: expected an integer, got float 1`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := config.ParseBytes("x.toml", []byte(tt.text))
			if err == nil {
				p := defaultParams()
				err = f.DecodeInto(&p)
			}
			if diff := cmp.Diff(tt.want, lines(err)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			var errs config.Errors
			if err != nil && !errors.As(err, &errs) {
				t.Errorf("error is %T, want config.Errors", err)
			}
		})
	}
}

func TestParseFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.toml")
	if err := os.WriteFile(good, []byte("[cpu]\nclock = \"2GHz\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := config.Parse(good)
	if err != nil {
		t.Fatal(err)
	}
	if f.Path() != good {
		t.Errorf("Path() = %q, want %q", f.Path(), good)
	}
	p := defaultParams()
	want := []string{good + `:2: cpu.clock: 2GHz is above the maximum 1GHz`}
	if diff := cmp.Diff(want, lines(f.DecodeInto(&p, "cpu"))); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}

	missing := filepath.Join(dir, "missing.toml")
	_, err = config.Parse(missing)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Parse(missing) = %v, want fs.ErrNotExist", err)
	}
	if diff := cmp.Diff([]string{missing + ": no such file or directory"}, lines(err)); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

func TestErrorText(t *testing.T) {
	tests := []struct {
		err  *config.Error
		want string
	}{
		{&config.Error{File: "a.toml", Line: 12, Key: "cpu.clock", Msg: "bad"}, "a.toml:12: cpu.clock: bad"},
		{&config.Error{File: "a.toml", Key: "cpu.clock", Msg: "bad"}, "a.toml: cpu.clock: bad"},
		{&config.Error{File: "a.toml", Line: 3, Msg: "bad"}, "a.toml:3: bad"},
		{&config.Error{Line: 3, Key: "k", Msg: "bad"}, "line 3: k: bad"},
		{&config.Error{Msg: "bad"}, "bad"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

// machine is what a machine builder decodes from a whole file: hosts in an
// array of tables, each with a component chosen by type.
const machine = `# two hosts
[sim]
seed = 1

[[host]]
name = "a"
[host.cpu]
clock = "66MHz"
[[host.nic]]
type = "ne2000"
irq = 5

[[host]]
name = "b"
extra = 1
[host.cpu]
clock = "1GHz"
clokc = "1MHz"
[[host.nic]]
type = "ne2000"
irk = 5
[host.disk]
size = "1GiB"
`

type nicParams struct {
	IRQ int `toml:"irq" min:"1" max:"15"`
}

func TestCheckUnused(t *testing.T) {
	f := parse(t, machine)
	var got []string
	for _, h := range f.Keys("host") {
		var name struct {
			Name string `toml:"name"`
		}
		got = append(got, lines(f.DecodePartial(&name, "host", h))...)
		cpu := defaultParams()
		got = append(got, lines(f.DecodeInto(&cpu, "host", h, "cpu"))...)
		for _, n := range f.Keys("host", h, "nic") {
			var sel struct {
				Type string `toml:"type"`
			}
			got = append(got, lines(f.DecodePartial(&sel, "host", h, "nic", n))...)
			if sel.Type != "ne2000" {
				t.Errorf("type = %q", sel.Type)
			}
			nic := nicParams{IRQ: 3}
			got = append(got, lines(f.DecodeInto(&nic, "host", h, "nic", n))...)
		}
	}
	f.MarkUsed("sim")
	got = append(got, lines(f.CheckUnused())...)
	got = append(got, lines(f.CheckUnused())...) // reports nothing twice
	want := []string{
		`x.toml:18: host[1].cpu.clokc: unknown key (did you mean "clock"?)`,
		`x.toml:21: host[1].nic[0].irk: unknown key (did you mean "irq"?)`,
		`x.toml:15: host[1].extra: unknown key`,
		`x.toml:22: host[1].disk: unknown key`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if got, want := f.Errorf([]string{"host", "1", "nic", "0", "irq"}, "IRQ %d clashes", 5).Error(),
		"x.toml:19: host[1].nic[0].irq: IRQ 5 clashes"; got != want {
		t.Errorf("Errorf = %q, want %q", got, want)
	}
}

func TestHasKeys(t *testing.T) {
	f := parse(t, machine)
	tests := []struct {
		key  []string
		has  bool
		keys []string
	}{
		{nil, true, []string{"sim", "host"}},
		{[]string{"host"}, true, []string{"0", "1"}},
		{[]string{"host", "1"}, true, []string{"name", "extra", "cpu", "nic", "disk"}},
		{[]string{"host", "1", "cpu", "clock"}, true, nil},
		{[]string{"host", "2"}, false, nil},
		{[]string{"host", "01"}, false, nil},
		{[]string{"nothing"}, false, nil},
	}
	for _, tt := range tests {
		if got := f.Has(tt.key...); got != tt.has {
			t.Errorf("Has(%q) = %v, want %v", tt.key, got, tt.has)
		}
		if diff := cmp.Diff(tt.keys, f.Keys(tt.key...)); diff != "" {
			t.Errorf("Keys(%q) (-want +got):\n%s", tt.key, diff)
		}
	}
}

func TestLine(t *testing.T) {
	text := strings.Join([]string{
		/* 1 */ `# comment with [brackets] and key = "value"`,
		/* 2 */ `top = 1 # trailing comment`,
		/* 3 */ `"quoted key" = 'literal # not a comment'`,
		/* 4 */ `a.b . "c.d" = 2`,
		/* 5 */ `multi = """`,
		/* 6 */ `[not.a.table]`,
		/* 7 */ `x = 1 \"" """`,
		/* 8 */ `lit = '''`,
		/* 9 */ `[[nor.this]]'''`,
		/* 10 */ `arr = [`,
		/* 11 */ `  1, # one`,
		/* 12 */ `  [2, 3],`,
		/* 13 */ `  { inner = "]" },`,
		/* 14 */ `]`,
		/* 15 */ `when = 1979-05-27 07:32:00Z`,
		/* 16 */ `[ table . "sub table" ]`,
		/* 17 */ `key = "has \" quote"`,
		/* 18 */ `inline = { p = 1, q.r = { s = 2 } }`,
		/* 19 */ `[[srv]]`,
		/* 20 */ `name = "0"`,
		/* 21 */ `[[srv.port]]`,
		/* 22 */ `n = 1`,
		/* 23 */ `[[srv.port]]`,
		/* 24 */ `n = 2`,
		/* 25 */ `[srv.opts]`,
		/* 26 */ `o = 1`,
		/* 27 */ `[[srv]]`,
		/* 28 */ `[[srv.port]]`,
		/* 29 */ `n = 3`,
		/* 30 */ `[x.y.z]`,
		/* 31 */ `[x]`,
		/* 32 */ "crlf = 1\r",
		/* 33 */ `after = """ends with quotes"""""`,
		/* 34 */ `last = 1`,
	}, "\n")
	f := parse(t, text)
	tests := []struct {
		key  []string
		want int
	}{
		{[]string{"top"}, 2},
		{[]string{"quoted key"}, 3},
		{[]string{"a"}, 4},
		{[]string{"a", "b"}, 4},
		{[]string{"a", "b", "c.d"}, 4},
		{[]string{"multi"}, 5},
		{[]string{"not"}, 0},
		{[]string{"lit"}, 8},
		{[]string{"nor"}, 0},
		{[]string{"arr"}, 10},
		{[]string{"arr", "0"}, 11},
		{[]string{"arr", "1"}, 12},
		{[]string{"arr", "1", "1"}, 12},
		{[]string{"arr", "2", "inner"}, 13},
		{[]string{"when"}, 15},
		{[]string{"table"}, 16},
		{[]string{"table", "sub table"}, 16},
		{[]string{"table", "sub table", "key"}, 17},
		{[]string{"table", "sub table", "inline", "q", "r", "s"}, 18},
		{[]string{"srv"}, 19},
		{[]string{"srv", "0"}, 19},
		{[]string{"srv", "0", "name"}, 20},
		{[]string{"srv", "0", "port"}, 21},
		{[]string{"srv", "0", "port", "1"}, 23},
		{[]string{"srv", "0", "port", "1", "n"}, 24},
		{[]string{"srv", "0", "opts", "o"}, 26},
		{[]string{"srv", "1"}, 27},
		{[]string{"srv", "1", "port", "0", "n"}, 29},
		{[]string{"srv", "2"}, 0},
		{[]string{"x", "y", "z"}, 30},
		{[]string{"x"}, 31},
		{[]string{"x", "crlf"}, 32},
		{[]string{"x", "after"}, 33},
		{[]string{"x", "last"}, 34},
	}
	for _, tt := range tests {
		if got := f.Line(tt.key...); got != tt.want {
			t.Errorf("Line(%q) = %d, want %d", tt.key, got, tt.want)
		}
	}
}

// TestMissingTable checks that decoding a table the file does not have
// keeps the defaults but still checks them, at no line.
func TestMissingTable(t *testing.T) {
	f := parse(t, "[other]\nx = 1\n")
	p := defaultParams()
	if err := f.DecodeInto(&p, "cpu"); err != nil {
		t.Errorf("DecodeInto(defaults) = %v", err)
	}
	if diff := cmp.Diff(defaultParams(), p, allowUnexported); diff != "" {
		t.Errorf("params (-want +got):\n%s", diff)
	}
	p.Cache.Ways = 3
	want := []string{`x.toml: cpu.cache.line: 32B × 3 ways does not divide 8KiB`}
	if diff := cmp.Diff(want, lines(f.DecodeInto(&p, "cpu"))); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	want = []string{`x.toml:1: other: unknown key`}
	if diff := cmp.Diff(want, lines(f.CheckUnused())); diff != "" {
		t.Errorf("CheckUnused (-want +got):\n%s", diff)
	}
}

// TestNonEmptyDefault checks that nonempty refuses an empty list the file
// gives, not an empty default the file leaves alone.
func TestNonEmptyDefault(t *testing.T) {
	p := defaultParams()
	p.Weights = nil
	if err := parse(t, "name = \"h\"\n").DecodeInto(&p); err != nil {
		t.Errorf("empty default: %v", err)
	}
	want := []string{"x.toml:2: weights: is empty: give at least one value"}
	if diff := cmp.Diff(want, lines(parse(t, "name = \"h\"\nweights = []\n").DecodeInto(&p))); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}
