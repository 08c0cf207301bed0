package ethersim_test

import (
	"strings"
	"testing"

	"simkron/ethersim"
)

func TestParseMAC(t *testing.T) {
	tests := []struct {
		in      string
		want    ethersim.MAC
		str     string
		wantErr bool
	}{
		{in: "02:00:00:00:00:01", want: ethersim.MAC{2, 0, 0, 0, 0, 1}, str: "02:00:00:00:00:01"},
		{in: "FF:ff:Ff:fF:ff:ff", want: ethersim.Broadcast, str: "ff:ff:ff:ff:ff:ff"},
		{in: "00:1b:21:0a:bc:de", want: ethersim.MAC{0, 0x1b, 0x21, 0x0a, 0xbc, 0xde}, str: "00:1b:21:0a:bc:de"},
		{in: "", wantErr: true},
		{in: "02-00-00-00-00-01", wantErr: true},
		{in: "02:00:00:00:00", wantErr: true},
		{in: "02:00:00:00:00:01:", wantErr: true},
		{in: "0g:00:00:00:00:01", wantErr: true},
		{in: "2:00:00:00:00:001", wantErr: true},
		{in: "0200.0000.0001", wantErr: true},
	}
	for _, tc := range tests {
		got, err := ethersim.ParseMAC(tc.in)
		if tc.wantErr {
			if err == nil {
				t.Errorf("ParseMAC(%q) = %v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want || got.String() != tc.str {
			t.Errorf("ParseMAC(%q) = %v (%q), %v; want %v (%q)", tc.in, got, got.String(), err, tc.want, tc.str)
		}
	}
}

func TestMACGroupBits(t *testing.T) {
	tests := []struct {
		m                    ethersim.MAC
		broadcast, multicast bool
	}{
		{ethersim.Broadcast, true, true},
		{ethersim.MAC{0x01, 0x00, 0x5e, 0, 0, 1}, false, true},    // IPv4 multicast
		{ethersim.MAC{0x09, 0x00, 0x2b, 0, 0, 0x0f}, false, true}, // DEC/OSI multicast
		{ethersim.MAC{0x02, 0, 0, 0, 0, 1}, false, false},         // locally administered unicast
		{ethersim.MAC{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff}, false, false},
	}
	for _, tc := range tests {
		if got := tc.m.IsBroadcast(); got != tc.broadcast {
			t.Errorf("%v.IsBroadcast() = %v", tc.m, got)
		}
		if got := tc.m.IsMulticast(); got != tc.multicast {
			t.Errorf("%v.IsMulticast() = %v", tc.m, got)
		}
	}
}

func TestParseIP4(t *testing.T) {
	tests := []struct {
		in      string
		want    ethersim.IP4
		wantErr bool
	}{
		{in: "10.0.0.1", want: ethersim.IP4{10, 0, 0, 1}},
		{in: "255.255.255.255", want: ethersim.IP4{255, 255, 255, 255}},
		{in: "0.0.0.0", want: ethersim.IP4{}},
		{in: "256.0.0.1", wantErr: true},
		{in: "10.0.0", wantErr: true},
		{in: "010.0.0.1", wantErr: true},
		{in: "::1", wantErr: true},
		{in: "::ffff:10.0.0.1", wantErr: true},
		{in: "10.0.0.1 ", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tc := range tests {
		got, err := ethersim.ParseIP4(tc.in)
		if tc.wantErr {
			if err == nil {
				t.Errorf("ParseIP4(%q) = %v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want || got.String() != tc.in {
			t.Errorf("ParseIP4(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestAddressText(t *testing.T) {
	var m ethersim.MAC
	if err := m.UnmarshalText([]byte("02:00:00:00:00:2a")); err != nil || m != mac(42) {
		t.Errorf("MAC.UnmarshalText = %v, %v", m, err)
	}
	if err := m.UnmarshalText([]byte("bogus")); err == nil || m != mac(42) {
		t.Errorf("MAC.UnmarshalText(bogus) = %v, value %v; want an error and the value kept", err, m)
	}
	if b, err := m.MarshalText(); err != nil || string(b) != "02:00:00:00:00:2a" {
		t.Errorf("MAC.MarshalText = %q, %v", b, err)
	}
	var ip ethersim.IP4
	if err := ip.UnmarshalText([]byte("192.168.1.7")); err != nil || ip != (ethersim.IP4{192, 168, 1, 7}) {
		t.Errorf("IP4.UnmarshalText = %v, %v", ip, err)
	}
	if err := ip.UnmarshalText([]byte("1.2.3")); err == nil || ip != (ethersim.IP4{192, 168, 1, 7}) {
		t.Errorf("IP4.UnmarshalText(1.2.3) = %v, value %v", err, ip)
	}
	if b, err := ip.MarshalText(); err != nil || string(b) != "192.168.1.7" {
		t.Errorf("IP4.MarshalText = %q, %v", b, err)
	}
}

func FuzzParseMAC(f *testing.F) {
	for _, s := range []string{"02:00:00:00:00:01", "ff:ff:ff:ff:ff:ff", "AA:bb:CC:dd:EE:ff", "", "02-00-00-00-00-01", "0g:00:00:00:00:01", "::::::::::::::::"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ethersim.ParseMAC(s)
		if err != nil {
			return
		}
		str := m.String()
		if !strings.EqualFold(str, s) {
			t.Fatalf("ParseMAC(%q) = %v, which prints differently", s, str)
		}
		back, err := ethersim.ParseMAC(str)
		if err != nil || back != m {
			t.Fatalf("ParseMAC(%q) = %v → %q → %v, %v", s, m, str, back, err)
		}
	})
}

func FuzzParseIP4(f *testing.F) {
	for _, s := range []string{"10.0.0.1", "255.255.255.255", "0.0.0.0", "256.1.1.1", "01.1.1.1", "::1", "1.2.3.4%eth0", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ip, err := ethersim.ParseIP4(s)
		if err != nil {
			return
		}
		if ip.String() != s {
			t.Fatalf("ParseIP4(%q) = %v, not canonical", s, ip)
		}
		back, err := ethersim.ParseIP4(ip.String())
		if err != nil || back != ip {
			t.Fatalf("ParseIP4(%q) = %v → %v, %v", s, ip, back, err)
		}
	})
}
