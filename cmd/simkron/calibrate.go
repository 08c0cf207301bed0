package main

import (
	"errors"
	"fmt"

	"simkron/machine"
	"simkron/memory"
)

func cmdCalibrate(e *env, args []string) int {
	fs := newFlags(e, "calibrate", "CONFIG", `Run the experiment in CONFIG in full detail and print, for each distinct
machine file of its hosts, the [functional] section that functional detail
([experiment] detail = "functional") needs: the average cycles the run
charged per word read, written and copied, and per instruction-cache line
fetched beyond the hit, the hosts of one machine file pooled. Add the
section to the machine file; a comment above it names the experiment it
came from. Choose an experiment whose traffic is like the sweeps the costs
will serve: the averages are of this run's references.`)
	var seed seedFlag
	fs.Var(&seed, "seed", "master seed of every random stream (default: the experiment's seed)")
	var sets listFlag
	fs.Var(&sets, "set", "set a key of the experiment, `KEY=VALUE` (as simkron run's; repeatable)")
	rest, stop, st := parseFlags(e, fs, args)
	if stop {
		return st
	}
	if len(rest) != 1 {
		fmt.Fprintf(e.stderr, "simkron calibrate: want exactly one CONFIG, got %d arguments\n", len(rest))
		return exitUsage
	}
	overrides, err := parseSets(sets)
	if err != nil {
		fmt.Fprintf(e.stderr, "simkron calibrate: %v\n", err)
		return exitUsage
	}
	exp, err := machine.LoadExperimentWith(rest[0], overrides)
	if err == nil {
		err = machine.RefuseBridges(exp, "simkron calibrate")
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "%v\n", err)
		return exitUsage
	}
	// The costs are measured in full detail whatever the file says.
	exp.Info.Detail = memory.DetailFull
	r, err := machine.New(exp, machine.Options{Seed: seed.v, NoCapture: true})
	if err != nil {
		fmt.Fprintf(e.stderr, "%v\n", inFile(rest[0], err))
		return exitUsage
	}
	res, err := r.Execute(machine.Options{Seed: seed.v})
	if ie, ok := errors.AsType[*machine.InternalError](err); ok {
		fmt.Fprintf(e.stderr, "simkron calibrate: %v. This is a bug in simkron: please report it with the trace below.\n%s", ie, ie.Stack)
		return exitFailed
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "simkron calibrate: %v\n", err)
		return exitFailed
	}
	if !res.Complete {
		fmt.Fprintf(e.stderr, "simkron calibrate: %s\n", res.Incomplete)
		return exitFailed
	}
	for i, c := range r.Calibrations() {
		if i > 0 {
			fmt.Fprintln(e.stdout)
		}
		if err := c.WriteFunctional(e.stdout, exp, res.Seed); err != nil {
			fmt.Fprintf(e.stderr, "simkron calibrate: %v\n", err)
			return exitFailed
		}
	}
	return exitOK
}
