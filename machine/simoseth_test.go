package machine_test

import (
	"os"
	"strings"
	"testing"

	"simkron/internal/machinetest"
	"simkron/machine"
)

// simosExperiment is two hosts of the study's machine file m.toml on a
// gigabit switch; mipsy is that file's text.
const simosExperiment = `[experiment]
name = "e"

[[segment]]
name = "lan0"
rate = "1Gbps"
mode = "switch"

[[host]]
name = "a"
machine = "m.toml"
[[host.nic]]
device = "nic0"
segment = "lan0"
mac = "02:00:00:00:00:0a"
ip = "10.0.0.1"

[[host]]
name = "b"
machine = "m.toml"
[[host.nic]]
device = "nic0"
segment = "lan0"
mac = "02:00:00:00:00:0b"
ip = "10.0.0.2"

[workload]
type = "membench"
[workload.membench]
max_size = "4KiB"
`

func mipsy(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../configs/machines/simos-mipsy.toml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// buildSimos builds simosExperiment over the machine text m.
func buildSimos(t *testing.T, m string) (*machine.Run, error) {
	t.Helper()
	dir := t.TempDir()
	write(t, dir, "m.toml", m)
	exp, err := machine.LoadExperiment(write(t, dir, "e.toml", simosExperiment))
	if err != nil {
		return nil, err
	}
	r, err := machine.New(exp, machine.Options{})
	if err == nil {
		t.Cleanup(r.Close)
	}
	return r, err
}

// The study's machine builds: the bus-master NIC as a network card of the
// host with its driver under the Internet stack, and the VIA agent on it.
func TestSimosMachineBuilds(t *testing.T) {
	r, err := buildSimos(t, mipsy(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range r.Hosts {
		if len(machinetest.NICs(h)) != 1 || machinetest.Inet(h) == nil || machinetest.VIA(h) == nil {
			t.Fatalf("%s: %d cards, inet %v, via %v", h.Name, len(machinetest.NICs(h)), machinetest.Inet(h) != nil, machinetest.VIA(h) != nil)
		}
		if got := machinetest.Inet(h).Params().MTU; got != 1500 {
			t.Errorf("%s: IP MTU %d", h.Name, got)
		}
	}
	a := machinetest.VIA(r.Hosts[0])
	if got := len(a.Nics()); got != 1 || a.Nics()[0].Name() != "eth0" {
		t.Errorf("agent NICs: %d", got)
	}
	// Without [via] there is no agent.
	r2, err := buildSimos(t, edit(t, mipsy(t), "enabled = true", "enabled = false"))
	if err != nil {
		t.Fatal(err)
	}
	if machinetest.VIA(r2.Hosts[0]) != nil {
		t.Error("an agent without [via] enabled")
	}
}

// What neither the card's nor the driver's table can check alone is
// checked against the other and the machine, and reported.
func TestSimosethChecks(t *testing.T) {
	cases := []struct {
		name     string
		old, new string
		want     string
	}{
		{"driver takes non-coherent DMA for coherent", "coherent = true\ntx_buffer", "coherent = false\ntx_buffer",
			"driver.coherent: true, but the card's DMA does not snoop"},
		{"driver flushes for a snooping card", "coherent = true\n# The study's", "coherent = false\n# The study's",
			"driver.coherent: false, but the card's DMA snoops"},
		{"rings outside the uncached memory", "dma_base = 0\ndma_size = \"0B\"", "dma_base = 0x1000000\ndma_size = \"64KiB\"",
			"driver.dma_base: [0x1000000, 0x1010000) is not inside one [[uncached]] range"},
		{"rings past the end of the uncached memory", "dma_base = 0\ndma_size = \"0B\"", "dma_base = 0x1FF0000\ndma_size = \"128KiB\"",
			"is not inside one [[uncached]] range"},
		{"frames longer than the card sends", `max_frame = "1518B"`, `max_frame = "1500B"`,
			"driver.mtu: 1500 needs frames of 1518 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := edit(t, mipsy(t), c.old, c.new)
			if strings.Contains(c.new, "coherent = false\n# The study's") {
				// A non-coherent driver needs its uncached rings.
				m = edit(t, m, "dma_base = 0\ndma_size = \"0B\"", "dma_base = 0x1F00000\ndma_size = \"1MiB\"")
			}
			_, err := buildSimos(t, m)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error with %q", err, c.want)
			}
		})
	}
	// The study's own arrangement is accepted: rings and buffers in the
	// uncached region, on a platform without snooping.
	m := mipsy(t)
	m = edit(t, m, "coherent = true\ntx_buffer", "coherent = false\ntx_buffer")
	m = edit(t, m, "coherent = true\n# The study's", "coherent = false\n# The study's")
	m = edit(t, m, "dma_base = 0\ndma_size = \"0B\"\nuncached_buffers = false", "dma_base = 0x1F00000\ndma_size = \"1MiB\"\nuncached_buffers = true")
	if _, err := buildSimos(t, m); err != nil {
		t.Fatalf("the study's uncached arrangement: %v", err)
	}
}

// An experiment's MTU reaches the driver, the card's frame limit and IP.
func TestSimosethMTU(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "m.toml", mipsy(t))
	e := edit(t, simosExperiment, "ip = \"10.0.0.1\"", "ip = \"10.0.0.1\"\nmtu = 4000")
	e = edit(t, e, "mode = \"switch\"", "mode = \"switch\"\nmax_frame = \"4018B\"")
	exp, err := machine.LoadExperiment(write(t, dir, "e.toml", e))
	if err != nil {
		t.Fatal(err)
	}
	if got := machinetest.InetParams(exp.Hosts[0].Machine).MTU; got != 4000 {
		t.Errorf("IP MTU %d, want 4000", got)
	}
	r, err := machine.New(exp, machine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := machinetest.Net(r.Hosts[0]).Device(machinetest.NICs(r.Hosts[0])[0].Queue()).MTU(); got != 4000 {
		t.Errorf("driver MTU %d, want 4000", got)
	}
}
