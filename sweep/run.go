package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"simkron/internal/infile"
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

// PointSection is the section of a point's result that says which point
// of which sweep it is, so that a resume or a merge can tell a point's
// file from a damaged one, another point's or another sweep's. The merge
// leaves it out of the merged result (the point's entry says as much).
const PointSection = "sweep_point"

// PointID is the PointSection of a point's result.
type PointID struct {
	ID     string   `json:"id"`     // the grid's (Manifest.ID)
	Index  int      `json:"index"`  // in the grid
	Values []string `json:"values"` // one per axis
}

// Plan is a validated sweep: every point of the grid loads and builds.
type Plan struct {
	Grid   Grid
	Master uint64
	ID     string
	Points int // how many: Grid.Size()
	// base is the experiment without the grid's values, whose name a
	// point that failed before it ran is reported under.
	base *machine.Experiment
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

// maxPlanErrors is how many distinct problems NewPlan reports; the rest
// are counted.
const maxPlanErrors = 20

// NewPlan checks the grid (Grid.Check) and then loads and builds every
// point, so that a bad key or value is found before anything runs (each
// error names the point with its values, and the --set or grid file line
// the value came from). seed, when set, replaces the experiment's master
// seed.
func NewPlan(g Grid, seed *uint64) (*Plan, error) {
	if err := g.Check(); err != nil {
		return nil, err
	}
	base, err := machine.LoadExperiment(g.Config)
	if err == nil {
		err = machine.RefuseBridges(base, "simkron sweep")
	}
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
	more := 0
	n := g.Size()
	for i := range n {
		p := g.Point(i)
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
				if len(errs) == maxPlanErrors {
					more++
					continue
				}
				errs = append(errs, PointError{Point: p, Label: g.Label(p), Err: err})
			}
		}
	}
	if more > 0 {
		errs = append(errs, fmt.Errorf("and %d more problems", more))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &Plan{Grid: g, Master: master, ID: id, Points: n, base: base}, nil
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
	// Cores are the threads the points' simulations share, each island
	// of a point's run taking one while it simulates (machine.Cores), so
	// that points whose runs are in several islands do not together run
	// more at once than the pool has; nil: a pool of Workers.
	Cores *machine.Cores
	// Shard is the slice of the grid to run; the zero value is all of it.
	Shard Shard
	// Resume skips the points whose complete result the directory holds
	// already. A point whose file is missing, damaged, of another point
	// or sweep, or incomplete runs again.
	Resume bool
	// Note, when set, is told of each point file a resume does not keep,
	// and why.
	Note func(msg string)
	// Progress, when set, is called as points start and end (host time
	// is the caller's to read; the simulation never sees it).
	Progress func(done, running, total int)
}

// pointFile is where point i's result goes in dir.
func pointFile(dir string, i int) string {
	return filepath.Join(dir, "points", pointName(i))
}

func pointName(i int) string { return fmt.Sprintf("%06d.json", i) }

// Run runs the plan's points of opt.Shard into dir: dir/sweep.json (the
// manifest) and dir/points/NNNNNN.json (each point's result.json, with
// its PointSection).
//
// A point that fails does not stop the others. Every point run leaves
// its file: the result as far as it got, marked incomplete with the
// reason, or, when the point failed before its simulation could report
// anything (a simkron bug that panicked among them), a result with no
// figures marked incomplete with the error. Run returns the points that
// failed, in index order. An error is returned only before any point ran
// (dir cannot be written, or holds another sweep).
func (pl *Plan) Run(dir string, opt Options) ([]PointError, error) {
	shard := opt.Shard
	if shard.N == 0 {
		shard = Shard{0, 1}
	}
	m := Manifest{Schema: ManifestSchema, ID: pl.ID, Grid: pl.Grid.Stored(), MasterSeed: pl.Master, Points: pl.Points,
		Shard: fmt.Sprintf("%d/%d", shard.I, shard.N)}
	mpath := filepath.Join(dir, "sweep.json")
	if _, err := os.Lstat(mpath); err == nil {
		old, err := ReadManifest(mpath)
		switch {
		case err != nil:
			return nil, fmt.Errorf("%v: give another --out, or remove it", err)
		case old.ID != m.ID:
			return nil, fmt.Errorf("%s holds a sweep of another grid (%s): give another --out", dir, old.ID)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "points"), 0o755); err != nil {
		return nil, err
	}
	if err := writeJSON(mpath, m); err != nil {
		return nil, err
	}
	var todo []int
	for _, i := range shard.Indices(pl.Points) {
		if opt.Resume {
			r, err := pl.readPoint(pointFile(dir, i), i)
			switch {
			case errors.Is(err, fs.ErrNotExist):
			case err != nil:
				note(opt, fmt.Sprintf("%v; running the point again", err))
			case !r.Complete:
				note(opt, fmt.Sprintf("%s: incomplete (%s); running the point again", pointFile(dir, i), r.Incomplete))
			default:
				continue
			}
		}
		todo = append(todo, i)
	}
	workers := max(opt.Workers, 1)
	cores := opt.Cores
	if cores == nil {
		cores = machine.NewCores(workers)
	}
	var mu sync.Mutex
	var failed []PointError
	done, running := 0, 0
	progress := func() {
		if opt.Progress != nil {
			opt.Progress(done, running, len(todo))
		}
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, len(todo)) {
		wg.Go(func() {
			for i := range jobs {
				p := pl.Grid.Point(i)
				mu.Lock()
				running++
				progress()
				mu.Unlock()
				err := pl.runPoint(dir, p, cores)
				mu.Lock()
				running--
				done++
				if err != nil {
					failed = append(failed, PointError{Point: p, Label: pl.Grid.Label(p), Err: err})
				}
				progress()
				mu.Unlock()
			}
		})
	}
	for _, i := range todo {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	slices.SortFunc(failed, func(a, b PointError) int { return a.Point.Index - b.Point.Index })
	return failed, nil
}

func note(opt Options, msg string) {
	if opt.Note != nil {
		opt.Note(msg)
	}
}

// runPoint runs one point and writes its result; a run that ended
// incomplete or failed is written and returned as an error too.
func (pl *Plan) runPoint(dir string, p Point, cores *machine.Cores) error {
	exp, res, runErr := pl.execute(p, cores)
	switch {
	case res == nil:
		res = pl.failed(exp, p, runErr)
	case runErr != nil && res.Complete:
		res.Complete, res.Incomplete = false, runErr.Error()
	}
	if err := pl.writePoint(dir, p, res); err != nil {
		return errors.Join(runErr, err)
	}
	switch {
	case runErr != nil:
		return runErr
	case !res.Complete:
		return errors.New(res.Incomplete)
	}
	return nil
}

// execute runs point p. A panic is a bug of simkron's; it becomes the
// point's error, so that the other points still run.
func (pl *Plan) execute(p Point, cores *machine.Cores) (exp *machine.Experiment, res *report.Result, err error) {
	var r *machine.Run
	defer func() {
		if v := recover(); v != nil {
			res, err = nil, fmt.Errorf("simkron failed (a bug: please report it with this point's values): %v", v)
			if r != nil {
				// Stop the run's contexts; what is left of it may be broken too.
				func() {
					defer func() { _ = recover() }()
					r.Close()
				}()
			}
		}
	}()
	if exp, err = pl.Grid.load(p, pl.Master); err != nil {
		return nil, nil, err
	}
	// A point's result is written without its captures: none is recorded.
	if r, err = machine.New(exp, machine.Options{NoCapture: true}); err != nil {
		return exp, nil, err
	}
	res, err = r.Execute(machine.Options{Cores: cores})
	return exp, res, err
}

// failed is the result of point p, which failed with err before its
// simulation reported anything: no figures, marked incomplete.
func (pl *Plan) failed(exp *machine.Experiment, p Point, err error) *report.Result {
	if exp == nil {
		exp = pl.base
	}
	if err == nil {
		err = errors.New("the run gave no result")
	}
	return &report.Result{Header: report.Header{
		Schema:      report.Schema,
		Version:     machine.Version,
		Experiment:  exp.Info.Name,
		Description: exp.Info.Description,
		Seed:        pl.Grid.Seed(pl.Master, p),
		Incomplete:  err.Error(),
		Workload:    strings.Join(append([]string{exp.Workload.Type}, exp.Workload.Then...), "+"),
	}}
}

// writePoint writes point p's result with its PointSection.
func (pl *Plan) writePoint(dir string, p Point, res *report.Result) error {
	for _, s := range res.Sections {
		if s.Name == PointSection {
			return fmt.Errorf("the point's result has a section %q already", PointSection)
		}
	}
	out := *res
	out.Sections = append(slices.Clip(res.Sections), report.Section{Name: PointSection, Value: PointID{ID: pl.ID, Index: p.Index, Values: p.Values}})
	var b bytes.Buffer
	if err := out.WriteJSON(&b); err != nil {
		return err
	}
	return writeFile(pointFile(dir, p.Index), b.Bytes())
}

// readPoint reads the file of point i and checks that it is that point's
// result in this sweep (see checkPoint). A missing file is an error
// wrapping fs.ErrNotExist.
func (pl *Plan) readPoint(path string, i int) (*report.Result, error) {
	m := Manifest{ID: pl.ID, Grid: pl.Grid, MasterSeed: pl.Master, Points: pl.Points}
	return m.readPoint(path, i)
}

// readPoint reads the file of point i of the manifest's sweep.
func (m *Manifest) readPoint(path string, i int) (*report.Result, error) {
	data, err := infile.Read(path, infile.Result)
	if err != nil {
		return nil, err
	}
	r, err := report.ReadJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: not a point's result (damaged or truncated?): %v", path, err)
	}
	if err := m.checkPoint(r, i); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return r, nil
}

// checkPoint checks that r is point i's result in the manifest's sweep:
// of this schema, with a PointSection of this sweep's ID, index i and
// point i's values, and point i's seed.
func (m *Manifest) checkPoint(r *report.Result, i int) error {
	if r.Schema != report.Schema {
		return fmt.Errorf("a result of schema %q, not a point's (%q)", r.Schema, report.Schema)
	}
	var id PointID
	if err := r.Section(PointSection, &id); err != nil {
		return fmt.Errorf("not a point's result of a sweep: %v", err)
	}
	p := m.Grid.Point(i)
	switch {
	case id.ID != m.ID:
		return fmt.Errorf("a point of another sweep (%s, not %s)", id.ID, m.ID)
	case id.Index != i:
		return fmt.Errorf("point %d's result, not point %d's", id.Index, i)
	case !slices.Equal(id.Values, p.Values):
		return fmt.Errorf("a result of values %q, not point %d's %q", id.Values, i, p.Values)
	case r.Seed != m.Grid.Seed(m.MasterSeed, p):
		return fmt.Errorf("a result of seed %d, not point %d's %d", r.Seed, i, m.Grid.Seed(m.MasterSeed, p))
	}
	return nil
}

// ReadManifest reads a sweep directory's manifest and checks it: its
// grid within the limits (Grid.Check) and of as many points as it says.
func ReadManifest(path string) (*Manifest, error) {
	data, err := infile.Read(path, infile.Result)
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
	if err := m.Grid.Check(); err != nil {
		return nil, fmt.Errorf("%s: not a sweep manifest: %v", path, err)
	}
	if n := m.Grid.Size(); m.Points != n {
		return nil, fmt.Errorf("%s: not a sweep manifest: it says %d points, its grid has %d", path, m.Points, n)
	}
	if _, err := ParseShard(m.Shard); err != nil {
		return nil, fmt.Errorf("%s: not a sweep manifest: %v", path, err)
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
// are of one grid, that each point file is its point's result of that
// grid (a damaged file, another point's, another sweep's or a plain run's
// result.json is refused, naming the file), that a point two directories
// hold is the same bytes in both, and that together they hold every point
// once.
func ReadPoints(dirs []string) (*Manifest, []*report.Result, error) {
	var m *Manifest
	results := map[int]*report.Result{}
	from := map[int]string{}
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
		case !sameGrid(dm, m):
			return nil, nil, fmt.Errorf("%s: its manifest names grid %s but describes another grid than %s's: merge the shards of one sweep", d, dm.ID, dirs[0])
		}
		entries, err := os.ReadDir(filepath.Join(d, "points"))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, err
		}
		for _, e := range entries {
			name := e.Name()
			if !strings.HasSuffix(name, ".json") {
				continue // a .tmp left by a point that was being written
			}
			path := filepath.Join(d, "points", name)
			var i int
			if _, err := fmt.Sscanf(name, "%d.json", &i); err != nil || i < 0 || i >= dm.Points || name != pointName(i) {
				return nil, nil, fmt.Errorf("%s: not a point of this sweep (of %d points, named 000000.json to %s)", path, dm.Points, pointName(dm.Points-1))
			}
			r, err := m.readPoint(path, i)
			if err != nil {
				return nil, nil, err
			}
			if first, dup := from[i]; dup {
				if err := sameFile(first, path); err != nil {
					return nil, nil, err
				}
				continue
			}
			results[i], from[i] = r, path
		}
	}
	if m == nil {
		return nil, nil, errors.New("no sweep directory given")
	}
	out := make([]*report.Result, m.Points)
	var missing []int
	version := ""
	for i := range out {
		if out[i] = results[i]; out[i] == nil {
			missing = append(missing, i)
			continue
		}
		switch v := out[i].Version; {
		case version == "":
			version = v
		case v != version:
			return nil, nil, fmt.Errorf("%s is of simkron %s, other points of %s: run the sweep's points with one simkron", from[i], v, version)
		}
	}
	if len(missing) > 0 {
		return nil, nil, fmt.Errorf("%d of %d points are missing (first: %d): merge every shard", len(missing), m.Points, missing[0])
	}
	return m, out, nil
}

// sameGrid says whether two manifests describe the same sweep.
func sameGrid(a, b *Manifest) bool {
	if a.Grid.Config != b.Grid.Config || a.MasterSeed != b.MasterSeed || a.Points != b.Points || len(a.Grid.Axes) != len(b.Grid.Axes) {
		return false
	}
	for k, x := range a.Grid.Axes {
		if y := b.Grid.Axes[k]; x.Key != y.Key || !slices.Equal(x.Values, y.Values) {
			return false
		}
	}
	return true
}

// sameFile checks that a point two shards hold is the same bytes in both.
func sameFile(a, b string) error {
	x, err := infile.Read(a, infile.Result)
	if err != nil {
		return err
	}
	y, err := infile.Read(b, infile.Result)
	if err != nil {
		return err
	}
	if !bytes.Equal(x, y) {
		return fmt.Errorf("%s and %s are the same point with different results: merge the shards of one run", a, b)
	}
	return nil
}
