// Command simkron runs complete-machine simulations described in TOML.
//
//	simkron run configs/quickstart.toml
//	simkron validate configs/quickstart.toml
//	simkron params
//	simkron symbols configs/quickstart.toml
//	simkron version
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sirupsen/logrus"

	_ "simkron/stack/apps" // the built-in workloads register themselves
)

// Exit statuses: one rule for every command, checked before the
// simulation starts wherever it can be.
const (
	exitOK     = 0
	exitFailed = 1 // a failure during the run (or writing its results): results so far are written, marked incomplete
	exitUsage  = 2 // bad input: arguments, config, script, output path; nothing ran and nothing was written
)

type command struct {
	name    string
	args    string
	summary string
	run     func(env *env, args []string) int
}

var commands = []command{
	{"run", "CONFIG", "run an experiment and report what the machines did", cmdRun},
	{"calibrate", "CONFIG", "run an experiment in full detail and print its machines' [functional] costs", cmdCalibrate},
	{"compare", "CONFIG", "run the same exchange over several protocols on two hosts, side by side", cmdCompare},
	{"sweep", "CONFIG", "run an experiment over a grid of values of its keys, on all cores or a shard", cmdSweep},
	{"merge", "DIR...", "merge the shards of a sweep into one result", cmdMerge},
	{"validate", "FILE...", "check experiment or machine files and explain every problem", cmdValidate},
	{"params", "[KEY...]", "list every configuration parameter (or those whose key contains KEY) with its default, range and meaning", cmdParams},
	{"counters", "[NAME...]", "list every counter a host reports (or those whose name contains NAME) with its meaning", cmdCounters},
	{"symbols", "CONFIG", "list each host's modelled functions: layer, code address, instructions", cmdSymbols},
	{"devices", "CONFIG", "print each host's device address map", cmdDevices},
	{"report", "RESULT", "render a result as tables, CSV, JSON, SVG or PNG charts, or HTML", cmdReport},
	{"version", "", "print the version", cmdVersion},
}

// env is what a command may touch: its streams and the logger.
type env struct {
	stdout, stderr io.Writer
	log            *logrus.Logger
	// stderrTTY says whether progress may be drawn on stderr.
	stderrTTY bool
}

func main() {
	e := &env{stdout: os.Stdout, stderr: os.Stderr, stderrTTY: isTerminal(os.Stderr)}
	os.Exit(run(e, os.Args[1:]))
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func usage(w io.Writer) {
	fmt.Fprintf(w, `simkron simulates whole machines - CPU cycles, caches, memory, devices,
interrupts - running a real protocol stack, and reports where the time goes.

Usage:
  simkron [-v] COMMAND [flags] [arguments]

Commands:
`)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-9s %-8s %s\n", c.name, c.args, c.summary)
	}
	fmt.Fprintf(w, `
Global flags:
  -v    verbose: log what simkron does (to standard error)

"simkron COMMAND --help" describes a command's flags.

Exit status:
  0  success
  1  a failure during the run: stop_at reached, a program failed, an
     annotation script failed while running, a bridged run stopped by
     Ctrl-C or SIGTERM before its workload's end (results so far are
     written, marked incomplete), or writing the results failed
  2  bad input, found before anything runs: a bad argument or flag, a
     config or script that does not load, an output path that cannot be
     written, a bridge's TAP device that cannot be opened; nothing is
     written
`)
}

func run(e *env, args []string) int {
	e.log = logrus.New()
	e.log.SetOutput(e.stderr)
	e.log.SetLevel(logrus.WarnLevel)
	e.log.SetFormatter(&logrus.TextFormatter{DisableTimestamp: true})
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-v", "--verbose":
			e.log.SetLevel(logrus.DebugLevel)
		case "-h", "-help", "--help":
			usage(e.stdout)
			return exitOK
		default:
			fmt.Fprintf(e.stderr, "simkron: unknown flag %s\n\n", args[0])
			usage(e.stderr)
			return exitUsage
		}
		args = args[1:]
	}
	if len(args) == 0 {
		usage(e.stderr)
		return exitUsage
	}
	if args[0] == "help" {
		usage(e.stdout)
		return exitOK
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(e, args[1:])
		}
	}
	fmt.Fprintf(e.stderr, "simkron: unknown command %q\n\n", args[0])
	usage(e.stderr)
	return exitUsage
}

// cmdFlags is a command's flag set with its usage text.
type cmdFlags struct {
	*flag.FlagSet
	args, summary string
}

// newFlags returns a flag set for a command. parseFlags prints its usage
// once: on stdout for --help, on stderr after a mistake.
func newFlags(e *env, name, args, summary string) *cmdFlags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &cmdFlags{FlagSet: fs, args: args, summary: summary}
}

// usage writes the command's usage and flags to w.
func (fs *cmdFlags) usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: simkron %s [flags] %s\n\n%s\n", fs.Name(), fs.args, fs.summary)
	var flags bool
	fs.VisitAll(func(*flag.Flag) { flags = true })
	if flags {
		fmt.Fprintf(w, "\nFlags:\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
}

// parseFlags parses a command's flags; -v may follow the command too. It
// returns the exit status to use when the command should stop.
func parseFlags(e *env, fs *cmdFlags, args []string) (rest []string, stop bool, status int) {
	verbose := fs.Bool("v", false, "verbose: log what simkron does (to standard error)")
	// Flags may come after the arguments too ("run CONFIG --seed 2").
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.usage(e.stdout)
				return nil, true, exitOK
			}
			fmt.Fprintf(e.stderr, "simkron %s: %v\n\n", fs.Name(), err)
			fs.usage(e.stderr)
			return nil, true, exitUsage
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if *verbose {
		e.log.SetLevel(logrus.DebugLevel)
	}
	return positional, false, exitOK
}
