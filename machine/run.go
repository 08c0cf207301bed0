package machine

import (
	"fmt"
	"sort"
	"time"

	"simkron/cpu"
	"simkron/report"
	"simkron/sim"
	"simkron/stack/apps/latency"
	"simkron/stack/apps/macbench"
	"simkron/stack/apps/membench"
	"simkron/stack/apps/ping"
	"simkron/stack/apps/tcpbench"
	"simkron/stack/apps/ttcp"
	"simkron/stack/apps/udpbench"
	"simkron/stack/kernel"
)

// Version is simkron's version, recorded in every result.
const Version = "0.1.0"

// Options are the run-time choices that are not part of the experiment.
type Options struct {
	// Seed, when set, replaces the experiment's seed.
	Seed *uint64
	// Progress, when set, is called now and then with the simulated time
	// reached and the stop time. It must only report: it sees host time.
	Progress func(now, stop sim.Time)
	// Trace, when set, sees every event as it fires.
	Trace func(t sim.Time, ev *sim.Event)
	// Abort, when set, is asked before every event whether the run must
	// stop (an annotation script failed); a non-nil error ends the run,
	// which is then reported incomplete with the error as the reason.
	Abort func() error
	// OnEnd, when set, runs when the simulation has stopped, before the
	// result is taken and the simulated contexts are ended (annotations'
	// `sim exit`).
	OnEnd func()
}

// Run is one simulation of an experiment, built and ready.
type Run struct {
	Exp   *Experiment
	K     *sim.Kernel
	Net   *Network
	Hosts []*Host
	progs []*membench.Program
	mac   *macbench.Bench
	udp   *udpbench.Bench
	tcp   *tcpbench.Bench
	ttcp  *ttcp.Test
	ping  *ping.Program
	done  int
}

// New builds every host of exp and puts the workload in place.
func New(exp *Experiment, opt Options) (*Run, error) {
	seed := exp.Info.Seed
	if opt.Seed != nil {
		seed = *opt.Seed
	}
	r := &Run{Exp: exp, K: sim.NewKernel(seed)}
	if opt.Trace != nil {
		r.K.SetTrace(opt.Trace)
	}
	if len(exp.Hosts) == 0 {
		return nil, fmt.Errorf("the experiment has no [[host]]")
	}
	var err error
	if r.Net, err = newNetwork(r.K, exp.Segments); err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for i := range exp.Hosts {
		hs := &exp.Hosts[i]
		if names[hs.Name] {
			return nil, fmt.Errorf("host %q defined twice", hs.Name)
		}
		names[hs.Name] = true
		if hs.Machine == nil {
			return nil, fmt.Errorf("host %q has no machine", hs.Name)
		}
		h, err := Build(r.K, r.Net, hs)
		if err != nil {
			return nil, err
		}
		r.Hosts = append(r.Hosts, h)
	}
	switch exp.Workload.Type {
	case "membench":
		for _, h := range r.Hosts {
			p := membench.New(h.Name, h.Kernel, exp.Workload.Membench)
			p.Start()
			r.progs = append(r.progs, p)
		}
	case "mac":
		if err := r.setupMac(exp.Workload.Mac); err != nil {
			return nil, fmt.Errorf("workload.mac: %w", err)
		}
	case "udp":
		if err := r.setupUDP(exp.Workload.UDP); err != nil {
			return nil, fmt.Errorf("workload.udp: %w", err)
		}
	case "tcp":
		if err := r.setupTCP(exp.Workload); err != nil {
			return nil, fmt.Errorf("workload.tcp: %w", err)
		}
	case "ttcp":
		if err := r.setupTTCP(exp.Workload.TTCP); err != nil {
			return nil, fmt.Errorf("workload.ttcp: %w", err)
		}
	case "ping":
		if err := r.setupPing(exp.Workload.Ping); err != nil {
			return nil, fmt.Errorf("workload.ping: %w", err)
		}
	default:
		return nil, fmt.Errorf("workload.type %q is unknown (want one of %v)", exp.Workload.Type, Workloads)
	}
	for _, h := range r.Hosts {
		if err := h.CheckCosts(); err != nil {
			return nil, fmt.Errorf("%s: %w", h.Name, err)
		}
		h.Kernel.OnAllDone = r.hostDone
	}
	if err := r.SetLayers(exp.Layers); err != nil {
		return nil, err
	}
	return r, nil
}

// host returns the host called name.
func (r *Run) host(name string) (*Host, error) {
	for _, h := range r.Hosts {
		if h.Name == name {
			return h, nil
		}
	}
	return nil, fmt.Errorf("no host %q", name)
}

func (r *Run) setupMac(p macbench.Params) error {
	tx, err := r.host(p.Sender)
	if err != nil {
		return fmt.Errorf("sender: %w", err)
	}
	rx := tx
	if !p.Loopback {
		if rx, err = r.host(p.Receiver); err != nil {
			return fmt.Errorf("receiver: %w", err)
		}
		if rx == tx {
			return fmt.Errorf("receiver: the receiver is the sender; set loopback = true to measure without the wire")
		}
	}
	mh := func(h *Host) (*macbench.Host, error) {
		if len(h.NICs) == 0 {
			return nil, fmt.Errorf("host %q has no network card", h.Name)
		}
		n := h.NICs[0]
		if !p.Loopback && n.Port == nil {
			return nil, fmt.Errorf("host %q: its card %q is not plugged into a segment ([[host.nic]])", h.Name, n.Name)
		}
		var mac [6]byte
		if n.Spec != nil {
			mac = n.Spec.MAC
		} else {
			mac = n.Card.Params().MAC
		}
		drv := n.Driver
		return &macbench.Host{
			Name: h.Name, Kernel: h.Kernel, Net: h.Net, Dev: drv.Queue(), MAC: mac,
			TxTime: func() (sim.Time, uint64) { s := drv.Stats(); return s.TxTime, s.TxTimed },
		}, nil
	}
	mtx, err := mh(tx)
	if err != nil {
		return err
	}
	mrx := mtx
	if rx != tx {
		if mrx, err = mh(rx); err != nil {
			return err
		}
	}
	if p.Loopback {
		tx.NICs[0].Driver.SetLoopback(true)
	}
	rate := sim.BitRate(0)
	if port := tx.NICs[0].Port; port != nil {
		rate = port.Segment().Params().Rate
	}
	r.mac, err = macbench.New(p, mtx, mrx, rate)
	if err != nil {
		return err
	}
	r.mac.Start()
	return nil
}

// twoHosts returns the two different hosts a two-party workload names
// (roles say which keys named them, for errors) as its programs see
// them: observers of the frames reaching the first card chain.
func (r *Run) twoHosts(roles, names [2]string) (hs [2]*latency.Host, err error) {
	for i := range hs {
		h, err := r.host(names[i])
		if err != nil {
			return hs, fmt.Errorf("%s: %w", roles[i], err)
		}
		if h.Inet == nil {
			return hs, fmt.Errorf("%s: host %q has no card with an IP address", roles[i], names[i])
		}
		nic := h.NICs[0]
		hs[i] = &latency.Host{Name: h.Name, Kernel: h.Kernel, Inet: h.Inet, Observe: func(f func([]byte)) {
			prev := nic.OnFrame
			nic.OnFrame = f
			if prev != nil {
				nic.OnFrame = func(b []byte) { prev(b); f(b) }
			}
		}}
	}
	if hs[0].Name == hs[1].Name {
		return hs, fmt.Errorf("%s: the %s and the %s must be different hosts", roles[1], roles[0], roles[1])
	}
	return hs, nil
}

func (r *Run) newUDP(p udpbench.Params) (*udpbench.Bench, error) {
	hs, err := r.twoHosts([2]string{"client", "server"}, [2]string{p.Client, p.Server})
	if err != nil {
		return nil, err
	}
	return udpbench.New(p, hs[0], hs[1])
}

func (r *Run) setupUDP(p udpbench.Params) (err error) {
	if r.udp, err = r.newUDP(p); err != nil {
		return err
	}
	r.udp.Start()
	return nil
}

// setupTCP prepares the TCP sweep and, when it asks for the comparison,
// the UDP sweep between the same hosts, run first: the client host runs
// the UDP client and then the TCP client on one thread.
func (r *Run) setupTCP(w WorkloadSpec) error {
	p := w.TCP
	hs, err := r.twoHosts([2]string{"client", "server"}, [2]string{p.Client, p.Server})
	if err != nil {
		return err
	}
	if r.tcp, err = tcpbench.New(p, hs[0], hs[1]); err != nil {
		return err
	}
	if !p.CompareUDP {
		r.tcp.Start()
		return nil
	}
	u := w.UDP
	u.Client, u.Server = p.Client, p.Server
	if r.udp, err = r.newUDP(u); err != nil {
		return fmt.Errorf("compare_udp: %w", err)
	}
	hs[1].Kernel.Spawn("udpecho", r.udp.Serve)
	hs[1].Kernel.Spawn("tcpecho", r.tcp.Serve)
	hs[0].Kernel.Spawn("sweep", func(t *kernel.Thread) {
		r.udp.Client(t)
		r.tcp.Client(t)
	})
	return nil
}

func (r *Run) setupTTCP(p ttcp.Params) error {
	hs, err := r.twoHosts([2]string{"transmitter", "receiver"}, [2]string{p.Transmitter, p.Receiver})
	if err != nil {
		return err
	}
	if r.ttcp, err = ttcp.New(p, hs[0], hs[1]); err != nil {
		return err
	}
	r.ttcp.Start()
	return nil
}

func (r *Run) setupPing(p ping.Params) error {
	from, err := r.host(p.From)
	if err != nil {
		return fmt.Errorf("from: %w", err)
	}
	to, err := r.host(p.To)
	if err != nil {
		return fmt.Errorf("to: %w", err)
	}
	for _, h := range []*Host{from, to} {
		if h.Inet == nil {
			return fmt.Errorf("host %q has no card with an IP address", h.Name)
		}
	}
	r.ping = ping.New(p, from.Kernel, from.Inet, to.Inet.Addr())
	r.ping.Start()
	return nil
}

func (r *Run) hostDone() {
	r.done++
	if r.done == len(r.Hosts) {
		r.K.Stop()
	}
}

// Execute runs the simulation to the workload's end or the stop time and
// returns the result.
func (r *Run) Execute(opt Options) (*report.Result, error) {
	stop := r.Exp.Info.StopAt
	const chunk = 1 << 16
	last := time.Now()
	var aborted error
	for r.done < len(r.Hosts) && r.K.Next() <= stop && aborted == nil {
		n := 0
		r.K.RunWhile(func() bool {
			n++
			if opt.Abort != nil {
				aborted = opt.Abort()
			}
			return n <= chunk && r.K.Next() <= stop && aborted == nil
		})
		if r.done == len(r.Hosts) {
			break
		}
		if opt.Progress != nil && time.Since(last) > 200*time.Millisecond {
			last = time.Now()
			opt.Progress(r.K.Now(), stop)
		}
	}
	if opt.OnEnd != nil {
		opt.OnEnd()
	}
	if aborted == nil && opt.Abort != nil {
		aborted = opt.Abort()
	}
	res := r.result()
	if aborted != nil {
		res.Complete = false
		res.Incomplete = "stopped: " + aborted.Error()
	}
	r.Close()
	for _, p := range r.progs {
		if err := p.Err(); err != nil {
			return res, err
		}
	}
	return res, nil
}

// SetLayers moves modelled functions to other layers on every host (a
// name no host defines is an error). Call it before Execute.
func (r *Run) SetLayers(m map[string]string) error {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		found := false
		for _, h := range r.Hosts {
			if h.Syms.SetLayer(name, cpu.Layer(m[name])) == nil {
				found = true
			}
		}
		if !found {
			return fmt.Errorf("layers: no host has a modelled function called %q (see simkron symbols)", name)
		}
	}
	return nil
}

// Close ends every simulated context of every host, releasing the
// goroutines behind them. Execute calls it once the result is taken.
func (r *Run) Close() {
	for _, h := range r.Hosts {
		h.CPU.Shutdown()
	}
}

func (r *Run) result() *report.Result {
	res := &report.Result{
		Schema:      report.Schema,
		Version:     Version,
		Experiment:  r.Exp.Info.Name,
		Description: r.Exp.Info.Description,
		Seed:        r.K.Seed(),
		Complete:    r.done == len(r.Hosts),
		SimTimePS:   int64(r.K.Now()),
		Events:      r.K.Fired(),
		Workload:    r.Exp.Workload.Type,
	}
	if !res.Complete {
		res.Incomplete = fmt.Sprintf("stop_at %v reached before the workload ended", r.Exp.Info.StopAt)
	}
	for _, h := range r.Hosts {
		res.Hosts = append(res.Hosts, h.result())
	}
	for _, p := range r.progs {
		res.Membench = append(res.Membench, p.Rows()...)
	}
	if r.mac != nil {
		res.Mac = r.mac.Rows()
	}
	if r.udp != nil {
		res.UDP = r.udp.Rows()
	}
	if r.tcp != nil {
		res.TCP = r.tcp.Rows()
		if f := r.tcp.Failed(); f != "" && res.Complete {
			res.Complete = false
			res.Incomplete = "tcp sweep: " + f
		}
	}
	if r.ttcp != nil {
		res.TTCP = r.ttcp.Results()
		for _, c := range res.TTCP {
			if c.Error != "" && res.Complete {
				res.Complete = false
				res.Incomplete = fmt.Sprintf("ttcp run %q: %s", c.Name, c.Error)
			}
		}
	}
	if r.ping != nil {
		pr := r.ping.Result()
		res.Ping = &pr
	}
	for _, seg := range r.Net.Segments() {
		st := seg.Stats()
		res.Segments = append(res.Segments, report.Segment{
			Name: seg.Name(), Rate: int64(seg.Params().Rate), Mode: seg.Params().Mode,
			Frames: st.Frames, Bytes: st.Bytes, Collisions: st.Collisions, BusyPS: int64(st.BusyTime),
		})
	}
	return res
}

func (h *Host) result() report.Host {
	cs := h.CPU.Stats()
	ks := h.Kernel.Stats()
	_, peak := h.Kernel.Allocator().InUse()
	out := report.Host{
		Name:        h.Name,
		Machine:     h.Spec.Machine.Name,
		Description: h.Spec.Machine.Description,
		ClockHz:     int64(h.Spec.CPU.Clock),
		CPU: report.CPU{
			Cycles: cs.Cycles, IdleCycles: cs.IdleCycles, Instructions: cs.Instructions,
			Interrupts: cs.Interrupts, Switches: cs.Switches, Traps: cs.Traps,
			IOAccesses: cs.IOAccesses, IOCycles: cs.IOCycles,
		},
		Memory: report.Memory{
			Size:         uint64(h.Sys.Phys.Size()),
			PagesTouched: h.Sys.Phys.PagesTouched(),
			Reads:        h.Sys.Cache.MemReads(),
			Writes:       h.Sys.Cache.MemWrites(),
		},
		Kernel: report.Kernel{
			Syscalls: ks.Syscalls, Ticks: ks.Ticks, TimersFired: ks.TimersFired,
			SoftirqRuns: ks.SoftirqRuns, Schedules: ks.Schedules, HeapPeak: peak,
		},
		GuestErrors: h.Sys.Guest.Count(),
	}
	for _, c := range h.Sys.Cache.Caches() {
		p, s := c.Params(), c.Stats()
		out.Caches = append(out.Caches, report.Cache{
			Name: h.Name + "." + c.Name(), Size: uint64(p.Size), Line: uint64(p.Line), Assoc: p.Assoc,
			WritePolicy: p.WritePolicy.String(),
			ReadHits:    s.ReadHits, ReadMisses: s.ReadMisses, WriteHits: s.WriteHits, WriteMisses: s.WriteMisses,
			FetchHits: s.FetchHits, FetchMisses: s.FetchMisses, Writebacks: s.Writebacks,
		})
	}
	devs := map[string]Device{}
	for _, d := range h.Devices {
		devs[d.Name()] = d
	}
	for _, m := range h.Sys.Devices.Mappings() {
		d := report.Device{Name: h.Name + "." + m.Name, Space: m.Space.String(), Base: uint64(m.Base), Size: m.Size}
		if m.Bus != nil {
			d.Bus = m.Bus.Name()
		}
		if dev, ok := devs[h.Name+"."+m.Name]; ok {
			d.Counters = dev.Counters()
		}
		out.Devices = append(out.Devices, d)
	}
	for _, g := range h.Sys.Guest.Records() {
		out.GuestLog = append(out.GuestLog, g.String())
	}
	return out
}
