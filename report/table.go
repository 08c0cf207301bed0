package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"simkron/report/shape"
)

// writeTable writes t's title, then t with right-aligned columns (left
// for prose).
func writeTable(ew *errWriter, t shape.Table) {
	ew.printf("%s\n", t.Title)
	align := tabwriter.AlignRight
	if t.Prose {
		align = 0
	}
	tw := tabwriter.NewWriter(ew, 2, 8, 2, ' ', align)
	fmt.Fprintln(tw, strings.Join(t.Headings(), "\t")+"\t")
	for _, row := range t.Rows {
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	tw.Flush()
}

// writeFigures writes the workload's tables, each after a blank line,
// then its text.
func writeFigures(ew *errWriter, r *Result) {
	for _, t := range r.Figures.Tables {
		ew.printf("\n")
		writeTable(ew, t)
	}
	if txt := r.Figures.Text; txt != "" {
		ew.printf("\n%s", txt)
		if !strings.HasSuffix(txt, "\n") {
			ew.printf("\n")
		}
	}
}

// WriteTable writes r's measurements as text: the workload's tables and
// text, after a heading that says what ran.
func WriteTable(w io.Writer, r *Result) error {
	ew := &errWriter{w: w}
	writeHeading(ew, r)
	if len(r.Figures.Tables) == 0 && r.Figures.Text == "" {
		ew.printf("\nno measurements to tabulate (workload %q)\n", r.Workload)
	}
	writeFigures(ew, r)
	return ew.err
}

// writeHeading writes what ran and whether it completed.
func writeHeading(ew *errWriter, r *Result) {
	ew.printf("simkron %s  experiment %q  seed %d  %s\n", r.Version, r.Experiment, r.Seed, status(r))
	if r.Description != "" {
		ew.printf("%s\n", r.Description)
	}
	if r.Detail != "" {
		ew.printf("detail: %s\n", r.Detail)
	}
}

// status says whether the run completed, and if not why.
func status(r *Result) string {
	if r.Complete {
		return "complete"
	}
	return "INCOMPLETE: " + r.Incomplete
}
