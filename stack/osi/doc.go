// Package osi holds what the OSI protocol machines (stack/osi/llc,
// stack/osi/clnp, stack/osi/tp4, stack/osi/session, stack/osi/pres) share, and the
// contract between them and the host environment they run in: the TOP
// host of the TOP measurements (stack/top), and later the simulated
// kernel's socket layer (stack/kernel), with one set of protocol code.
//
// # Contract
//
// A protocol machine reaches its host only through Env: the CPU it is
// charged on, the symbol table its functions are placed in, the cost
// categories of the study's split, timers, and the PDU memory (Mem). PDUs
// are chains of descriptors in simulated memory, the Parameter Structures
// of the TOP design:
//
//	Chain ──► desc ──link──► desc ──link──► desc ──► 0
//	           │ data,len      │ data,len     │ data,len
//	           ▼               ▼              ▼
//	         [PCI]          [PCI]         [user data ........]
//	           (each piece lies in a data block with a use count)
//
// A layer inserts its PCI by chaining a new descriptor in front (no copy),
// strips a received header by moving a descriptor's data pointer,
// segments and reassembles by making descriptors that point into the same
// blocks, and keeps a PDU for retransmission by raising the head
// descriptor's allocation count (Hold): the chain is freed only when the
// count reaches zero, so no layer copies to retain. Every descriptor field
// is read and written in simulated memory and charged.
//
// The layer services (DL-UNITDATA, N-UNITDATA) are Go interfaces that the
// environment implements: in the TOP host an interface call puts a
// Primitive Structure into the paired FIFO queue of the two layers and
// schedules the receiving task; in a kernel it is a direct call.
//
// # Simplifications
//
// Descriptor and block layouts are this package's own (32-byte
// descriptors, 8-byte block headers), sized like the TOP structures; data
// blocks are owned by the environment, which frees them when their count
// reaches zero.
package osi
