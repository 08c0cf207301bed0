package ethersim

import (
	"errors"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// TAP is a Linux TAP device opened as a bridge's Port: frames written to
// it appear on the host as received on the interface, frames the host
// sends out of the interface are read from it (Documentation/networking/
// tuntap.rst). It is opened with IFF_TAP|IFF_NO_PI, so every read and
// write is one Ethernet frame without a packet-information header, and
// without IFF_VNET_HDR, so the host hands over segmented, checksummed
// frames no larger than the interface's MTU allows.
//
// simkron only attaches to the device: it never brings it up, gives it
// addresses or routes, or makes it persistent. A TAP that does not exist
// is created, which needs CAP_NET_ADMIN, and vanishes when simkron closes
// it; one made beforehand for the user (ip tuntap add dev NAME mode tap
// user USER) needs no privilege, nor does one made with no user or group
// at all (which any user who may open /dev/net/tun can take).
type TAP struct {
	name string
	f    *os.File
}

var _ Port = (*TAP)(nil)

// tunDevice is the clone device of the tun driver.
const tunDevice = "/dev/net/tun"

// OpenTAP attaches to the TAP device called name in the calling thread's
// network namespace, creating it if it does not exist. Its errors say
// what to do: the driver missing, the privilege to create it missing, the
// device another user's or in use, the name another kind of interface's.
func OpenTAP(name string) (*TAP, error) {
	if err := ValidTAPName(name); err != nil {
		return nil, err
	}
	fd, err := unix.Open(tunDevice, unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	switch {
	case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENODEV) || errors.Is(err, unix.ENXIO):
		return nil, fmt.Errorf("TAP %s: %s does not exist: the kernel's tun driver is missing (modprobe tun), or a container was started without the device", name, tunDevice)
	case errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM):
		return nil, fmt.Errorf("TAP %s: %s: permission denied: this user may not open the tun driver", name, tunDevice)
	case err != nil:
		return nil, fmt.Errorf("TAP %s: opening %s: %w", name, tunDevice, err)
	}
	_, lookErr := net.InterfaceByName(name)
	exists := lookErr == nil
	if !exists && !hasCapability(unix.CAP_NET_ADMIN) {
		unix.Close(fd)
		return nil, fmt.Errorf("TAP %s does not exist, and creating it needs CAP_NET_ADMIN: make it for your user first (sudo ip tuntap add dev %s mode tap user $USER) or run simkron with CAP_NET_ADMIN", name, name)
	}
	ifr, err := unix.NewIfreq(name)
	if err == nil {
		ifr.SetUint16(unix.IFF_TAP | unix.IFF_NO_PI)
		err = unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr)
	}
	if err != nil {
		unix.Close(fd)
		switch {
		case errors.Is(err, unix.EPERM) && exists:
			return nil, fmt.Errorf("TAP %s: permission denied: the device belongs to another user or group: make it for your user (sudo ip tuntap add dev %s mode tap user $USER) or run simkron with CAP_NET_ADMIN", name, name)
		case errors.Is(err, unix.EPERM):
			return nil, fmt.Errorf("TAP %s: creating it was refused: CAP_NET_ADMIN in the owner of this network namespace is needed", name)
		case errors.Is(err, unix.EBUSY):
			return nil, fmt.Errorf("TAP %s is in use: another program (another simkron?) has it open", name)
		case errors.Is(err, unix.EINVAL) && exists:
			return nil, fmt.Errorf("TAP %s: an interface of another kind (not a TAP device) is called %s", name, name)
		}
		return nil, fmt.Errorf("TAP %s: TUNSETIFF: %w", name, err)
	}
	// The descriptor is non-blocking, so the runtime's poller waits on it
	// and Close wakes a read that waits.
	return &TAP{name: name, f: os.NewFile(uintptr(fd), tunDevice+":"+name)}, nil
}

// hasCapability reports whether the process has capability c in its
// effective set; true when it cannot tell (the kernel decides then).
func hasCapability(c int) bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return true
	}
	return data[c/32].Effective&(1<<(c%32)) != 0
}

// Name returns the device's name.
func (t *TAP) Name() string { return t.name }

// ReadFrame reads one frame.
func (t *TAP) ReadFrame(b []byte) (int, error) { return t.f.Read(b) }

// WriteFrame writes one frame.
func (t *TAP) WriteFrame(frame []byte) error {
	_, err := t.f.Write(frame)
	return err
}

// Close detaches from the device (which vanishes if simkron created it).
func (t *TAP) Close() error { return t.f.Close() }
