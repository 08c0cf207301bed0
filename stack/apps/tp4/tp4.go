// Package tp4 is the workload "tp4": TP4 as a protocol of the echo
// latency run (package latency), the echo exchange over ISO sockets of
// the simulated kernel (stack/osi/netiso), so that TP4 is measured on the
// same kernel, hosts and cards as UDP and TCP. It registers the protocol
// "tp4" with the comparison and the workload "tp4", its run alone. (It
// imports the protocol machine, stack/osi/tp4, as isotp4.) Layer APPL.
//
// The client connects a SOCK_SEQPACKET socket to the server's TSAP (the
// series' port as two octets); each message is one TSDU, sent with one
// sendmsg (EOT) and received whole (recvmsg until EOT), echoed back the
// same way. The measured calls are the system calls iso_sendmsg and
// iso_recvmsg. The tracker follows the connection's DTs at each host's
// card (802.3, LLC, CLNP, TP4, the DT's data starting with the series'
// stamp in the first 4 octets of each message) so that the receive
// latency runs, as UDP's and TCP's do, from the arrival of the frame
// carrying the message's first octets.
//
// Over ATM (CLNP in RFC 2684 LLC FE-FE-03 over AAL5) the card shows a
// PDU's first cell when it arrives, and the DT may lie beyond it (an AK
// concatenated in front, the stamp after the checksum parameter): the
// tracker notes the moment of the first cell of each ISO PDU and reads the
// PDU when its last cell is in (latency.WholeTracker), so that the
// receive latency still runs from the first cell of the PDU carrying the
// message's first octets.
//
// Simplifications: the tracker follows in-sequence DTs (a TSDU starts
// after one with EOT), as the UDP and TCP trackers follow what a lossless
// exchange sends; DTs CLNP segments are followed by their first segment
// only; over ATM one VC brings the peer's PDUs, so the first cell noted
// is that of the PDU completed next.
package tp4

import (
	"encoding/binary"
	"fmt"
	"slices"

	"simkron/card"
	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/apps/compare"
	"simkron/stack/apps/latency"
	"simkron/stack/header"
	"simkron/stack/kernel"
	"simkron/stack/osi"
	"simkron/stack/osi/clnp"
	"simkron/stack/osi/llc"
	"simkron/stack/osi/netiso"
	isotp4 "simkron/stack/osi/tp4"
	"simkron/workload"
)

func init() {
	compare.Register(compare.Series[Params]{
		Name:         "tp4",
		Help:         "TP4 echo latency through the kernel's ISO sockets (LLC, CLNP, TP4 class 4) over a series of message sizes: send and receive cycles by layer per size; the compare workload sets it beside UDP and TCP",
		ProtocolHelp: "TP4 (ISO 8073 class 4) over CLNP and LLC through the kernel's ISO sockets (sendmsg/recvmsg of TSDUs; [workload.tp4]'s port is the TSAP)",
		Default:      DefaultParams,
		Common:       func(p *Params) *latency.Params { return &p.Params },
		Protocol:     newProtocol,
		InTurn:       true,
	})
}

// Params configures the TP4 series: [workload.tp4]. The port is the
// server's TSAP selector, as two octets.
type Params struct {
	latency.Params
}

// DefaultParams measures the Linux/SimOS study's sizes, TSAP 7.
func DefaultParams() Params {
	return Params{latency.Params{Sizes: latency.StudySizes(latency.FullFrameTCP),
		Messages: 20, Warmup: 2, Port: 7, Timeout: 5 * sim.Second, SendSpan: latency.SpanThread}}
}

// Protocol is TP4 as a series runs over it: the two hosts' ISO families.
type Protocol struct {
	p        Params
	families map[string]*netiso.Family
	order    []string
}

var (
	_ latency.Protocol     = (*Protocol)(nil)
	_ latency.Sectioner    = (*Protocol)(nil)
	_ latency.WholeTracker = (*tracker)(nil)
)

// findHost returns the host called name as the series sees it and its ISO
// family; a host without one is an error wrapping compare.ErrUnsupported.
func findHost(env workload.Env, role, name string) (*latency.Endpoint, *netiso.Family, error) {
	h, err := latency.FindCardHost(env, role, name)
	if err != nil {
		return nil, nil, err
	}
	wh, _ := env.Host(name)
	f, ok := workload.Find[*netiso.Family](wh)
	if !ok {
		return nil, nil, fmt.Errorf("%w: host %q has no ISO socket family ([iso] in its machine file)", compare.ErrUnsupported, name)
	}
	return h, f, nil
}

// newProtocol finds the hosts of p and their families, and places the
// families' functions so that the series can watch its calls.
func newProtocol(env workload.Env, p Params) (latency.Protocol, *[2]*latency.Endpoint, error) {
	client, cf, err := findHost(env, "client", p.Client)
	if err != nil {
		return nil, nil, err
	}
	server, sf, err := findHost(env, "server", p.Server)
	if err != nil {
		return nil, nil, err
	}
	if client.Name == server.Name {
		return nil, nil, fmt.Errorf("server: the client and the server must be different hosts")
	}
	cf.Define()
	sf.Define()
	return &Protocol{p: p, families: map[string]*netiso.Family{client.Name: cf, server.Name: sf}, order: []string{client.Name, server.Name}}, &[2]*latency.Endpoint{client, server}, nil
}

// Info describes the TP4 series.
func (tr *Protocol) Info() latency.Info {
	return latency.Info{Name: "TP4", Send: "sendmsg", Recv: "recvmsg", SendSymbol: netiso.SendSymbol, RecvSymbol: netiso.RecvSymbol, Unit: "DTs", NoIP: true,
		Main: cpu.Def{Name: "tp4bench_main", Layer: cpu.LayerAPPL, Instructions: 40, CodeBytes: 256, Why: "loop over sizes and messages, stamp the sequence number"}}
}

// conn is one end's socket.
type conn struct {
	f       *netiso.Family
	fd, lfd int
	cap     int
}

func (tr *Protocol) tsap() []byte {
	var b [2]byte
	binary.BigEndian.PutUint16(b[:], tr.p.Port)
	return b[:]
}

// Listen binds the server's TSAP, listens and accepts one connection.
// The server's buffer is taken after the accept, at the series' turn, so
// that the series run before it in a comparison find the kernel's heap as
// they would without it.
func (tr *Protocol) Listen(t *kernel.Thread, e *latency.End) (latency.Conn, error) {
	f := tr.families[e.Host.Name]
	lfd, err := f.Socket(t)
	if err == 0 {
		err = f.Bind(t, lfd, tr.tsap())
	}
	if err == 0 {
		err = f.Listen(t, lfd, 1)
	}
	if err != 0 {
		return nil, fmt.Errorf("listen: %v", err)
	}
	fd, _, err := f.Accept(t, lfd, 0)
	if err != 0 {
		return nil, fmt.Errorf("accept: %v", err)
	}
	return &conn{f: f, fd: fd, lfd: lfd, cap: slices.Max(tr.p.Sizes)}, nil
}

// Dial connects to the server's TSAP.
func (tr *Protocol) Dial(t *kernel.Thread, e *latency.End) (latency.Conn, error) {
	f := tr.families[e.Host.Name]
	peer := tr.families[e.Peer().Host.Name]
	fd, err := f.Socket(t)
	if err == 0 {
		err = f.Connect(t, fd, peer.Address(tr.tsap()), tr.p.Timeout)
	}
	if err != 0 {
		return nil, fmt.Errorf("connect: %v", err)
	}
	return &conn{f: f, fd: fd, lfd: -1, cap: slices.Max(tr.p.Sizes)}, nil
}

func (c *conn) Send(t *kernel.Thread, buf memory.Addr, n int) error {
	if _, err := c.f.SendMsg(t, c.fd, buf, n, true); err != 0 {
		return fmt.Errorf("sendmsg: %v", err)
	}
	return nil
}

// Recv receives one TSDU: recvmsg until its end. With the schedule
// ended (want 0) there is nothing more to receive: the client releases
// the connection.
func (c *conn) Recv(t *kernel.Thread, buf memory.Addr, want int, timeout sim.Time) (int, error) {
	if want == 0 {
		return 0, latency.ErrEnd
	}
	got := 0
	cpu := c.f.Kernel().CPU()
	for {
		before := cpu.LocalTime()
		n, eot, err := c.f.RecvMsg(t, c.fd, buf+memory.Addr(got), c.cap-got, timeout)
		switch {
		case err == netiso.ETIMEDOUT && cpu.LocalTime()-before < timeout:
			// The same errno says that the connection timed out (TP4
			// gave up: closed), which every later call says at once: not
			// a wait that ran out, to wait again after.
			return got, fmt.Errorf("recvmsg: the connection timed out (%v)", err)
		case err == netiso.ETIMEDOUT:
			return got, latency.ErrTimeout
		case err != 0:
			return got, fmt.Errorf("recvmsg: %v", err)
		case n == 0 && !eot:
			return got, fmt.Errorf("recvmsg: end of the connection after %d octets", got)
		}
		got += n
		if eot {
			return got, nil
		}
	}
}

// Packets returns the DTs of a message of n octets.
func (c *conn) Packets(n int) int {
	k := c.f.Conn(c.fd)
	if k == nil {
		return 0
	}
	ext, cksum, _, size := k.Negotiated()
	per := size - 1 - header.TPDUFixedLen(header.TPDUCodeDT, ext)
	if cksum {
		per -= header.TPDUChecksumParamLen
	}
	return max(1, (n+per-1)/per)
}

func (c *conn) Close(t *kernel.Thread) {
	c.f.Close(t, c.fd)
	if c.lfd >= 0 {
		c.f.Close(t, c.lfd)
	}
}

// Section is the families' counters beside the series' rows, under the
// name "netiso".
func (tr *Protocol) Section() workload.Section {
	var out []FamilyStats
	for _, h := range tr.order {
		f := tr.families[h]
		fs := FamilyStats{Host: h, Family: f.Stats()}
		if f.TP4() != nil {
			fs.TP4, fs.CLNP = f.TP4().Stats(), f.CLNP().Stats()
		}
		if f.LLC() != nil {
			st := f.LLC().Stats()
			fs.LLC = &st
		}
		out = append(out, fs)
	}
	return workload.Section{Name: "netiso", Value: out}
}

// FamilyStats is one host's ISO family counters; LLC's are absent over
// ATM (no LLC type 1 entity).
type FamilyStats struct {
	Host   string
	Family netiso.Stats
	TP4    isotp4.Stats
	CLNP   clnp.Stats
	LLC    *llc.Stats `json:",omitempty"`
}

// Tracker follows the connection's DTs at e's host.
func (tr *Protocol) Tracker(e *latency.End) latency.Tracker {
	f := tr.families[e.Host.Name]
	return &tracker{e: e, nsap: f.NSAP(), ext: f.Params().TP4.Extended, arrivals: map[uint32]cpu.Account{}}
}

// tracker finds each message's first frame: the in-sequence DT that
// starts a TSDU, whose data begin with the message's stamp.
type tracker struct {
	e        *latency.End
	nsap     osi.NSAP
	ext      bool   // extended formats proposed (and, both ends alike, agreed)
	started  bool   // a DT has been seen
	next     uint32 // the number of the next in-sequence DT
	start    bool   // the next in-sequence DT starts a TSDU
	arrivals map[uint32]cpu.Account
	out      [1]latency.Arrival
	// Over ATM: the moment the last ISO PDU's first cell arrived.
	first    cpu.Account
	hasFirst bool
}

// isoLLC is RFC 2684's LLC header of a routed ISO PDU.
var isoLLC = [3]byte{0xFE, 0xFE, 0x03}

func (k *tracker) Frame(f []byte, now func(*cpu.Account)) {
	if k.e.Host.Link == card.LLCSNAP {
		// An AAL5 PDU's first cell: note the moment of an ISO PDU's.
		if len(f) > len(isoLLC) && [3]byte(f) == isoLLC && f[3] == header.CLNPNLPID {
			now(&k.first)
			k.hasFirst = true
		}
		return
	}
	if len(f) < header.EthernetHeaderLen+header.LLCHeaderLen+1 {
		return
	}
	eth := header.Ethernet(f)
	l := int(eth.Type())
	if !header.IsLengthField(eth.Type()) || header.EthernetHeaderLen+l > len(f) {
		return
	}
	pdu := f[header.EthernetHeaderLen : header.EthernetHeaderLen+l]
	if pdu[0] != header.LLCSAPISONet || pdu[2] != header.LLCControlUI {
		return
	}
	k.clnp(header.CLNP(pdu[header.LLCHeaderLen:]), now)
}

// Whole reads an AAL5 PDU whose first cell Frame saw: an ISO PDU's DT
// starts its message at that cell's moment.
func (k *tracker) Whole(f []byte) {
	if len(f) <= len(isoLLC) || [3]byte(f) != isoLLC || !k.hasFirst {
		return
	}
	k.hasFirst = false
	k.clnp(header.CLNP(f[len(isoLLC):]), func(a *cpu.Account) { k.first.CopyTo(a) })
}

// clnp follows the DT a CLNP PDU for this host carries; now gives the
// moment its first frame (or cell) arrived.
func (k *tracker) clnp(p header.CLNP, now func(*cpu.Account)) {
	if !p.IsValid(len(p)) || p.Type() != header.CLNPTypeDT || !k.nsap.SameSystem(nsapOf(p.Dst())) {
		return
	}
	if s, ok := p.Segmentation(); ok && s.Offset != 0 {
		return // a later segment of a DT CLNP segmented
	}
	for nsdu := p.Payload(); len(nsdu) >= 2 && int(nsdu[0])+1 <= len(nsdu); {
		h := header.TPDU(nsdu)
		if !h.IsValid(k.ext) {
			return
		}
		if h.Code() == header.TPDUCodeDT {
			k.dt(h, now)
			return
		}
		if header.TPDUHasData(h.Code()) {
			return
		}
		nsdu = nsdu[h.HeaderLen():]
	}
}

// dt notes a DT in sequence; one that starts a TSDU starts its message.
func (k *tracker) dt(h header.TPDU, now func(*cpu.Account)) {
	nr := h.Number(k.ext)
	if k.started && nr != k.next {
		return // a repeat or one out of sequence
	}
	mod := uint32(header.TPDUNormalModulus)
	if k.ext {
		mod = header.TPDUExtendedModulus
	}
	first := !k.started || k.start
	k.started, k.next, k.start = true, (nr+1)%mod, h.EOT()
	data := h[h.HeaderLen():]
	if !first || len(data) < 4 {
		return
	}
	stamp := binary.BigEndian.Uint32(data)
	if _, ok := k.arrivals[stamp]; ok {
		return
	}
	var a cpu.Account
	now(&a)
	k.arrivals[stamp] = a
}

// Completed reads the stamp of the TSDU recvmsg put in the program's
// buffer.
func (k *tracker) Completed(c *cpu.CPU, buf memory.Addr) []latency.Arrival {
	if buf == 0 {
		return nil
	}
	var stamp [4]byte
	c.System().Phys.Read(buf, stamp[:])
	s := binary.BigEndian.Uint32(stamp[:])
	a, ok := k.arrivals[s]
	if !ok {
		return nil
	}
	delete(k.arrivals, s)
	k.out[0] = latency.Arrival{Msg: int(s), Start: a}
	return k.out[:]
}

func nsapOf(b []byte) osi.NSAP {
	a, _ := osi.MakeNSAP(b)
	return a
}
