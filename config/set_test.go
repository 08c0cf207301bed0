package config_test

import (
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
