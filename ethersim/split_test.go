package ethersim_test

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"simkron/ethersim"
	"simkron/sim"
)

// echoer is a station that records what it receives and, for a frame
// addressed to it whose sequence number is below 1000, sends an answer
// back to its source at once if its port is idle (a host that answers).
type echoer struct {
	name string
	me   ethersim.MAC
	att  *ethersim.Attachment
	k    *sim.Scheduler
	got  *[]rx
}

func (e *echoer) Receive(f []byte) {
	*e.got = append(*e.got, rx{At: e.k.Now(), By: e.name, Frame: append([]byte(nil), f...)})
	var dst, src ethersim.MAC
	copy(dst[:], f[0:6])
	copy(src[:], f[6:12])
	seq := binary.BigEndian.Uint32(f[14:18])
	if dst == e.me && seq < 1000 && !e.att.Busy() {
		_ = e.att.Transmit(frame(src, e.me, 64+int(seq%7)*100, seq+1000))
	}
}

// splitTraffic puts stations a, b and c (a, b, c's parts: part[i]) on
// segments, one per part (one in all when there is one part), sends their
// traffic, and returns every reception and each station's counters, and
// the segments' counters summed. run runs the schedulers to the end.
func splitTraffic(t *testing.T, parts []int, run func(ks []*sim.Scheduler, segs []*ethersim.Segment, post *[]posted)) ([]rx, map[string]ethersim.AttachmentStats, ethersim.SegmentStats) {
	t.Helper()
	names := []string{"a", "b", "c"}
	n := slices.Max(parts) + 1
	ks := make([]*sim.Scheduler, n)
	segs := make([]*ethersim.Segment, n)
	var posts []posted
	p := switchParams()
	p.Rate = 100 * sim.Mbps
	for i := range ks {
		ks[i] = sim.NewScheduler(7)
		seg, err := ethersim.NewNetwork(ks[i]).NewSegment("sw", p)
		if err != nil {
			t.Fatal(err)
		}
		if n > 1 {
			from := i
			if err := seg.Split(names, parts, i, func(to int, in ethersim.Ingress) {
				posts = append(posts, posted{from: from, to: to, in: in})
			}); err != nil {
				t.Fatal(err)
			}
		}
		segs[i] = seg
	}
	var got []rx
	atts := map[string]*ethersim.Attachment{}
	for i, name := range names {
		k, seg := ks[parts[i]], segs[parts[i]]
		e := &echoer{name: name, me: mac(byte(i + 1)), k: k, got: &got}
		a, err := seg.Attach(name, e, ethersim.FaultParams{Drop: 0.05})
		if err != nil {
			t.Fatal(err)
		}
		e.att, atts[name] = a, a
	}
	// a streams to c and to b in turn, b to c; c floods a broadcast;
	// each answers what is addressed to it when idle.
	for i := range 40 {
		for j, name := range names {
			dst := mac(byte((j+1+i)%3 + 1))
			if i%13 == 0 {
				dst = ethersim.Broadcast
			}
			seq := uint32(i*3 + j)
			at := sim.Time(i)*90*sim.Microsecond + sim.Time(j)*sim.Microsecond
			k, a := ks[parts[j]], atts[name]
			k.Schedule(sim.NewEvent("send", func() {
				if !a.Busy() {
					_ = a.Transmit(frame(dst, mac(byte(j+1)), 64+int(seq%11)*50, seq))
				}
			}), at)
		}
	}
	run(ks, segs, &posts)
	stats := map[string]ethersim.AttachmentStats{}
	for name, a := range atts {
		stats[name] = a.Stats()
	}
	var sum ethersim.SegmentStats
	for _, s := range segs {
		st := s.Stats()
		sum.Frames += st.Frames
		sum.Bytes += st.Bytes
		sum.BusyTime += st.BusyTime
		sum.Forwarded += st.Forwarded
		sum.Flooded += st.Flooded
		sum.Filtered += st.Filtered
	}
	slices.SortStableFunc(got, func(x, y rx) int {
		return cmp.Or(cmp.Compare(x.At, y.At), cmp.Compare(x.By, y.By))
	})
	return got, stats, sum
}

type posted struct {
	from, to int
	in       ethersim.Ingress
}

// A switch split among schedulers, each part running in windows of the
// lookahead and handing its ingresses over at each window's end, delivers
// what one switch on one scheduler does, at the same instants, with the
// same counts.
func TestSplitSwitchSameAsOne(t *testing.T) {
	want, wantStats, wantSum := splitTraffic(t, []int{0, 0, 0}, func(ks []*sim.Scheduler, _ []*ethersim.Segment, _ *[]posted) {
		ks[0].Run()
	})
	if len(want) < 100 || wantSum.Flooded == 0 || wantSum.Forwarded == 0 {
		t.Fatalf("too little traffic to compare: %d receptions, %+v", len(want), wantSum)
	}
	for _, parts := range [][]int{{0, 1, 2}, {0, 1, 1}, {1, 0, 1}} {
		got, gotStats, gotSum := splitTraffic(t, parts, func(ks []*sim.Scheduler, segs []*ethersim.Segment, posts *[]posted) {
			look := segs[0].Params().Lookahead()
			for {
				w := sim.Never
				for _, k := range ks {
					w = min(w, k.Next())
				}
				if w == sim.Never {
					return
				}
				for _, k := range ks {
					k.SetHorizon(w + look - 1)
					k.RunUntil(w + look - 1)
				}
				for _, p := range *posts {
					if p.in.At < w+look {
						t.Fatalf("an ingress due at %v posted in the window [%v, %v)", p.in.At, w, w+look)
					}
					segs[p.to].Deliver(p.in)
				}
				*posts = (*posts)[:0]
			}
		})
		if diff := gocmp.Diff(want, got); diff != "" {
			t.Errorf("parts %v: receptions differ (-one +split):\n%s", parts, diff)
		}
		if diff := gocmp.Diff(wantStats, gotStats); diff != "" {
			t.Errorf("parts %v: stations' counters differ (-one +split):\n%s", parts, diff)
		}
		if wantSum != gotSum {
			t.Errorf("parts %v: segments' counters %+v, one switch's %+v", parts, gotSum, wantSum)
		}
	}
}

// What Split refuses.
func TestSplitRefuses(t *testing.T) {
	k := sim.NewScheduler(1)
	n := ethersim.NewNetwork(k)
	shared, _ := n.NewSegment("bus", ethersim.DefaultSegmentParams())
	if err := shared.Split([]string{"a", "b"}, []int{0, 1}, 0, func(int, ethersim.Ingress) {}); err == nil {
		t.Error("a shared segment split")
	}
	sw, _ := n.NewSegment("sw", switchParams())
	if err := sw.Split([]string{"a", "b"}, []int{0}, 0, func(int, ethersim.Ingress) {}); err == nil {
		t.Error("split with names and parts of different lengths")
	}
	if err := sw.Split([]string{"a", "a"}, []int{0, 1}, 0, func(int, ethersim.Ingress) {}); err == nil {
		t.Error("split naming a station twice")
	}
	if err := sw.Split([]string{"a", "b"}, []int{0, 1}, 0, func(int, ethersim.Ingress) {}); err != nil {
		t.Fatal(err)
	}
	if _, err := sw.Attach("b", &station{name: "b", l: &log{k: k}}, ethersim.FaultParams{}); err == nil {
		t.Error("another part's station attached")
	}
	if _, err := sw.Attach("c", &station{name: "c", l: &log{k: k}}, ethersim.FaultParams{}); err == nil {
		t.Error("a station the split does not name attached")
	}
}

// A station that attaches to a switch after its first frame takes the
// next port: the switch learns it and forwards to it, and the stations
// numbered before keep their ports (and what the switch learnt of them).
func TestSwitchLateAttach(t *testing.T) {
	r := newRig(t, 1, switchParams())
	r.attach("b", ethersim.FaultParams{})
	r.attach("a", ethersim.FaultParams{})
	r.send(0, "a", frame(mac(2), mac(1), 64, 1)) // flooded to b; a learnt
	r.k.Run()
	r.attach("c", ethersim.FaultParams{})
	r.send(r.k.Now()+sim.Millisecond, "c", frame(mac(1), mac(3), 64, 2))   // to a, learnt
	r.send(r.k.Now()+2*sim.Millisecond, "a", frame(mac(3), mac(1), 64, 3)) // to c alone
	r.k.Run()
	var got []string
	for _, x := range r.l.rx {
		got = append(got, fmt.Sprintf("%s:%d", x.By, binary.BigEndian.Uint32(x.Frame[14:18])))
	}
	if want := []string{"b:1", "a:2", "c:3"}; !slices.Equal(got, want) {
		t.Errorf("received %v, want %v", got, want)
	}
	if st := r.seg.Stats(); st.Flooded != 1 || st.Forwarded != 2 {
		t.Errorf("stats %+v, want 1 flooded and 2 forwarded", st)
	}
}
