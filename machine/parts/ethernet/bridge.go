package ethernet

import (
	"fmt"
	"strconv"

	"simkron/config"
	"simkron/ethersim"
	"simkron/machine/part"
	"simkron/report"
	"simkron/sim"
)

// Bridges to real hosts: a [[segment.bridge]] joins its segment to a
// Linux TAP device (ethersim.Bridge), so that a real host on the TAP's
// side reaches the simulated hosts and they reach it. A run with a bridge
// is paced to the wall clock (sim.Pacer, by the assembler: the Network is
// a part.Paced): its simulated time never runs ahead of it, and it is
// marked non-deterministic in its result. A run without one builds no
// bridge and no pacer and runs exactly as before.
//
// The network builds a bridge without its TAP; Open opens the TAPs (the
// one step that touches the host's network, and whose failures are the
// user's environment: no device, no permission, a name taken). Only
// simkron run runs a bridged experiment: sweep, compare and calibrate
// refuse one (refuse).

// BridgeSpec is one [[segment.bridge]]: the TAP device the segment is
// bridged to.
type BridgeSpec struct {
	TAP string `toml:"tap" help:"Linux TAP device the segment is bridged to, in simkron's network namespace (at most 15 characters: letters, digits, '.', '-', '_'); created if absent, which needs CAP_NET_ADMIN; simkron never configures its addresses or routes"`
	ethersim.BridgeParams
}

// SetDefaults fills a new [[segment.bridge]] with a queue of 1000 frames.
func (b *BridgeSpec) SetDefaults() { b.BridgeParams = ethersim.DefaultBridgeParams() }

// Validate checks the TAP's name.
func (b BridgeSpec) Validate() error {
	if err := ethersim.ValidTAPName(b.TAP); err != nil {
		return config.Fieldf("tap", "%v", err)
	}
	return nil
}

// pacerInbox bounds the frames from real hosts waiting for the simulation
// (sim.Pacer's inbox), per bridge: at 10 Mbit/s about a quarter of a
// second of minimum-size frames, beyond which the simulation is too far
// behind to be worth feeding.
const pacerInbox = 4096

// bridge is one built bridge.
type bridge struct {
	*ethersim.Bridge
	segment, tap string
	// key is its tap key in the experiment file.
	key []string
}

// checkBridges finds what no single key can: a TAP bridged twice.
func checkBridges(f *config.File, t *Tables) config.Errors {
	var out config.Errors
	type where struct {
		segment string
		line    int
	}
	taps := map[string]where{}
	for i, sg := range t.Segments {
		for j, b := range sg.Bridges {
			key := []string{"segment", strconv.Itoa(i), "bridge", strconv.Itoa(j), "tap"}
			if b.TAP == "" {
				continue // Validate said so
			}
			if w, dup := taps[b.TAP]; dup {
				out = append(out, f.Errorf(key, "TAP %q is already bridged to segment %q (line %d): one TAP device carries one bridge", b.TAP, w.segment, w.line))
				continue
			}
			taps[b.TAP] = where{sg.Name, f.Line(key...)}
		}
	}
	return out
}

// refuse returns a problem at the first bridge of the tables, for a
// command that cannot run a bridged experiment, or nil when there is none.
func refuse(tables any, command string) *part.Problem {
	for i, sg := range tables.(*Tables).Segments {
		if len(sg.Bridges) == 0 {
			continue
		}
		p := part.Problemf([]string{"segment", strconv.Itoa(i), "bridge"}, "segment %q is bridged to TAP %s: a bridged run is paced to the wall clock and exchanges frames with real hosts; run it with simkron run (%s cannot)", sg.Name, sg.Bridges[0].TAP, command)
		return &p
	}
	return nil
}

// addBridges attaches the bridges of seg, the i-th [[segment]], without
// their TAPs.
func (n *Network) addBridges(seg *ethersim.Segment, s SegmentSpec, i int) error {
	for j, b := range s.Bridges {
		br, err := seg.AttachBridge("bridge."+b.TAP, b.BridgeParams)
		if err != nil {
			return fmt.Errorf("segment %q: %w", s.Name, err)
		}
		n.bridges = append(n.bridges, &bridge{Bridge: br, segment: s.Name, tap: b.TAP,
			key: []string{"segment", strconv.Itoa(i), "bridge", strconv.Itoa(j), "tap"}})
	}
	return nil
}

// Paced reports whether the network has a bridge to real hosts.
func (n *Network) Paced() bool { return len(n.bridges) > 0 }

// Inbox bounds the frames from real hosts waiting for the simulation.
func (n *Network) Inbox() int { return pacerInbox * len(n.bridges) }

// Open opens the TAP devices of the bridges (in the calling thread's
// network namespace) and starts their readers, posting to p. Its errors
// are the user's environment (no tun driver, no permission, a name
// another device's or in use), each at its tap key of the experiment
// file; on an error every TAP opened is closed again.
func (n *Network) Open(p *sim.Pacer) error {
	if !n.Paced() || n.pacer != nil {
		return nil
	}
	taps := make([]*ethersim.TAP, 0, len(n.bridges))
	for _, b := range n.bridges {
		t, err := ethersim.OpenTAP(b.tap)
		if err != nil {
			for _, o := range taps {
				o.Close()
			}
			if n.file != nil {
				return config.Errors{n.file.Errorf(b.key, "%v", err)}
			}
			return fmt.Errorf("segment %q: %w", b.segment, err)
		}
		taps = append(taps, t)
	}
	n.pacer = p
	for i, b := range n.bridges {
		b.Open(taps[i], p)
	}
	return nil
}

// Err returns the error that lost a bridge's real side, or nil.
func (n *Network) Err() error {
	for _, b := range n.bridges {
		if err := b.ReadErr(); err != nil {
			return fmt.Errorf("segment %q: the real side was lost: %w", b.segment, err)
		}
	}
	return nil
}

// Close closes the TAPs (a TAP simkron created vanishes).
func (n *Network) Close() {
	for _, b := range n.bridges {
		b.Close()
	}
}

// Nondeterminism names each bridge.
func (n *Network) Nondeterminism() []string {
	var names []string
	for _, b := range n.bridges {
		names = append(names, fmt.Sprintf("segment %s to TAP %s", b.segment, b.tap))
	}
	return names
}

// ReportPaced gives the result each bridge's figures.
func (n *Network) ReportPaced(res *report.Result) {
	for _, b := range n.bridges {
		st := b.Stats()
		rb := report.Bridge{Segment: b.segment, TAP: b.tap, Read: st.Read, Pending: st.Pending,
			InFrames: st.InFrames, InBytes: st.InBytes, OutFrames: st.OutFrames, OutBytes: st.OutBytes,
			DroppedBehind: st.DroppedBehind, DroppedQueue: st.DroppedQueue, Oversized: st.Oversized, Runts: st.Runts,
			Aborted: st.Aborted, BadFCS: st.BadFCS, WriteErrors: st.WriteErrors, QueuePeak: st.QueuePeak}
		for _, err := range []error{b.ReadErr(), b.WriteErr()} {
			if err != nil && rb.Error == "" {
				rb.Error = err.Error()
			}
		}
		res.Bridges = append(res.Bridges, rb)
	}
}
