package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"simkron/machine"
	"simkron/report"
)

// ManifestSchema identifies the manifest a sweep writes beside its
// points.
const ManifestSchema = "simkron.sweep/1"

// Manifest says what a sweep directory holds: which grid (its ID and
// axes), which master seed, how many points in all and which shard of
// them this directory ran.
type Manifest struct {
	Schema     string `json:"schema"`
	ID         string `json:"id"`
	Grid       Grid   `json:"grid"`
	MasterSeed uint64 `json:"master_seed"`
	Points     int    `json:"points"`
	Shard      string `json:"shard"`
}

// Plan is a validated sweep: every point of the grid loads and builds.
type Plan struct {
	Grid   Grid
	Master uint64
	ID     string
	All    []Point
}

// PointError is a point that failed: its index, its values and why.
type PointError struct {
	Point Point
	Label string
	Err   error
}

func (e PointError) Error() string {
	return fmt.Sprintf("point %d (%s): %v", e.Point.Index, e.Label, e.Err)
}

// NewPlan checks the grid: it loads and builds every point, so that a bad
// key or value is found before anything runs (each error names the point
// with its values). seed, when set, replaces the experiment's master seed.
func NewPlan(g Grid, seed *uint64) (*Plan, error) {
	points := g.Points()
	if len(points) == 0 {
		return nil, ErrEmpty
	}
	base, err := machine.LoadExperiment(g.Config)
	if err != nil {
		return nil, err
	}
	master := base.Info.Seed
	if seed != nil {
		master = *seed
	}
	id, err := g.ID(master)
	if err != nil {
		return nil, err
	}
	var errs []error
	seen := map[string]bool{}
	for _, p := range points {
		exp, err := g.load(p, master)
		if err == nil {
			var r *machine.Run
			if r, err = machine.New(exp, machine.Options{NoCapture: true}); err == nil {
				r.Close()
			}
		}
		if err != nil {
			// One message per distinct problem: a bad value of one axis
			// fails every point that has it.
			if msg := err.Error(); !seen[msg] {
				seen[msg] = true
				errs = append(errs, PointError{Point: p, Label: g.Label(p), Err: err})
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &Plan{Grid: g, Master: master, ID: id, All: points}, nil
}

// load reads point p's experiment with its values and seed.
func (g Grid) load(p Point, master uint64) (*machine.Experiment, error) {
	exp, err := machine.LoadExperimentWith(g.Config, g.Overrides(p))
	if err != nil {
		return nil, err
	}
	exp.Info.Seed = g.Seed(master, p)
	return exp, nil
}

// Options choose how a plan runs.
type Options struct {
	// Workers is how many points run at once (at least 1).
	Workers int
	// Shard is the slice of the grid to run; the zero value is all of it.
	Shard Shard
	// Resume skips points whose result the directory holds already.
	Resume bool
	// Progress, when set, is called as points start and end (host time
	// is the caller's to read; the simulation never sees it).
	Progress func(done, running, total int)
}

// pointFile is where point i's result goes in dir.
func pointFile(dir string, i int) string {
	return filepath.Join(dir, "points", fmt.Sprintf("%06d.json", i))
}

// Run runs the plan's points of opt.Shard into dir: dir/sweep.json (the
// manifest) and dir/points/NNNNNN.json (each point's result.json). It
// returns the points that failed; the others are all written. A point
// that stopped incomplete is written and reported.
func (pl *Plan) Run(dir string, opt Options) ([]PointError, error) {
	shard := opt.Shard
	if shard.N == 0 {
		shard = Shard{0, 1}
	}
	if err := os.MkdirAll(filepath.Join(dir, "points"), 0o755); err != nil {
		return nil, err
	}
	m := Manifest{Schema: ManifestSchema, ID: pl.ID, Grid: pl.Grid, MasterSeed: pl.Master, Points: len(pl.All),
		Shard: fmt.Sprintf("%d/%d", shard.I, shard.N)}
	mpath := filepath.Join(dir, "sweep.json")
	if old, err := ReadManifest(mpath); err == nil && old.ID != m.ID {
		return nil, fmt.Errorf("%s holds a sweep of another grid (%s): give another --out", dir, old.ID)
	}
	if err := writeJSON(mpath, m); err != nil {
		return nil, err
	}
	var todo []Point
	for _, p := range shard.Of(pl.All) {
		if opt.Resume {
			if _, err := os.Stat(pointFile(dir, p.Index)); err == nil {
				continue
			}
		}
		todo = append(todo, p)
	}
	workers := max(opt.Workers, 1)
	var mu sync.Mutex
	var failed []PointError
	done, running := 0, 0
	report := func() {
		if opt.Progress != nil {
			opt.Progress(done, running, len(todo))
		}
	}
	jobs := make(chan Point)
	var wg sync.WaitGroup
	for range min(workers, len(todo)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range jobs {
				mu.Lock()
				running++
				report()
				mu.Unlock()
				err := pl.runPoint(dir, p)
				mu.Lock()
				running--
				done++
				if err != nil {
					failed = append(failed, PointError{Point: p, Label: pl.Grid.Label(p), Err: err})
				}
				report()
				mu.Unlock()
			}
		}()
	}
	for _, p := range todo {
		jobs <- p
	}
	close(jobs)
	wg.Wait()
	sortErrors(failed)
	return failed, nil
}

// runPoint runs one point and writes its result; a run that ended
// incomplete is written and returned as an error too.
func (pl *Plan) runPoint(dir string, p Point) error {
	exp, err := pl.Grid.load(p, pl.Master)
	if err != nil {
		return err
	}
	// A point's result is written without its captures: none is recorded.
	r, err := machine.New(exp, machine.Options{NoCapture: true})
	if err != nil {
		return err
	}
	res, runErr := r.Execute(machine.Options{})
	if res != nil {
		var b bytes.Buffer
		if err := res.WriteJSON(&b); err != nil {
			return err
		}
		if err := writeFile(pointFile(dir, p.Index), b.Bytes()); err != nil {
			return err
		}
	}
	switch {
	case runErr != nil:
		return runErr
	case !res.Complete:
		return errors.New(res.Incomplete)
	}
	return nil
}

func sortErrors(es []PointError) {
	for i := 1; i < len(es); i++ {
		for j := i; j > 0 && es[j].Point.Index < es[j-1].Point.Index; j-- {
			es[j], es[j-1] = es[j-1], es[j]
		}
	}
}

// ReadManifest reads a sweep directory's manifest.
func ReadManifest(path string) (*Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: not a sweep manifest: %v", path, err)
	}
	if m.Schema != ManifestSchema {
		return nil, fmt.Errorf("%s: a %q manifest, this simkron reads %q", path, m.Schema, ManifestSchema)
	}
	return &m, nil
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(path, append(b, '\n'))
}

// writeFile writes data through a temporary file renamed into place.
func writeFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ReadPoints reads the point results of sweep directories made by Run
// (shards of one grid, in any order and any number), checking that they
// are of one grid and that together they hold every point once.
func ReadPoints(dirs []string) (*Manifest, []*report.Result, error) {
	var m *Manifest
	results := map[int]*report.Result{}
	for _, d := range dirs {
		dm, err := ReadManifest(filepath.Join(d, "sweep.json"))
		if err != nil {
			return nil, nil, err
		}
		switch {
		case m == nil:
			m = dm
		case dm.ID != m.ID:
			return nil, nil, fmt.Errorf("%s is a sweep of another grid (%s, not %s): merge the shards of one sweep", d, dm.ID, m.ID)
		}
		entries, err := filepath.Glob(filepath.Join(d, "points", "*.json"))
		if err != nil {
			return nil, nil, err
		}
		for _, e := range entries {
			var i int
			if _, err := fmt.Sscanf(filepath.Base(e), "%06d.json", &i); err != nil || i < 0 || i >= dm.Points {
				return nil, nil, fmt.Errorf("%s: not a point of this sweep", e)
			}
			r, err := report.ReadFile(e)
			if err != nil {
				return nil, nil, err
			}
			if _, dup := results[i]; dup {
				continue // the same point from two shards: the same bytes
			}
			results[i] = r
		}
	}
	if m == nil {
		return nil, nil, errors.New("no sweep directory given")
	}
	out := make([]*report.Result, m.Points)
	var missing []int
	for i := range out {
		if out[i] = results[i]; out[i] == nil {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		return nil, nil, fmt.Errorf("%d of %d points are missing (first: %d): merge every shard", len(missing), m.Points, missing[0])
	}
	return m, out, nil
}
