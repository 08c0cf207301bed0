package cpu_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"testing"

	"simkron/report/shape"
)

// The layers the core attributes cycles to are the layers every report
// knows: each Layer constant of this package (but LayerInherit, the
// caller's) names a row of report/shape's table of layers (its order,
// colour and meaning), and each row of that table is a constant here.
// The constants are read from the source, so that a new one is checked
// without being listed twice.
func TestLayersAgreeWithReportTable(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "symbols.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var consts []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			v := spec.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "Layer" {
				continue
			}
			for _, val := range v.Values {
				lit, ok := val.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Fatalf("a Layer constant's value is not a string literal: %#v", val)
				}
				name, _ := strconv.Unquote(lit.Value)
				if name != "" { // LayerInherit
					consts = append(consts, name)
				}
			}
		}
	}
	if len(consts) < 10 {
		t.Fatalf("found only %d Layer constants in symbols.go: %v", len(consts), consts)
	}
	var table []string
	for _, l := range shape.Layers {
		table = append(table, l.Name)
	}
	for _, c := range consts {
		if !slices.Contains(table, c) {
			t.Errorf("cpu's layer %q is not in report/shape's table of layers", c)
		}
	}
	for _, n := range table {
		if !slices.Contains(consts, n) {
			t.Errorf("report/shape's layer %q is not a cpu.Layer constant", n)
		}
	}
}
