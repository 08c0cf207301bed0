package annotations

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"
)

// BucketResult summarises one bucket: the values `bucket add` put in it.
// Quantiles are empirical (the smallest value at or above that fraction
// of the values).
type BucketResult struct {
	Name  string  `json:"name"`
	Count int     `json:"count"`
	Sum   float64 `json:"sum"`
	Mean  float64 `json:"mean"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
}

// bucket keeps every value; sorted says whether vals is in order.
type bucket struct {
	vals   []float64
	sum    float64
	sorted bool
}

func (b *bucket) result(name string) BucketResult {
	if !b.sorted {
		slices.Sort(b.vals)
		b.sorted = true
	}
	r := BucketResult{Name: name, Count: len(b.vals), Sum: b.sum}
	if len(b.vals) == 0 {
		return r
	}
	r.Mean = b.sum / float64(len(b.vals))
	r.Min, r.Max = b.vals[0], b.vals[len(b.vals)-1]
	r.P50 = stat.Quantile(0.50, stat.Empirical, b.vals, nil)
	r.P90 = stat.Quantile(0.90, stat.Empirical, b.vals, nil)
	r.P99 = stat.Quantile(0.99, stat.Empirical, b.vals, nil)
	return r
}

// Buckets returns every bucket's summary, sorted by name.
func (e *Engine) Buckets() []BucketResult {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.bucketResults()
}

func (e *Engine) bucketResults() []BucketResult {
	names := make([]string, 0, len(e.buckets))
	for n := range e.buckets {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]BucketResult, len(names))
	for i, n := range names {
		out[i] = e.buckets[n].result(n)
	}
	return out
}

// BucketTable renders results as the text table `bucket report` returns.
func BucketTable(rs []BucketResult) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%-24s %10s %14s %14s %14s %14s %14s %14s\n", "BUCKET", "COUNT", "MEAN", "MIN", "P50", "P90", "P99", "MAX")
	for _, r := range rs {
		fmt.Fprintf(&sb, "%-24s %10d %14s %14s %14s %14s %14s %14s\n", r.Name, r.Count,
			num(r.Mean), num(r.Min), num(r.P50), num(r.P90), num(r.P99), num(r.Max))
	}
	return sb.String()
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }

// cmdBucket implements `bucket add NAME VALUE`, `bucket get NAME STAT`
// (count, sum, mean, min, max, p50, p90, p99) and `bucket report`.
func (e *Engine) cmdBucket(args []string) (string, error) {
	switch {
	case len(args) == 3 && args[0] == "add":
		v, err := strconv.ParseFloat(strings.TrimSpace(args[2]), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return "", fmt.Errorf("bucket add %s: %q is not a finite number", args[1], args[2])
		}
		b := e.buckets[args[1]]
		if b != nil && math.IsInf(b.sum+v, 0) {
			return "", fmt.Errorf("bucket add %s %s: the bucket's sum would overflow (it is %g)", args[1], args[2], b.sum)
		}
		if b == nil {
			b = &bucket{}
			e.buckets[args[1]] = b
			e.goBytes += int64(len(args[1])) + 64
		}
		b.vals = append(b.vals, v)
		b.sum += v
		b.sorted = false
		e.goBytes += 8
		return "", nil
	case len(args) == 3 && args[0] == "get":
		b := e.buckets[args[1]]
		if b == nil {
			return "", fmt.Errorf("bucket get: no bucket %q", args[1])
		}
		r := b.result(args[1])
		var v float64
		switch args[2] {
		case "count":
			return strconv.Itoa(r.Count), nil
		case "sum":
			v = r.Sum
		case "mean":
			v = r.Mean
		case "min":
			v = r.Min
		case "max":
			v = r.Max
		case "p50":
			v = r.P50
		case "p90":
			v = r.P90
		case "p99":
			v = r.P99
		default:
			return "", fmt.Errorf("bucket get %s: unknown statistic %q (count, sum, mean, min, max, p50, p90, p99)", args[1], args[2])
		}
		return strconv.FormatFloat(v, 'g', -1, 64), nil
	case len(args) == 1 && args[0] == "report":
		return BucketTable(e.bucketResults()), nil
	}
	return "", errors.New(`wrong # args: should be "bucket add NAME VALUE", "bucket get NAME STAT" or "bucket report"`)
}
