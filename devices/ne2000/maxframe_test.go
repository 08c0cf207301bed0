package ne2000_test

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/config"
	"simkron/devices/ne2000"
	"simkron/ethersim"
	"simkron/sim"
)

// FDDI-sized frames: MTU 4352 (RFC 1390) gives 14 + 4352 bytes loaded and
// 4370 on the wire with the FCS.
const (
	fddiMTU   = 4352
	fddiFrame = 14 + fddiMTU + 4
)

// newRigWith is newRig with the card built from p (its MAC replaced by
// ownMAC).
func newRigWith(t testing.TB, p ne2000.Params) *rig {
	r := newRig(t)
	p.MAC = ownMAC
	r.n = ne2000.New(r.k, "host.nic0", p, r.irq, r.log)
	r.n.SetWire(r.wire)
	return r
}

// readLong reads the frame at BNRY+1 (FCS included), with no length check
// beyond the header's own, and releases it; ok is false when the ring is
// empty.
func (r *rig) readLong() (f []byte, h header, ok bool) {
	r.t.Helper()
	r.out(cr, crPage1)
	cur := r.in(curr)
	r.out(cr, crStart)
	this := r.in(bnry) + 1
	if this >= rxStop {
		this = rxStart
	}
	if this == cur {
		return nil, header{}, false
	}
	b := r.blockIn(uint16(this)<<8, 4)
	h = header{Status: b[0], Next: b[1], Count: binary.LittleEndian.Uint16(b[2:]), This: this}
	f = r.blockIn(uint16(this)<<8+4, int(h.Count)-4)
	bn := h.Next - 1
	if h.Next == rxStart {
		bn = rxStop - 1
	}
	r.out(bnry, bn)
	r.out(isr, ne2000.IsrPRX|ne2000.IsrRXE)
	return f, h, true
}

func TestMaxFrameTransmit(t *testing.T) {
	fddi := ne2000.DefaultParams()
	fddi.MaxFrame = fddiFrame
	tests := []struct {
		name    string
		p       ne2000.Params
		loaded  int
		tcr     byte
		wireLen int // 0: refused
	}{
		{"default maximum", ne2000.DefaultParams(), 1514, 0, 1518},
		{"default one too many", ne2000.DefaultParams(), 1515, 0, 0},
		{"default CRC inhibited at the maximum", ne2000.DefaultParams(), 1518, ne2000.TcrCRC, 1518},
		{"default CRC inhibited, one too many", ne2000.DefaultParams(), 1519, ne2000.TcrCRC, 0},
		{"FDDI MTU", fddi, 14 + fddiMTU, 0, fddiFrame},
		{"FDDI MTU plus one", fddi, 15 + fddiMTU, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRigWith(t, tt.p)
			r.init(0x04)
			r.out(tcr, tt.tcr)
			f := frame(broadcastMAC, tt.loaded-14, 9)[:tt.loaded]
			r.xmit(f)
			if tt.wireLen == 0 {
				if len(r.wire.frames) != 0 {
					t.Fatalf("a %d-byte transmit reached the wire", tt.loaded)
				}
				if got, want := r.in(isr)&^ne2000.IsrRDC, byte(ne2000.IsrTXE); got != want {
					t.Errorf("ISR = %#x, want %#x", got, want)
				}
				if got := r.in(tsr); got != ne2000.TsrABT {
					t.Errorf("TSR = %#x, want ABT", got)
				}
				if r.in(cr)&ne2000.CrTXP != 0 {
					t.Error("TXP still set after a refused transmit")
				}
				recs := r.log.Records()
				if len(recs) != 1 || !strings.Contains(recs[0].Msg, "max_frame") {
					t.Errorf("guest errors %v, want one naming max_frame", recs)
				}
				if s := r.n.Stats(); s.TxErrors != 1 || s.TxFrames != 0 {
					t.Errorf("TxErrors %d TxFrames %d, want 1 and 0", s.TxErrors, s.TxFrames)
				}
				return
			}
			if len(r.wire.frames) != 1 {
				t.Fatalf("wire got %d frames, want 1", len(r.wire.frames))
			}
			got := r.wire.frames[0]
			if len(got) != tt.wireLen || !bytes.Equal(got[:tt.loaded], f) {
				t.Errorf("wire frame of %d bytes, want %d starting with the loaded bytes", len(got), tt.wireLen)
			}
			if tt.tcr&ne2000.TcrCRC == 0 && !fcsOK(got) {
				t.Error("bad FCS on the wire")
			}
			r.n.TxDone(ethersim.TxStatus{OK: true})
			if r.in(isr)&ne2000.IsrPTX == 0 {
				t.Error("no PTX")
			}
			r.noGuestErrors()
		})
	}
}

// TestLongFrameReceive: the DP8390 has no maximum on receive, so a card
// left at the Ethernet max_frame still stores a 4370-byte frame, byte for
// byte, with the header a driver expects; and FDDI-sized frames wrap
// around the ring like any others.
func TestLongFrameReceive(t *testing.T) {
	r := newRig(t) // max_frame 1518: it bounds transmission only
	r.init(0x04)
	f := frame(ownMAC, fddiMTU, 1)
	if len(f) != fddiFrame {
		t.Fatalf("test frame is %d bytes", len(f))
	}
	r.n.Receive(f)
	got, h, ok := r.readLong()
	if !ok {
		t.Fatal("nothing stored")
	}
	if !bytes.Equal(got, f) {
		t.Error("stored frame differs from the one received")
	}
	count := uint16(4 + fddiFrame)
	want := header{Status: ne2000.RsrPRX, Next: rxStart + 1 + byte(count>>8), Count: count, This: rxStart}
	if d := cmp.Diff(want, h); d != "" {
		t.Errorf("header (-want +got):\n%s", d)
	}

	// The 52-page ring takes two 18-page frames; the third crosses PSTOP.
	// Read each one after it arrives, and twice two in a row.
	wrapped := 0
	for i := range 12 {
		fs := [][]byte{frame(ownMAC, fddiMTU-i, byte(i))}
		if i%5 == 4 {
			fs = append(fs, frame(ownMAC, fddiMTU, byte(100+i)))
		}
		for _, f := range fs {
			r.n.Receive(f)
		}
		for j, f := range fs {
			got, h, ok := r.readLong()
			if !ok || !bytes.Equal(got, f) {
				t.Fatalf("round %d frame %d: read back %d bytes (ok %v), want the %d received", i, j, len(got), ok, len(f))
			}
			if h.Next < h.This && h.Next != rxStart {
				wrapped++
			}
		}
		if _, _, ok := r.readLong(); ok {
			t.Fatalf("round %d: ring holds more frames than were received", i)
		}
	}
	if wrapped == 0 {
		t.Error("no frame spanned the ring's end")
	}
	if s := r.n.Stats(); s.Overflows != 0 || s.Missed != 0 || s.RxFrames != 15 {
		t.Errorf("RxFrames %d Overflows %d Missed %d, want 15, 0, 0", s.RxFrames, s.Overflows, s.Missed)
	}

	// Three at once need 54 pages: the third overflows the ring.
	for i := range 3 {
		r.n.Receive(frame(ownMAC, fddiMTU, byte(i)))
	}
	if s := r.n.Stats(); s.Overflows != 1 || r.in(isr)&ne2000.IsrOVW == 0 {
		t.Errorf("Overflows %d, ISR %#x: want the third frame to overflow", s.Overflows, r.in(isr))
	}
	r.noGuestErrors()
}

func TestMaxFrameParams(t *testing.T) {
	if got := ne2000.DefaultParams().MaxFrame; got != 1518 {
		t.Errorf("default max_frame %v, want 1518B", got)
	}
	tests := []struct {
		max     sim.Size
		wantErr bool
	}{
		{63, true}, {64, false}, {1518, false}, {fddiFrame, false},
		{ne2000.MaxFrameLimit, false}, {ne2000.MaxFrameLimit + 1, true}, {0, true},
	}
	for _, tt := range tests {
		p := ne2000.DefaultParams()
		p.MaxFrame = tt.max
		err := p.Validate()
		if (err != nil) != tt.wantErr {
			t.Errorf("max_frame %v: Validate = %v, want error %v", tt.max, err, tt.wantErr)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "max_frame: ") {
			t.Errorf("max_frame %v: error %q does not start with the key", tt.max, err)
		}
	}
	// The bounds simkron params prints are the ones Validate applies.
	f, _ := reflect.TypeFor[ne2000.Params]().FieldByName("MaxFrame")
	for tag, want := range map[string]sim.Size{"min": 64, "max": ne2000.MaxFrameLimit} {
		got, err := sim.ParseSize(f.Tag.Get(tag))
		if err != nil || got != want {
			t.Errorf("%s tag %q, want %v", tag, f.Tag.Get(tag), want)
		}
	}
}

// TestMaxFrameDecode reads max_frame from a machine file's
// [device.params] table.
func TestMaxFrameDecode(t *testing.T) {
	src := "[[device]]\nname = \"nic0\"\n[device.params]\nmax_frame = %q\n"
	for _, tt := range []struct {
		val, wantErr string
		want         sim.Size
	}{
		{"4370B", "", fddiFrame},
		{"20KiB", "m.toml:4: device[0].params.max_frame: ", 0},
	} {
		f, err := config.ParseBytes("m.toml", []byte(strings.ReplaceAll(src, "%q", `"`+tt.val+`"`)))
		if err != nil {
			t.Fatal(err)
		}
		p := ne2000.DefaultParams()
		err = f.DecodeInto(&p, "device", "0", "params")
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tt.val, err)
		case tt.wantErr == "" && p.MaxFrame != tt.want:
			t.Errorf("%s: max_frame %v, want %v", tt.val, p.MaxFrame, tt.want)
		case tt.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.wantErr)):
			t.Errorf("%s: error %v, want one starting %q", tt.val, err, tt.wantErr)
		}
	}
}
