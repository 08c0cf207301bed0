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
package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"strconv"
	"strings"

	"simkron/config"
	"simkron/machine"
)

// Axis is one swept key and its values, in order.
type Axis struct {
	Key    string   `json:"key"`
	Values []string `json:"values"` // as written (TOML values; units need no quotes)
}

// Grid is the product of its axes over one experiment file: the first
// axis varies slowest.
type Grid struct {
	Config string `json:"config"`
	Axes   []Axis `json:"axes"`
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
	key, vals, ok := strings.Cut(arg, "=")
	if !ok || key == "" {
		return Axis{}, fmt.Errorf("--set %q: want KEY=VALUE[,VALUE...]", arg)
	}
	if _, err := config.ParseKey(key); err != nil {
		return Axis{}, fmt.Errorf("--set %q: %v", arg, err)
	}
	a := Axis{Key: key}
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
	return a, nil
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
func LoadGridFile(path string) ([]Axis, error) {
	f, err := config.Parse(path)
	if err != nil {
		return nil, err
	}
	var g gridFile
	if err := f.DecodeInto(&g); err != nil {
		return nil, err
	}
	var out []Axis
	for i, a := range g.Axis {
		if _, err := config.ParseKey(a.Key); err != nil {
			return nil, config.Errors{f.Errorf([]string{"axis", strconv.Itoa(i), "key"}, "%v", err)}
		}
		ax := Axis{Key: a.Key}
		for _, v := range a.Values {
			ax.Values = append(ax.Values, tomlText(v))
		}
		if len(ax.Values) == 0 {
			return nil, config.Errors{f.Errorf([]string{"axis", strconv.Itoa(i), "values"}, "no values")}
		}
		out = append(out, ax)
	}
	return out, nil
}

// tomlText writes a decoded TOML value back as TOML.
func tomlText(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = tomlText(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}

// Points returns every point of g, in index order.
func (g Grid) Points() []Point {
	n := 1
	for _, a := range g.Axes {
		n *= len(a.Values)
	}
	if len(g.Axes) == 0 {
		n = 0
	}
	out := make([]Point, n)
	for i := range out {
		p := Point{Index: i, Values: make([]string, len(g.Axes))}
		rest := i
		for k := len(g.Axes) - 1; k >= 0; k-- {
			vs := g.Axes[k].Values
			p.Values[k] = vs[rest%len(vs)]
			rest /= len(vs)
		}
		out[i] = p
	}
	return out
}

// Label names p for people: "host.inet.mtu=576 workload.udp.sizes=[1024]".
func (g Grid) Label(p Point) string {
	parts := make([]string, len(g.Axes))
	for k, a := range g.Axes {
		parts[k] = a.Key + "=" + p.Values[k]
	}
	return strings.Join(parts, " ")
}

// Overrides returns p's values as overrides of the experiment.
func (g Grid) Overrides(p Point) []machine.Override {
	out := make([]machine.Override, len(g.Axes))
	for k, a := range g.Axes {
		out[k] = machine.Override{Key: a.Key, Value: config.ParseValue(p.Values[k]), Origin: "--set " + a.Key + "=" + p.Values[k]}
	}
	return out
}

// Seed derives point p's seed from the master seed and p's values: a
// change of one point's values leaves every other point's randomness as
// it was, and a grid of one point keeps the master seed.
func (g Grid) Seed(master uint64, p Point) uint64 {
	if len(g.Points()) == 1 {
		return master
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00%s", master, g.Label(p))
	return h.Sum64()
}

// ID identifies the grid for a merge and a resume: the experiment file's
// bytes, the axes and the master seed. Points of different IDs never mix.
func (g Grid) ID(master uint64) (string, error) {
	data, err := os.ReadFile(g.Config)
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

// Of returns the points of the shard.
func (s Shard) Of(points []Point) []Point {
	if s.N <= 1 {
		return points
	}
	var out []Point
	for _, p := range points {
		if p.Index%s.N == s.I {
			out = append(out, p)
		}
	}
	return out
}

// ErrEmpty is the error of a grid without points.
var ErrEmpty = errors.New("the grid is empty: give --set KEY=VALUES or --grid FILE")
