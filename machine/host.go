package machine

import (
	"fmt"

	"simkron/card"
	"simkron/config"
	"simkron/cpu"
	"simkron/machine/part"
	"simkron/memory"
	"simkron/sim"
	"simkron/stats"
)

// Host is one assembled machine with its environment booted: its
// hardware, and the components its parts added, found by type (Find,
// FindAll).
type Host = part.Host

// Find returns the first component of h that is a T (a concrete type, or
// an interface the component implements), as workload.Find does for a
// workload's view of a host.
func Find[T any](h *Host) (T, bool) { return part.Find[T](h) }

// FindAll returns every component of h that is a T, in order.
func FindAll[T any](h *Host) []T { return part.FindAll[T](h) }

// CoreCounters declares the counters every host's core reports, as
// zero values: the cpu's, under its name in the result (hostA.cpu0).
func CoreCounters() []stats.Group { return []stats.Group{{Name: "cpu0", Value: cpu.Stats{}}} }

// Counters returns every counter of host h, read now, each named under
// the host: its core's (hostA.cpu0.cycles), its environment's and
// families' (hostA.kernel.syscalls, hostA.inet.tcp_in_segs), then each
// device's in machine order (hostA.nic0.card.tx_frames).
func Counters(h *Host) []stats.Counter {
	var out []stats.Counter
	for _, g := range CoreCounters() {
		out = stats.AppendWalk(out, stats.Join(h.Name, g.Name), h.CPU.Stats())
	}
	out = stats.AppendGroups(out, h.Name, h.Counters())
	for i, d := range h.Devices {
		out = stats.AppendGroups(out, stats.Join(h.Name, h.Spec.Devices[i].Name), d.Counters())
	}
	return out
}

// Build assembles the host hs on event scheduler k in the given detail, on
// the run's network net, in the order every host is built:
//
//  1. memory and caches, the core and its symbol table;
//  2. the environment its machine file selects (part.Environment.Boot);
//  3. the buses and uncached ranges;
//  4. each [[device]] in machine order through its model
//     (part.DeviceType.Build), which plugs a card into its technology's
//     network as the experiment binds it and makes the driver the
//     environment drives it with;
//  5. every protocol family of the environment that the machine file
//     enables (part.Family.Build), in the families' order;
//  6. the environment's start (part.Env.Start): the drivers'
//     initialisation, then whatever the workload gives it.
//
// Programs are added by the workload afterwards. Functional detail needs
// the machine's [functional] costs.
func Build(k *sim.Scheduler, net *Network, hs *HostSpec, detail memory.Detail) (*Host, error) {
	name, spec := hs.Name, hs.Machine
	if err := validName(name); err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	var (
		sys *memory.System
		err error
	)
	if detail == memory.DetailFunctional {
		if spec.Functional == nil {
			return nil, fmt.Errorf("%s: machine %q has no [functional] costs for functional detail: run simkron calibrate", name, spec.Machine.Name)
		}
		// The caches' arrays are made only if the run switches to full
		// detail (SetFull).
		sys, err = memory.NewFunctionalSystem(k, name, memory.NewPhys(spec.Memory.Size), spec.Cache, *spec.Functional)
	} else {
		var hier *memory.Hierarchy
		if hier, err = memory.NewHierarchy(spec.Cache); err == nil {
			sys = memory.NewSystem(k, name, memory.NewPhys(spec.Memory.Size), hier)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: cache: %w", name, err)
	}
	c, err := cpu.New(k, name+".cpu0", spec.CPU, sys)
	if err != nil {
		return nil, err
	}
	h := part.NewHost(name, spec, hs, net.byTech)
	h.Sched, h.Sys, h.CPU = k, sys, c
	if uint64(spec.Memory.KernelText) >= uint64(spec.Memory.Size) {
		return nil, fmt.Errorf("%s: memory.kernel_text 0x%x lies beyond memory (%v)", name, spec.Memory.KernelText, spec.Memory.Size)
	}
	h.Syms = cpu.NewSymbolTable(memory.Addr(spec.Memory.KernelText), spec.Costs)
	env := spec.Environment()
	h.EnvName = env.Name
	if h.Env, err = env.Boot(h); err != nil {
		return nil, err
	}
	for _, bp := range spec.Buses {
		if _, dup := h.Buses[bp.Name]; dup {
			return nil, fmt.Errorf("%s: bus %q defined twice", name, bp.Name)
		}
		h.Buses[bp.Name] = memory.NewBus(bp)
	}
	for _, u := range spec.Uncached {
		if err := sys.AddUncached(memory.Addr(u.Base), uint64(u.Size), u.Latency); err != nil {
			return nil, fmt.Errorf("%s: uncached %q: %w", name, u.Name, err)
		}
	}
	irqs := map[int]string{}
	for i := range spec.Devices {
		if err := addDevice(h, irqs, &spec.Devices[i]); err != nil {
			return nil, fmt.Errorf("%s: device %q: %w", name, spec.Devices[i].Name, err)
		}
	}
	for _, e := range part.Entries(hs) {
		if !hasCard(h, e.Tech.Name, e.DeviceName()) {
			return nil, fmt.Errorf("%s: %s: machine %q has no %s device %q", name, e.Key[0], spec.Machine.Name, e.Tech.Name, e.DeviceName())
		}
	}
	for _, f := range part.Families() {
		params := spec.Sections[f.Section.Key]
		if f.Environment != env.Name || f.Enabled != nil && !f.Enabled(params) {
			continue
		}
		if err := f.Build(h, params); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := h.Env.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return h, nil
}

// hasCard reports whether h has a card of technology tech built for the
// device called device.
func hasCard(h *Host, tech, device string) bool {
	for _, c := range h.Cards(tech) {
		if n, ok := c.(card.Card); ok && n.DeviceName() == device {
			return true
		}
	}
	return false
}

// addDevice builds the [[device]] d of host h through its model, on its
// bus and interrupt line, and maps its register window.
func addDevice(h *Host, irqs map[int]string, d *DeviceSpec) error {
	if err := validName(d.Name); err != nil {
		return err
	}
	t, ok := part.LookupDevice(d.Type)
	if !ok {
		return fmt.Errorf("unknown type %q", d.Type)
	}
	if d.Params == nil {
		d.Params = t.Defaults()
	}
	if d.Driver == nil && t.DriverDefaults != nil {
		d.Driver = t.DriverDefaults()
	}
	var bus *memory.Bus
	if d.Bus != "" {
		if bus, ok = h.Buses[d.Bus]; !ok {
			return fmt.Errorf("bus %q is not defined", d.Bus)
		}
	}
	var irq *cpu.IRQLine
	if d.IRQ >= 0 {
		if other, used := irqs[d.IRQ]; used {
			return fmt.Errorf("irq %d is already used by device %q (lines are not shared)", d.IRQ, other)
		}
		irqs[d.IRQ] = d.Name
		var err error
		if irq, err = h.CPU.Line(d.IRQ, false); err != nil {
			return err
		}
	}
	dev, err := t.Build(h, d, irq)
	if err != nil {
		return err
	}
	m := memory.Mapping{Name: d.Name, Space: d.Space, Base: memory.Addr(d.Base), Size: t.Size, Dev: dev, Bus: bus}
	if err := h.Sys.Devices.Map(m); err != nil {
		return err
	}
	h.Devices = append(h.Devices, dev)
	return nil
}

// CheckCosts reports cost overrides that name nothing the host defined,
// each at its line of the machine file (a config.Errors) when the machine
// came from one; call it once every program is in place.
func CheckCosts(h *Host) error {
	bad := h.Syms.UnusedOverrides()
	if len(bad) == 0 {
		return nil
	}
	if h.Spec == nil || h.Spec.File == nil {
		return fmt.Errorf("%s: costs: %q names no modelled function or loop (see simkron symbols)", h.Name, bad[0])
	}
	var errs config.Errors
	for _, name := range bad {
		errs = append(errs, h.Spec.File.Errorf([]string{"costs", name}, "names no modelled function or loop of host %s (see simkron symbols)", h.Name))
	}
	return errs
}
