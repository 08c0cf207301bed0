package ethersim_test

import (
	"encoding/binary"
	"testing"

	"simkron/ethersim"
	"simkron/sim"
)

// rx is one frame a station received.
type rx struct {
	At    sim.Time
	By    string
	Frame []byte
}

// log collects receptions and transmit completions of every station on a
// test network.
type log struct {
	k    *sim.Scheduler
	rx   []rx
	done []txDone
}

type txDone struct {
	At     sim.Time
	By     string
	Status ethersim.TxStatus
}

// station is a test Station that records what it receives.
type station struct {
	name string
	l    *log
}

func (s *station) Receive(frame []byte) {
	s.l.rx = append(s.l.rx, rx{At: s.l.k.Now(), By: s.name, Frame: append([]byte(nil), frame...)})
}

// rig is a network with one segment under test.
type rig struct {
	t   testing.TB
	k   *sim.Scheduler
	net *ethersim.Network
	seg *ethersim.Segment
	l   *log
	att map[string]*ethersim.Attachment
}

func newRig(t testing.TB, seed uint64, p ethersim.SegmentParams) *rig {
	t.Helper()
	k := sim.NewScheduler(seed)
	n := ethersim.NewNetwork(k)
	seg, err := n.NewSegment("lan", p)
	if err != nil {
		t.Fatal(err)
	}
	return &rig{t: t, k: k, net: n, seg: seg, l: &log{k: k}, att: map[string]*ethersim.Attachment{}}
}

// attach adds station name, recording its receptions and completions.
func (r *rig) attach(name string, f ethersim.FaultParams) *ethersim.Attachment {
	r.t.Helper()
	a, err := r.seg.Attach(name, &station{name: name, l: r.l}, f)
	if err != nil {
		r.t.Fatal(err)
	}
	a.OnTxDone = func(st ethersim.TxStatus) {
		r.l.done = append(r.l.done, txDone{At: r.k.Now(), By: name, Status: st})
	}
	r.att[name] = a
	return a
}

// at runs fn at simulated time t.
func (r *rig) at(t sim.Time, fn func()) {
	r.k.Schedule(sim.NewEvent("test", fn), t)
}

// send transmits frame from name at time t, failing the test on error.
func (r *rig) send(t sim.Time, name string, frame []byte) {
	r.at(t, func() {
		if err := r.att[name].Transmit(frame); err != nil {
			r.t.Errorf("Transmit from %s at %v: %v", name, t, err)
		}
	})
}

// mac returns the test MAC address of station i.
func mac(i byte) ethersim.MAC { return ethersim.MAC{0x02, 0, 0, 0, 0, i} }

// frame builds an n-byte frame (FCS included) from src to dst whose
// payload starts with seq.
func frame(dst, src ethersim.MAC, n int, seq uint32) []byte {
	b := make([]byte, 0, n)
	b = append(b, dst[:]...)
	b = append(b, src[:]...)
	b = binary.BigEndian.AppendUint16(b, 0x88b5) // IEEE local experimental EtherType
	b = binary.BigEndian.AppendUint32(b, seq)
	for len(b) < n-ethersim.FCSBytes {
		b = append(b, byte(len(b)))
	}
	return ethersim.AppendFCS(b)
}

// wire is the time an n-byte frame occupies a 10 Mbit/s wire.
func wire(n int) sim.Time { return sim.Time(ethersim.PreambleBytes+n) * 800 * sim.Nanosecond }

const (
	us  = sim.Microsecond
	ns  = sim.Nanosecond
	ifg = 9600 * ns
)
