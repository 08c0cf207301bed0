package config_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"simkron/config"
	"simkron/sim"
)

func TestSetOverrides(t *testing.T) {
	src := "[a]\nx = 1\n\n[[h]]\nn = \"p\"\n[[h]]\nn = \"q\"\n"
	type H struct {
		N    string   `toml:"n"`
		Rate sim.Size `toml:"rate"`
	}
	type T struct {
		A struct {
			X int `toml:"x" max:"10"`
		} `toml:"a"`
		H []H `toml:"h"`
	}
	f, err := config.ParseBytes("t.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Set("a.x", config.ParseValue("7"), "--set a.x=7"); err != nil {
		t.Fatal(err)
	}
	if err := f.Set("h.rate", config.ParseValue("4KiB"), "--set h.rate=4KiB"); err != nil {
		t.Fatal(err)
	}
	if err := f.Set("h[1].n", config.ParseValue(`"r"`), "--set"); err != nil {
		t.Fatal(err)
	}
	var v T
	if err := f.DecodeInto(&v); err != nil {
		t.Fatal(err)
	}
	if v.A.X != 7 || v.H[0].Rate != 4*sim.KiB || v.H[1].Rate != 4*sim.KiB || v.H[1].N != "r" || v.H[0].N != "p" {
		t.Errorf("decoded %+v", v)
	}
	// Problems with a set value name where it came from.
	f, _ = config.ParseBytes("t.toml", []byte(src))
	f.Set("a.x", config.ParseValue("70"), "--set a.x=70")
	f.Set("a.y", config.ParseValue("1"), "--set a.y=1")
	err = f.DecodeInto(&v)
	for _, want := range []string{"t.toml: --set a.x=70: a.x: 70 is above the maximum 10", `t.toml: --set a.y=1: a.y: unknown key (did you mean "x"?)`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want %q", err, want)
		}
	}
	for _, bad := range []string{"", "h[9].n", "a.x.z", "h[x].n", ".a"} {
		f, _ := config.ParseBytes("t.toml", []byte(src))
		if err := f.Set(bad, 1, "--set"); err == nil {
			t.Errorf("Set(%q) accepted", bad)
		}
	}
}

func TestParseKey(t *testing.T) {
	tests := []struct {
		key  string
		want []string
		err  string
	}{
		{key: "host[1].inet.mtu", want: []string{"host", "1", "inet", "mtu"}},
		{key: "workload.yesv2-interleave.case[0][2]", want: []string{"workload", "yesv2-interleave", "case", "0", "2"}},
		{key: `machine.costs."bcopy.word"`, want: []string{"machine", "costs", "bcopy.word"}},
		{key: `costs.'in_cksum.word'`, want: []string{"costs", "in_cksum.word"}},
		{key: `a."b\"c\u00e9".d`, want: []string{"a", `b"cé`, "d"}},
		{key: ` a . "b=c" [3] . d `, want: []string{"a", "b=c", "3", "d"}},
		{key: "", err: `empty key`},
		{key: ".a", err: `key ".a": an empty name`},
		{key: "a..b", err: `key "a..b": an empty name`},
		{key: "a.", err: `key "a.": an empty name`},
		{key: "h[x].n", err: `key "h[x].n": a bad index after "h"`},
		{key: "h[1", err: `key "h[1": a bad index after "h"`},
		{key: "a b", err: `key "a b": "b" after "a": parts are separated by '.'`},
		{key: "a.é", err: `key "a.é": "é" may not appear in a bare key: quote the name ("...")`},
		{key: `a."b`, err: `key "a.\"b": an unterminated quote`},
		{key: `a."b\q"`, err: `key "a.\"b\\q\"": a bad quoted name "b\q"`},
		{key: strings.Repeat("a.", 64) + "a", err: "deeper than 64 levels"},
	}
	for _, tt := range tests {
		got, err := config.ParseKey(tt.key)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseKey(%q) = %q, %v; want error %q", tt.key, got, err, tt.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ParseKey(%q) = %q, %v; want %q", tt.key, got, err, tt.want)
		}
	}
}

func TestParseSet(t *testing.T) {
	tests := []struct {
		arg   string
		key   string
		value any
		err   string
	}{
		{arg: "workload.udp.messages=3", key: "workload.udp.messages", value: int64(3)},
		{arg: " a.b = [4, 16] ", key: "a.b", value: []any{int64(4), int64(16)}},
		{arg: `machine.costs."bcopy.word"=5`, key: `machine.costs."bcopy.word"`, value: int64(5)},
		{arg: `t."x=y"=z=1`, key: `t."x=y"`, value: "z=1"},
		{arg: "link.rate=10Mbps", key: "link.rate", value: "10Mbps"},
		{arg: "a=3 # a comment", key: "a", value: int64(3)},
		{arg: "workload.udp.messages=3\n# the rest", err: "a line break in a --set argument"},
		{arg: "a=\"x\"\rb = 1", err: "a line break"},
		{arg: "a.b", err: "want KEY=VALUE"},
		{arg: `"a=1`, err: "want KEY=VALUE"},
		{arg: "=1", err: "empty key"},
		{arg: "a=" + strings.Repeat("[", 70) + strings.Repeat("]", 70), err: "the value nests deeper than 64 levels"},
	}
	for _, tt := range tests {
		key, value, err := config.ParseSet(tt.arg)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseSet(%q) = %q, %v, %v; want error %q", tt.arg, key, value, err, tt.err)
			}
			continue
		}
		if err != nil || key != tt.key || !reflect.DeepEqual(value, tt.value) {
			t.Errorf("ParseSet(%q) = %q, %#v, %v; want %q, %#v", tt.arg, key, value, err, tt.key, tt.value)
		}
	}
}

// TestParseValueWhole checks that ParseValue never drops part of its text:
// what TOML would end at a line break, or refuse as too deep, is taken
// whole as a string.
func TestParseValueWhole(t *testing.T) {
	for _, text := range []string{"3\nfoo = 1", "[1,\r2]", strings.Repeat("{a=", 70) + "1" + strings.Repeat("}", 70)} {
		if got := config.ParseValue(text); got != text {
			t.Errorf("ParseValue(%q) = %#v, want the text", text, got)
		}
	}
}

// TestSetQuotedKey sets a key whose name holds a dot.
func TestSetQuotedKey(t *testing.T) {
	f, err := config.ParseBytes("t.toml", []byte("[costs]\n\"bcopy.word\" = 4\n"))
	if err != nil {
		t.Fatal(err)
	}
	key, value, err := config.ParseSet(`costs."bcopy.word"=7`)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Set(key, value, "--set"); err != nil {
		t.Fatal(err)
	}
	var v struct {
		Costs map[string]int64 `toml:"costs"`
	}
	if err := f.DecodeInto(&v); err != nil || v.Costs["bcopy.word"] != 7 || len(v.Costs) != 1 {
		t.Errorf("decoded %v, %v; want costs.\"bcopy.word\" = 7 alone", v.Costs, err)
	}
}
