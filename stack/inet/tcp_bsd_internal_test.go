package inet

// Internal tests of the 4.4BSD choices of the TCP model: the MSS rounded
// down to whole mbuf clusters (tcp_mss), the delayed-ACK style setting,
// and where a held ACK fires — on the host-wide 200 ms fast timer counted
// from boot (tcp_fasttimo, PR_FASTHZ) or a per-connection tcp_delack
// after the data arrived (Linux). The timer test boots a bare kernel with
// a timer device and clock driver, and gives a Stack only what
// tcpDelayAck uses (kernel, core, parameters, counters).

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/cpu"
	"simkron/devices/timer"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/driver/clock"
	"simkron/stack/kernel"
)

// The MSS we offer (rmss) is MTU − 40, rounded down to a multiple of
// tcp_mss_cluster when it is larger than one cluster (inet-notes §5: FDDI
// 4352 → 4096, ATM classical IP 9180 → 8192); cluster 0 keeps MTU − 40.
// Before the peer's MSS option arrives the segment size is RFC 879's 536.
func TestNewTCBMSSRounding(t *testing.T) {
	tests := []struct {
		name         string
		mtu, cluster int
		want         int
	}{
		{"ethernet", 1500, 2048, 1460}, // below one cluster: not rounded
		{"fddi", 4352, 2048, 4096},
		{"atm", 9180, 2048, 8192},
		{"atm 4k clusters", 9180, 4096, 8192},
		{"one cluster exactly", 2088, 2048, 2048},
		{"one byte over a cluster", 2089, 2048, 2048},
		{"just under two clusters", 4135, 2048, 2048},
		{"ethernet no rounding", 1500, 0, 1460},
		{"fddi no rounding", 4352, 0, 4312},
		{"atm no rounding", 9180, 0, 9140},
		{"small mtu", 576, 2048, 536},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := DefaultParams()
			p.MTU = tt.mtu
			p.TCPMSSCluster = sim.Size(tt.cluster)
			s := &Stack{p: p}
			tp := s.newTCB(nil)
			if tp.rmss != tt.want {
				t.Errorf("MTU %d cluster %d: MSS offered %d, want %d", tt.mtu, tt.cluster, tp.rmss, tt.want)
			}
			if want := min(tt.want, 536); tp.mss != want {
				t.Errorf("MTU %d cluster %d: segment size before the peer's option %d, want %d", tt.mtu, tt.cluster, tp.mss, want)
			}
		})
	}
}

func TestValidateDelAckStyle(t *testing.T) {
	tests := []struct {
		style string
		ok    bool
	}{
		{DelAckLinux, true},
		{DelAckBSD, true},
		{"linux", true},
		{"bsd", true},
		{"", false},
		{"BSD", false},
		{"solaris", false},
		{" bsd", false},
	}
	for _, tt := range tests {
		p := DefaultParams()
		p.TCPDelAckStyle = tt.style
		err := p.Validate()
		if tt.ok && err != nil {
			t.Errorf("style %q: %v", tt.style, err)
		}
		if !tt.ok && err == nil {
			t.Errorf("style %q accepted", tt.style)
		}
	}
	if err := DefaultParams().Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	if got := DefaultParams().TCPDelAckStyle; got != DelAckLinux {
		t.Errorf("default style %q, want %q", got, DelAckLinux)
	}
}

// delackHost is a booted kernel with a 100 Hz clock and a Stack that has
// just what tcpDelayAck needs.
type delackHost struct {
	k    *sim.Scheduler
	kern *kernel.Kernel
	s    *Stack
}

func newDelackHost(t *testing.T, style string) *delackHost {
	t.Helper()
	k := sim.NewScheduler(1)
	l1 := &memory.CacheParams{Size: 8 * sim.KiB, Line: 16, Assoc: 4, HitLatency: 1, WritePolicy: memory.WriteBack, WriteAllocate: true}
	hier, err := memory.NewHierarchy(memory.HierarchyParams{L1: l1, MemLatency: 1, MemWriteLatency: 1})
	if err != nil {
		t.Fatal(err)
	}
	sys := memory.NewSystem(k, "h", memory.NewPhys(16*sim.MiB), hier)
	c, err := cpu.New(k, "h.cpu0", cpu.Params{Clock: 100 * sim.MHz, CPI: 1, TrapCycles: 100, IRQEntryCycles: 80, IRQExitCycles: 40, SwitchCycles: 300, Lines: 16}, sys)
	if err != nil {
		t.Fatal(err)
	}
	kern, err := kernel.Boot("h", c, cpu.NewSymbolTable(0x100000, nil), kernel.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	irq, _ := c.Line(0, false)
	tp := timer.DefaultParams() // 100 Hz
	dev, err := timer.New(k, "h.timer0", tp, irq, sys.Guest)
	if err != nil {
		t.Fatal(err)
	}
	isa := memory.NewBus(memory.BusParams{Name: "isa", AccessTime: sim.Microsecond, Width: 2})
	if err := sys.Devices.Map(memory.Mapping{Name: "timer0", Space: memory.SpaceIO, Base: 0x40, Size: timer.Size, Dev: dev, Bus: isa}); err != nil {
		t.Fatal(err)
	}
	drv := clock.New(kern, memory.SpaceIO, 0x40, 0)
	kern.Spawn("init", func(*kernel.Thread) { drv.Init() })
	p := DefaultParams()
	p.TCPDelAckStyle = style
	p.TCPDelAck = 200 * sim.Millisecond
	return &delackHost{k: k, kern: kern, s: &Stack{k: kern, c: c, p: p}}
}

// fired is when a held ACK's timer went off.
type fired struct {
	Jiffy uint64
	At    sim.Time
}

// holdAcks makes one connection per arrival jiffy hold an ACK at that
// jiffy (from a kernel timer, as a segment processed in a softirq would)
// and returns, per connection, when its delayed-ACK timer fired.
func (h *delackHost) holdAcks(t *testing.T, arrivals []uint64, until sim.Time) []fired {
	t.Helper()
	got := make([]fired, len(arrivals))
	tps := make([]*tcb, len(arrivals))
	arrive := make([]kernel.Timer, len(arrivals))
	for i, j := range arrivals {
		tp := h.s.newTCB(nil)
		tps[i] = tp
		tp.delack.Func = func() { got[i] = fired{h.kern.Jiffies(), h.k.Now()} }
		arrive[i] = kernel.Timer{Name: "arrive", Func: func() {
			if h.kern.Jiffies() != j {
				t.Errorf("arrival %d at jiffy %d, want %d", i, h.kern.Jiffies(), j)
			}
			h.s.tcpDelayAck(tp)
		}}
	}
	h.kern.Spawn("arrivals", func(*kernel.Thread) {
		for i, j := range arrivals {
			h.kern.AddTimer(&arrive[i], j-h.kern.Jiffies())
		}
	})
	h.k.RunUntil(until)
	for i, tp := range tps {
		if !tp.delAck {
			t.Errorf("arrival %d: no ACK held", i)
		}
	}
	if n := h.s.stats.TCPDelayedAcks; n != uint64(len(arrivals)) {
		t.Errorf("%d delayed ACKs counted, want %d", n, len(arrivals))
	}
	return got
}

// 4.4BSD: a held ACK goes at the next tick of the fast timer, a multiple
// of 200 ms (20 jiffies at 100 Hz) since boot, whatever the phase of the
// arrival; data arriving on the boundary itself waits a whole period.
// Linux: tcp_delack (20 jiffies) after each arrival.
func TestDelayedAckPhase(t *testing.T) {
	arrivals := []uint64{1, 7, 13, 19, 20, 21, 33, 59}
	tests := []struct {
		style string
		want  []uint64 // jiffy each ACK fires
	}{
		{DelAckBSD, []uint64{20, 20, 20, 20, 40, 40, 40, 60}},
		{DelAckLinux, []uint64{21, 27, 33, 39, 40, 41, 53, 79}},
	}
	const tick = 10 * sim.Millisecond
	for _, tt := range tests {
		t.Run(tt.style, func(t *testing.T) {
			h := newDelackHost(t, tt.style)
			got := h.holdAcks(t, arrivals, sim.Second)
			var jiffies []uint64
			for i, f := range got {
				jiffies = append(jiffies, f.Jiffy)
				// The timer softirq runs just after the clock interrupt of its
				// tick: within a few microseconds of j·10 ms.
				if lo := sim.Time(tt.want[i]) * tick; f.At < lo || f.At > lo+100*sim.Microsecond {
					t.Errorf("arrival at jiffy %d: ACK at %v, want just after %v", arrivals[i], f.At, lo)
				}
			}
			t.Logf("arrivals at jiffies %v: ACKs at %v", arrivals, got)
			if diff := cmp.Diff(tt.want, jiffies); diff != "" {
				t.Errorf("jiffies the held ACKs fired (-want +got):\n%s", diff)
			}
		})
	}
}
