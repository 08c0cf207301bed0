// Package charttest checks rendered charts for tests: that no two texts
// of an SVG overlap and that every text lies on the canvas. Layer: none;
// used by tests only.
//
// A text's box is estimated, not measured: its width from its font size
// and the widths of its characters in a sans-serif font like Liberation
// Sans or Arial (narrow, digit, lower-case, capital and wide classes),
// its height from the font's cap height above the baseline and its
// descent below. The estimate is within a few per cent of the real
// width for the labels charts carry; two labels closer than that are too
// close to read anyway.
package charttest

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Text is one text element of an SVG and the box it covers on the page
// (x to the right, y down, in the SVG's user units).
type Text struct {
	S                      string
	MinX, MinY, MaxX, MaxY float64
}

func (t Text) String() string {
	return fmt.Sprintf("%q at (%.1f,%.1f)-(%.1f,%.1f)", t.S, t.MinX, t.MinY, t.MaxX, t.MaxY)
}

// affine is a 2-D affine transform: x' = a x + c y + e, y' = b x + d y + f.
type affine struct{ a, b, c, d, e, f float64 }

var identity = affine{a: 1, d: 1}

// then returns the transform that applies t, then u.
func (t affine) then(u affine) affine {
	return affine{
		a: u.a*t.a + u.c*t.b, b: u.b*t.a + u.d*t.b,
		c: u.a*t.c + u.c*t.d, d: u.b*t.c + u.d*t.d,
		e: u.a*t.e + u.c*t.f + u.e, f: u.b*t.e + u.d*t.f + u.f,
	}
}

func (t affine) apply(x, y float64) (float64, float64) {
	return t.a*x + t.c*y + t.e, t.b*x + t.d*y + t.f
}

var transformRe = regexp.MustCompile(`(matrix|translate|scale|rotate)\s*\(([^)]*)\)`)

// parseTransform reads an SVG transform attribute: its functions apply
// right to left.
func parseTransform(s string) (affine, error) {
	m := identity
	fs := transformRe.FindAllStringSubmatch(s, -1)
	for i := len(fs) - 1; i >= 0; i-- {
		var args []float64
		for _, f := range strings.FieldsFunc(fs[i][2], func(r rune) bool { return r == ',' || unicode.IsSpace(r) }) {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				return m, fmt.Errorf("transform %q: %v", s, err)
			}
			args = append(args, v)
		}
		var t affine
		switch fs[i][1] {
		case "matrix":
			if len(args) != 6 {
				return m, fmt.Errorf("transform %q: matrix of %d numbers", s, len(args))
			}
			t = affine{args[0], args[1], args[2], args[3], args[4], args[5]}
		case "translate":
			t = identity
			if len(args) > 0 {
				t.e = args[0]
			}
			if len(args) > 1 {
				t.f = args[1]
			}
		case "scale":
			if len(args) == 0 {
				return m, fmt.Errorf("transform %q: scale of nothing", s)
			}
			t = affine{a: args[0], d: args[0]}
			if len(args) > 1 {
				t.d = args[1]
			}
		case "rotate":
			if len(args) == 0 {
				return m, fmt.Errorf("transform %q: rotate of nothing", s)
			}
			sin, cos := math.Sincos(args[0] * math.Pi / 180)
			t = affine{a: cos, b: sin, c: -sin, d: cos}
			if len(args) == 3 {
				cx, cy := args[1], args[2]
				t = affine{a: 1, d: 1, e: -cx, f: -cy}.then(t).then(affine{a: 1, d: 1, e: cx, f: cy})
			}
		}
		m = m.then(t)
	}
	return m, nil
}

// Width estimates the width of s in a font of size, in em fractions of
// Liberation Sans's advance widths, by class of character.
func Width(s string, size float64) float64 {
	var w float64
	for _, r := range s {
		switch {
		case strings.ContainsRune("iljI.,:;'!|", r):
			w += 0.28
		case r == ' ':
			w += 0.28
		case strings.ContainsRune("ftr()[]/-", r):
			w += 0.34
		case r >= '0' && r <= '9':
			w += 0.556
		case r == 'm' || r == 'M' || r == 'W':
			w += 0.833
		case r == 'w':
			w += 0.722
		case unicode.IsUpper(r):
			w += 0.667
		case unicode.IsLower(r):
			w += 0.5
		default:
			w += 0.584
		}
	}
	return w * size
}

var fontSizeRe = regexp.MustCompile(`font-size:\s*([0-9.]+)`)

// Texts returns every non-empty text element of svg with its box.
func Texts(svg []byte) (texts []Text, width, height float64, err error) {
	d := xml.NewDecoder(bytes.NewReader(svg))
	stack := []affine{identity}
	type open struct {
		m      affine
		x, y   float64
		size   float64
		isText bool
	}
	var elems []open
	var cur *open
	var sb strings.Builder
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, 0, err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			m := stack[len(stack)-1]
			o := open{m: m}
			attr := map[string]string{}
			for _, a := range tok.Attr {
				attr[a.Name.Local] = a.Value
			}
			if tok.Name.Local == "svg" {
				box := strings.Fields(attr["viewBox"])
				if len(box) == 4 {
					width, _ = strconv.ParseFloat(box[2], 64)
					height, _ = strconv.ParseFloat(box[3], 64)
				}
			}
			if tr, ok := attr["transform"]; ok {
				t, err := parseTransform(tr)
				if err != nil {
					return nil, 0, 0, err
				}
				o.m = t.then(m)
			}
			if tok.Name.Local == "text" {
				o.isText = true
				o.x, _ = strconv.ParseFloat(attr["x"], 64)
				o.y, _ = strconv.ParseFloat(attr["y"], 64)
				o.size = 12
				if fs := fontSizeRe.FindStringSubmatch(attr["style"]); fs != nil {
					o.size, _ = strconv.ParseFloat(fs[1], 64)
				}
				sb.Reset()
			}
			elems = append(elems, o)
			stack = append(stack, o.m)
			cur = &elems[len(elems)-1]
		case xml.CharData:
			if cur != nil && cur.isText {
				sb.Write(tok)
			}
		case xml.EndElement:
			o := elems[len(elems)-1]
			elems, stack = elems[:len(elems)-1], stack[:len(stack)-1]
			cur = nil
			if len(elems) > 0 {
				cur = &elems[len(elems)-1]
			}
			if !o.isText {
				continue
			}
			s := strings.TrimSpace(sb.String())
			if s == "" {
				continue
			}
			// The box in the text's own space, y down: cap height above
			// the baseline, descent below.
			x0, x1 := o.x, o.x+Width(s, o.size)
			y0, y1 := o.y-0.72*o.size, o.y+0.2*o.size
			t := Text{S: s, MinX: math.Inf(1), MinY: math.Inf(1), MaxX: math.Inf(-1), MaxY: math.Inf(-1)}
			for _, p := range [][2]float64{{x0, y0}, {x1, y0}, {x0, y1}, {x1, y1}} {
				px, py := o.m.apply(p[0], p[1])
				t.MinX, t.MaxX = math.Min(t.MinX, px), math.Max(t.MaxX, px)
				t.MinY, t.MaxY = math.Min(t.MinY, py), math.Max(t.MaxY, py)
			}
			texts = append(texts, t)
		}
	}
	return texts, width, height, nil
}

// slack is how far two boxes may run into each other, or a box off the
// canvas, in user units, before it counts: the estimate's error.
const slack = 0.5

// Problems returns what is wrong with the texts of svg: pairs that
// overlap and texts that run off the canvas, one sentence each.
func Problems(svg []byte) ([]string, error) {
	texts, w, h, err := Texts(svg)
	if err != nil {
		return nil, err
	}
	var out []string
	for i, a := range texts {
		if w > 0 && (a.MinX < -slack || a.MaxX > w+slack || a.MinY < -slack || a.MaxY > h+slack) {
			out = append(out, fmt.Sprintf("%v runs off the %gx%g canvas", a, w, h))
		}
		for _, b := range texts[i+1:] {
			if a.MinX < b.MaxX-slack && b.MinX < a.MaxX-slack && a.MinY < b.MaxY-slack && b.MinY < a.MaxY-slack {
				out = append(out, fmt.Sprintf("%v overlaps %v", a, b))
			}
		}
	}
	return out, nil
}
