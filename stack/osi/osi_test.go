package osi_test

import (
	"testing"

	"simkron/cpu"
	"simkron/stack/osi"
)

func TestNSAP(t *testing.T) {
	a, err := osi.ParseNSAP("470005800000000000000001021")
	if err == nil {
		t.Errorf("odd hex accepted: %v", a)
	}
	a, err = osi.ParseNSAP("49000100000000000121")
	if err != nil {
		t.Fatal(err)
	}
	if a.Len() != 10 || a.Selector() != 0x21 || a.String() != "49000100000000000121" {
		t.Errorf("parsed %v (%d octets, selector %#x)", a, a.Len(), a.Selector())
	}
	b := a.WithSelector(0x22)
	if !a.SameSystem(b) || a == b || b.Selector() != 0x22 {
		t.Errorf("selector change: %v %v", a, b)
	}
	if _, err := osi.MakeNSAP(make([]byte, 21)); err == nil {
		t.Error("a 21-octet NSAP accepted")
	}
	var c osi.NSAP
	if err := c.UnmarshalText([]byte("4900")); err != nil || c.Len() != 2 {
		t.Errorf("UnmarshalText: %v %v", c, err)
	}
}

func TestCatalog(t *testing.T) {
	syms := cpu.NewSymbolTable(0x1000, nil)
	s := syms.Define(cpu.Def{Name: "memcpy", Instructions: 1})
	k := osi.NewCatalog()
	k.File(s, osi.CatCopy)
	k.File(s, osi.CatCopy)
	if k.Of(s) != osi.CatCopy || k.Of(syms.Define(cpu.Def{Name: "x", Instructions: 1})) != osi.CatOther {
		t.Error("categories")
	}
	defer func() {
		if recover() == nil {
			t.Error("filing a symbol under two categories did not panic")
		}
	}()
	k.File(s, osi.CatMemory)
}
