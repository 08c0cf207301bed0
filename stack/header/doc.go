// Package header holds the wire formats of the protocols simkron speaks, as
// typed views over byte slices: Ethernet, ARP, IPv4, ICMPv4, UDP and TCP,
// the Internet checksum, the M-VIA-style header of VIA over Ethernet, and
// for ATM the cell header with its HEC, the AAL5 CPCS-PDU with its CRC-32
// and the RFC 2684 LLC encapsulation; IEEE 802.2 LLC over 802.3
// length-field frames, CLNP (ISO 8473), the TP4 TPDUs (ISO 8073), session
// SPDUs (ISO 8327-1), presentation PPDUs (ISO 8823) in the basic encoding
// rules of ASN.1, and the ISO (Fletcher) checksum, whole or as running
// sums. Layer: none — these are the shapes every layer reads and writes,
// with no behaviour of their own.
//
// Contract. A view is a []byte with a named type (header.IPv4(b)); getters
// and setters read and write big-endian fields at fixed offsets in place,
// so building a header is writing into the buffer that will go on the
// wire. Call the view's IsValid first: after it returns true every getter
// and Payload stay inside the slice whatever the bytes are. Setters and
// Encode trust their caller: the slice must be long enough and the values
// in range, and a violation is a simulator bug that panics.
//
// Addresses are plain [6]byte (MAC) and [4]byte (IPv4) arrays so that the
// package imports nothing of the simulator (stdlib only); the stack's
// packages convert to their own named address types.
//
// Simplifications: IPv4 and TCP options are exposed as raw bytes, with a
// parser for TCP's MSS option only; no IPv6; no 802.1Q tags; LLC U-format
// (type 1) headers only; CLNP options as raw code/length/value triples; BER
// with definite lengths of up to three octets only, and only the
// presentation kernel's PPDUs in normal mode; no FCS; ATM cells at the UNI
// only (the NNI's 12-bit VPI is not modelled), AAL5 only (no AAL3/4
// views), and of RFC 2684 the two routed LLC encapsulations only.
package header
