package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"simkron/internal/infile"
)

// Format names a rendering of a result.
type Format string

// The formats of Write.
const (
	FormatTable Format = "table" // text tables of the measurements
	FormatCSV   Format = "csv"   // one tidy table of cycles by layer
	FormatJSON  Format = "json"  // the result itself, indented
	FormatSVG   Format = "svg"   // a chart
	FormatPNG   Format = "png"   // a chart
	FormatHTML  Format = "html"  // a page with the tables and every chart
)

// Formats lists the formats, the default first.
var Formats = []Format{FormatTable, FormatCSV, FormatJSON, FormatSVG, FormatPNG, FormatHTML}

// Options choose a rendering.
type Options struct {
	Format Format    // FormatTable when empty
	Chart  Chart     // for SVG and PNG; the result's first chart when empty
	Size   ChartSize // for SVG and PNG
	// Waterfall, when set, is drawn in the HTML page after the charts,
	// and as the SVG of the chart "waterfall".
	Waterfall *Waterfall
}

// Write renders r in the chosen format.
func Write(w io.Writer, r *Result, o Options) error {
	if o.Chart == "" && o.Format == FormatSVG && o.Waterfall != nil {
		o.Chart = ChartWaterfall
	}
	if o.Chart == "" && (o.Format == FormatSVG || o.Format == FormatPNG) {
		cs := ChartNames(r)
		if len(cs) == 0 {
			return fmt.Errorf("%w (workload %q)", ErrNoChartData, r.Workload)
		}
		o.Chart = cs[0]
	}
	switch o.Format {
	case FormatTable, "":
		return WriteTable(w, r)
	case FormatCSV:
		return WriteCSV(w, r)
	case FormatJSON:
		return r.WriteJSON(w)
	case FormatSVG:
		if o.Chart == ChartWaterfall {
			if o.Waterfall == nil {
				return fmt.Errorf("%w: the waterfall is drawn from a trace (simkron report --trace)", ErrNoChartData)
			}
			return WriteWaterfallSVG(w, o.Waterfall, o.Size.Width)
		}
		return WriteSVG(w, r, o.Chart, o.Size)
	case FormatPNG:
		return WritePNG(w, r, o.Chart, o.Size)
	case FormatHTML:
		return writeHTML(w, r, o.Waterfall)
	}
	return fmt.Errorf("unknown format %q (want one of %v)", o.Format, Formats)
}

// ReadFile reads the result in the file at path. It must be one JSON
// object of the current schema with no field the schema lacks; every
// error names the file. A result of an older schema is refused with what
// to do.
func ReadFile(path string) (*Result, error) {
	data, err := infile.Read(path, infile.Result)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var probe struct {
		Schema string `json:"schema"`
	}
	if json.Unmarshal(data, &probe) == nil && probe.Schema != Schema && strings.HasPrefix(probe.Schema, "simkron.result/") {
		return nil, fmt.Errorf("%s: a %s result, from an earlier simkron; this one reads %s: run the experiment again "+
			"(simkron run CONFIG --out DIR; the same config and seed give the same measurements)", path, probe.Schema, Schema)
	}
	r, err := ReadJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: not a simkron result: %w", path, err)
	}
	if r.Schema != Schema {
		return nil, fmt.Errorf("%s: not a simkron result: schema %q, want %q", path, r.Schema, Schema)
	}
	return r, nil
}
