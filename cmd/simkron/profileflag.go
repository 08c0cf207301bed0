package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"simkron/annotations/cycleprof"
	"simkron/machine"
	"simkron/report"
)

// The --cycles-profile flag of simkron run: a pprof profile whose samples
// are the simulated cycles of every host, by the stack of modelled
// functions they ran in, labelled by host and layer (package
// annotations/cycleprof; docs/results.md says how to read it).

const cyclesProfileName = "cycles-profile"

// cyclesProfileFlag adds --cycles-profile to fs.
func cyclesProfileFlag(fs *cmdFlags) *string {
	return fs.String(cyclesProfileName, "", "write a pprof profile of the simulated cycles (by stack of modelled functions, labelled by host and layer; go tool pprof -top FILE) to `FILE`")
}

// checkCyclesProfileFlag refuses --cycles-profile ” given on the command
// line: an empty name is a variable that was not set, not "no profile".
func checkCyclesProfileFlag(fs *cmdFlags) error {
	if emptyFlag(fs, cyclesProfileName) != "" {
		return fmt.Errorf("--%s '': an empty file name (leave --%s out to write no profile)", cyclesProfileName, cyclesProfileName)
	}
	return nil
}

// watchCycles gives opt a recorder when o asks for a cycles profile, to
// be given to machine.New.
func watchCycles(o runOptions, opt *machine.Options) {
	if o.cyclesProfile != "" {
		opt.CyclesProfile = &cycleprof.Recorder{}
	}
}

// checkCyclesProfile makes sure the profile can be written to o's path
// before the run starts, naming the flag: not a folder, not a file the
// run writes besides (its results, the other profiles), in a folder that
// can be written (made if missing, as --out's is).
func checkCyclesProfile(o runOptions) error {
	path := o.cyclesProfile
	if path == "" {
		return nil
	}
	flagName := "--" + cyclesProfileName + " " + path
	if strings.HasSuffix(path, "/") || strings.HasSuffix(path, string(filepath.Separator)) {
		return fmt.Errorf("%s: names a folder; want a file (cycles.pb.gz)", flagName)
	}
	same := func(other string) bool {
		if other == "" {
			return false
		}
		a, errA := filepath.Abs(path)
		b, errB := filepath.Abs(other)
		return errA == nil && errB == nil && a == b
	}
	for _, c := range []struct{ flag, path string }{
		{"--cpuprofile", o.cpuProfile},
		{"--memprofile", o.memProfile},
	} {
		if same(c.path) {
			return fmt.Errorf("%s: is also %s's file", flagName, c.flag)
		}
	}
	if o.out != "" {
		for _, name := range []string{"result.json", "summary.txt"} {
			if same(filepath.Join(o.out, name)) {
				return fmt.Errorf("%s: is the run's %s (--out %s)", flagName, name, o.out)
			}
		}
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("%s: cannot make its folder: %v", flagName, pathErr(err))
		}
	}
	if err := checkOutput(path); err != nil {
		return fmt.Errorf("--%s %v", cyclesProfileName, err)
	}
	return nil
}

// writeCyclesProfile writes the recorded profile to o's path, through a
// temporary file, after the run (complete or not: what ran is recorded).
func writeCyclesProfile(o runOptions, opt machine.Options, res *report.Result) error {
	rec := opt.CyclesProfile
	if o.cyclesProfile == "" || rec == nil {
		return nil
	}
	rec.Name = res.Experiment
	rec.Comments = []string{
		fmt.Sprintf("simkron %s, experiment %q, seed %d", res.Version, res.Experiment, res.Seed),
		"samples: simulated cycles (not host time) by stack of modelled functions; labels: host, layer",
	}
	if !res.Complete {
		rec.Comments = append(rec.Comments, "incomplete run: "+res.Incomplete)
	}
	var b bytes.Buffer
	if err := rec.Write(&b); err != nil {
		return fmt.Errorf("--%s: %v", cyclesProfileName, err)
	}
	return writeFileAtomic(o.cyclesProfile, b.Bytes())
}
