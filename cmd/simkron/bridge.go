package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"simkron/report"
	"simkron/sim"
)

// interrupts delivers the name of the first SIGINT or SIGTERM, for a
// bridged run to end in order (machine.Options.Interrupt); later ones are
// absorbed until stop is called, so that a second Ctrl-C does not kill
// simkron while it writes the results.
func interrupts() (names <-chan string, stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	out := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			name := "SIGTERM"
			if s == os.Interrupt {
				name = "SIGINT"
			}
			out <- name
		case <-done:
		}
	}()
	return out, func() {
		signal.Stop(sigs)
		close(done)
	}
}

// warnRealtime warns, after a bridged run, when the simulation fell
// behind the wall clock or frames from real hosts were lost: the summary
// has the figures.
func warnRealtime(w io.Writer, cmd string, res *report.Result) {
	rt := res.Realtime
	if rt == nil {
		return
	}
	var lost uint64
	for _, b := range res.Bridges {
		lost += b.DroppedBehind + b.DroppedQueue + b.Oversized + b.Runts + b.Aborted
	}
	var what []string
	if rt.MaxLagPS > rt.TolerancePS {
		what = append(what, fmt.Sprintf("the simulation fell behind the wall clock by up to %v", sim.Time(rt.MaxLagPS)))
	}
	if lost > 0 {
		what = append(what, fmt.Sprintf("%d %s from real hosts were lost", lost, plural(int(lost), "frame", "frames")))
	}
	if len(what) == 0 {
		return
	}
	fmt.Fprintf(w, "simkron %s: warning: %s (see the summary's bridge and realtime lines)\n", cmd, strings.Join(what, ", and "))
}
