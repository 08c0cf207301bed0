// Package sweep runs a parameter study: one experiment over a grid of
// values of its keys, each point a whole deterministic run with its own
// seed, on all local cores or one shard of the grid at a time (so that a
// cluster's job array spreads a large study), and merges the points into
// one result whose tables and charts have the swept keys as an axis.
//
// It is a package of its own because it stands above a single run: it
// loads and runs many experiments through package machine and merges their
// results, which neither machine (one run) nor report (one result's
// renderings) holds. The merged result is a report.Result like any other,
// so every format renders it.
//
// Determinism: a point's result depends on the experiment, the point's
// values and the master seed alone; the merge orders points by their index
// in the grid. The merged result is byte-identical whatever the number of
// workers, however the points were sharded, in whatever order they ended.
//
// Limits: a grid has at most [MaxPoints] points, checked before anything
// is loaded; a point is worked out from its index when it is needed, so
// that nothing is allocated in proportion to the grid before the merge,
// which holds every point's result.
package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"simkron/config"
	"simkron/internal/infile"
	"simkron/machine"
)

// MaxPoints is the most points a grid may have. The merged result holds
// every point's result (about 50 KB each for the shipped experiments, so
// that 10,000 points make a result of about 500 MB, and the merge needs
// several times that in memory); a larger study is several sweeps.
const MaxPoints = 10000

// Axis is one swept key and its values, in order.
type Axis struct {
	Key    string   `json:"key"`
	Values []string `json:"values"` // as written (TOML values; units need no quotes)
	// Origin says where the axis was given, for messages: the --set
	// argument ("--set host.inet.mtu=576,1500") or the grid file's line
	// of its values ("grid.toml:7"). It is not part of the grid.
	Origin string `json:"-"`
	// grid says the axis comes from a grid file (Origin is FILE:LINE).
	grid bool
}

// Grid is the product of its axes over one experiment file: the first
// axis varies slowest.
type Grid struct {
	// Config is the experiment file's path as given, which the points
	// are loaded from; a sweep's files hold its name alone (Stored).
	Config string `json:"config"`
	Axes   []Axis `json:"axes"`
}

// Stored is the grid as a sweep's manifest and merged result hold it:
// the experiment file by its name alone, as a result holds every path
// relative to the experiment file, so that a sweep run from another
// folder, or given the file's absolute path as on a cluster, writes the
// same bytes. The file's bytes are in the grid's ID.
func (g Grid) Stored() Grid {
	g.Config = filepath.Base(g.Config)
	return g
}

// Point is one combination of the grid's values.
type Point struct {
	Index  int
	Values []string // one per axis
}

// ParseSet reads a --set argument, KEY=V1,V2,...: the values split at the
// commas outside brackets, braces and quotes, so that an array value
// ("sizes=[4,1024],[16384]") stays whole.
func ParseSet(arg string) (Axis, error) {
	// The key may be quoted and hold "=" or "."; a line break is refused.
	key, vals, err := config.SplitSet(arg)
	if err != nil {
		return Axis{}, err
	}
	a := Axis{Key: key, Origin: "--set " + arg}
	depth, quote, start := 0, byte(0), 0
	for i := 0; i <= len(vals); i++ {
		if i < len(vals) {
			switch c := vals[i]; {
			case quote != 0:
				if c == quote {
					quote = 0
				}
				continue
			case c == '"' || c == '\'':
				quote = c
				continue
			case c == '[' || c == '{':
				depth++
				continue
			case c == ']' || c == '}':
				depth--
				continue
			case c != ',' || depth > 0:
				continue
			}
		}
		v := strings.TrimSpace(vals[start:i])
		if v == "" {
			return Axis{}, fmt.Errorf("--set %q: an empty value", arg)
		}
		a.Values = append(a.Values, v)
		start = i + 1
	}
	if depth != 0 || quote != 0 {
		return Axis{}, fmt.Errorf("--set %q: unbalanced brackets or quotes", arg)
	}
	if i, j, dup := repeated(a.Values); dup {
		return Axis{}, fmt.Errorf("--set %q: value %d (%s) is value %d again: two points would be one", arg, j+1, a.Values[j], i+1)
	}
	return a, nil
}

// repeated finds a value given twice: the same text makes the same point
// (its seed derives from its values), so a second one only costs time.
func repeated(vs []string) (first, again int, ok bool) {
	seen := make(map[string]int, len(vs))
	for j, v := range vs {
		if i, dup := seen[v]; dup {
			return i, j, true
		}
		seen[v] = j
	}
	return 0, 0, false
}

// gridFile is a grid file: [[axis]] tables with key and values.
type gridFile struct {
	Axis []struct {
		Key    string `toml:"key" help:"the swept key, a dotted path as --set takes it"`
		Values []any  `toml:"values" help:"its values, in order"`
	} `toml:"axis"`
}

// LoadGridFile reads the axes of a grid file:
//
//	[[axis]]
//	key = "host.inet.mtu"
//	values = [576, 1500, 4352]
//
// It is read through infile (a regular file of at most infile.Config
// bytes); every problem names the file, line and key. Each axis's Origin
// is the line of its values.
func LoadGridFile(path string) ([]Axis, error) {
	data, err := infile.Read(path, infile.Config)
	if err != nil {
		return nil, config.Errors{{File: path, Msg: errText(err), Err: err}}
	}
	return ParseGrid(path, data)
}

// ParseGrid reads the axes of the grid file text data, named path in
// messages (see LoadGridFile).
func ParseGrid(path string, data []byte) ([]Axis, error) {
	f, err := config.ParseBytes(path, data)
	if err != nil {
		return nil, err
	}
	var g gridFile
	if err := f.DecodeInto(&g); err != nil {
		return nil, err
	}
	var out []Axis
	var errs config.Errors
	for i, a := range g.Axis {
		at := func(key string) []string { return []string{"axis", strconv.Itoa(i), key} }
		if _, err := config.ParseKey(a.Key); err != nil {
			errs = append(errs, f.Errorf(at("key"), "%v", err))
			continue
		}
		ax := Axis{Key: a.Key, grid: true, Origin: fmt.Sprintf("%s:%d", path, f.Line(at("values")...))}
		for _, v := range a.Values {
			t, err := tomlText(v)
			if err != nil {
				errs = append(errs, f.Errorf(at("values"), "%v", err))
				break
			}
			ax.Values = append(ax.Values, t)
		}
		if len(a.Values) == 0 {
			errs = append(errs, f.Errorf(at("values"), "no values"))
			continue
		}
		if j, k, dup := repeated(ax.Values); dup {
			errs = append(errs, f.Errorf(at("values"), "value %d (%s) is value %d again: two points would be one", k+1, ax.Values[k], j+1))
			continue
		}
		out = append(out, ax)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// errText is an I/O error's cause, without the path the message names
// already.
func errText(err error) string {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// tomlText writes a decoded TOML value back as TOML, so that
// config.ParseValue reads the same value from it.
func tomlText(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return tomlString(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case bool:
		return strconv.FormatBool(x), nil
	case float64:
		switch {
		case math.IsNaN(x):
			return "nan", nil
		case math.IsInf(x, 1):
			return "inf", nil
		case math.IsInf(x, -1):
			return "-inf", nil
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".e") {
			s += ".0" // stays a float
		}
		return s, nil
	case time.Time:
		return "", errors.New("a date or time, which no key of simkron takes")
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			t, err := tomlText(e)
			if err != nil {
				return "", err
			}
			parts[i] = t
		}
		return "[" + strings.Join(parts, ", ") + "]", nil
	case []map[string]any:
		parts := make([]string, len(x))
		for i, e := range x {
			t, err := tomlText(e)
			if err != nil {
				return "", err
			}
			parts[i] = t
		}
		return "[" + strings.Join(parts, ", ") + "]", nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			t, err := tomlText(x[k])
			if err != nil {
				return "", err
			}
			parts[i] = tomlKey(k) + " = " + t
		}
		return "{" + strings.Join(parts, ", ") + "}", nil
	}
	return "", fmt.Errorf("a value of type %T, which a sweep cannot take", v)
}

// tomlString quotes s as a TOML basic string: TOML knows fewer escapes
// than Go (no \x, \a, \v), so control characters are written \uXXXX.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// tomlKey writes a key of an inline table: bare when TOML allows it.
func tomlKey(k string) string {
	if k != "" && strings.Trim(k, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == "" {
		return k
	}
	return tomlString(k)
}

// Size returns how many points g has: the product of its axes' lengths,
// or MaxPoints+1 when that is larger (Check says where it grows too
// large), 0 without axes.
func (g Grid) Size() int {
	if len(g.Axes) == 0 {
		return 0
	}
	n := 1
	for _, a := range g.Axes {
		n = mulCapped(n, len(a.Values))
	}
	return n
}

// mulCapped is a*b, or MaxPoints+1 when that is larger (a, b ≥ 0).
func mulCapped(a, b int) int {
	if b != 0 && a > (MaxPoints+1)/b {
		return MaxPoints + 1
	}
	return min(a*b, MaxPoints+1)
}

// Check looks at the grid before any point is loaded: no axis without
// values, at most MaxPoints points (the error names the axis that makes
// the grid too large), and no key swept twice or inside another swept key
// (the later would override the earlier's values, and points would be
// labelled with values never applied; the error names both places).
func (g Grid) Check() error {
	if len(g.Axes) == 0 {
		return ErrEmpty
	}
	n := 1
	for k, a := range g.Axes {
		if len(a.Values) == 0 {
			return fmt.Errorf("%s: no values", a.where())
		}
		n = mulCapped(n, len(a.Values))
		if n > MaxPoints {
			return fmt.Errorf("%s: the grid would have %s points, more than the %d a sweep may have: split the study into several sweeps",
				a.where(), g.product(k), MaxPoints)
		}
	}
	for j, b := range g.Axes {
		pb, err := config.ParseKey(b.Key)
		if err != nil {
			return fmt.Errorf("%s: %v", b.where(), err)
		}
		for _, a := range g.Axes[:j] {
			pa, _ := config.ParseKey(a.Key)
			if !overlap(pa, pb) {
				continue
			}
			what := "swept already by " + a.place()
			if a.Key != b.Key {
				what = fmt.Sprintf("sets what %s (%s) sets too", a.Key, a.place())
			}
			return fmt.Errorf("%s: %s: give each key once (the later would override the earlier's values, and points would be labelled with values never applied)",
				b.where(), what)
		}
	}
	return nil
}

// where names the axis at the start of a message: its --set, or its grid
// file line and key.
func (a Axis) where() string {
	if a.grid {
		return a.place() + ": " + a.Key
	}
	return a.place()
}

// place says where the axis was given: its --set (a long one cut short)
// or its grid file line.
func (a Axis) place() string {
	o := a.Origin
	switch {
	case o == "":
		return "the axis of " + a.Key
	case a.grid:
		return o
	}
	const most = 72
	if len(o) > most {
		cut := o[:most]
		if i := strings.LastIndexByte(cut, ','); i > len("--set ") {
			cut = cut[:i+1] // at a value's end
		}
		return fmt.Sprintf("%s… (%d values)", strings.ToValidUTF8(cut, ""), len(a.Values))
	}
	return o
}

// product writes the sizes of axes 0..k multiplied, and their product
// (which may exceed an int: it is worked out in floating point).
func (g Grid) product(k int) string {
	parts := make([]string, k+1)
	p := 1.0
	for i, a := range g.Axes[:k+1] {
		parts[i] = strconv.Itoa(len(a.Values))
		p *= float64(len(a.Values))
	}
	total := strconv.FormatFloat(p, 'f', 0, 64)
	if p > 1e15 {
		total = strconv.FormatFloat(p, 'g', 3, 64)
	}
	if k == 0 {
		return total
	}
	return fmt.Sprintf("%s (%s)", total, strings.Join(parts, " × "))
}

// overlap says whether two parsed keys can set the same value: one is the
// other or a table above it, where a part without an index stands for
// every element of an array of tables ("host.inet.mtu" holds
// "host[1].inet.mtu").
func overlap(a, b []string) bool {
	for len(a) > 0 && len(b) > 0 {
		ia, ib := isIndex(a[0]), isIndex(b[0])
		switch {
		case ia && ib:
			if a[0] != b[0] {
				return false
			}
		case ia:
			a = a[1:] // b's part without an index takes every element
			continue
		case ib:
			b = b[1:]
			continue
		case a[0] != b[0]:
			return false
		}
		a, b = a[1:], b[1:]
	}
	return true
}

// isIndex says whether a part of a parsed key is an array index.
func isIndex(part string) bool {
	_, err := strconv.ParseUint(part, 10, 31)
	return err == nil
}

// Point returns point i of g (0 ≤ i < g.Size()).
func (g Grid) Point(i int) Point {
	p := Point{Index: i, Values: make([]string, len(g.Axes))}
	rest := i
	for k := len(g.Axes) - 1; k >= 0; k-- {
		vs := g.Axes[k].Values
		p.Values[k] = vs[rest%len(vs)]
		rest /= len(vs)
	}
	return p
}

// Label names p for people: "host.inet.mtu=576 workload.udp.sizes=[1024]".
func (g Grid) Label(p Point) string {
	parts := make([]string, len(g.Axes))
	for k, a := range g.Axes {
		parts[k] = a.Key + "=" + p.Values[k]
	}
	return strings.Join(parts, " ")
}

// Overrides returns p's values as overrides of the experiment, each
// naming where it came from: "--set KEY=VALUE", or the grid file's line,
// key and value.
func (g Grid) Overrides(p Point) []machine.Override {
	out := make([]machine.Override, len(g.Axes))
	for k, a := range g.Axes {
		origin := "--set " + a.Key + "=" + p.Values[k]
		if a.grid {
			origin = fmt.Sprintf("%s (%s = %s)", a.Origin, a.Key, p.Values[k])
		}
		out[k] = machine.Override{Key: a.Key, Value: config.ParseValue(p.Values[k]), Origin: origin}
	}
	return out
}

// Seed derives point p's seed from the master seed and p's values: a
// change of one point's values leaves every other point's randomness as
// it was, and a grid of one point keeps the master seed.
func (g Grid) Seed(master uint64, p Point) uint64 {
	if g.Size() == 1 {
		return master
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00%s", master, g.Label(p))
	return h.Sum64()
}

// ID identifies the grid for a merge and a resume: the experiment file's
// bytes, the axes and the master seed. Points of different IDs never mix.
func (g Grid) ID(master uint64) (string, error) {
	data, err := infile.Read(g.Config, infile.Config)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write(data)
	fmt.Fprintf(h, "\x00%d", master)
	for _, a := range g.Axes {
		fmt.Fprintf(h, "\x00%s=%s", a.Key, strings.Join(a.Values, "\x01"))
	}
	return hex.EncodeToString(h.Sum(nil)[:12]), nil
}

// Shard is the slice i of n of the grid's points: those whose index is i
// modulo n, so that each shard has a share of every region of the grid.
type Shard struct{ I, N int }

// ParseShard reads "i/n".
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	switch {
	case !ok || err1 != nil || err2 != nil:
		return Shard{}, fmt.Errorf("--shard %q: want i/n, such as 3/16", s)
	case n < 1:
		return Shard{}, fmt.Errorf("--shard %q: n must be at least 1", s)
	case i < 0 || i >= n:
		return Shard{}, fmt.Errorf("--shard %q: i must lie in 0..%d", s, n-1)
	}
	return Shard{i, n}, nil
}

// Indices returns the indices of the shard's points among total.
func (s Shard) Indices(total int) []int {
	if s.N <= 1 {
		s = Shard{0, 1}
	}
	var out []int
	for i := s.I; i < total; i += s.N {
		out = append(out, i)
	}
	return out
}

// ErrEmpty is the error of a grid without points.
var ErrEmpty = errors.New("the grid is empty: give --set KEY=VALUES or --grid FILE")
