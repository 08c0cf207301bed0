package simoseth

import (
	"fmt"

	"simkron/ethersim"
	"simkron/sim"
)

// Params configures the card.
type Params struct {
	MAC ethersim.MAC `toml:"mac" help:"station address the card starts with (MACLO/MACHI after reset), e.g. \"02:00:00:00:00:01\""`
	// DMARate is bytes per second: a sim.Size written "1200MB" reads as
	// 1200 MB/s.
	DMARate    sim.Size `toml:"dma_rate" min:"1MB" max:"1000GB" help:"bytes per second the card's DMA engine moves between host memory and its buffers (\"1200MB\" is 1200 MB/s, the Linux/SimOS study's NIC); descriptors, data and status write-backs all go through it, one transfer at a time"`
	DMALatency sim.Time `toml:"dma_latency" help:"time to win the bus before each DMA transfer, added to the transfer's own time (0: the transfer only, as the SimOS model charges it)"`
	Coherent   bool     `toml:"coherent" help:"the card's DMA snoops the CPU caches (true) or not (false: the driver flushes before the card reads and invalidates before the CPU reads what the card wrote; a stale read is a guest error)"`
	TxBuffer   sim.Size `toml:"tx_buffer" min:"2KiB" max:"16MiB" help:"card memory holding frames read from the host until the wire has sent them; the transmit DMA waits while the next frame does not fit"`
	RxBuffer   sim.Size `toml:"rx_buffer" min:"2KiB" max:"16MiB" help:"card memory holding frames from the wire until the receive DMA has stored them; a frame that does not fit is dropped and counted"`
	MaxFrame   sim.Size `toml:"max_frame" min:"64B" max:"65535B" help:"longest frame, FCS included, the card sends or accepts (1518 on Ethernet; more for jumbo frames)"`
}

// DefaultParams returns the Linux/SimOS study's NIC: DMA at 1200 MB/s
// (docs/reference/inet-notes.md sec. 8) with no extra bus latency,
// coherent DMA, the Ethernet maximum frame, and 64 KiB of card memory each
// way. The card memory is the order of a gigabit controller of the
// period's (Intel's 82543GC has a 64 KB packet buffer, split between the
// directions); the study's SimOS model stored frames without a stated
// limit, and 64 KiB holds a 32 KiB message's 23 frames.
func DefaultParams() Params {
	return Params{
		MAC:      ethersim.MAC{0x02, 0, 0, 0, 0, 0x01},
		DMARate:  1200 * 1000 * 1000,
		Coherent: true,
		TxBuffer: 64 * sim.KiB,
		RxBuffer: 64 * sim.KiB,
		MaxFrame: ethersim.MaxFrame,
	}
}

// Validate checks p; errors name the TOML key at fault.
func (p Params) Validate() error {
	switch {
	case p.MAC[0]&1 != 0:
		return fmt.Errorf("mac: %v is a group (multicast) address; a station address must be unicast", p.MAC)
	case p.DMARate < 1000*1000:
		return fmt.Errorf("dma_rate: %d bytes per second is below 1MB", uint64(p.DMARate))
	case p.DMALatency < 0:
		return fmt.Errorf("dma_latency: %v must not be negative", p.DMALatency)
	case p.MaxFrame < minFrameNoFCS+fcsBytes || p.MaxFrame > 65535:
		return fmt.Errorf("max_frame: %v must lie between 64B and 65535B", p.MaxFrame)
	case p.TxBuffer < p.MaxFrame:
		return fmt.Errorf("tx_buffer: %v cannot hold one frame of max_frame %v", p.TxBuffer, p.MaxFrame)
	case p.RxBuffer < p.MaxFrame:
		return fmt.Errorf("rx_buffer: %v cannot hold one frame of max_frame %v", p.RxBuffer, p.MaxFrame)
	}
	return nil
}
