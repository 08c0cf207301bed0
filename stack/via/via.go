// Package via is the Virtual Interface Architecture on simkron's kernel,
// emulated on Ethernet as M-VIA does it (docs/reference/via.md): the VI
// Provider Library a program calls (VIPL: VipOpenNic ... VipDisconnect,
// vipl.go) and the M-VIA kernel agent behind it (Agent: protection tags,
// registered memory with its translation tables, VIs and their work
// queues, completion queues, the connection manager, fragmentation and
// reassembly), over any device of the device layer (stack/netdev): the
// bus-master NIC's driver, whose gather transmit sends straight from the
// program's registered memory, or any other driver (the NE2000's), to
// which a message's frames are copied, so that "DMA" there is the driver's
// programmed I/O on the CPU.
//
// Layers, as the Linux/SimOS study defines them for M-VIA (docs/reference/via.md sec.
// 5): APPL is the VIPL's user-level part of a call — linking the
// descriptor into the work queue and polling status words — (the
// program's building of its descriptor in registered memory counts there
// too, stack/apps/via); TRANS the fast trap and the kernel agent:
// address translation, fragmentation and the DMA set-up in the driver
// (the gather transmit takes its caller's layer), reassembly and the copy
// into the receive buffers; DEV the device's interrupt handling: the
// DMA-completion interrupt that counts a send's fragments down and, with
// the last, writes the descriptor's status (its functions take the
// interrupt's layer); DMA the time a message waits for the NIC.
//
// Contract. Descriptors live in the program's registered memory laid out
// as VIA 1.0's (desc.go); the agent reads them with the core's loads and
// writes their Length and Status with its stores; message data moves from
// registered memory to the NIC and from the received frames into the
// buffers of the next posted receive descriptor. Every entry into the
// kernel is charged: registration, VI and CQ creation and connection
// management are system calls; posting and blocking waits enter the agent
// by a fast trap (the core's trap without the generic system-call
// dispatch, M-VIA's vipk_ftrap). A program's mistake — an unregistered
// address, a wrong protection tag, a malformed descriptor, a call in the
// wrong VI state — is the VIPL's return code or an error bit in the
// descriptor's status, never a Go panic; the receive path never fails: a
// frame it cannot use bumps a named drop counter.
//
// A send is posted as VIA defines it and M-VIA on Ethernet does it
// (docs/reference/via.md secs. 3-4): VipPostSend returns once the agent has handed the
// message's frames to the NIC (the doorbell rung, the DMA programmed); the
// NIC reads them from registered memory afterwards, and its
// DMA-completion interrupts count the fragments down, the last one
// completing the descriptor, which the program reaps with VipSendDone or
// VipSendWait. (sync_send = true models a provider whose post instead
// waits in the kernel until the NIC has read the message; M-VIA does not.)
//
// A message is received as M-VIA's device drivers deliver it (docs/reference/via.md
// sec. 4: the NIC's interrupt, then the agent's demultiplexing to a VI and the
// copy into the posted buffer): a driver that offers a direct receive
// (the bus-master NIC's, SetDirectRx) hands the agent each VIA frame from
// its receive interrupt, in the ring buffer the card wrote, which goes back
// to the card once the payload is copied out — no netif_rx, no receive
// softirq, no buffer allocated. Behind any other driver (the NE2000's) VIA
// frames come up through the device layer's receive softirq like any
// protocol's (dev_add_pack).
//
// Reliability levels (docs/reference/via.md sec. 1): unreliable delivery, the native
// level on Ethernet — a message whose frames do not all arrive completes
// its receive descriptor with a transport error when the next message
// begins (or is not seen at all when none of it came), and a message that
// finds no posted receive descriptor is dropped and counted; and reliable
// delivery, kept by detecting loss rather than repairing it, as VIA allows
// (transport errors are catastrophic): a gap in a connection's message
// sequence, a message with no receive descriptor posted, or one longer
// than its descriptor breaks the connection — both VIs go to the error
// state and their descriptors complete flushed. Reliable reception is not
// offered.
//
// Simplifications: no RDMA (a descriptor asking for it is a format
// error); one process's view of protection (a Ptag or region of another
// VIPL instance is refused, nothing else separates them); programs use
// physical addresses (the kernel has no virtual memory), so translation
// finds the page frames the registration pinned, which are the pages
// themselves; the name service and QoS are not modelled; the VIPL's error
// callback is a list of asynchronous errors read from the simulator side.
package via

import (
	"fmt"

	"simkron/sim"
	"simkron/stack/header"
)

// Params configures a host's agent.
type Params struct {
	EtherType      uint16   `toml:"ethertype" help:"EtherType of VIA frames (the M-VIA value is not in the sources; default 0x88B5, IEEE local experimental)"`
	MaxTransfer    sim.Size `toml:"max_transfer" min:"1KiB" max:"16MiB" help:"largest message (NIC attribute MaxTransferSize); M-VIA limited its data buffer to 32 KB"`
	MaxSegments    int      `toml:"max_segments" min:"1" max:"252" help:"data segments per descriptor (MaxSegmentsPerDesc)"`
	MaxDescriptors int      `toml:"max_descriptors" min:"1" max:"65536" help:"descriptors posted per work queue (MaxDescriptorsPerQueue)"`
	MaxVIs         int      `toml:"max_vis" min:"1" max:"65535" help:"VIs per host (MaxVI)"`
	MaxCQEntries   int      `toml:"max_cq_entries" min:"1" max:"65536" help:"entries of one completion queue (MaxCQEntries)"`
	SyncSend       bool     `toml:"sync_send" help:"VipPostSend waits in the agent until the NIC has read the message (its DMA-completion interrupts handled inside the call), the descriptor complete when it returns: a provider unlike M-VIA; false (M-VIA, VIA's definition): it returns after the doorbell and the DMA-completion interrupt completes the descriptor"`
	ConnectRetry   sim.Time `toml:"connect_retry" min:"1ms" help:"time between connection requests while VipConnectRequest waits for an answer (requests travel unreliably)"`
}

// DefaultParams returns the study's M-VIA: 32 KiB messages, posts that
// return after the doorbell.
func DefaultParams() Params {
	return Params{
		EtherType:      header.EtherTypeVIA,
		MaxTransfer:    32 * sim.KiB,
		MaxSegments:    16,
		MaxDescriptors: 1024,
		MaxVIs:         256,
		MaxCQEntries:   4096,
		ConnectRetry:   100 * sim.Millisecond,
	}
}

// Validate checks what the field bounds cannot.
func (p Params) Validate() error {
	switch p.EtherType {
	case 0x0800, 0x0806:
		return fmt.Errorf("ethertype: %#04x is IPv4's or ARP's", p.EtherType)
	}
	if p.EtherType < 0x0600 {
		return fmt.Errorf("ethertype: %#04x is an 802.3 length, not an EtherType", p.EtherType)
	}
	return nil
}

// Return is a VIPL call's return code (VIP_RETURN).
type Return int

// Return codes, in the VIPL's order.
const (
	Success Return = iota
	NotDone
	InvalidParameter
	ErrorResource
	Timeout
	Reject
	InvalidReliabilityLevel
	InvalidMTU
	InvalidQoS
	InvalidPtag
	InvalidRDMARead
	DescriptorError
	InvalidState
	ErrorNameService
	NoMatch
)

var returnNames = [...]string{"VIP_SUCCESS", "VIP_NOT_DONE", "VIP_INVALID_PARAMETER", "VIP_ERROR_RESOURCE", "VIP_TIMEOUT",
	"VIP_REJECT", "VIP_INVALID_RELIABILITY_LEVEL", "VIP_INVALID_MTU", "VIP_INVALID_QOS", "VIP_INVALID_PTAG",
	"VIP_INVALID_RDMAREAD", "VIP_DESCRIPTOR_ERROR", "VIP_INVALID_STATE", "VIP_ERROR_NAMESERVICE", "VIP_NO_MATCH"}

func (r Return) String() string {
	if r >= 0 && int(r) < len(returnNames) {
		return returnNames[r]
	}
	return fmt.Sprintf("VIP_RETURN(%d)", int(r))
}

// Reliability is a reliability level (VIP_RELIABILITY_LEVEL bits).
type Reliability uint16

// Reliability levels.
const (
	Unreliable        Reliability = 0x01
	ReliableDelivery  Reliability = 0x02
	ReliableReception Reliability = 0x04
)

// State is a VI's state (VIP_VI_STATE).
type State uint8

// VI states.
const (
	StateIdle State = iota
	StateConnected
	StateConnectPending
	StateError
)

func (s State) String() string {
	return [...]string{"IDLE", "CONNECTED", "CONNECT_PENDING", "ERROR"}[s]
}

// ErrorCode is an asynchronous error's code (VIP_ERROR_CODE).
type ErrorCode uint8

// Asynchronous error codes, in the VIPL's order.
const (
	ErrPostDesc ErrorCode = iota
	ErrConnLost
	ErrRecvQEmpty
	ErrVIOverrun
	ErrRDMAWProt
	ErrRDMAWData
	ErrRDMAWAbort
	ErrRDMARProt
	ErrCompProt
	ErrRDMATransport
	ErrCatastrophic
)

// Resource says what an asynchronous error concerns (VIP_RESOURCE_CODE).
type Resource uint8

// Resources.
const (
	ResourceNIC Resource = iota
	ResourceVI
	ResourceCQ
	ResourceDescriptor
)

// AsyncError is one asynchronous error (VIP_ERROR_DESCRIPTOR), kept by
// the NIC for Errors.
type AsyncError struct {
	Time     sim.Time
	VI       int // the VI's number on its host, 0 for none
	Resource Resource
	Code     ErrorCode
}

// NetAddress is a VI network address: the host's (the NIC's MAC) and an
// endpoint discriminator the two sides agree on.
type NetAddress struct {
	Host          [6]byte
	Discriminator []byte
}

// ViAttributes are a VI's attributes (VIP_VI_ATTRIBUTES).
type ViAttributes struct {
	ReliabilityLevel Reliability
	MaxTransferSize  uint32
	Ptag             Ptag
	EnableRdmaWrite  bool
	EnableRdmaRead   bool
}

// MemAttributes are a memory region's (VIP_MEM_ATTRIBUTES).
type MemAttributes struct {
	Ptag            Ptag
	EnableRdmaWrite bool
	EnableRdmaRead  bool
}

// NicAttributes describe a NIC (VIP_NIC_ATTRIBUTES), as VipQueryNic
// returns them.
type NicAttributes struct {
	Name                    string
	LocalNicAddress         [6]byte
	MaxDiscriminatorLen     int
	MaxRegisterBytes        uint64
	MaxRegisterRegions      int
	MaxVI                   int
	MaxDescriptorsPerQueue  int
	MaxSegmentsPerDesc      int
	MaxCQEntries            int
	MaxTransferSize         uint32
	NativeMTU               int
	ReliabilityLevelSupport Reliability
}

// Ptag is a protection tag's handle; 0 is none.
type Ptag uint32

// MemHandle is a registered region's handle (VIP_MEM_HANDLE); 0 is none.
type MemHandle uint32
