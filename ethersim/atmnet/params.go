package atmnet

import (
	"fmt"
	"math"

	"simkron/sim"
)

// LinkParams configure one full-duplex TAXI link (both directions alike).
//
// Two rates describe the line. Rate is the TAXI data rate: AMD's TAXI
// chips code 4B/5B at 125 Mbaud, which carries 100 Mbit/s of data
// (docs/reference/atm-taxi.md sec. 3); a cell's 53 bytes take 4.24 us at it, and that is
// when its last bit reaches the other end. PayloadRate is the seed's
// ceiling of the host data a link carries: 94.5 Mbit/s after the header
// and the inter-cell command symbols. The model reads it as the 52 bytes
// a host interface moves per cell (the header word and the 48 payload
// bytes; the HEC is the interface's) per cell slot: one cell may start
// every 52 bytes at PayloadRate, 4.402 us at 94.5 Mbit/s, which is 55
// byte times at 100 Mbit/s — the 53-byte cell and two bytes of TAXI
// start-of-cell and idle symbols (100·52/55 = 94.5; the seed's other
// reading, 53/56, gives 94.6). In 48-byte ATM payload the ceiling is then
// 87.3 Mbit/s (PayloadCeiling).
type LinkParams struct {
	Rate        sim.BitRate `toml:"rate" min:"1Mbps" help:"TAXI data rate: a cell's 53 bytes take 53 bytes at it (4B/5B at 125 Mbaud: 100 Mbit/s)"`
	PayloadRate sim.BitRate `toml:"payload_rate" min:"1Mbps" help:"the seed's payload ceiling: host data (4 header bytes + 48 payload per cell) the link carries; a cell may start every 52 bytes at this rate (94.5 Mbit/s: a 4.402 us slot, 55 byte times at 100 Mbit/s)"`
	Propagation sim.Time    `toml:"propagation" help:"one-way propagation delay of the fibre or cable"`
}

// Defaults: 100 Mbit/s TAXI, the seed's 94.5 Mbit/s ceiling, and 100 m
// of multimode fibre at two thirds of the speed of light (TAXI links
// reach 2 km).
const (
	DefaultRate        = 100 * sim.Mbps
	DefaultPayloadRate = 94500 * sim.Kbps
	DefaultPropagation = 500 * sim.Nanosecond
)

// DefaultLinkParams returns a 100 Mbit/s TAXI link of 100 m.
func DefaultLinkParams() LinkParams {
	return LinkParams{Rate: DefaultRate, PayloadRate: DefaultPayloadRate, Propagation: DefaultPropagation}
}

// CellTime returns how long a cell's 53 bytes take at Rate.
func (p LinkParams) CellTime() sim.Time { return p.Rate.ByteTime(CellSize) }

// SlotTime returns the time between the starts of two cells sent back to
// back: 52 bytes at PayloadRate.
func (p LinkParams) SlotTime() sim.Time { return p.PayloadRate.ByteTime(HostCellSize) }

// PayloadCeiling returns the 48-byte ATM payload rate of a link sending
// a cell in every slot, in bits per second (for reports).
func (p LinkParams) PayloadCeiling() float64 {
	return float64(8*PayloadSize) / p.SlotTime().Seconds()
}

// Validate checks p; errors start with the key at fault.
func (p LinkParams) Validate() error {
	switch {
	case p.Rate < sim.Mbps:
		return fmt.Errorf("rate: %v is below 1Mbps", p.Rate)
	case p.PayloadRate < sim.Mbps:
		return fmt.Errorf("payload_rate: %v is below 1Mbps", p.PayloadRate)
	case p.Propagation < 0:
		return fmt.Errorf("propagation: %v must not be negative", p.Propagation)
	case p.SlotTime() < p.CellTime():
		return fmt.Errorf("payload_rate: %v gives a cell slot of %v, shorter than the %v a 53-byte cell takes at rate %v (at most %v)",
			p.PayloadRate, p.SlotTime(), p.CellTime(), p.Rate, sim.BitRate(int64(p.Rate)*HostCellSize/CellSize))
	}
	return nil
}

// FaultParams are the seeded faults of cells arriving at one end of a
// link, each drawn independently per cell from the end's own stream.
type FaultParams struct {
	CellLoss float64 `toml:"cell_loss" min:"0" max:"1" help:"probability a cell is lost on the way to this end"`
	BitError float64 `toml:"bit_error" min:"0" max:"1" help:"probability a cell arrives with one of its 424 bits flipped (a header bit: the HEC catches it; a payload bit: the AAL's CRC)"`
}

// Validate checks that both are probabilities.
func (f FaultParams) Validate() error {
	for _, x := range []struct {
		key string
		v   float64
	}{{"cell_loss", f.CellLoss}, {"bit_error", f.BitError}} {
		if math.IsNaN(x.v) || x.v < 0 || x.v > 1 {
			return fmt.Errorf("%s: %v is not a probability between 0 and 1", x.key, x.v)
		}
	}
	return nil
}

// SwitchParams configure an ATM switch.
type SwitchParams struct {
	Latency    sim.Time `toml:"latency" help:"from a cell's arrival at an input port until it may leave the output port (lookup and fabric)"`
	QueueCells int      `toml:"queue_cells" min:"1" max:"1000000" help:"cells an output port holds, on their way through the fabric or waiting for the line; a cell arriving for a full port is dropped"`
	HECCorrect bool     `toml:"hec_correct" help:"correct single-bit header errors at the input ports (I.432 correction mode); off: every header error drops the cell"`
}

// Defaults: a cell crosses the switch in about two cell times, and each
// output port buffers 256 cells (about 1.1 ms of a 100 Mbit/s line).
// Both are modelling choices of the scale of early-1990s cell switches,
// not measurements of one.
const (
	DefaultSwitchLatency = 10 * sim.Microsecond
	DefaultQueueCells    = 256
)

// DefaultSwitchParams returns the defaults.
func DefaultSwitchParams() SwitchParams {
	return SwitchParams{Latency: DefaultSwitchLatency, QueueCells: DefaultQueueCells}
}

// Validate checks p.
func (p SwitchParams) Validate() error {
	switch {
	case p.Latency < 0:
		return fmt.Errorf("latency: %v must not be negative", p.Latency)
	case p.QueueCells < 1:
		return fmt.Errorf("queue_cells: %d must be at least 1", p.QueueCells)
	}
	return nil
}
