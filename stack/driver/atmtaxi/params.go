package atmtaxi

import (
	"fmt"
	"net/netip"

	"simkron/sim"
)

// Kernel personalities (Params.Personality).
const (
	// Ultrix copies between user and kernel: a send copies the user's
	// data into a kernel buffer (uiomove) and a receive copies it out.
	Ultrix = "ultrix"
	// Wanda hands buffers over: programs send from and receive into
	// buffers of a pool of IPC buffers that keep their addresses when
	// their owner changes, so no data is copied.
	Wanda = "wanda"
)

// Transfer modes (Params.Tx, Params.Rx).
const (
	PIO = "pio" // programmed I/O of 13-word cells
	// DMAA is mode A: a block of whole 13-word cells in memory, up to the
	// DMA limit a transfer (transmit only in this driver). On Ultrix the
	// copy from the user builds the block; on Wanda the driver must copy
	// to build it.
	DMAA = "dma-a"
	// DMAB is mode B: the header word by PIO, then one 48-byte payload DMA
	// per cell, straight from or into the data's buffer.
	DMAB = "dma-b"
	// Sort is the VCI-sorting assist (receive only): the interface DMAs
	// each VC's cells into a buffer of its own and posts one completion a
	// PDU; the board needs params.vci_sort.
	Sort = "sort"
)

// Receive interrupt modes (Params.RxInterrupt).
const (
	IntCell = "cell" // an interrupt for every cell received
	IntFlag = "flag" // only for cells with the header indication flag: the last of a PDU
)

// Params configure the driver and the kernel personality it serves.
type Params struct {
	Personality string `toml:"personality" help:"kernel personality: \"ultrix\" (copy between user and kernel) or \"wanda\" (a pool of IPC buffers handed over without changing their addresses: no copy)"`
	Tx          string `toml:"tx" help:"transmit path: \"pio\", \"dma-a\" (blocks of whole cells, up to the board's DMA limit a transfer) or \"dma-b\" (header word by PIO, one 48-byte payload DMA a cell)"`
	Rx          string `toml:"rx" help:"receive path: \"pio\", \"dma-b\" (header word by PIO, one 48-byte payload DMA a cell) or \"sort\" (the board's VCI-sorting assist)"`
	RxInterrupt string `toml:"rx_interrupt" help:"\"flag\": interrupt on the header indication flag only, so a PDU gathers in the FIFO (at most rx_fifo_cells cells); \"cell\": on every cell"`
	// Assists the driver uses when the board has them fitted.
	HeaderInsertion bool     `toml:"header_insertion" help:"use the board's header insertion (transmit: write only payload words, the PROTO register supplies headers)"`
	CRCAssist       bool     `toml:"crc_assist" help:"use the board's AAL5 CRC assist: the board fills in and checks the CRC-32 instead of a software loop"`
	CacheInvalidate bool     `toml:"cache_invalidate" help:"invalidate the data cache over a buffer the board wrote by DMA before the CPU reads it (needed where DMA is not coherent; false reproduces the seed's unsolved cache problem: stale reads are reported as guest errors)"`
	DMAMaxBytes     sim.Size `toml:"dma_max_bytes" min:"52B" max:"4095B" help:"longest DMA transfer the host's TURBOchannel allows, as the board's documentation gives it (DECstation 5000: 2KiB, 39 cells in mode A)"`
	CacheFlush      bool     `toml:"cache_flush" help:"write dirty cache lines back before a transmit DMA reads a buffer (needed with write-back caches that do not snoop; the DECstation's write-through caches hold no dirty lines)"`
	IPCBuffers      int      `toml:"ipc_buffers" min:"2" max:"4096" help:"wanda: IPC buffers in the pool"`
	IPCBufferSize   int      `toml:"ipc_buffer_size" min:"48" max:"65536" unit:"bytes" help:"wanda: bytes of one IPC buffer (a raw PDU must fit; a received IP PDU too)"`
	RawMaxCells     int      `toml:"raw_max_cells" min:"1" max:"1365" help:"longest PDU a raw ATM socket sends or accepts, in cells"`
	// The IP interface.
	MTU int       `toml:"mtu" min:"68" max:"65527" help:"IP MTU of the interface (classical IP over AAL5: 9180, RFC 1626)"`
	VCs []VCEntry `toml:"vc" help:"static VC table of the IP interface: the VC on which each neighbour's datagrams go and come (no signalling, no ATMARP)"`
}

// VCEntry maps a neighbour's IP address to a bidirectional VC.
type VCEntry struct {
	IP  IP  `toml:"ip" help:"the neighbour's IPv4 address"`
	VPI int `toml:"vpi" min:"0" max:"255" help:"virtual path identifier"`
	VCI int `toml:"vci" min:"32" max:"65535" help:"virtual channel identifier (0-31 are reserved: signalling, ILMI)"`
	// PCR paces the VC's cells in software (see Driver.pace).
	PCR int `toml:"pcr" min:"0" max:"1000000" unit:"cells/s" help:"peak cell rate: the driver puts the VC's cells into the FIFO at most this many a second (a mode-A block of k cells counts k); 0: as fast as the host can"`
}

// IP is an IPv4 address read from "10.0.0.1".
type IP [4]byte

// UnmarshalText reads a dotted quad.
func (ip *IP) UnmarshalText(b []byte) error {
	a, err := netip.ParseAddr(string(b))
	if err != nil || !a.Is4() {
		return fmt.Errorf("IPv4 address %q: want four decimal numbers 0-255 separated by dots", b)
	}
	*ip = a.As4()
	return nil
}

// MarshalText writes the dotted quad.
func (ip IP) MarshalText() ([]byte, error) { return []byte(netip.AddrFrom4(ip).String()), nil }

func (ip IP) String() string { return netip.AddrFrom4(ip).String() }

// DefaultMTU is classical IP over AAL5's (RFC 1626).
const DefaultMTU = 9180

// DefaultParams returns an Ultrix-like kernel driving the board by PIO
// with header-flag interrupts, as the seed's loop-back test did.
func DefaultParams() Params {
	return Params{
		Personality: Ultrix, Tx: PIO, Rx: PIO, RxInterrupt: IntFlag,
		CacheInvalidate: true, DMAMaxBytes: 2 * sim.KiB, IPCBuffers: 64, IPCBufferSize: 16 * 1024,
		RawMaxCells: 128, MTU: DefaultMTU,
	}
}

// Validate checks p; errors start with the key at fault.
func (p Params) Validate() error {
	switch {
	case p.Personality != Ultrix && p.Personality != Wanda:
		return fmt.Errorf("personality: %q: want %q or %q", p.Personality, Ultrix, Wanda)
	case p.Tx != PIO && p.Tx != DMAA && p.Tx != DMAB:
		return fmt.Errorf("tx: %q: want %q, %q or %q", p.Tx, PIO, DMAA, DMAB)
	case p.Rx != PIO && p.Rx != DMAB && p.Rx != Sort:
		return fmt.Errorf("rx: %q: want %q, %q or %q", p.Rx, PIO, DMAB, Sort)
	case p.RxInterrupt != IntCell && p.RxInterrupt != IntFlag:
		return fmt.Errorf("rx_interrupt: %q: want %q or %q", p.RxInterrupt, IntFlag, IntCell)
	case p.HeaderInsertion && p.Tx == DMAB:
		return fmt.Errorf("header_insertion: needs tx \"pio\" or \"dma-a\" (the board inserts every header itself, mode B writes one by PIO)")
	case p.DMAMaxBytes < cellBytes || p.DMAMaxBytes > 4095:
		return fmt.Errorf("dma_max_bytes: %v must lie between 52B and 4095B", p.DMAMaxBytes)
	case p.MTU < 68 || p.MTU > 65527:
		return fmt.Errorf("mtu: %d must lie between 68 and 65527 (an AAL5 PDU carries 65535 bytes, 8 of them LLC/SNAP)", p.MTU)
	case p.Personality == Wanda && p.IPCBufferSize < p.RawMaxCells*payloadBytes:
		return fmt.Errorf("ipc_buffer_size: %d is less than raw_max_cells (%d) cells of 48 bytes", p.IPCBufferSize, p.RawMaxCells)
	}
	seen := map[IP]bool{}
	vcs := map[[2]int]bool{}
	for i, v := range p.VCs {
		if seen[v.IP] {
			return fmt.Errorf("vc[%d].ip: %v has two VCs", i, v.IP)
		}
		if vcs[[2]int{v.VPI, v.VCI}] {
			return fmt.Errorf("vc[%d].vci: VC %d/%d serves two neighbours", i, v.VPI, v.VCI)
		}
		if v.VCI < 32 || v.VCI > 65535 || v.VPI < 0 || v.VPI > 255 {
			return fmt.Errorf("vc[%d]: VC %d/%d is out of range (VPI 0-255, VCI 32-65535)", i, v.VPI, v.VCI)
		}
		seen[v.IP], vcs[[2]int{v.VPI, v.VCI}] = true, true
	}
	return nil
}
