// Package tophost is the part that runs a host in the TOP study's
// single-program DOS environment (stack/top: a Station running TOP
// programs over the resident packet driver) instead of the simulated
// kernel, when its machine file's [top] asks for it. It registers the
// environment, the PC's 8254 interval timer that the environment's BIOS
// programs (pit.go), and the packet driver it drives NE2000s with
// (pktdrv.go).
//
// A TOP host has no kernel: its devices are the PC's 8254 (type pit,
// where [top] pit_base and pit_irq say) and NE2000s, each driven by a
// resident packet driver; its cards carry no IP address. Workloads find
// the station on the host as a *top.Station and give it programs; what
// the programs' layer entities run with (CLNP, TP4, session,
// presentation) is the workload's.
package tophost

import (
	"fmt"
	"strconv"

	"simkron/machine/part"
	"simkron/report"
	"simkron/stack/header"
	"simkron/stack/top"
	"simkron/stats"
)

// Name is the environment's name, as drivers register for it.
const Name = "top"

// Spec is a machine file's [top] table: whether the host runs the TOP
// environment instead of the simulated kernel, and the station's
// settings: the programs' memory regions, scheduler and timing wheel,
// the packet driver, the NSAP. An experiment's [host.top] overrides the
// station's settings for one host, as [host.inet] does [inet]'s; whether
// the host runs the environment is its machine file's.
type Spec struct {
	Enabled bool `toml:"enabled" help:"run the TOP study's single-program DOS environment (the TOP run-time over the resident packet driver, stack/top) instead of the simulated kernel"`
	top.StationParams
}

// defaultSpec is the [top] table a machine file starts from: no TOP
// environment, the station's defaults when one is asked for.
func defaultSpec() Spec { return Spec{StationParams: top.DefaultStationParams()} }

func init() {
	part.RegisterEnvironment(part.Environment{
		Name:  Name,
		Order: 1,
		Section: part.Section{Key: "top", Help: "the TOP study's single-program DOS environment (stack/top) in place of the simulated kernel",
			Defaults:     func() any { s := defaultSpec(); return &s },
			HostOverride: func(p any) any { return &p.(*Spec).StationParams }},
		Selected: func(p any) bool { return p.(*Spec).Enabled },
		Lacks:    "a TOP host has no kernel",
		NotRun:   "does not run the TOP environment ([top] enabled in its file)",
		NoDriver: func(device string) string {
			return fmt.Sprintf("a TOP host has no kernel to drive a %s: it drives a pit and NE2000s (through the packet driver)", device)
		},
		Check:     check,
		CheckHost: checkHost,
		Boot:      boot,
		Counters:  []stats.Group{{Name: "top", Value: top.StationStats{}}},
	})
}

// check finds what a machine file that runs the TOP environment cannot
// have: no timer for the BIOS tick, code and data that overlap.
func check(m *part.Machine) []part.Problem {
	t := part.SectionOf[Spec](m, "top")
	var out []part.Problem
	tick := false
	for _, d := range m.Devices {
		if d.Type == "pit" && d.Base == t.PITBase && d.IRQ == t.PITIRQ {
			tick = true
		}
	}
	if !tick {
		out = append(out, part.Problemf([]string{"top", "pit_base"}, "no pit device at %#x on irq %d (top.pit_base, top.pit_irq) for the BIOS tick", t.PITBase, t.PITIRQ))
	}
	if m.Memory.KernelText >= t.DataBase {
		out = append(out, part.Problemf([]string{"memory", "kernel_text"}, "the programs' code at %#x must lie below their data (top.data_base %#x)", m.Memory.KernelText, t.DataBase))
	}
	if t.ResidentBase >= m.Memory.KernelText {
		out = append(out, part.Problemf([]string{"top", "resident_base"}, "%#x must lie below the programs' code (memory.kernel_text %#x)", t.ResidentBase, m.Memory.KernelText))
	}
	return out
}

// checkHost finds what an experiment cannot ask of its TOP host i: an
// address or an MTU on its Ethernet cards (the packet driver sends 802.3
// frames, no Internet protocols run), cards of another technology.
func checkHost(hosts []part.HostSpec, i int) []part.Problem {
	h := &hosts[i]
	hk := strconv.Itoa(i)
	var out []part.Problem
	other := map[string]bool{}
	for _, e := range part.Entries(h) {
		key := append([]string{"host", hk}, e.Key...)
		if e.Tech.Name != "ethernet" {
			if !other[e.Tech.Name] {
				out = append(out, part.Problemf(key[:3], "host %q runs the TOP environment, which has no %s", h.Name, e.Tech.Noun))
			}
			other[e.Tech.Name] = true
			continue
		}
		if _, _, ok := e.IPv4(); ok {
			out = append(out, part.Problemf(append(key, "ip"), "host %q runs the TOP environment: no Internet protocols, no IP address", h.Name))
		}
		if e.InterfaceMTU() != 0 {
			out = append(out, part.Problemf(append(key, "mtu"), "host %q runs the TOP environment: its packet driver sends 802.3 frames of up to %d bytes", h.Name, header.EthernetMaxFrameLen))
		}
	}
	return out
}

// env is a host's TOP station.
type env struct{ st *top.Station }

// boot makes the host's station before its devices, whose packet drivers
// it gets as the NE2000s are built.
func boot(h *part.Host) (part.Env, error) {
	st, err := top.NewStation(h.Name, h.CPU, h.Syms, part.SectionOf[Spec](h.Spec, "top").StationParams)
	if err != nil {
		return nil, err
	}
	h.AddEnv(st)
	h.AddCounters("top", func() any { return st.Stats() })
	return &env{st}, nil
}

// Start links the station's program image and starts its context, once
// every device is built.
func (e *env) Start() error {
	if err := e.st.Start(); err != nil {
		return fmt.Errorf("top: %w", err)
	}
	return nil
}

func (e *env) OnIdle(fn func())            { e.st.OnIdle = fn }
func (e *env) Busy() bool                  { return e.st.Busy() }
func (e *env) Report(r *report.HostResult) {} // no kernel: its counters are zero

// Station returns host h's station, or nil when h runs another
// environment.
func Station(h *part.Host) *top.Station {
	if e, ok := h.Env.(*env); ok {
		return e.st
	}
	return nil
}
