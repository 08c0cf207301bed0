package sweep

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"simkron/config"
)

func TestParseGrid(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []Axis // on success
		err        string // the error's text contains it
	}{
		{name: "two axes",
			text: "[[axis]]\nkey = \"host.inet.mtu\"\nvalues = [576, 1500]\n\n[[axis]]\nkey = \"workload.udp.sizes\"\nvalues = [[4, 1024], [8192]]\n",
			want: []Axis{{Key: "host.inet.mtu", Values: []string{"576", "1500"}, Origin: "g.toml:3", grid: true},
				{Key: "workload.udp.sizes", Values: []string{"[4, 1024]", "[8192]"}, Origin: "g.toml:7", grid: true}}},
		{name: "strings, floats, booleans and tables",
			text: "[[axis]]\nkey = \"a.b\"\nvalues = [\"10Mbps\", 2.0, 1e300, true, {x = 1, \"y z\" = \"q\\\"\"}]\n",
			want: []Axis{{Key: "a.b", Values: []string{`"10Mbps"`, "2.0", "1e+300", "true", `{x = 1, "y z" = "q\""}`}, Origin: "g.toml:3", grid: true}}},
		{name: "no axes", text: "", want: nil},
		{name: "syntax", text: "[[axis]\n", err: "g.toml:1: "},
		{name: "unknown key", text: "[[axis]]\nkey = \"a\"\nvalue = [1]\n", err: "g.toml:3: axis[0].value: unknown key"},
		{name: "no values", text: "[[axis]]\nkey = \"a\"\nvalues = []\n", err: "g.toml:3: axis[0].values: no values"},
		{name: "bad key", text: "[[axis]]\nkey = \"a..b\"\nvalues = [1]\n", err: "g.toml:2: axis[0].key: key \"a..b\": an empty name"},
		{name: "a value twice", text: "[[axis]]\nkey = \"a\"\nvalues = [1, 2, 1]\n", err: "g.toml:3: axis[0].values: value 3 (1) is value 1 again"},
		{name: "a date", text: "[[axis]]\nkey = \"a\"\nvalues = [1979-05-27]\n", err: "g.toml:3: axis[0].values: a date or time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseGrid("g.toml", []byte(tc.text))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				if _, ok := errors.AsType[config.Errors](err); !ok {
					t.Errorf("error is %T, want config.Errors", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got, tc.want, func(a, b Axis) bool {
				return a.Key == b.Key && slices.Equal(a.Values, b.Values) && a.Origin == b.Origin && a.grid == b.grid
			}) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// A grid file's values go back to TOML that reads as the same value.
func TestTomlTextRoundTrip(t *testing.T) {
	for _, text := range []string{`"a\u0001b\\c\"d é"`, "-0.5", "1.0", "nan", "-inf", "[1, [2, \"x\"], {k = false}]", "9223372036854775807"} {
		v := config.ParseValue(text)
		got, err := tomlText(v)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if again, _ := tomlText(config.ParseValue(got)); again != got {
			t.Errorf("%s: written %s, read back and written again %s", text, got, again)
		}
	}
}

func TestCheck(t *testing.T) {
	set := func(arg string) Axis {
		a, err := ParseSet(arg)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	values := func(n int) string {
		vs := make([]string, n)
		for i := range vs {
			vs[i] = strconv.Itoa(i + 1)
		}
		return strings.Join(vs, ",")
	}
	gridAxis := func(line int, key string, n int) Axis {
		return Axis{Key: key, Values: strings.Split(values(n), ","), Origin: fmt.Sprintf("g.toml:%d", line), grid: true}
	}
	for _, tc := range []struct {
		name string
		axes []Axis
		err  string // "" for none
	}{
		{"fine", []Axis{set("host.inet.mtu=576,1500"), set("workload.udp.messages=2,3")}, ""},
		{"empty", nil, "the grid is empty"},
		{"at the limit", []Axis{set("a=" + values(100)), set("b=" + values(MaxPoints/100))}, ""},
		{"a --set makes it too large", []Axis{set("a=" + values(1000)), set("b=" + values(1000)), set("c=1,2")},
			"--set b=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,… (1000 values): the grid would have 1000000 (1000 × 1000) points, more than the 10000"},
		{"a grid line makes it too large", []Axis{gridAxis(3, "a", 1000), gridAxis(7, "b", 1000), gridAxis(11, "c", 1000)},
			"g.toml:7: b: the grid would have 1000000 (1000 × 1000) points"},
		{"one axis too long", []Axis{gridAxis(3, "a", MaxPoints+1)}, "g.toml:3: a: the grid would have 10001 points"},
		{"a key twice", []Axis{set("workload.udp.messages=2,3"), gridAxis(6, "workload.udp.messages", 2)},
			"g.toml:6: workload.udp.messages: swept already by --set workload.udp.messages=2,3: give each key once"},
		{"a key twice on the command line", []Axis{set("a.b=1"), set("c=1"), set("a.b=2")}, "--set a.b=2: swept already by --set a.b=1"},
		{"every host's and one host's", []Axis{set("host.inet.mtu=576,1500"), set("host[1].inet.mtu=1000")},
			"--set host[1].inet.mtu=1000: sets what host.inet.mtu (--set host.inet.mtu=576,1500) sets too"},
		{"a table and its key", []Axis{set("workload.udp.sizes=[4]"), set("workload.udp={sizes = [8]}")}, "sets what workload.udp.sizes"},
		{"two hosts", []Axis{set("host[0].inet.mtu=576,1500"), set("host[1].inet.mtu=1000")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Grid{Config: "x.toml", Axes: tc.axes}.Check()
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("error %v, want one saying %q", err, tc.err)
			}
		})
	}
}

func TestOverlap(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"host.inet.mtu", "host.inet.mtu", true},
		{"host.inet.mtu", "host[1].inet.mtu", true},
		{"host[1].inet.mtu", "host.inet.mtu", true},
		{"host[0].inet.mtu", "host[1].inet.mtu", false},
		{"host.inet", "host[2].inet.mtu", true},
		{"host.inet.mtu", "host.inet.ttl", false},
		{"machine.cpu.clock", "host.machine", false},
		{"workload.udp", "workload.tcp.sizes", false},
		{"a[1][2].b", "a[1].b", true},
		{"a[1][2].b", "a[1][3].b", false},
	} {
		pa, _ := config.ParseKey(tc.a)
		pb, _ := config.ParseKey(tc.b)
		if got := overlap(pa, pb); got != tc.want {
			t.Errorf("overlap(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// Point(i) is the i-th of the product, the first axis slowest; a shard
// has the indices i modulo n, and the shards together every index once.
func TestPointsAndShards(t *testing.T) {
	g := Grid{Axes: []Axis{{Key: "a", Values: []string{"1", "2"}}, {Key: "b", Values: []string{"x", "y", "z"}}}}
	var got []string
	for i := range g.Size() {
		p := g.Point(i)
		if p.Index != i {
			t.Errorf("point %d has index %d", i, p.Index)
		}
		got = append(got, strings.Join(p.Values, ""))
	}
	if want := []string{"1x", "1y", "1z", "2x", "2y", "2z"}; !slices.Equal(got, want) {
		t.Errorf("points %q, want %q", got, want)
	}
	seen := make([]int, g.Size())
	for i := range 4 {
		for _, k := range (Shard{i, 4}).Indices(g.Size()) {
			if k%4 != i {
				t.Errorf("shard %d/4 has point %d", i, k)
			}
			seen[k]++
		}
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("point %d is in %d shards", k, n)
		}
	}
	if got := (Shard{}).Indices(3); !slices.Equal(got, []int{0, 1, 2}) {
		t.Errorf("no shard: %v", got)
	}
}

// The grid's size is capped, so that a product too large for an int is
// still refused, not wrapped around.
func TestSizeCapped(t *testing.T) {
	big := make([]string, 1<<16)
	for i := range big {
		big[i] = strconv.Itoa(i)
	}
	g := Grid{}
	for range 6 { // 2^96 points
		g.Axes = append(g.Axes, Axis{Key: fmt.Sprint("k", len(g.Axes)), Values: big})
	}
	if n := g.Size(); n != MaxPoints+1 {
		t.Errorf("size %d, want %d", n, MaxPoints+1)
	}
	if err := g.Check(); err == nil || !strings.Contains(err.Error(), "65536 points") {
		t.Errorf("error %v", err)
	}
}

func TestParseSet(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		want []string
		err  string
	}{
		{"host.inet.mtu=576, 1500", []string{"576", "1500"}, ""},
		{"workload.udp.sizes=[4,1024],[16384]", []string{"[4,1024]", "[16384]"}, ""},
		{`a="x,y",{b = 1, c = 2}`, []string{`"x,y"`, "{b = 1, c = 2}"}, ""},
		{"a=", nil, "an empty value"},
		{"a=1,,2", nil, "an empty value"},
		{"=1", nil, "empty key"},
		{"a=[1", nil, "unbalanced"},
		{"a..b=1", nil, "an empty name"},
		{`"a=b".c=1,2`, []string{"1", "2"}, ""},
		{"a=1\n#x", nil, "a line break"},
		{"a=1,2,2", nil, "value 3 (2) is value 2 again"},
	} {
		a, err := ParseSet(tc.arg)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want one saying %q", tc.arg, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.arg, err)
		case !slices.Equal(a.Values, tc.want) || a.Origin != "--set "+tc.arg:
			t.Errorf("%s: values %q origin %q, want %q", tc.arg, a.Values, a.Origin, tc.want)
		}
	}
}

// A grid file's value names its line in the errors of the points that
// take it; a --set's names the --set.
func TestOverridesOrigin(t *testing.T) {
	axes, err := ParseGrid("g.toml", []byte("[[axis]]\nkey = \"workload.udp.messages\"\nvalues = [0, 2]\n"))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ParseSet("host.inet.mtu=576")
	g := Grid{Axes: append([]Axis{s}, axes...)}
	o := g.Overrides(g.Point(0))
	if o[0].Origin != "--set host.inet.mtu=576" || o[1].Origin != "g.toml:3 (workload.udp.messages = 0)" {
		t.Errorf("origins %q, %q", o[0].Origin, o[1].Origin)
	}
}

func FuzzGrid(f *testing.F) {
	for _, s := range []string{
		"",
		"[[axis]]\nkey = \"host.inet.mtu\"\nvalues = [576, 1500]\n",
		"[[axis]]\nkey = \"workload.udp.sizes\"\nvalues = [[4, 1024], [8192]]\n[[axis]]\nkey = \"host[1].inet.mtu\"\nvalues = [1000]\n",
		"[[axis]]\nkey = \"a\"\nvalues = [\"x\\u0000\", 1.5e300, -0.0, nan, inf, true, {\"a b\" = 1, c = [2]}]\n",
		"axis = [{key = \"a\", values = [1]}, {key = \"a\", values = [2]}]\n",
		"[[axis]]\nkey = \"a\"\nvalues = [1979-05-27T07:32:00Z]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		axes, err := ParseGrid("fuzz.toml", data)
		if err != nil {
			if _, ok := errors.AsType[config.Errors](err); !ok {
				t.Fatalf("error is %T, want config.Errors", err)
			}
			if !strings.HasPrefix(err.Error(), "fuzz.toml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, a := range axes {
			if len(a.Values) == 0 || !strings.HasPrefix(a.Origin, "fuzz.toml:") {
				t.Fatalf("axis %+v", a)
			}
			if _, err := config.ParseKey(a.Key); err != nil {
				t.Fatalf("axis key %q: %v", a.Key, err)
			}
			// Each value is TOML that reads back as itself.
			for _, v := range a.Values {
				again, err := tomlText(config.ParseValue(v))
				if err != nil || again != v {
					t.Fatalf("value %q reads back as %q (%v)", v, again, err)
				}
			}
		}
		g := Grid{Config: "x.toml", Axes: axes}
		err = g.Check()
		n := g.Size()
		if err == nil && (n < 1 || n > MaxPoints) {
			t.Fatalf("a grid of %d points passes the check", n)
		}
		if err == nil {
			for _, i := range []int{0, n / 2, n - 1} {
				if p := g.Point(i); len(p.Values) != len(axes) {
					t.Fatalf("point %d: %v", i, p)
				}
			}
		}
	})
}

func FuzzParseSet(f *testing.F) {
	for _, s := range []string{"host.inet.mtu=576,1500", "a=[1,2],[3]", `a="x,y",'z'`, "a={b=1},{b=2}", "a=", "a=[", "=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		a, err := ParseSet(arg)
		if err != nil {
			return
		}
		if len(a.Values) == 0 {
			t.Fatalf("%q: no values and no error", arg)
		}
		for _, v := range a.Values {
			if v == "" || v != strings.TrimSpace(v) {
				t.Fatalf("%q: value %q", arg, v)
			}
		}
		if _, _, dup := repeated(a.Values); dup {
			t.Fatalf("%q: a value twice", arg)
		}
	})
}
