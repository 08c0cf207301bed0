package ethersim_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/ethersim"
	"simkron/sim"
)

func TestRegisterHost(t *testing.T) {
	n := ethersim.NewNetwork(sim.NewScheduler(1))
	ip := func(last byte) ethersim.IP4 { return ethersim.IP4{10, 0, 0, last} }
	steps := []struct {
		name    string
		mac     ethersim.MAC
		ip      ethersim.IP4
		wantErr string
	}{
		{"hostB", mac(2), ip(2), ""},
		{"hostA", mac(1), ip(1), ""},
		{"hostC", mac(3), ip(3), ""},
		{"hostA", mac(9), ip(9), "registered twice"},
		{"hostD", mac(1), ip(4), "MAC 02:00:00:00:00:01 already belongs to \"hostA\""},
		{"hostD", mac(4), ip(2), "IP 10.0.0.2 already belongs to \"hostB\""},
		{"", mac(5), ip(5), "no name"},
		// Hosts without an IP address (no Internet protocols).
		{"hostE", mac(6), ethersim.IP4{}, ""},
		{"hostF", mac(7), ethersim.IP4{}, ""},
	}
	for _, s := range steps {
		err := n.RegisterHost(s.name, s.mac, s.ip)
		switch {
		case s.wantErr == "" && err != nil:
			t.Errorf("RegisterHost(%q): %v", s.name, err)
		case s.wantErr != "" && (err == nil || !strings.Contains(err.Error(), s.wantErr)):
			t.Errorf("RegisterHost(%q) = %v, want an error containing %q", s.name, err, s.wantErr)
		}
	}
	want := []ethersim.HostEntry{
		{Name: "hostA", MAC: mac(1), IP: ip(1)},
		{Name: "hostB", MAC: mac(2), IP: ip(2)},
		{Name: "hostC", MAC: mac(3), IP: ip(3)},
		{Name: "hostE", MAC: mac(6)},
		{Name: "hostF", MAC: mac(7)},
	}
	if diff := cmp.Diff(want, n.Hosts()); diff != "" {
		t.Errorf("Hosts() (-want +got):\n%s", diff)
	}
	if h, ok := n.HostByIP(ip(3)); !ok || h.Name != "hostC" {
		t.Errorf("HostByIP(10.0.0.3) = %v, %v", h, ok)
	}
	if h, ok := n.HostByMAC(mac(2)); !ok || h.Name != "hostB" {
		t.Errorf("HostByMAC(2) = %v, %v", h, ok)
	}
	if _, ok := n.HostByIP(ip(99)); ok {
		t.Error("HostByIP(unknown) found a host")
	}
	if _, ok := n.HostByIP(ethersim.IP4{}); ok {
		t.Error("HostByIP(0.0.0.0) found a host")
	}
}

func TestSegmentParamsValidate(t *testing.T) {
	def := ethersim.DefaultSegmentParams()
	with := func(f func(p *ethersim.SegmentParams)) ethersim.SegmentParams {
		p := def
		f(&p)
		return p
	}
	tests := []struct {
		name    string
		p       ethersim.SegmentParams
		wantErr string // prefix; "" for valid
	}{
		{"default", def, ""},
		{"switch", with(func(p *ethersim.SegmentParams) { p.Mode = ethersim.ModeSwitch }), ""},
		{"rate", with(func(p *ethersim.SegmentParams) { p.Rate = 999 }), "rate: "},
		{"negative propagation", with(func(p *ethersim.SegmentParams) { p.Propagation = -1 }), "propagation: "},
		{"propagation beyond half a slot", with(func(p *ethersim.SegmentParams) { p.Propagation = 25601 * ns }), "propagation: "},
		{"half a slot exactly", with(func(p *ethersim.SegmentParams) { p.Propagation = 25600 * ns }), ""},
		{"long links are fine on a switch", with(func(p *ethersim.SegmentParams) {
			p.Mode, p.Propagation = ethersim.ModeSwitch, 5*sim.Millisecond
		}), ""},
		{"mode", with(func(p *ethersim.SegmentParams) { p.Mode = "hub" }), "mode: "},
		{"empty mode", with(func(p *ethersim.SegmentParams) { p.Mode = "" }), "mode: "},
		{"max_frame small", with(func(p *ethersim.SegmentParams) { p.MaxFrame = 63 }), "max_frame: "},
		{"max_frame huge", with(func(p *ethersim.SegmentParams) { p.MaxFrame = 64 * sim.KiB }), "max_frame: "},
		{"fddi mtu", with(func(p *ethersim.SegmentParams) { p.MaxFrame = 4500 }), ""},
		{"switch_latency", with(func(p *ethersim.SegmentParams) { p.SwitchLatency = -1 }), "switch_latency: "},
	}
	for _, tc := range tests {
		err := tc.p.Validate()
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: Validate() = %v", tc.name, err)
		case tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)):
			t.Errorf("%s: Validate() = %v, want an error starting %q", tc.name, err, tc.wantErr)
		}
	}
	want := ethersim.SegmentParams{Rate: 10 * sim.Mbps, Propagation: us, Mode: "shared", MaxFrame: 1518, SwitchLatency: 5 * us}
	if diff := cmp.Diff(want, def); diff != "" {
		t.Errorf("DefaultSegmentParams (-want +got):\n%s", diff)
	}
}

func TestFaultParamsValidate(t *testing.T) {
	tests := []struct {
		f       ethersim.FaultParams
		wantErr string
	}{
		{ethersim.FaultParams{}, ""},
		{ethersim.FaultParams{Drop: 1, Corrupt: 1, Duplicate: 1}, ""},
		{ethersim.FaultParams{Drop: 1.5}, "drop: "},
		{ethersim.FaultParams{Corrupt: -0.1}, "corrupt: "},
		{ethersim.FaultParams{Duplicate: math.NaN()}, "duplicate: "},
	}
	for _, tc := range tests {
		err := tc.f.Validate()
		if (tc.wantErr == "") != (err == nil) || (err != nil && !strings.HasPrefix(err.Error(), tc.wantErr)) {
			t.Errorf("%+v.Validate() = %v, want %q", tc.f, err, tc.wantErr)
		}
	}
}

func TestSegmentAndAttachErrors(t *testing.T) {
	n := ethersim.NewNetwork(sim.NewScheduler(1))
	seg, err := n.NewSegment("lan", ethersim.DefaultSegmentParams())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.NewSegment("lan", ethersim.DefaultSegmentParams()); err == nil {
		t.Error("second segment \"lan\" accepted")
	}
	bad := ethersim.DefaultSegmentParams()
	bad.Mode = "ring"
	if _, err := n.NewSegment("ring", bad); err == nil || !strings.Contains(err.Error(), "mode: ") {
		t.Errorf("NewSegment with a bad mode = %v", err)
	}
	if _, err := n.NewSegment("wan", ethersim.DefaultSegmentParams()); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range n.Segments() {
		names = append(names, s.Name())
	}
	if diff := cmp.Diff([]string{"lan", "wan"}, names); diff != "" {
		t.Errorf("Segments (-want +got):\n%s", diff)
	}
	l := &log{}
	if _, err := seg.Attach("hostA.nic0", &station{l: l}, ethersim.FaultParams{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		st   ethersim.Station
		f    ethersim.FaultParams
	}{
		{"hostA.nic0", &station{l: l}, ethersim.FaultParams{}},
		{"", &station{l: l}, ethersim.FaultParams{}},
		{"hostB.nic0", nil, ethersim.FaultParams{}},
		{"hostB.nic0", &station{l: l}, ethersim.FaultParams{Drop: 2}},
	} {
		if _, err := seg.Attach(tc.name, tc.st, tc.f); err == nil {
			t.Errorf("Attach(%q, %v, %+v) accepted", tc.name, tc.st, tc.f)
		}
	}
}

func TestTransmitErrors(t *testing.T) {
	p := ethersim.DefaultSegmentParams()
	p.MaxFrame = 4500
	r := newRig(t, 1, p)
	a := r.attach("a", ethersim.FaultParams{})
	r.attach("b", ethersim.FaultParams{})
	for _, n := range []int{0, 63, 4501} {
		if err := a.Transmit(make([]byte, n)); err == nil {
			t.Errorf("Transmit(%d bytes) accepted", n)
		}
	}
	if a.Busy() {
		t.Fatal("Busy after refused transmissions")
	}
	if err := a.Transmit(frame(mac(2), mac(1), 4500, 1)); err != nil {
		t.Fatalf("Transmit(4500 bytes) with max_frame 4500: %v", err)
	}
	if !a.Busy() {
		t.Error("not Busy while sending")
	}
	if err := a.Transmit(frame(mac(2), mac(1), 64, 2)); !errors.Is(err, ethersim.ErrBusy) {
		t.Errorf("Transmit while busy = %v, want ErrBusy", err)
	}
	r.k.Run()
	if a.Busy() || len(r.l.rx) != 1 || len(r.l.rx[0].Frame) != 4500 {
		t.Errorf("after run: busy %v, %d frames received", a.Busy(), len(r.l.rx))
	}
}
