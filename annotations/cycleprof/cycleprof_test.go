package cycleprof_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/pprof/profile"

	"simkron/annotations/cycleprof"
	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
)

// scenario runs a bare core watched by a recorder: two threads, one of
// which switches to the other from inside a call, and a device
// interrupt that arrives during a call; the core has no IRQSymbol, so
// its interrupt entry and exit are charged in no function.
func scenario(t *testing.T) (*cycleprof.Recorder, *cpu.CPU, map[string]*cpu.Symbol) {
	t.Helper()
	k := sim.NewScheduler(1)
	l1 := &memory.CacheParams{Size: 4 * sim.KiB, Line: 16, Assoc: 2, HitLatency: 1, WritePolicy: memory.WriteBack, WriteAllocate: true}
	h, err := memory.NewHierarchy(memory.HierarchyParams{L1: l1, MemLatency: 10, MemWriteLatency: 2})
	if err != nil {
		t.Fatal(err)
	}
	p := cpu.DefaultParams()
	p.Clock = 100 * sim.MHz
	c, err := cpu.New(k, "h.cpu0", p, memory.NewSystem(k, "h", memory.NewPhys(64*sim.KiB), h))
	if err != nil {
		t.Fatal(err)
	}
	tab := cpu.NewSymbolTable(0x1000, nil)
	syms := map[string]*cpu.Symbol{}
	for _, d := range []cpu.Def{
		{Name: "sys_sendto", Layer: cpu.LayerKERN, Instructions: 20},
		{Name: "udp_sendmsg", Layer: cpu.LayerUDP, Instructions: 40},
		{Name: "bcopy", Layer: cpu.LayerInherit, Instructions: 8},
		{Name: "sys_recvfrom", Layer: cpu.LayerKERN, Instructions: 30},
		{Name: "ei_interrupt", Layer: cpu.LayerDEV, Instructions: 25},
	} {
		syms[d.Name] = tab.Define(d)
	}
	line, _ := c.Line(3, true)
	c.SetHandler(3, "nic", func() {
		c.Call(syms["ei_interrupt"], func() { c.Call(syms["bcopy"], func() { c.Charge(300) }) })
	})
	rec := &cycleprof.Recorder{Name: "test", Comments: []string{"a test"}}
	rec.Watch("h", c)
	var sender, receiver, idle *cpu.Context
	idle = c.NewContext("idle", cpu.KindIdle, func(*cpu.Context) {
		for {
			c.Halt()
		}
	})
	sender = c.NewContext("sender", cpu.KindThread, func(*cpu.Context) {
		c.Call(syms["sys_sendto"], func() {
			c.Call(syms["udp_sendmsg"], func() {
				c.Call(syms["bcopy"], func() {
					line.Pulse()
					c.Charge(1000)
					c.Sync() // the interrupt is taken here
				})
				c.Switch(receiver) // from inside a call
			})
		})
		c.Charge(7) // in no function
		c.Switch(idle)
	})
	receiver = c.NewContext("receiver", cpu.KindThread, func(*cpu.Context) {
		c.Call(syms["sys_recvfrom"], func() { c.Call(syms["bcopy"], func() { c.Charge(50) }) })
		c.Switch(sender)
	})
	c.Start(sender)
	k.RunUntil(sim.Millisecond)
	if c.Stats().Interrupts != 1 {
		t.Fatalf("%d interrupts, want 1", c.Stats().Interrupts)
	}
	return rec, c, syms
}

func stackOf(s *profile.Sample) string {
	var names []string
	for i := len(s.Location) - 1; i >= 0; i-- {
		names = append(names, s.Location[i].Line[0].Function.Name)
	}
	return strings.Join(names, ";")
}

// Each cycle stands on the stack of the context it ran in, cut at the
// interrupt, with the layer the core counted it to; the functions' flat
// cycles are the core's self cycles of each.
func TestStacksFollowContextsAndInterrupts(t *testing.T) {
	rec, c, syms := scenario(t)
	p := rec.Profile()
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	type key struct{ Stack, Layer string }
	got := map[key]int64{}
	flat := map[string]int64{}
	var total int64
	for _, s := range p.Sample {
		if s.Label["host"][0] != "h" {
			t.Errorf("sample of host %v, want h", s.Label["host"])
		}
		got[key{stackOf(s), s.Label["layer"][0]}] += s.Value[0]
		flat[s.Location[0].Line[0].Function.Name] += s.Value[0]
		total += s.Value[0]
	}
	var stacks []key
	for k := range got {
		stacks = append(stacks, k)
	}
	want := []key{
		{"[sender]", "-"},
		{"[sender];sys_sendto", "KERN"},
		{"[sender];sys_sendto;udp_sendmsg", "UDP"},
		{"[sender];sys_sendto;udp_sendmsg;bcopy", "UDP"},
		{"[receiver];sys_recvfrom", "KERN"},
		{"[receiver];sys_recvfrom;bcopy", "KERN"},
		{"[irq 3]", "-"},
		{"[irq 3];ei_interrupt", "DEV"},
		{"[irq 3];ei_interrupt;bcopy", "DEV"},
		// A switch is charged to the context switched from; the idle
		// loop's halt charges nothing.
		{"[receiver]", "-"},
	}
	less := func(a, b key) bool { return a.Stack+a.Layer < b.Stack+b.Layer }
	if diff := cmp.Diff(want, stacks, cmpopts.SortSlices(less)); diff != "" {
		t.Errorf("stacks and layers (-want +got):\n%s", diff)
	}
	if st := c.Stats(); total != st.Cycles-st.IdleCycles {
		t.Errorf("the profile holds %d cycles; the core was busy %d", total, st.Cycles-st.IdleCycles)
	}
	by, none := c.SymbolCycles()
	for name, s := range syms {
		if flat[name] != by[s.Index()] {
			t.Errorf("%s: flat %d cycles, the core's self cycles %d", name, flat[name], by[s.Index()])
		}
	}
	roots := flat["[sender]"] + flat["[receiver]"] + flat["[irq 3]"]
	if roots != none {
		t.Errorf("root frames hold %d cycles, the core's cycles in no function %d", roots, none)
	}
	if got[key{"[irq 3]", "-"}] != c.Params().IRQEntryCycles+c.Params().IRQExitCycles {
		t.Errorf("[irq 3] holds %d cycles, want the entry's and exit's %d", got[key{"[irq 3]", "-"}], c.Params().IRQEntryCycles+c.Params().IRQExitCycles)
	}
	if p.Mapping[0].File != "test" || p.Comments[0] != "a test" {
		t.Errorf("mapping %q and comments %q, want the recorder's name and comments", p.Mapping[0].File, p.Comments)
	}
	for _, l := range p.Location {
		name := l.Line[0].Function.Name
		if s := syms[name]; s != nil && l.Address != uint64(s.Addr) {
			t.Errorf("%s at %#x, want its address %#x", name, l.Address, s.Addr)
		}
	}
}

// The same run writes the same bytes, and pprof reads them back as
// written.
func TestWriteIsDeterministic(t *testing.T) {
	var files [][]byte
	for range 2 {
		rec, _, _ := scenario(t)
		var b bytes.Buffer
		if err := rec.Write(&b); err != nil {
			t.Fatal(err)
		}
		files = append(files, b.Bytes())
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("two runs of one scenario wrote different profiles")
	}
	back, err := profile.ParseData(files[0])
	if err != nil {
		t.Fatal(err)
	}
	rec, _, _ := scenario(t)
	if diff := cmp.Diff(rec.Profile().String(), back.String()); diff != "" {
		t.Errorf("read back differs from written (-written +read):\n%s", diff)
	}
}

// A recorder that watches nothing writes a valid, empty profile.
func TestEmptyRecorder(t *testing.T) {
	var rec cycleprof.Recorder
	var b bytes.Buffer
	if err := rec.Write(&b); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&b)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sample) != 0 || p.Mapping[0].File != "simkron" {
		t.Errorf("%d samples, mapping %q; want none and simkron", len(p.Sample), p.Mapping[0].File)
	}
}
