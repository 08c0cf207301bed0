package machinetest

import (
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"simkron/devices/ne2000"
	"simkron/ethersim"
	"simkron/machine"
	"simkron/machine/parts/ethernet"
	"simkron/memory"
	"simkron/report"
	"simkron/stack/apps/membench"
	"simkron/stack/apps/udp"
	drvne2000 "simkron/stack/driver/ne2000"
	"simkron/stack/kernel"
)

// Config returns the path of the shipped config configs/name (name
// relative to configs/: "udp-ne2000.toml", "machines/r4000.toml"), from
// whichever package's tests ask.
func Config(name string) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("machinetest: no caller")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "configs", name)
}

// Params returns the decoded [workload.name] section of exp as its type.
func Params[T any](exp *machine.Experiment, name string) *T {
	return exp.Workload.Params[name].(*T)
}

// NoWorkload makes exp's workload one that runs no program of its own (a
// membench with nothing to measure), so that the run ends when the
// threads a test spawns have.
func NoWorkload(exp *machine.Experiment) {
	exp.Workload.Type = "membench"
	exp.Workload.Then = nil
	p := Params[membench.Params](exp, "membench")
	p.Ops = nil
	p.MinSize, p.MaxSize = 4, 4
}

// Build builds the run of exp, failing the test on an error.
func Build(t testing.TB, exp *machine.Experiment, opt machine.Options) *machine.Run {
	t.Helper()
	r, err := machine.New(exp, opt)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Execute runs r to its end, failing the test when it fails or stops
// first, and reporting each host's guest errors.
func Execute(t testing.TB, r *machine.Run) *report.Result {
	t.Helper()
	res, err := r.Execute(machine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete {
		t.Fatalf("run incomplete: %s", res.Incomplete)
	}
	for _, h := range res.Hosts {
		if h.GuestErrors != 0 {
			t.Errorf("%s: %d guest errors: %v", h.Name, h.GuestErrors, h.GuestLog)
		}
	}
	return res
}

// Host returns r's host called name.
func Host(t testing.TB, r *machine.Run, name string) *machine.Host {
	t.Helper()
	for _, h := range r.Hosts {
		if h.Name == name {
			return h
		}
	}
	t.Fatalf("no host %q", name)
	return nil
}

// Segment returns r's Ethernet segment called name.
func Segment(t testing.TB, r *machine.Run, name string) *ethersim.Segment {
	t.Helper()
	seg, ok := Ethernet(r.Net).Segment(name)
	if !ok {
		t.Fatalf("no segment %q", name)
	}
	return seg
}

// TwoHosts is the shipped configs/udp-ne2000.toml: two 486s, pcA
// (10.0.0.1) and pcB (10.0.0.2), with NE2000 cards on one 10 Mbit/s
// segment, lan0; edit sets keys first (nil: none).
func TwoHosts(t testing.TB, edit func(b *Builder)) *machine.Experiment {
	t.Helper()
	b := Edit(t, Config("udp-ne2000.toml"))
	if edit != nil {
		edit(b)
	}
	return b.Experiment()
}

// Rig is a run with no workload of its own (NoWorkload) in which a test
// spawns simulated threads on the hosts, each a program that calls the
// host's stack as a user program would; problems found inside the
// threads are collected and reported once the run is over. On the two
// hosts of TwoHosts it is the rig the protocols' tests run on.
type Rig struct {
	T    testing.TB
	Run  *machine.Run
	errs []string
}

// NewRig builds exp with no workload of its own.
func NewRig(t testing.TB, exp *machine.Experiment) *Rig {
	t.Helper()
	NoWorkload(exp)
	return &Rig{T: t, Run: Build(t, exp, machine.Options{})}
}

// Errorf records a problem a thread found.
func (r *Rig) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// Spawn starts body as a thread of host name.
func (r *Rig) Spawn(name string, body func(th *kernel.Thread, h *machine.Host)) {
	h := Host(r.T, r.Run, name)
	Kernel(h).Spawn("test", func(th *kernel.Thread) { body(th, h) })
}

// Host returns the rig's host called name.
func (r *Rig) Host(name string) *machine.Host { return Host(r.T, r.Run, name) }

// Execute runs the rig to its end and reports what the threads found.
func (r *Rig) Execute() *report.Result {
	r.T.Helper()
	res := Execute(r.T, r.Run)
	for _, e := range r.errs {
		r.T.Error(e)
	}
	return res
}

// UserBuf allocates n bytes of h's kernel memory for a thread's data and
// fills them with p.
func UserBuf(h *machine.Host, n int, p []byte) memory.Addr {
	a := Kernel(h).Kmalloc(n)
	if a == 0 {
		panic("out of kernel memory")
	}
	if p != nil {
		Kernel(h).CPU().Write(a, p)
	}
	return a
}

// Section returns the result section name decoded as a T; it panics
// when the result has none.
func Section[T any](r *report.Result, name string) T {
	var v T
	if err := r.Section(name, &v); err != nil {
		panic(fmt.Sprintf("section %s: %v", name, err))
	}
	return v
}

// OwnMachine gives host i of exp a machine of its own (Clone), to be
// changed before the run is built, and returns it.
func OwnMachine(exp *machine.Experiment, i int) *machine.Spec {
	m := Clone(exp.Hosts[i].Machine)
	exp.Hosts[i].Machine = m
	return m
}

// NE2000 returns an Ethernet card's NE2000.
func NE2000(n *ethernet.NIC) *ne2000.NE2000 { return n.Card.(*ne2000.NE2000) }

// NE2000Driver returns the kernel's driver of an NE2000 card.
func NE2000Driver(n *ethernet.NIC) *drvne2000.Driver {
	return n.Driver.(ethernet.NE2000Driver).Driver
}

// LoadUDP loads the UDP sweep between pcA and pcB of
// configs/udp-ne2000.toml with the given sizes, measured messages and
// warmup round trips per size.
func LoadUDP(t testing.TB, sizes []int, messages, warmup int) *machine.Experiment {
	t.Helper()
	exp, err := machine.LoadExperiment(Config("udp-ne2000.toml"))
	if err != nil {
		t.Fatal(err)
	}
	p := Params[udp.Params](exp, "udp")
	p.Sizes, p.Messages, p.Warmup = sizes, messages, warmup
	return exp
}
