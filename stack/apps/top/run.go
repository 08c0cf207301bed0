package top

import (
	"fmt"

	"simkron/cpu"
	"simkron/sim"
	"simkron/stack/osi"
	"simkron/stack/osi/tp4"
	tophost "simkron/stack/top"
)

// Where a point runs.
const (
	Remote   = "remote"
	Loopback = "loopback"
)

// The users' addresses: the LLC user's SAP, the CLNS user's NSAP
// selector, TP4's selector (Wireshark's default for COTP), and the
// connection-mode users' selectors at each layer.
const (
	userSAP = 0x7C
	userSel = 0x22
	tp4Sel  = 0x21
)

var (
	origEnd = tophost.ConnEnd{TSAP: []byte("orig"), SSAP: []byte{0, 1}, PSAP: []byte{0, 0, 0, 1}}
	recpEnd = tophost.ConnEnd{TSAP: []byte("recp"), SSAP: []byte{0, 2}, PSAP: []byte{0, 0, 0, 2}}
)

// Roles of a program in a point.
const (
	roleOriginator = iota
	roleRecipient
	roleBoth // loopback: one program has both users
)

// bench is the workload: the points, in the order they run. The remote
// sequence (on the originator and the recipient) and the loopback one
// share nothing while they run, each with its own index and first error,
// so that a run may simulate them apart (workload.Type.Groups): a
// failure ends its own sequence only.
type bench struct {
	p                Params
	orig, recp, loop *tophost.Station
	remote, loops    []*point
	ri, li           int
	lines            []caseLine
	// errRemote and errLoop are each sequence's first error.
	errRemote, errLoop error
}

// caseLine is one case's level at one place: its points by size.
type caseLine struct {
	c      int // index of the case
	lv     tophost.Level
	where  string
	points []*point
}

// point is one measurement and what it gave.
type point struct {
	Level    string   `json:"level"`
	Where    string   `json:"where"`
	Size     int      `json:"size"`
	Cases    []string `json:"cases"`
	AckStep  int      `json:"ack_step,omitempty"`
	Checksum *bool    `json:"checksum,omitempty"`
	Credit   int      `json:"credit,omitempty"`
	Messages int      `json:"messages"`
	// The throughput of the useful bytes, exactly timed and by the BIOS
	// tick, and the run's time both ways.
	Mbps     float64 `json:"mbps"`
	TickMbps float64 `json:"tick_mbps"`
	Seconds  float64 `json:"seconds"`
	Ticks    uint32  `json:"ticks"`
	// TsendUS is the originator's mean packet-driver send time per frame
	// (the load over ISA and the frame's time on the wire; remote);
	// CopyUS the packet driver's loopback copy per message (loopback).
	TsendUS float64 `json:"tsend_us,omitempty"`
	CopyUS  float64 `json:"copy_us,omitempty"`
	// Received is what the recipient counted.
	Received tophost.RecvStats `json:"received"`
	// Lost counts the messages a connectionless user's recipient never
	// got (its receive buffers overran: nothing below TP4 controls the
	// flow); the throughput counts the useful bytes that arrived.
	Lost uint64 `json:"lost,omitempty"`
	// Originator and Recipient split each layer's processing per message
	// (remote); in loopback Originator is the one host's, both ends.
	Originator []LayerSplit `json:"originator"`
	Recipient  []LayerSplit `json:"recipient,omitempty"`
	Error      string       `json:"error,omitempty"`

	lv     tophost.Level
	tp     tp4.Params
	res    tophost.Result
	exited int
	// Readings of the cores at the first send and the last reply, the
	// catalogs of the programs' symbols, and the originator's packet
	// driver then.
	start, end [2]osi.Reading
	cat        [2]*osi.Catalog
	cpus       [2]*cpu.CPU
	tx0, tx1   struct {
		time  sim.Time
		count uint64
	}
}

// LayerSplit is where one layer's processing went, per message, by the
// study's categories (in its order).
type LayerSplit struct {
	Layer      string     `json:"layer"`
	Cycles     float64    `json:"cycles"`
	Categories []Category `json:"categories"`
}

// Category is one category's cycles per message.
type Category struct {
	Name   string  `json:"name"`
	Cycles float64 `json:"cycles"`
}

// layerOf is the layer a level's user measures: the packet driver counts
// as MAC in the study.
func layerOf(lv tophost.Level) cpu.Layer {
	switch lv {
	case tophost.LevelPktDrv, tophost.LevelMAC:
		return cpu.LayerMAC
	case tophost.LevelLLC:
		return cpu.LayerLLC
	case tophost.LevelCLNS:
		return cpu.LayerCLNS
	case tophost.LevelTP4:
		return cpu.LayerTP4
	case tophost.LevelSession:
		return cpu.LayerSES
	}
	return cpu.LayerPRES
}

// plan makes the points: every case's levels at every size, remote and
// in loopback as it says; a point that two cases share is measured once.
func (b *bench) plan() {
	byKey := map[string]*point{}
	for ci, c := range b.p.Cases {
		var wheres []string
		if c.Remote {
			wheres = append(wheres, Remote)
		}
		if c.Loopback {
			wheres = append(wheres, Loopback)
		}
		tp := c.tp4(b.p.TP4)
		for _, where := range wheres {
			for _, lv := range c.levels() {
				line := caseLine{c: ci, lv: lv, where: where}
				for _, n := range b.p.Sizes {
					key := fmt.Sprintf("%v/%s/%d", lv, where, n)
					if lv >= tophost.LevelTP4 {
						key += fmt.Sprintf("/%+v", tp)
					}
					pt, ok := byKey[key]
					if !ok {
						pt = &point{Level: lv.String(), Where: where, Size: n, Messages: b.p.Messages, lv: lv, tp: tp}
						if lv >= tophost.LevelTP4 {
							pt.AckStep, pt.Credit = tp.AckStep, tp.Credit
							ck := tp.Checksum
							pt.Checksum = &ck
						}
						byKey[key] = pt
						if where == Remote {
							b.remote = append(b.remote, pt)
						} else {
							b.loops = append(b.loops, pt)
						}
					}
					pt.Cases = append(pt.Cases, c.Name)
					line.points = append(line.points, pt)
				}
				b.lines = append(b.lines, line)
			}
		}
	}
}

// startRemote starts the next remote point: the recipient's program
// first; the originator's once the recipient's has started.
func (b *bench) startRemote() {
	if b.ri >= len(b.remote) || b.errRemote != nil {
		return
	}
	pt := b.remote[b.ri]
	b.recp.Exec(b.program(pt, b.recp, b.orig, roleRecipient))
}

// startLoop starts the next loopback point.
func (b *bench) startLoop() {
	if b.li >= len(b.loops) || b.errLoop != nil {
		return
	}
	pt := b.loops[b.li]
	b.loop.Exec(b.program(pt, b.loop, b.loop, roleBoth))
}

// program is one end's program of a point.
func (b *bench) program(pt *point, self, peer *tophost.Station, role int) tophost.Program {
	return tophost.Program{
		Name: fmt.Sprintf("%v-%s-%d", pt.lv, pt.Where, pt.Size),
		Load: func(h *tophost.Runtime) error { return b.load(pt, h, self, peer, role) },
		Started: func(*tophost.Runtime) {
			if role == roleRecipient {
				b.orig.Exec(b.program(pt, b.orig, b.recp, roleOriginator))
			}
		},
		Exited: func(_ *tophost.Runtime, err error) {
			first := &b.errRemote
			if role == roleBoth {
				first = &b.errLoop
			}
			if err != nil && *first == nil {
				*first = err
				pt.Error = err.Error()
			}
			pt.exited++
			switch {
			case role == roleBoth:
				b.li++
				b.startLoop()
			case pt.exited == 2 || err != nil && role == roleRecipient:
				b.ri++
				b.startRemote()
			}
		},
	}
}

// load builds one end's program of a point: the layer entities its user
// needs, the user(s), and the measurement's hooks.
func (b *bench) load(pt *point, h *tophost.Runtime, self, peer *tophost.Station, role int) error {
	prot := tophost.Protocols{CLNP: b.p.CLNP, TP4: pt.tp, Session: b.p.Session, Pres: b.p.Pres, TP4Selector: tp4Sel}
	drv := self.Drivers()[0]
	l, err := h.BuildLayers(pt.lv, drv, self.NSAP(), prot)
	if err != nil {
		return err
	}
	if l.CLNS != nil {
		l.CLNS.N.AddRoute(peer.NSAP(), peer.Address())
	}
	end := 0
	if role == roleRecipient {
		end = 1
	}
	pt.cat[end], pt.cpus[end] = h.Catalog(), self.CPU()
	up := tophost.UserParams{Level: pt.lv, Size: pt.Size, Messages: b.p.Messages, EchoEvery: b.p.EchoEvery, Buffers: b.p.Buffers,
		SAP: userSAP, Selector: userSel, Peer: peer.Address(), PeerNSAP: peer.NSAP().WithSelector(userSel)}
	orig, recp := role != roleRecipient, role != roleOriginator
	first := func() {
		for i, c := range pt.cpus {
			if c != nil {
				pt.start[i] = osi.Read(c)
			}
		}
		s := drv.Stats()
		pt.tx0.time, pt.tx0.count = s.TxTime, s.TxTimed
	}
	last := func(r tophost.Result) {
		for i, c := range pt.cpus {
			if c != nil {
				pt.end[i] = osi.Read(c)
			}
		}
		s := drv.Stats()
		pt.tx1.time, pt.tx1.count = s.TxTime, s.TxTimed
		pt.res = r
	}
	if pt.lv < tophost.LevelTP4 {
		u, err := h.NewUser(up, drv, l.MAC, l.LLC, l.CLNS)
		if err != nil {
			return err
		}
		if orig {
			u.Originate()
			u.OnFirstSend = first
			u.OnDone = func() {
				last(u.Result())
				if role == roleBoth {
					pt.Received = u.Received()
				}
				h.Exit()
			}
		}
		if role == roleRecipient {
			u.OnLast = func() { pt.Received = u.Received(); h.Exit() }
		}
		return nil
	}
	var uo, ur *tophost.ConnUser
	mk := func(me, other tophost.ConnEnd) (*tophost.ConnUser, error) {
		u, err := h.NewConnUser(up)
		if err != nil {
			return nil, err
		}
		return u, l.BindConnUser(u, pt.lv, me, other, peer.NSAP())
	}
	if orig {
		if uo, err = mk(origEnd, recpEnd); err != nil {
			return err
		}
		uo.Originate()
		uo.OnFirstSend = first
		uo.OnDone = func() { last(uo.Result()) }
	}
	if recp {
		if ur, err = mk(recpEnd, origEnd); err != nil {
			return err
		}
	}
	released := func() {
		if uo != nil && !uo.Released || ur != nil && !ur.Released {
			return
		}
		if ur != nil {
			pt.Received = ur.Received()
		}
		// The program returns to DOS once its transport connections are
		// released too (the DR answered by a DC, or given up on).
		h.ExitWhen(func() bool {
			for _, k := range l.TP4.T.Conns() {
				if st := k.State(); st != tp4.StateClosed && st != tp4.StateFrozen {
					return false
				}
			}
			return true
		})
	}
	aborted := func() {
		if pt.Error == "" {
			pt.Error = fmt.Sprintf("%s: the connection was lost", self.Name())
		}
		h.Exit()
	}
	for _, u := range []*tophost.ConnUser{uo, ur} {
		if u != nil {
			u.OnReleased, u.OnAborted = released, aborted
		}
	}
	return nil
}

// finish derives the point's figures from its readings.
func (pt *point) finish() {
	r := pt.res
	if !r.Done {
		if pt.Error == "" {
			pt.Error = "the originator had no reply to its last message"
		}
		return
	}
	pt.Mbps, pt.TickMbps = r.Mbps(), r.TickMbps()
	pt.Seconds, pt.Ticks = r.Duration().Seconds(), r.TickEnd-r.TickStart
	got := pt.Received
	switch {
	case got.Corrupt != 0 || got.Messages > uint64(pt.Messages) || got.Messages < uint64(pt.Messages) && pt.lv >= tophost.LevelTP4:
		pt.Error = fmt.Sprintf("the recipient counted %d messages (%d corrupt), want %d intact", got.Messages, got.Corrupt, pt.Messages)
	case got.Messages < uint64(pt.Messages):
		// A connectionless user's recipient slower than its originator
		// loses what its buffers cannot hold; the last message's reply
		// came, so the run is measured: the useful bytes that arrived.
		pt.Lost = uint64(pt.Messages) - got.Messages
		f := float64(got.Messages) / float64(pt.Messages)
		pt.Mbps, pt.TickMbps = pt.Mbps*f, pt.TickMbps*f
	}
	if n := pt.tx1.count - pt.tx0.count; n > 0 && pt.Where == Remote {
		pt.TsendUS = float64((pt.tx1.time-pt.tx0.time)/sim.Time(n)) / float64(sim.Microsecond)
	}
	msgs := float64(pt.Messages)
	for i := range 2 {
		if pt.cpus[i] == nil {
			continue
		}
		var out []LayerSplit
		for _, layer := range []cpu.Layer{cpu.LayerAPPL, cpu.LayerPRES, cpu.LayerSES, cpu.LayerTP4, cpu.LayerCLNS, cpu.LayerLLC, cpu.LayerMAC} {
			if !covers(pt.lv, layer) {
				continue
			}
			s := pt.cat[i].Split(pt.start[i], pt.end[i], layer)
			ls := LayerSplit{Layer: string(layer), Cycles: float64(s.Total) / msgs}
			for _, c := range osi.Categories {
				ls.Categories = append(ls.Categories, Category{Name: c.String(), Cycles: float64(s.Of(c)) / msgs})
			}
			out = append(out, ls)
			if layer == cpu.LayerMAC && pt.Where == Loopback {
				for _, sy := range s.Symbols {
					if sy.Name == "pkt_movsw" {
						pt.CopyUS = float64(pt.cpus[i].Clock().Time(sy.Cycles)/sim.Time(pt.Messages)) / float64(sim.Microsecond)
					}
				}
			}
		}
		if i == 0 {
			pt.Originator = out
		} else {
			pt.Recipient = out
		}
	}
}

// covers reports whether a user of level lv runs layer (its own and the
// ones below it, and the user itself).
func covers(lv tophost.Level, layer cpu.Layer) bool {
	if layer == cpu.LayerAPPL {
		return true
	}
	for l := lv; l >= tophost.LevelPktDrv; l-- {
		if layerOf(l) == layer {
			return true
		}
	}
	return false
}

// split returns the point's split of layer at end (0 originator, 1
// recipient), false when it has none.
func (pt *point) split(end int, layer cpu.Layer) (LayerSplit, bool) {
	s := pt.Originator
	if end == 1 {
		s = pt.Recipient
	}
	for _, ls := range s {
		if ls.Layer == string(layer) {
			return ls, true
		}
	}
	return LayerSplit{}, false
}
