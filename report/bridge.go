package report

import (
	"fmt"

	"simkron/sim"
)

// Bridge is one bridge of a segment to real hosts through a TAP device:
// what crossed it and every frame it lost, by reason.
type Bridge struct {
	Segment string `json:"segment"`
	TAP     string `json:"tap"`
	// Read counts the frames read from the TAP: each was sent on the
	// segment (InFrames), lost for one of the reasons below, or still
	// on its way when the run ended (Pending).
	Read      uint64 `json:"read"`
	InFrames  uint64 `json:"in_frames"`  // from the real side onto the segment
	InBytes   uint64 `json:"in_bytes"`   // as read, no padding or FCS
	OutFrames uint64 `json:"out_frames"` // from the segment to the real side
	OutBytes  uint64 `json:"out_bytes"`  // as written, no FCS
	// Losses: the simulation too far behind to take the frame (its inbox
	// full), the queue for the simulated wire full, too long for the
	// segment, shorter than an Ethernet header, 16 collisions, a wrong
	// FCS on the segment, refused by the TAP.
	DroppedBehind uint64 `json:"dropped_behind"`
	DroppedQueue  uint64 `json:"dropped_queue_full"`
	Oversized     uint64 `json:"oversized"`
	Runts         uint64 `json:"runts"`
	Aborted       uint64 `json:"aborted"`
	BadFCS        uint64 `json:"bad_fcs"`
	WriteErrors   uint64 `json:"write_errors"`
	QueuePeak     int    `json:"queue_peak"`
	Pending       uint64 `json:"pending"`
	// Error is the first error of the TAP, when it had one.
	Error string `json:"error,omitempty"`
}

// Realtime says how a bridged run kept pace with the wall clock: its
// simulated time never ran ahead of it; when the simulation could not
// keep up it trailed, by at most MaxLagPS.
type Realtime struct {
	// MaxLagPS is the most the simulation trailed the wall clock (the
	// wall clock's time less that of the oldest event due).
	MaxLagPS int64 `json:"max_lag_ps"`
	// BehindPS is the wall-clock time it trailed by more than
	// TolerancePS.
	BehindPS    int64 `json:"behind_ps"`
	TolerancePS int64 `json:"tolerance_ps"`
	// Arrivals counts the frames that came in from real hosts;
	// BehindArrivals those that came while the simulation was behind,
	// stamped at the simulated time then (earlier than they came).
	Arrivals       uint64 `json:"arrivals"`
	BehindArrivals uint64 `json:"behind_arrivals"`
	// MaxInboxWaitPS is the longest a frame waited, on the wall clock,
	// between its arrival and its delivery into the simulation.
	MaxInboxWaitPS int64 `json:"max_inbox_wait_ps"`
	// Interrupted names the signal that ended the run, if one did.
	Interrupted string `json:"interrupted,omitempty"`
}

// writeBridges writes the bridges of segment seg.
func writeBridges(ew *errWriter, r *Result, seg string) {
	for _, b := range r.Bridges {
		if b.Segment != seg {
			continue
		}
		ew.printf("  bridge to TAP %s: %d frames read, %d sent in (%d bytes), %d out (%d bytes); lost: %d behind, %d queue full, %d oversized, %d runts, %d aborted, %d bad FCS, %d write errors; %d on their way at the end; queue peak %d\n",
			b.TAP, b.Read, b.InFrames, b.InBytes, b.OutFrames, b.OutBytes, b.DroppedBehind, b.DroppedQueue, b.Oversized, b.Runts, b.Aborted, b.BadFCS, b.WriteErrors, b.Pending, b.QueuePeak)
		if b.Error != "" {
			ew.printf("  TAP ERROR: %s\n", b.Error)
		}
	}
}

// writeRealtime writes how a bridged run kept pace.
func writeRealtime(ew *errWriter, rt *Realtime) {
	behind := "never more than " + sim.Time(rt.TolerancePS).String() + " behind"
	if rt.BehindPS > 0 {
		behind = fmt.Sprintf("%v of wall-clock time more than %v behind", sim.Time(rt.BehindPS), sim.Time(rt.TolerancePS))
	}
	lag := sim.Time(rt.MaxLagPS).String()
	if rt.MaxLagPS == 0 {
		lag = "0"
	}
	ew.printf("\nrealtime: paced to the wall clock, never ahead of it; fell behind by at most %s (%s)\n", lag, behind)
	ew.printf("  %d frames from real hosts, %d of them while behind (stamped at the simulated time then); longest wait for the simulation %v\n",
		rt.Arrivals, rt.BehindArrivals, sim.Time(rt.MaxInboxWaitPS))
	if rt.Interrupted != "" {
		ew.printf("  ended by %s\n", rt.Interrupted)
	}
}
