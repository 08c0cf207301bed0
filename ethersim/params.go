package ethersim

import (
	"fmt"
	"math"

	"simkron/sim"
)

// FaultParams are the seeded faults applied to frames as they reach one
// attachment. Each is drawn independently per frame from the receiving
// attachment's own random stream.
type FaultParams struct {
	Drop      float64 `toml:"drop" min:"0" max:"1" help:"probability a frame is lost on this link"`
	Corrupt   float64 `toml:"corrupt" min:"0" max:"1" help:"probability a frame arrives with one bit flipped (the FCS catches it; a card's address filter refuses it first when the bit is in the destination address, so the card's CRC error count can be below wire.corrupted)"`
	Duplicate float64 `toml:"duplicate" min:"0" max:"1" help:"probability a frame is delivered twice"`
	// Reorder holds a frame back by ReorderDelay, so that frames sent
	// after it overtake it (netem's reordering by delay).
	Reorder      float64  `toml:"reorder" min:"0" max:"1" help:"probability a frame is held back by reorder_delay, so that later frames overtake it"`
	ReorderDelay sim.Time `toml:"reorder_delay" min:"0s" max:"60s" help:"how long a reordered frame is held back"`
}

// DefaultReorderDelay is how long a reordered frame is held back when the
// config does not say: about two full-sized frames at 10 Mbit/s, so that
// one or two frames overtake it.
const DefaultReorderDelay = 2500 * sim.Microsecond

// Validate checks that every probability lies in [0, 1]; errors start with
// the key's name.
func (f FaultParams) Validate() error {
	for _, p := range []struct {
		key string
		v   float64
	}{{"drop", f.Drop}, {"corrupt", f.Corrupt}, {"duplicate", f.Duplicate}, {"reorder", f.Reorder}} {
		if math.IsNaN(p.v) || p.v < 0 || p.v > 1 {
			return fmt.Errorf("%s: %v is not a probability between 0 and 1", p.key, p.v)
		}
	}
	if f.ReorderDelay < 0 {
		return fmt.Errorf("reorder_delay: %v must not be negative", f.ReorderDelay)
	}
	return nil
}

// reorderDelay is the hold-back time of a reordered frame.
func (f FaultParams) reorderDelay() sim.Time {
	if f.ReorderDelay == 0 {
		return DefaultReorderDelay
	}
	return f.ReorderDelay
}

// Segment modes.
const (
	ModeShared = "shared" // one half-duplex medium with CSMA/CD (coax, hub)
	ModeSwitch = "switch" // full-duplex links to a store-and-forward switch
)

// SegmentParams configure one Ethernet segment.
type SegmentParams struct {
	Rate          sim.BitRate `toml:"rate" min:"1kbps" help:"signalling rate"`
	Propagation   sim.Time    `toml:"propagation" help:"one-way propagation delay end to end"`
	Mode          string      `toml:"mode" help:"shared (CSMA/CD half duplex) or switch (full-duplex store-and-forward switch)"`
	MaxFrame      sim.Size    `toml:"max_frame" help:"largest frame, FCS included (1518 on Ethernet; raise for FDDI-sized MTUs)"`
	SwitchLatency sim.Time    `toml:"switch_latency" help:"forwarding delay of the switch after a frame is received"`
}

// Defaults.
//
// The propagation delay is that of one full-length 10BASE2 thin-coax
// segment: 185 m (IEEE 802.3 clause 10.7) at a velocity factor of 0.65 c
// gives 0.95 us, rounded to 1 us (10 bit times), well inside the 25.6 us
// that half a slot time allows. The switch latency is a typical
// store-and-forward lookup time of an early-1990s Ethernet switch.
const (
	DefaultRate          = 10 * sim.Mbps
	DefaultPropagation   = 1 * sim.Microsecond
	DefaultSwitchLatency = 5 * sim.Microsecond
	maxFrameLimit        = 65535 // the pcap snap length and a 16-bit length
)

// DefaultSegmentParams returns a 10 Mbit/s shared 10BASE2 segment.
func DefaultSegmentParams() SegmentParams {
	return SegmentParams{
		Rate:          DefaultRate,
		Propagation:   DefaultPropagation,
		Mode:          ModeShared,
		MaxFrame:      MaxFrame,
		SwitchLatency: DefaultSwitchLatency,
	}
}

// slotTime is the CSMA/CD slot (512 bit times) at p.Rate.
func (p SegmentParams) slotTime() sim.Time { return p.Rate.ByteTime(SlotBits / 8) }

// Validate checks p; errors start with the offending key's name.
func (p SegmentParams) Validate() error {
	if p.Rate < sim.Kbps {
		return fmt.Errorf("rate: %v is below the minimum of 1kbps", p.Rate)
	}
	if p.Propagation < 0 {
		return fmt.Errorf("propagation: %v must not be negative", p.Propagation)
	}
	if p.SwitchLatency < 0 {
		return fmt.Errorf("switch_latency: %v must not be negative", p.SwitchLatency)
	}
	if p.MaxFrame < MinFrame || p.MaxFrame > maxFrameLimit {
		return fmt.Errorf("max_frame: %v must lie between %dB and %dB", p.MaxFrame, MinFrame, maxFrameLimit)
	}
	switch p.Mode {
	case ModeShared:
		// A collision must reach every transmitter while it is still
		// sending its shortest frame: the round trip may not exceed the
		// slot time (IEEE 802.3 clause 4.2.3.2.3). Beyond it this model
		// would need late collisions, which it does not have.
		if slot := p.slotTime(); 2*p.Propagation > slot {
			return fmt.Errorf("propagation: %v is more than half the slot time (%v at %v); CSMA/CD would miss collisions", p.Propagation, slot, p.Rate)
		}
	case ModeSwitch:
	default:
		return fmt.Errorf("mode: %q is neither %q nor %q", p.Mode, ModeShared, ModeSwitch)
	}
	return nil
}
