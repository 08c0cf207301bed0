package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"simkron/config"
	"simkron/machine"
	"simkron/sim"
	"simkron/stack/apps/compare"
	"simkron/workload"
)

func cmdCompare(e *env, args []string) int {
	fs := newFlags(e, "compare", "CONFIG", `Run the same request/response exchange over several protocols on the
same two hosts and set them side by side: per size and protocol, send and
receive latency (median cycles) with the split by layer, the round trip,
and each protocol's factor against a baseline; --out DIR also writes the
result (simkron report draws the stacked bars of every protocol per size
and the latency curves).

CONFIG is a machine file (two identical hosts, hostA at 10.0.0.1 and hostB
at 10.0.0.2, are connected by its first network device; DIR/experiment.toml
keeps that experiment) or an experiment file (its workload's client and
server, or its first two hosts with an IPv4 address, run the comparison
instead of its workload). A protocol the hosts cannot run is left out,
with the reason after the tables.

The latencies are the Linux/SimOS study's by default: a send lasts until
the message has left host memory (its last DMA done and that interrupt
handled), a receive leaves out the host's wait for the wire; --set
workload.compare.send_span=thread and --set workload.compare.receive_span=
arrival give the call's own cycles and the whole span instead. The first
table says which definitions and which network were used; on the study's
machine file (configs/machines/simos-mipsy.toml) every default is the
study experiment's (configs/simos-study.toml), whose figures compare then
repeats.

  simkron compare configs/machines/r4000.toml --protocols udp,tcp --sizes 4B-32KiB
  simkron compare configs/udp-ne2000.toml --sizes 64,1KiB,8KiB --baseline tcp --out out/cmp

Protocols: `+strings.Join(compare.Protocols(), ", "))
	protocols := fs.String("protocols", strings.Join(compare.Protocols(), ","), "protocols to run, in order, `LIST` separated by commas")
	sizesText := fs.String("sizes", "", "message sizes: `LO-HI` (powers of two from LO, and HI) or a list (4,1KiB,8192); default the Linux/SimOS study's 4 B to 32 KiB")
	baseline := fs.String("baseline", "", "the protocol the factors are against (default: VIA when it runs, as the study gives VIA's factors; otherwise the first)")
	def := compare.DefaultParams()
	messages := fs.Int("messages", def.Messages, "measured round trips per size and protocol")
	warmup := fs.Int("warmup", def.Warmup, "round trips per size before measuring")
	var sets listFlag
	fs.Var(&sets, "set", "set a key of the experiment, `KEY=VALUE` (as simkron sweep's, one value; repeatable)")
	var seed seedFlag
	fs.Var(&seed, "seed", "master seed of every random stream (default: the experiment's seed)")
	out := fs.String("out", "", "directory for result.json, summary.txt and, for a machine file, experiment.toml")
	quiet := fs.Bool("q", false, "do not print the summary on standard output")
	rest, stop, st := parseFlags(e, fs, args)
	if stop {
		return st
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(e.stderr, "simkron compare: "+format+"\n", a...)
		return exitUsage
	}
	// A flag given empty is a mistake, not a wish for its default.
	switch emptyFlag(fs, "out", "sizes", "protocols", "baseline") {
	case "out":
		return bad("--out '': an empty folder name (leave --out out to write nothing)")
	case "sizes":
		return bad("--sizes '': no sizes (give a list such as 64,1KiB,8KiB or a range such as 4B-32KiB; leave --sizes out for 4 B to 32 KiB)")
	case "protocols":
		return bad("--protocols '': no protocols (leave --protocols out for all of them: %s)", strings.Join(compare.Protocols(), ", "))
	case "baseline":
		return bad("--baseline '': no protocol (leave --baseline out for the first of --protocols)")
	}
	if len(rest) != 1 {
		return bad("want exactly one CONFIG, got %d arguments", len(rest))
	}
	path := rest[0]
	// The comparison's keys of [workload.compare], each with the flag
	// that set it.
	var keys []machine.Override
	set := func(key, flag string, v any) {
		keys = append(keys, machine.Override{Key: "workload.compare." + key, Value: v, Origin: flag})
	}
	var names []any
	for _, p := range strings.Split(*protocols, ",") {
		names = append(names, strings.TrimSpace(p))
	}
	set("protocols", "--protocols "+*protocols, names)
	if *sizesText != "" {
		sizes, err := parseSizes(*sizesText)
		if err != nil {
			return bad("--sizes %s: %v", *sizesText, err)
		}
		set("sizes", "--sizes "+*sizesText, sizes)
	}
	if *baseline != "" {
		set("baseline", "--baseline "+*baseline, *baseline)
	}
	set("messages", fmt.Sprintf("--messages %d", *messages), int64(*messages))
	set("warmup", fmt.Sprintf("--warmup %d", *warmup), int64(*warmup))
	more, err := parseSets(sets)
	if err != nil {
		return bad("%v", err)
	}

	f, err := config.Parse(path)
	if err != nil {
		fmt.Fprintf(e.stderr, "%v\n", err)
		return exitUsage
	}
	var exp *machine.Experiment
	var generated []byte
	if f.Has("machine") && !f.Has("experiment") {
		exp, generated, err = pairExperiment(path, *out, keys, more)
	} else {
		exp, err = compareExperiment(path, append(keys, more...))
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "%v\n", err)
		return exitUsage
	}
	opt := runOptions{seed: seed.v, out: *out, quiet: *quiet}
	if generated != nil {
		opt.files = []outFile{{"experiment.toml", generated}}
	}
	return runExperiment(e, "compare", path, exp, opt)
}

// runsProtocol says whether the comparison's keys run the protocol name:
// every protocol runs unless the keys name the protocols.
func runsProtocol(keys []machine.Override, name string) bool {
	for _, k := range keys {
		if k.Key != "workload.compare.protocols" {
			continue
		}
		names, _ := k.Value.([]any)
		return slices.Contains(names, any(name))
	}
	return true
}

// pairExperiment loads the experiment of two hosts of the machine file
// at path comparing protocols with the keys of [workload.compare], and
// the overrides more; generated is its text as it would be read from the
// folder out (nil without one).
func pairExperiment(path, out string, keys, more []machine.Override) (exp *machine.Experiment, generated []byte, err error) {
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	desc := "protocols side by side on two " + name + " hosts"
	var wl strings.Builder
	fmt.Fprintf(&wl, "[workload]\ntype = \"compare\"\n\n[workload.compare]\nclient = %q\nserver = %q\n", machine.PairHosts[0].Name, machine.PairHosts[1].Name)
	for _, k := range keys {
		fmt.Fprintf(&wl, "%s = %s\n", strings.TrimPrefix(k.Key, "workload.compare."), tomlValue(k.Value))
	}
	// A latency benchmark's TCP: Nagle's algorithm would hold a message's
	// last segment until the previous one is acknowledged. The section is
	// written only when TCP runs: a section nothing reads is an error.
	if runsProtocol(keys, "tcp") {
		wl.WriteString("\n# TCP as latency benchmarks set it (TCP_NODELAY): Nagle's algorithm would hold\n# a message's last segment until the one before it is acknowledged.\n[workload.tcp]\nnodelay = true\n")
	}
	if len(more) > 0 {
		wl.WriteString("\n# Run with these keys set (simkron compare --set):\n")
		for _, x := range more {
			fmt.Fprintf(&wl, "#   %s = %s\n", x.Key, tomlValue(x.Value))
		}
	}
	text, err := machine.PairExperiment(path, filepath.Base(path), "compare-"+name, desc, wl.String())
	if err != nil {
		return nil, nil, err
	}
	// Read as if it lay beside the machine file, named in errors as the
	// machine file "as two hosts".
	exp, err = machine.LoadExperimentBytes(path+" as two hosts", text, append(keys, more...))
	if err != nil || out == "" {
		return exp, nil, err
	}
	ref, err := relativeTo(out, path)
	if err != nil {
		return nil, nil, err
	}
	generated, err = machine.PairExperiment(path, ref, "compare-"+name, desc, wl.String())
	return exp, generated, err
}

// parseSets reads --set KEY=VALUE flags into overrides.
func parseSets(sets []string) ([]machine.Override, error) {
	var o []machine.Override
	for _, s := range sets {
		key, val, err := config.ParseSet(s)
		if err != nil {
			return nil, err
		}
		o = append(o, machine.Override{Key: key, Value: val, Origin: "--set " + s})
	}
	return o, nil
}

// relativeTo returns the path to file from the folder dir.
func relativeTo(dir, file string) (string, error) {
	ad, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	af, err := filepath.Abs(file)
	if err != nil {
		return "", err
	}
	return filepath.Rel(ad, af)
}

// tomlValue writes an override's value as TOML.
func tomlValue(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = tomlValue(x)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}

// compareExperiment loads the experiment file at path with its workload
// replaced by the comparison between the workload's client and server
// (or the first two hosts with an IPv4 address), and the overrides o.
func compareExperiment(path string, o []machine.Override) (*machine.Experiment, error) {
	exp, err := machine.LoadExperiment(path)
	if err != nil {
		return nil, err
	}
	ends := map[string]string{}
	if t, ok := workload.Lookup(exp.Workload.Type); ok && t.Hosts != nil {
		for _, h := range t.Hosts(exp.Workload.Params[t.Name]) {
			ends[h.Key] = h.Name
		}
	}
	if ends["client"] == "" || ends["server"] == "" {
		var hs []string
		for i := range exp.Hosts {
			if _, ok := machine.HostAddress(&exp.Hosts[i]); ok {
				hs = append(hs, exp.Hosts[i].Name)
			}
		}
		if len(hs) < 2 {
			return nil, fmt.Errorf("%s: no two hosts with an IPv4 address to compare protocols between", path)
		}
		ends["client"], ends["server"] = hs[0], hs[1]
	}
	if err := machine.RefuseBridges(exp, "simkron compare"); err != nil {
		return nil, err
	}
	o = append([]machine.Override{
		{Key: "workload.type", Value: "compare", Origin: "compare"},
		{Key: "workload.then", Value: []any{}, Origin: "compare"},
		{Key: "workload.compare.client", Value: ends["client"], Origin: "compare"},
		{Key: "workload.compare.server", Value: ends["server"], Origin: "compare"},
		{Key: "experiment.stop_at", Value: "86400s", Origin: "compare"},
	}, o...)
	return machine.LoadExperimentWith(path, o)
}

// parseSizes reads --sizes: "LO-HI", the powers of two times LO up to HI
// and HI itself, or a list of sizes separated by commas; a size is a
// number of bytes or has a unit (4B, 1KiB).
func parseSizes(text string) ([]any, error) {
	size := func(s string) (int64, error) {
		s = strings.TrimSpace(s)
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, nil
		}
		v, err := sim.ParseSize(s)
		return int64(v), err
	}
	var out []any
	if lo, hi, ok := strings.Cut(text, "-"); ok {
		a, err := size(lo)
		if err != nil {
			return nil, err
		}
		b, err := size(hi)
		if err != nil {
			return nil, err
		}
		if a <= 0 || b < a {
			return nil, fmt.Errorf("want 0 < LO <= HI")
		}
		// n < b/2+1 keeps n*2 from overflowing.
		for n := a; n < b; n *= 2 {
			out = append(out, n)
			if n > b/2 {
				break
			}
		}
		return append(out, b), nil
	}
	for _, s := range strings.Split(text, ",") {
		n, err := size(s)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}
