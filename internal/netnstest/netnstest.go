//go:build linux

// Package netnstest gives tests Linux network namespaces of their own: it
// makes one, runs commands and code in it (a socket or a TAP device
// opened there stays there), and removes it when the test ends. The tests
// of the bridge to real hosts talk only to namespaces they made, never to
// the host's network. It is a package because the tests of ethersim and
// of the command both need it.
// Layer: none; used by tests only.
package netnstest

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"simkron/internal/testtool"
)

// Require skips the test, saying why, unless the host can run namespace
// tests: root, /dev/net/tun, and the commands named (ip is always
// needed). Under CI=true a missing piece fails the test instead: CI must
// run them.
func Require(t testing.TB, commands ...string) {
	t.Helper()
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root (to make network namespaces)")
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		missing = append(missing, "/dev/net/tun (the tun driver)")
	}
	if len(missing) > 0 {
		msg := "needs " + strings.Join(missing, ", ")
		if testtool.CI() {
			t.Fatal(msg + " with CI=true: CI runs as root on a kernel with tun")
		}
		t.Skip(msg)
	}
	// The commands as every test's external tools: skipped or, under
	// CI=true, failed without them, and their use logged for .ci/run.
	for _, c := range append([]string{"ip"}, commands...) {
		testtool.Need(t, c)
	}
}

var serial atomic.Int64

// NS is a network namespace a test made.
type NS struct {
	Name string
}

// New makes a namespace, with its loopback up, removed when the test
// ends.
func New(t testing.TB) *NS {
	t.Helper()
	n := &NS{Name: fmt.Sprintf("simkron-test-%d-%d", os.Getpid(), serial.Add(1))}
	if out, err := exec.Command("ip", "netns", "add", n.Name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v\n%s", n.Name, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", n.Name).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v\n%s", n.Name, err, out)
		}
	})
	n.IP(t, "link", "set", "lo", "up")
	return n
}

// IP runs "ip -n NAME args..." and fails the test if it fails.
func (n *NS) IP(t testing.TB, args ...string) string {
	t.Helper()
	out, err := exec.Command("ip", append([]string{"-n", n.Name}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("ip -n %s %s: %v\n%s", n.Name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Command returns a command that runs args in the namespace.
func (n *NS) Command(args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", n.Name}, args...)...)
}

// Do runs f on an operating-system thread inside the namespace and
// returns what it returns. Sockets and devices f opens belong to the
// namespace for good. The thread is never used again: it ends with the
// goroutine that ran f, still locked to it.
func (n *NS) Do(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		fd, err := unix.Open("/run/netns/"+n.Name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- fmt.Errorf("namespace %s: %w", n.Name, err)
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("entering namespace %s: %w", n.Name, err)
			return
		}
		errc <- f()
	}()
	return <-errc
}
