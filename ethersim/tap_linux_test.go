package ethersim_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"simkron/ethersim"
	"simkron/internal/netnstest"
)

// arpRequest asks who has target, from mac at ip (RFC 826), as a frame
// without FCS.
func arpRequest(mac ethersim.MAC, ip, target [4]byte) []byte {
	f := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	f = append(f, mac[:]...)
	f = binary.BigEndian.AppendUint16(f, 0x0806)
	f = append(f, 0, 1, 8, 0, 6, 4, 0, 1) // Ethernet, IPv4, request
	f = append(f, mac[:]...)
	f = append(f, ip[:]...)
	f = append(f, 0, 0, 0, 0, 0, 0)
	return append(f, target[:]...)
}

// A TAP device opened in a namespace of the test's own carries frames
// both ways: the namespace's Linux answers an ARP request written to it.
// Opening it again, opening an interface of another kind, or a name too
// long, fail with errors that say so; closing it removes the device
// simkron made.
func TestBridgeTAPOpen(t *testing.T) {
	netnstest.Require(t)
	ns := netnstest.New(t)
	var tap *ethersim.TAP
	err := ns.Do(func() error {
		var err error
		if tap, err = ethersim.OpenTAP("sk-test"); err != nil {
			return err
		}
		if _, err := net.InterfaceByName("sk-test"); err != nil {
			return fmt.Errorf("the TAP was not created: %v", err)
		}
		for _, c := range []struct{ name, want string }{
			{"sk-test", "is in use"},
			{"lo", "an interface of another kind"},
			{"sk-0123456789abc", "at most 15"},
		} {
			if _, err := ethersim.OpenTAP(c.name); err == nil || !strings.Contains(err.Error(), c.want) {
				return fmt.Errorf("OpenTAP(%q) = %v, want an error saying %q", c.name, err, c.want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ns.IP(t, "link", "set", "sk-test", "up")
	ns.IP(t, "addr", "add", "10.7.0.1/24", "dev", "sk-test")
	mac := ethersim.MAC{0x02, 0, 0, 0, 0, 0x09}
	if err := tap.WriteFrame(arpRequest(mac, [4]byte{10, 7, 0, 2}, [4]byte{10, 7, 0, 1})); err != nil {
		t.Fatalf("writing an ARP request: %v", err)
	}
	got := make(chan []byte, 1)
	go func() {
		buf := make([]byte, 2048)
		for {
			n, err := tap.ReadFrame(buf)
			if err != nil {
				close(got)
				return
			}
			f := buf[:n]
			// Skip what else Linux sends (IPv6 neighbour discovery).
			if n >= 42 && bytes.Equal(f[12:14], []byte{8, 6}) && f[21] == 2 {
				got <- append([]byte(nil), f...)
				return
			}
		}
	}()
	select {
	case f, ok := <-got:
		if !ok {
			t.Fatal("the TAP's read failed before an ARP reply came")
		}
		if !bytes.Equal(f[0:6], mac[:]) || !bytes.Equal(f[28:32], []byte{10, 7, 0, 1}) {
			t.Errorf("ARP reply % x is not to 02:00:00:00:00:09 from 10.7.0.1", f)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no ARP reply in 5 s")
	}
	if err := tap.Close(); err != nil {
		t.Fatal(err)
	}
	err = ns.Do(func() error {
		if _, err := net.InterfaceByName("sk-test"); err == nil {
			return fmt.Errorf("the TAP simkron created is still there after Close")
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}

// Without CAP_NET_ADMIN a TAP can be neither created nor taken over from
// another owner, and the errors say what to do; one made with no owner
// is anyone's.
func TestBridgeTAPNoPermission(t *testing.T) {
	netnstest.Require(t)
	ns := netnstest.New(t)
	ns.IP(t, "tuntap", "add", "dev", "sk-root", "mode", "tap")
	ns.IP(t, "tuntap", "add", "dev", "sk-nobody", "mode", "tap", "user", "65534")
	err := ns.Do(func() error {
		// Capabilities are per thread: this one, never used again, loses
		// CAP_NET_ADMIN.
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		if err := unix.Capget(&hdr, &data[0]); err != nil {
			return err
		}
		data[0].Effective &^= 1 << unix.CAP_NET_ADMIN
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			return fmt.Errorf("dropping CAP_NET_ADMIN: %v", err)
		}
		for _, c := range []struct{ name, want string }{
			{"sk-new", "creating it needs CAP_NET_ADMIN"},
			{"sk-nobody", "belongs to another user"},
		} {
			if tap, err := ethersim.OpenTAP(c.name); err == nil || !strings.Contains(err.Error(), c.want) {
				if tap != nil {
					tap.Close()
				}
				return fmt.Errorf("OpenTAP(%q) without CAP_NET_ADMIN = %v, want an error saying %q", c.name, err, c.want)
			}
		}
		tap, err := ethersim.OpenTAP("sk-root")
		if err != nil {
			return fmt.Errorf("a TAP made with no user could not be opened without CAP_NET_ADMIN: %v", err)
		}
		tap.Close()
		if _, err := net.InterfaceByName("sk-new"); err == nil {
			return fmt.Errorf("sk-new was created without CAP_NET_ADMIN")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
