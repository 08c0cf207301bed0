package machine

import (
	"fmt"
	"io"
	"strings"

	"simkron/memory"
)

// Calibration is what functional detail's costs were measured from on the
// hosts of one machine file in a full-detail run: their pooled counts.
type Calibration struct {
	// MachineFile is the file as the experiment names it (its first host
	// on that file); Path the file as it was read.
	MachineFile, Path string
	Machine           string   // the machine's name
	Hosts             []string // the hosts pooled, in experiment order
	Counts            memory.Calibration
	// FetchHit is the first-level instruction cache's hit latency, which
	// the fetch cost leaves out (cpu charges it in either detail).
	FetchHit int64
}

// Params returns the averages as a [functional] section's values.
func (c Calibration) Params() memory.FunctionalParams { return c.Counts.Params(c.FetchHit) }

// Calibrations returns, for each distinct machine file of the run's hosts
// in the order the hosts first name them, what the hosts charged so far
// (memory.System.Calibration, pooled). Call it after Execute of a
// full-detail run.
func (r *Run) Calibrations() []Calibration {
	var out []Calibration
	at := map[string]int{}
	for _, h := range r.Hosts {
		key := h.Spec.Path
		i, ok := at[key]
		if !ok {
			i = len(out)
			at[key] = i
			out = append(out, Calibration{MachineFile: h.HostSpec.MachineFile, Path: h.Spec.Path,
				Machine: h.Spec.Machine.Name, FetchHit: h.Sys.Cache.L1I().Params().HitLatency})
		}
		out[i].Hosts = append(out[i].Hosts, h.Name)
		out[i].Counts.Add(h.Sys.Calibration())
	}
	return out
}

// WriteFunctional writes c as a machine file's [functional] section, with
// a comment that names where it was measured: the experiment exp (its
// name and file) at seed.
func (c Calibration) WriteFunctional(w io.Writer, exp *Experiment, seed uint64) error {
	p := c.Params()
	n := c.Counts
	var b strings.Builder
	fmt.Fprintf(&b, "# %s (machine %q): functional detail's costs, measured by simkron calibrate\n", c.MachineFile, c.Machine)
	fmt.Fprintf(&b, "# in a full-detail run of experiment %q (%s), seed %d, hosts %s.\n",
		exp.Info.Name, exp.Path, seed, strings.Join(c.Hosts, ", "))
	b.WriteString("[functional]\n")
	line := func(key string, v float64, cnt memory.CalibrationCount, unit string) {
		fmt.Fprintf(&b, "%-5s = %.3f  # cycles/%s over %d %ss (%d cycles)\n", key, v, unit, cnt.Units, unit, cnt.Cycles)
	}
	line("read", p.Read, n.Read, "word")
	line("write", p.Write, n.Write, "word")
	line("copy", p.Copy, n.Copy, "word")
	fmt.Fprintf(&b, "%-5s = %.3f  # stall cycles/line beyond the %d-cycle hit, over %d lines (%d cycles with the hits)\n",
		"fetch", p.Fetch, c.FetchHit, n.Fetch.Units, n.Fetch.Cycles)
	_, err := io.WriteString(w, b.String())
	return err
}
