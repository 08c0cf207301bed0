package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"simkron/report"
)

// sizeFlag is a WIDTHxHEIGHT flag in pixels.
type sizeFlag struct{ s report.ChartSize }

func (f *sizeFlag) String() string {
	if f.s == (report.ChartSize{}) {
		return ""
	}
	return fmt.Sprintf("%dx%d", f.s.Width, f.s.Height)
}

func (f *sizeFlag) Set(v string) error {
	ws, hs, ok := strings.Cut(v, "x")
	w, errW := strconv.Atoi(ws)
	h, errH := strconv.Atoi(hs)
	if !ok || errW != nil || errH != nil || w < 100 || h < 100 || w > 8000 || h > 8000 {
		return fmt.Errorf("want WIDTHxHEIGHT in pixels, each 100 to 8000, such as 1200x900")
	}
	f.s = report.ChartSize{Width: w, Height: h}
	return nil
}

func names[T ~string](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = string(x)
	}
	return strings.Join(s, "|")
}

func cmdReport(e *env, args []string) int {
	fs := newFlags(e, "report", "RESULT.json", `Render a run's result (the result.json "simkron run --out" writes):
  table  the measurements as text tables: each protocol's mean cycles by
         layer for every message size, send and receive; membench and MAC
  csv    one tidy table: protocol, direction, size, layer, stat, cycles
  json   the result itself, indented
  svg    a chart (--chart): layers = stacked bars of cycles by layer per
         message size, latency = mean latency against message size,
         splits = a pie of each cost split, or a chart the workload
         defines (ttcp: progress); the default is the result's first
  png    the same chart as an image
  html   one self-contained page with the tables and every chart
Output goes to standard output, or with --output to FILE, written whole
or not at all. A file that is not a result exits with status 2.`)
	format := fs.String("format", string(report.FormatTable), "output format: "+names(report.Formats))
	output := fs.String("output", "", "write to `FILE` instead of standard output")
	chart := fs.String("chart", "", "chart for svg and png: "+names(report.Charts)+" or one the result defines (default: the result's first)")
	var size sizeFlag
	fs.Var(&size, "size", "chart size for svg and png in pixels, `WIDTHxHEIGHT` (default 1200 wide, 450 high per row of charts)")
	traceFile := addReportTraceFlag(fs)
	rest, stop, st := parseFlags(e, fs, args)
	if stop {
		return st
	}
	if len(rest) != 1 {
		fmt.Fprintf(e.stderr, "simkron report: want exactly one RESULT.json, got %d arguments\n", len(rest))
		return exitUsage
	}
	opt := report.Options{Format: report.Format(*format), Chart: report.Chart(*chart), Size: size.s}
	if !slices.Contains(report.Formats, opt.Format) {
		fmt.Fprintf(e.stderr, "simkron report: unknown format %q (want %s)\n", *format, names(report.Formats))
		return exitUsage
	}
	if err := waterfallOption(fs, *traceFile, &opt); err != nil {
		fmt.Fprintf(e.stderr, "simkron report: %v\n", err)
		return exitUsage
	}
	res, err := report.ReadFile(rest[0])
	if err != nil {
		fmt.Fprintf(e.stderr, "simkron report: %v\n", err)
		return exitUsage
	}
	if *output != "" {
		if err := checkOutput(*output); err != nil {
			fmt.Fprintf(e.stderr, "simkron report: --output %v\n", err)
			return exitUsage
		}
	}
	if err := checkChart(res, opt); err != nil {
		fmt.Fprintf(e.stderr, "simkron report: %s: %v\n", rest[0], err)
		return exitUsage
	}
	var out bytes.Buffer
	if err := report.Write(&out, res, opt); err != nil {
		fmt.Fprintf(e.stderr, "simkron report: %s: %v\n", rest[0], err)
		if errors.Is(err, report.ErrNoChartData) {
			return exitUsage // a result, but not one with anything to chart
		}
		return exitFailed
	}
	if *output == "" {
		if _, err := e.stdout.Write(out.Bytes()); err != nil {
			fmt.Fprintf(e.stderr, "simkron report: %v\n", err)
			return exitFailed
		}
		return exitOK
	}
	if err := writeFileAtomic(*output, out.Bytes()); err != nil {
		fmt.Fprintf(e.stderr, "simkron report: %v\n", err)
		return exitFailed
	}
	e.log.Debugf("wrote %s (%d bytes)", *output, out.Len())
	return exitOK
}

// checkChart checks the chart --chart names: a built-in chart, or one the
// result defines; for svg and png, one the result has data for.
func checkChart(res *report.Result, opt report.Options) error {
	have := report.ChartNames(res)
	if opt.Chart == "" || slices.Contains(have, opt.Chart) || opt.Chart == report.ChartWaterfall && opt.Waterfall != nil {
		return nil
	}
	if opt.Chart == report.ChartWaterfall {
		return fmt.Errorf("%w: the waterfall is drawn from a trace: give --trace FILE (simkron run --trace)", report.ErrNoChartData)
	}
	if !slices.Contains(report.Charts, opt.Chart) {
		return fmt.Errorf("unknown chart %q (this result has: %s)", opt.Chart, names(have))
	}
	if opt.Format == report.FormatSVG || opt.Format == report.FormatPNG {
		return fmt.Errorf("%w: %s needs measurements this result lacks (its charts: %s)", report.ErrNoChartData, opt.Chart, names(have))
	}
	return nil
}

// checkOutput makes sure a file can be written at path before anything
// is rendered: its folder exists and takes a new file, and path is not a
// folder. The error names path as the user gave it.
func checkOutput(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s: is a folder", path)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("%s: cannot write there: %v", path, pathErr(err))
	}
	f.Close()
	return os.Remove(f.Name())
}

// writeFileAtomic writes data to path through a temporary file in the
// same directory, renamed into place, so that path is never half written.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("writing %s: %v", path, pathErr(err))
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %v", path, pathErr(err))
	}
	return nil
}
