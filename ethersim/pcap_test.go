package ethersim_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"simkron/ethersim"
	"simkron/internal/testtool"
	"simkron/sim"
)

// captured is one pcap record.
type captured struct {
	At   time.Time
	Data []byte
}

func readPcap(t *testing.T, b []byte) []captured {
	t.Helper()
	rd, err := pcapgo.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if rd.LinkType() != layers.LinkTypeEthernet || rd.Snaplen() != 65535 || rd.Resolution() != gopacket.TimestampResolutionNanosecond {
		t.Errorf("pcap header: link %v snaplen %d resolution %v", rd.LinkType(), rd.Snaplen(), rd.Resolution())
	}
	var out []captured
	for {
		data, ci, err := rd.ReadPacketData()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if ci.CaptureLength != len(data) || ci.Length != len(data) {
			t.Errorf("record lengths %d/%d for %d bytes", ci.CaptureLength, ci.Length, len(data))
		}
		out = append(out, captured{ci.Timestamp.UTC(), data})
	}
}

// udpFrame builds a real Ethernet/IPv4/UDP frame, padded and with FCS.
func udpFrame(t *testing.T, src, dst ethersim.MAC, payload int, id uint16) []byte {
	t.Helper()
	eth := &layers.Ethernet{SrcMAC: src[:], DstMAC: dst[:], EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Id: id, Protocol: layers.IPProtocolUDP,
		SrcIP: []byte{10, 0, 0, src[5]}, DstIP: []byte{10, 0, 0, dst[5]}}
	udp := &layers.UDP{SrcPort: 7000, DstPort: 7001}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if err := gopacket.SerializeLayers(buf, opts, eth, ip, udp, gopacket.Payload(bytes.Repeat([]byte{'x'}, payload))); err != nil {
		t.Fatal(err)
	}
	b := append([]byte(nil), buf.Bytes()...)
	for len(b) < ethersim.MinFrame-ethersim.FCSBytes {
		b = append(b, 0)
	}
	return ethersim.AppendFCS(b)
}

// tapRun runs a shared or switched segment where a and b start sending
// UDP frames at once (so they collide on a shared segment) and returns
// the pcap bytes, the frames sent and the times their last bits left.
func tapRun(t *testing.T, mode string) ([]byte, [][]byte, []sim.Time) {
	p := ethersim.DefaultSegmentParams()
	p.Mode = mode
	r := newRig(t, 11, p)
	r.attach("a", ethersim.FaultParams{Corrupt: 0.5})
	r.attach("b", ethersim.FaultParams{Duplicate: 0.5})
	r.attach("c", ethersim.FaultParams{Drop: 0.5})
	var pcap bytes.Buffer
	if err := r.seg.Tap(&pcap); err != nil {
		t.Fatal(err)
	}
	tr := traceOf(r.seg)
	var frames [][]byte
	for i := range 4 {
		f := udpFrame(t, mac(1), mac(2), 20+400*i, uint16(i))
		g := udpFrame(t, mac(2), ethersim.Broadcast, 100+300*i, uint16(100+i)) // lengths differ from f's
		frames = append(frames, f, g)
		r.send(sim.Time(i)*5*sim.Millisecond, "a", f)
		r.send(sim.Time(i)*5*sim.Millisecond, "b", g)
	}
	r.k.Run()
	if err := r.seg.TapErr(); err != nil {
		t.Fatal(err)
	}
	var ends []sim.Time
	var order [][]byte
	for _, x := range *tr {
		if x.Kind == ethersim.TraceTxEnd {
			ends = append(ends, x.At)
			i := 0
			for i < len(frames) && len(frames[i]) != x.Arg {
				i++
			}
			order = append(order, frames[i])
		}
	}
	return pcap.Bytes(), order, ends
}

func TestPcapTap(t *testing.T) {
	for _, mode := range []string{ethersim.ModeShared, ethersim.ModeSwitch} {
		t.Run(mode, func(t *testing.T) {
			b, frames, ends := tapRun(t, mode)
			if len(frames) != 8 {
				t.Fatalf("%d frames completed, want 8", len(frames))
			}
			var want []captured
			for i, f := range frames {
				want = append(want, captured{time.Unix(0, int64(ends[i]/sim.Nanosecond)).UTC(), f[:len(f)-ethersim.FCSBytes]})
			}
			if diff := cmp.Diff(want, readPcap(t, b)); diff != "" {
				t.Errorf("pcap records (-want +got):\n%s", diff)
			}
			again, _, _ := tapRun(t, mode)
			if !bytes.Equal(b, again) {
				t.Error("the same run wrote different pcap bytes")
			}
			tshark(t, b, len(frames))
		})
	}
}

// tshark checks the capture with Wireshark's dissectors, if installed.
func tshark(t *testing.T, pcap []byte, frames int) {
	path, ok := testtool.Have(t, "tshark")
	if !ok {
		return
	}
	file := filepath.Join(t.TempDir(), "tap.pcap")
	if err := os.WriteFile(file, pcap, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(path, "-r", file, "-T", "fields", "-e", "frame.number", "-e", "_ws.malformed", "-e", "_ws.expert").Output() // expert info lists Error/Warning problems
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != frames {
		t.Errorf("tshark read %d frames, want %d:\n%s", len(lines), frames, out)
	}
	for _, l := range lines {
		if f := strings.Split(l, "\t"); len(f) != 3 || f[1] != "" || strings.Contains(f[2], "Error/") || strings.Contains(f[2], "Warning/") {
			t.Errorf("tshark reports a malformed frame or a problem: %q", l)
		}
	}
}

// failAfter accepts n bytes and then fails.
type failAfter struct{ n int }

func (w *failAfter) Write(b []byte) (int, error) {
	if len(b) > w.n {
		return 0, errors.New("disk full")
	}
	w.n -= len(b)
	return len(b), nil
}

func TestPcapTapErrors(t *testing.T) {
	r := newRig(t, 1, ethersim.DefaultSegmentParams())
	r.attach("a", ethersim.FaultParams{})
	r.attach("b", ethersim.FaultParams{})
	if err := r.seg.Tap(&failAfter{n: 10}); err == nil {
		t.Error("Tap with a failing writer: no error")
	}
	var good bytes.Buffer
	if err := r.seg.Tap(&good); err != nil {
		t.Fatal(err)
	}
	if err := r.seg.Tap(&failAfter{n: 24 + 16 + 30}); err != nil {
		t.Fatal(err)
	}
	r.send(0, "a", frame(mac(2), mac(1), 64, 1))
	r.send(sim.Millisecond, "a", frame(mac(2), mac(1), 64, 2))
	r.k.Run()
	if err := r.seg.TapErr(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("TapErr() = %v, want the write error", err)
	}
	if got := readPcap(t, good.Bytes()); len(got) != 2 {
		t.Errorf("the good tap has %d records, want 2", len(got))
	}
	if len(r.l.rx) != 2 {
		t.Errorf("a failing tap disturbed the network: %d receptions", len(r.l.rx))
	}
}
