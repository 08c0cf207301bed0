package ethersim_test

import (
	"bytes"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"simkron/ethersim"
	"simkron/sim"
)

// fakePort is a bridge's real side in memory: frames sent on in are read
// by the bridge, frames it writes are kept.
type fakePort struct {
	in      chan []byte
	closed  chan struct{}
	once    sync.Once
	mu      sync.Mutex
	out     [][]byte
	readErr error // returned once in is closed
	writeOK bool
}

func newFakePort() *fakePort {
	return &fakePort{in: make(chan []byte), closed: make(chan struct{}), writeOK: true}
}

func (p *fakePort) ReadFrame(b []byte) (int, error) {
	select {
	case f, ok := <-p.in:
		if !ok {
			return 0, p.readErr
		}
		return copy(b, f), nil
	case <-p.closed:
		return 0, os.ErrClosed
	}
}

func (p *fakePort) WriteFrame(f []byte) error {
	if !p.writeOK {
		return errors.New("link down")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.out = append(p.out, append([]byte(nil), f...))
	return nil
}

func (p *fakePort) Close() error {
	p.once.Do(func() { close(p.closed) })
	return nil
}

func (p *fakePort) written() [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([][]byte(nil), p.out...)
}

// bridgeRig is a test segment with a station and a bridge on a fake port,
// paced to the wall clock.
type bridgeRig struct {
	*rig
	b     *ethersim.Bridge
	port  *fakePort
	pacer *sim.Pacer
}

func newBridgeRig(t *testing.T, p ethersim.BridgeParams, inbox int) *bridgeRig {
	t.Helper()
	r := newRig(t, 1, ethersim.DefaultSegmentParams())
	r.attach("host", ethersim.FaultParams{})
	b, err := r.seg.AttachBridge("bridge.tap0", p)
	if err != nil {
		t.Fatal(err)
	}
	br := &bridgeRig{rig: r, b: b, port: newFakePort(), pacer: sim.NewPacer(r.k, inbox)}
	b.Open(br.port, br.pacer)
	t.Cleanup(func() { b.Close() })
	return br
}

// run paces the simulation up to limit.
func (br *bridgeRig) run(limit sim.Time) {
	for br.pacer.Step(limit, 1<<16) {
	}
}

// raw builds an n-byte frame as the real side reads it (no FCS).
func raw(dst, src ethersim.MAC, n int, seq uint32) []byte {
	f := frame(dst, src, n+ethersim.FCSBytes, seq)
	return f[:n]
}

// Frames cross both ways: the real side's, padded and given an FCS, reach
// the station; the station's reach the real side without their FCS.
func TestBridgeCarriesBothWays(t *testing.T) {
	br := newBridgeRig(t, ethersim.DefaultBridgeParams(), 16)
	short := raw(mac(1), mac(9), 42, 1) // an ARP request's length
	long := raw(mac(1), mac(9), 1514, 2)
	go func() { br.port.in <- short; br.port.in <- long }()
	out := frame(mac(9), mac(1), 100, 3)
	br.send(5*sim.Millisecond, "host", out)
	br.run(20 * sim.Millisecond)

	var got [][]byte
	for _, r := range br.l.rx {
		got = append(got, r.Frame)
	}
	padded := append(append([]byte(nil), short...), make([]byte, 60-42)...)
	want := [][]byte{ethersim.AppendFCS(padded), ethersim.AppendFCS(append([]byte(nil), long...))}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("frames at the station (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]byte{out[:len(out)-4]}, br.port.written()); diff != "" {
		t.Errorf("frames at the real side (-want +got):\n%s", diff)
	}
	st := br.b.Stats()
	st.QueuePeak = 0 // the long frame may or may not come while the short one is sent
	want2 := ethersim.BridgeStats{Read: 2, InFrames: 2, InBytes: 42 + 1514, OutFrames: 1, OutBytes: 96}
	if diff := cmp.Diff(want2, st); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	if s := br.seg.Stats(); s.Frames != 3 {
		t.Errorf("segment carried %d frames, want 3", s.Frames)
	}
}

// Frames too short or too long for the segment are counted, not sent;
// the longest that fits goes.
func TestBridgeLengths(t *testing.T) {
	br := newBridgeRig(t, ethersim.DefaultBridgeParams(), 16)
	go func() {
		br.port.in <- raw(mac(1), mac(9), 13, 1)
		br.port.in <- raw(mac(1), mac(9), 1515, 2)
		br.port.in <- raw(mac(1), mac(9), 1514, 3)
	}()
	br.run(10 * sim.Millisecond)
	st := br.b.Stats()
	if st.Runts != 1 || st.Oversized != 1 || st.InFrames != 1 || len(br.l.rx) != 1 {
		t.Errorf("stats %+v, %d frames at the station: want 1 runt, 1 oversized, 1 sent", st, len(br.l.rx))
	}
}

// Frames that come faster than the simulated wire carries wait in the
// queue; those that find it full are dropped and counted.
func TestBridgeQueueFull(t *testing.T) {
	br := newBridgeRig(t, ethersim.BridgeParams{Queue: 2}, 64)
	// Ten full frames read in microseconds: the first takes 1.2 ms of
	// the wire, two wait, seven find the queue full.
	frames := make([][]byte, 10)
	for i := range frames {
		frames[i] = raw(mac(1), mac(9), 1514, uint32(i))
	}
	read := make(chan struct{})
	go func() {
		for _, f := range frames {
			br.port.in <- f
		}
		close(read)
	}()
	<-read
	br.run(20 * sim.Millisecond)
	st := br.b.Stats()
	if st.InFrames != 3 || st.DroppedQueue != 7 || st.QueuePeak != 2 {
		t.Errorf("stats %+v: want 3 sent, 7 dropped at the queue, peak 2", st)
	}
	if len(br.l.rx) != 3 {
		t.Fatalf("%d frames at the station, want 3", len(br.l.rx))
	}
	for i, r := range br.l.rx {
		if !bytes.Equal(r.Frame[:1514], frames[i]) {
			t.Errorf("frame %d at the station is not the %d-th read", i, i)
		}
	}
}

// Frames the simulation does not take in time (its inbox full) are
// counted as dropped behind.
func TestBridgeDroppedBehind(t *testing.T) {
	br := newBridgeRig(t, ethersim.DefaultBridgeParams(), 2)
	// Nothing drains the inbox while five frames come.
	for i := range 5 {
		br.port.in <- raw(mac(1), mac(9), 60, uint32(i))
	}
	// The fifth was read when the port is asked for a sixth: wait for
	// the reader to have posted it.
	deadline := time.Now().Add(5 * time.Second)
	for br.b.Stats().DroppedBehind < 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	br.run(5 * sim.Millisecond)
	st := br.b.Stats()
	if st.DroppedBehind != 3 || st.InFrames != 2 {
		t.Errorf("stats %+v: want 3 dropped behind, 2 sent", st)
	}
}

// A frame damaged on the wire is not passed on; a write the port refuses
// is counted and its error kept.
func TestBridgeBadFCSAndWriteErrors(t *testing.T) {
	br := newBridgeRig(t, ethersim.DefaultBridgeParams(), 4)
	bad := frame(mac(9), mac(1), 100, 1)
	bad[len(bad)-1] ^= 0xFF
	br.send(sim.Millisecond, "host", bad)
	br.at(2*sim.Millisecond, func() { br.port.writeOK = false })
	br.send(3*sim.Millisecond, "host", frame(mac(9), mac(1), 100, 2))
	br.run(5 * sim.Millisecond)
	st := br.b.Stats()
	if st.BadFCS != 1 || st.WriteErrors != 1 || st.OutFrames != 0 || len(br.port.written()) != 0 {
		t.Errorf("stats %+v: want 1 bad FCS, 1 write error, nothing out", st)
	}
	if err := br.b.WriteErr(); err == nil || !bytes.Contains([]byte(err.Error()), []byte("link down")) {
		t.Errorf("WriteErr = %v, want the port's error", err)
	}
}

// A port that fails (not closed by the bridge) stops the reader, and the
// error says so; Close wakes a reader that waits.
func TestBridgeReadErrorAndClose(t *testing.T) {
	br := newBridgeRig(t, ethersim.DefaultBridgeParams(), 4)
	br.port.readErr = errors.New("device gone")
	close(br.port.in)
	deadline := time.Now().Add(5 * time.Second)
	for br.b.ReadErr() == nil && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if err := br.b.ReadErr(); err == nil || !bytes.Contains([]byte(err.Error()), []byte("device gone")) {
		t.Errorf("ReadErr = %v, want the port's error", err)
	}

	other := newBridgeRig(t, ethersim.DefaultBridgeParams(), 4)
	done := make(chan struct{})
	go func() { other.b.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return: the reader was not woken")
	}
	if err := other.b.ReadErr(); err != nil {
		t.Errorf("ReadErr after Close = %v, want nil", err)
	}
}

func TestBridgeAttachErrors(t *testing.T) {
	r := newRig(t, 1, ethersim.DefaultSegmentParams())
	if _, err := r.seg.AttachBridge("bridge.tap0", ethersim.BridgeParams{}); err == nil {
		t.Error("a bridge with a queue of 0 was attached")
	}
	if _, err := r.seg.AttachBridge("bridge.tap0", ethersim.DefaultBridgeParams()); err != nil {
		t.Fatal(err)
	}
	if _, err := r.seg.AttachBridge("bridge.tap0", ethersim.DefaultBridgeParams()); err == nil {
		t.Error("a second bridge of the same name was attached")
	}
}

func TestBridgeTAPNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"sk0", true}, {"tap-sim_1.a", true}, {"abcdefghijklmno", true},
		{"", false}, {"abcdefghijklmnop", false}, {".", false}, {"..", false},
		{"tap%d", false}, {"a/b", false}, {"a:b", false}, {"a b", false},
	} {
		if err := ethersim.ValidTAPName(tc.name); (err == nil) != tc.ok {
			t.Errorf("ValidTAPName(%q) = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

// Whatever bytes the real side sends, the bridge passes them on padded
// with their FCS, or counts them.
func FuzzBridgeFromPort(f *testing.F) {
	f.Add(raw(mac(1), mac(9), 42, 1))
	f.Add([]byte{1, 2, 3})
	f.Add(make([]byte, 1515))
	f.Fuzz(func(t *testing.T, in []byte) {
		br := newBridgeRig(t, ethersim.DefaultBridgeParams(), 4)
		br.port.in <- in
		// The frame is read once the reader asks for the next.
		go func() { br.port.in <- nil }()
		br.run(2 * sim.Millisecond)
		st := br.b.Stats()
		switch {
		case len(in) < ethersim.EthernetHeaderBytes:
			if st.Runts < 1 {
				t.Fatalf("a %d-byte frame was not counted as a runt: %+v", len(in), st)
			}
		case len(in)+4 > ethersim.MaxFrame:
			if st.Oversized != 1 {
				t.Fatalf("a %d-byte frame was not counted as oversized: %+v", len(in), st)
			}
		default:
			if len(br.l.rx) != 1 {
				t.Fatalf("%d frames reached the station, want 1 (%+v)", len(br.l.rx), st)
			}
			got := br.l.rx[0].Frame
			want := append(append([]byte(nil), in...), make([]byte, max(0, 60-len(in)))...)
			if !ethersim.CheckFCS(got) || !bytes.Equal(got[:len(got)-4], want) {
				t.Fatalf("frame at the station %x, want %x with its FCS", got, want)
			}
		}
	})
}
