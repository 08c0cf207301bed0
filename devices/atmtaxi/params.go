package atmtaxi

import (
	"fmt"

	"simkron/sim"
)

// Params configure the interface. The FIFO depths and the DMA limit are
// the seed's (docs/reference/atm-taxi.md sec. 4); the DMA rates and latency are those of
// the board's DMA engine on its host's TURBOchannel, and the hardware
// assists are the seed's proposed variants (sec. 6), each fitted or not.
type Params struct {
	TxFIFOCells int `toml:"tx_fifo_cells" min:"2" max:"4096" help:"cells the transmit FIFO holds (Yes V2: 76)"`
	RxFIFOCells int `toml:"rx_fifo_cells" min:"2" max:"4096" help:"cells the receive FIFO holds (Yes V2: 76); a cell arriving to a full FIFO is lost and counted"`
	// DMAMaxBytes is a byte count: the seed's 39 cells are the 52-byte
	// cells of mode A that fit 2 KiB (39 × 52 = 2028).
	DMAMaxBytes  sim.Size    `toml:"dma_max_bytes" min:"52B" max:"4095B" help:"longest DMA transfer the host's TURBOchannel allows (DECstation 5000: 2KiB, the 39 cells of 52 bytes the seed names)"`
	DMAReadRate  sim.BitRate `toml:"dma_read_rate" min:"1Mbps" help:"sustained rate of the board's DMA reading host memory into the transmit FIFO, after the first word"`
	DMAWriteRate sim.BitRate `toml:"dma_write_rate" min:"1Mbps" help:"sustained rate of the board's DMA writing the receive FIFO into host memory, after the first word"`
	DMALatency   sim.Time    `toml:"dma_latency" help:"per DMA transfer: bus arbitration and the first memory access before data moves"`
	DMACoherent  bool        `toml:"dma_coherent" help:"the host's caches snoop DMA; false on the DECstation 5000 (write-through caches, no snooping): the driver must invalidate before reading received data"`
	HECCorrect   bool        `toml:"hec_correct" help:"correct single-bit header errors (I.432 correction mode); off: every header error drops the cell"`

	HeaderInsertion bool `toml:"header_insertion" help:"assist fitted (seed sec. 6.1): CSR.HDR_INSERT makes the interface insert the PROTO register's header before every 48 bytes written by PIO or DMA"`
	AAL5CRC         bool `toml:"aal5_crc" help:"assist fitted (seed sec. 6.2): CRC-32 generation into the last cell of each AAL5 PDU sent, and CRC and length checking of each PDU received"`
	VCISort         bool `toml:"vci_sort" help:"assist fitted (seed sec. 6.4): cells of enabled VCs are sorted by VCI straight into host buffers by DMA, one completion per PDU"`
	VCIBits         int  `toml:"vci_bits" min:"1" max:"16" help:"the direct-mapped context table of the receive assists has 2^vci_bits entries, indexed by the VCI's low bits (the seed: direct mapping limits the VCI range)"`
}

// DefaultParams returns the Yes V2 as the seed describes it, with no
// assist fitted. The DMA figures are those of the DECstation 5000 machine
// files (configs/machines/ds5000-200.toml), where they are explained.
func DefaultParams() Params {
	return Params{
		TxFIFOCells:  76,
		RxFIFOCells:  76,
		DMAMaxBytes:  2 * sim.KiB,
		DMAReadRate:  139080 * sim.Kbps,
		DMAWriteRate: 70880 * sim.Kbps,
		DMALatency:   320 * sim.Nanosecond,
		VCIBits:      10,
	}
}

// MaxCellsPerDMA returns how many 52-byte mode-A cells one transfer moves
// at most.
func (p Params) MaxCellsPerDMA() int { return int(p.DMAMaxBytes) / cellBytes }

// Validate checks what the tags cannot.
func (p Params) Validate() error {
	switch {
	case p.DMAMaxBytes < cellBytes || p.DMAMaxBytes > DMACountMask:
		return fmt.Errorf("dma_max_bytes: %v must lie between 52B and %dB (the DMACTL count)", p.DMAMaxBytes, DMACountMask)
	case p.DMAReadRate <= 0:
		return fmt.Errorf("dma_read_rate: must be positive")
	case p.DMAWriteRate <= 0:
		return fmt.Errorf("dma_write_rate: must be positive")
	case p.DMALatency < 0:
		return fmt.Errorf("dma_latency: %v must not be negative", p.DMALatency)
	case p.VCIBits < 1 || p.VCIBits > 16:
		return fmt.Errorf("vci_bits: %d must lie between 1 and 16", p.VCIBits)
	case p.TxFIFOCells < 2 || p.RxFIFOCells < 2:
		return fmt.Errorf("tx_fifo_cells, rx_fifo_cells: at least 2")
	}
	return nil
}
