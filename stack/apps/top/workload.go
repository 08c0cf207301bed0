// Package top is the TOP study's layer-user throughput measurements
// (docs/reference/osi-top.md, sec. 9) as the workload "top" (it imports
// the TOP host, stack/top, as tophost): on TOP hosts (stack/top
// stations, machine files with [top] enabled), a
// specialised user at a layer — the packet driver itself, MAC, LLC,
// CLNS, TP4, session or presentation — sends a number of messages of a
// size as fast as the layer takes them, and the recipient echoes the
// last; the throughput is the useful bytes (the messages, no headers)
// over the time from the first message sent to the reply to the last,
// measured at the originator exactly and with the PC's 55 ms tick as the
// study did. Connection set-up and release are not timed. Layer APPL.
//
// Each point (a level at a size, remote or in loopback, with a case's
// TP4 settings) is one run of a TOP program on its stations: the
// recipient's program starts first, then the originator's, each built
// with the layer entities its user needs; the next point starts when
// both have exited. Remote points run one after another on the
// originator and the recipient, loopback points on the loopback host, the
// two sequences side by side and apart: they share no state, and an
// error ends only its own sequence, so that a run may simulate the
// loopback host on its own (package machine's islands). A point two
// cases share runs once.
//
// The simulator, not the programs, measures where each layer's
// processing goes: the cores' self cycles per symbol and layer are read
// at the first send and at the last reply, and each layer's cycles are
// split into the study's categories (memory copy, checksum, memory
// management, task scheduling, others) by the category each function is
// filed under (package osi's Catalog).
package top

import (
	"fmt"

	tophost "simkron/stack/top"
	"simkron/workload"
)

func init() {
	workload.Register(workload.Type{
		Name:   "top",
		Help:   "the TOP study's layer users (packet driver, MAC, LLC, CLNS, TP4, session, presentation) on TOP hosts, remote and in loopback: throughput against size, cost splits per layer",
		Params: func() any { p := DefaultParams(); return &p },
		Hosts: func(params any) []workload.HostRef {
			p := params.(*Params)
			var out []workload.HostRef
			for _, r := range []workload.HostRef{{Key: "originator", Name: p.Originator}, {Key: "recipient", Name: p.Recipient}, {Key: "loopback", Name: p.Loopback}} {
				if r.Name != "" {
					out = append(out, r)
				}
			}
			return out
		},
		New: newBench,
		// The remote sequence's hosts, and the loopback one's: each
		// island of its own when no network joins them.
		Groups: func(params any, _ []string) [][]string {
			p := params.(*Params)
			return [][]string{{p.Originator, p.Recipient}, {p.Loopback}}
		},
	})
}

// station finds the TOP station of the host name names, for the key role.
func station(env workload.Env, role, name string) (*tophost.Station, error) {
	h, err := env.Host(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", role, err)
	}
	st, ok := workload.Find[*tophost.Station](h)
	if !ok {
		return nil, fmt.Errorf("%s: host %q does not run the TOP environment ([top] enabled in its machine file)", role, name)
	}
	if len(st.Drivers()) == 0 {
		return nil, fmt.Errorf("%s: host %q has no NE2000 for the packet driver", role, name)
	}
	return st, nil
}

func newBench(env workload.Env, params any) (workload.Workload, error) {
	p := *params.(*Params)
	if err := p.needHosts(); err != nil {
		return nil, err
	}
	b := &bench{p: p}
	need := func(role, name string) (*tophost.Station, error) {
		if name == "" {
			return nil, nil
		}
		return station(env, role, name)
	}
	var err error
	if b.orig, err = need("originator", p.Originator); err != nil {
		return nil, err
	}
	if b.recp, err = need("recipient", p.Recipient); err != nil {
		return nil, err
	}
	if b.loop, err = need("loopback", p.Loopback); err != nil {
		return nil, err
	}
	for _, x := range []struct {
		role string
		st   *tophost.Station
		loop bool
	}{{"originator", b.orig, false}, {"recipient", b.recp, false}, {"loopback", b.loop, true}} {
		if x.st != nil && x.st.Drivers()[0].Loopback() != x.loop {
			if x.loop {
				return nil, fmt.Errorf("%s: host %q's packet driver is on the wire: its loopback cases need [host.top.pktdrv] loopback = true", x.role, x.st.Name())
			}
			return nil, fmt.Errorf("%s: host %q's packet driver loops frames back ([top.pktdrv] loopback): it cannot reach a peer", x.role, x.st.Name())
		}
	}
	b.plan()
	return b, nil
}

// Start gives the first points' programs to the stations.
func (b *bench) Start() {
	b.startRemote()
	b.startLoop()
}
