package sweep

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"simkron/report"
)

// testSweep writes a sweep directory of two points by hand (what Run
// writes, without running anything) and returns its plan.
func testSweep(t *testing.T, dir string) *Plan {
	t.Helper()
	g := Grid{Config: "x.toml", Axes: []Axis{{Key: "workload.udp.messages", Values: []string{"2", "3"}}}}
	pl := &Plan{Grid: g, Master: 7, ID: "0123456789abcdef01234567", Points: 2}
	m := Manifest{Schema: ManifestSchema, ID: pl.ID, Grid: g, MasterSeed: pl.Master, Points: 2, Shard: "0/1"}
	if err := os.MkdirAll(filepath.Join(dir, "points"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeJSON(filepath.Join(dir, "sweep.json"), m); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		p := g.Point(i)
		r := &report.Result{Header: report.Header{Schema: report.Schema, Version: "v", Experiment: "x", Seed: g.Seed(pl.Master, p), Complete: true}}
		if err := pl.writePoint(dir, p, r); err != nil {
			t.Fatal(err)
		}
	}
	return pl
}

// A resume keeps a point's file only when it is that point's complete
// result of this sweep; a merge refuses any other, naming the file.
func TestPointFiles(t *testing.T) {
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir string)
		err    string // of a merge; "" for none
		rerun  []int  // the points a resume runs again
	}{
		{"as written", func(*testing.T, string) {}, "", nil},
		{"truncated", func(t *testing.T, dir string) {
			p := pointFile(dir, 1)
			os.WriteFile(p, read(p)[:100], 0o644)
		}, "000001.json: not a point's result (damaged or truncated?)", []int{1}},
		{"swapped", func(t *testing.T, dir string) {
			a, b := read(pointFile(dir, 0)), read(pointFile(dir, 1))
			os.WriteFile(pointFile(dir, 0), b, 0o644)
			os.WriteFile(pointFile(dir, 1), a, 0o644)
		}, "000000.json: point 1's result, not point 0's", []int{0, 1}},
		{"a plain run's result", func(t *testing.T, dir string) {
			var b bytes.Buffer
			(&report.Result{Header: report.Header{Schema: report.Schema, Experiment: "x", Complete: true}}).WriteJSON(&b)
			os.WriteFile(pointFile(dir, 0), b.Bytes(), 0o644)
		}, `000000.json: not a point's result of a sweep: the result has no section "sweep_point"`, []int{0}},
		{"another sweep's", func(t *testing.T, dir string) {
			p := pointFile(dir, 1)
			os.WriteFile(p, bytes.Replace(read(p), []byte("0123456789abcdef01234567"), []byte("76543210fedcba9876543210"), 1), 0o644)
		}, "000001.json: a point of another sweep (76543210fedcba9876543210, not 0123456789abcdef01234567)", []int{1}},
		{"another seed", func(t *testing.T, dir string) {
			var r report.Result
			json.Unmarshal(read(pointFile(dir, 1)), &r)
			r.Seed++
			var b bytes.Buffer
			r.WriteJSON(&b)
			os.WriteFile(pointFile(dir, 1), b.Bytes(), 0o644)
		}, "000001.json: a result of seed", []int{1}},
		{"a stray file", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "points", "2.json"), read(pointFile(dir, 0)), 0o644)
		}, "2.json: not a point of this sweep (of 2 points, named 000000.json to 000001.json)", nil},
		{"a folder as a point", func(t *testing.T, dir string) {
			os.Remove(pointFile(dir, 1))
			os.Mkdir(pointFile(dir, 1), 0o755)
		}, "000001.json: not a regular file: it is a folder", []int{1}},
		{"a manifest of a huge grid", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "sweep.json")
			os.WriteFile(p, bytes.Replace(read(p), []byte(`"points": 2`), []byte(`"points": 1000000000`), 1), 0o644)
		}, "sweep.json: not a sweep manifest: it says 1000000000 points, its grid has 2", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			pl := testSweep(t, dir)
			tc.damage(t, dir)
			_, rs, err := ReadPoints([]string{dir})
			switch {
			case tc.err == "" && (err != nil || len(rs) != 2):
				t.Fatalf("merge: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("merge: error %v, want one saying %q", err, tc.err)
			}
			// A resume runs again exactly the points the merge refuses.
			for i := range 2 {
				_, err := pl.readPoint(pointFile(dir, i), i)
				if (err != nil) != slices.Contains(tc.rerun, i) {
					t.Errorf("resume: point %d: %v", i, err)
				}
			}
		})
	}
}

// A point two shards hold must be the same bytes in both.
func TestMergeDuplicates(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	testSweep(t, a)
	testSweep(t, b)
	if _, _, err := ReadPoints([]string{a, b}); err != nil {
		t.Fatalf("the same points twice: %v", err)
	}
	p := pointFile(b, 1)
	data, _ := os.ReadFile(p)
	os.WriteFile(p, bytes.Replace(data, []byte(`"complete": true`), []byte(`"complete": false`), 1), 0o644)
	if _, _, err := ReadPoints([]string{a, b}); err == nil || !strings.Contains(err.Error(), "the same point with different results") {
		t.Errorf("error %v", err)
	}
}

// The merged result says how many points did not complete, and which.
func TestMergeIncomplete(t *testing.T) {
	m := &Manifest{Grid: Grid{Axes: []Axis{{Key: "k", Values: []string{"0", "1", "2", "3", "4"}}}}}
	for _, tc := range []struct {
		failed []int
		want   string
	}{
		{nil, ""},
		{[]int{2}, "point 2 (k=2): r2"},
		{[]int{1, 3}, "2 of 5 points incomplete: point 1 (k=1): r1; point 3 (k=3): r3"},
		{[]int{0, 1, 2, 3, 4}, `5 of 5 points incomplete: point 0 (k=0): r0; point 1 (k=1): r1; point 2 (k=2): r2; and 2 more (section "sweep" has each point's outcome)`},
	} {
		rs := make([]*report.Result, 5)
		for i := range rs {
			rs[i] = &report.Result{Header: report.Header{Experiment: "x", Complete: true}}
		}
		for _, i := range tc.failed {
			rs[i].Complete, rs[i].Incomplete = false, "r"+string(rune('0'+i))
		}
		out := Merge(m, rs)
		if out.Complete != (tc.want == "") || out.Incomplete != tc.want {
			t.Errorf("failed %v: complete %v %q, want %q", tc.failed, out.Complete, out.Incomplete, tc.want)
		}
	}
}
