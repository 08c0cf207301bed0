package machine

import (
	"fmt"

	"simkron/config"
	"simkron/cpu"
	"simkron/ethersim"
	"simkron/memory"
	"simkron/report"
	"simkron/sim"
	"simkron/stack/inet"
	"simkron/stack/kernel"
	"simkron/stack/netdev"
	"simkron/stack/osi/netiso"
	"simkron/stack/top"
	"simkron/stack/via"
)

// Host is one assembled machine with its kernel booted.
type Host struct {
	Name     string
	Spec     *Spec
	HostSpec *HostSpec
	Sys      *memory.System
	CPU      *cpu.CPU
	Syms     *cpu.SymbolTable
	Kernel   *kernel.Kernel
	Buses    map[string]*memory.Bus
	// Devices are the device instances in the order of the machine file.
	Devices []Device
	// inits are the drivers' initialisation routines, run in order by the
	// init thread before any program.
	inits []func()
	irqs  map[int]string // line -> device
	net   *Network
	// Net is the kernel's device layer, present once a network card is.
	Net *netdev.Stack
	// NICs are the network cards with their drivers, in machine order.
	NICs []*NIC
	// ATMCards are the ATM cards with their drivers, in machine order.
	ATMCards []*ATMCard
	// Inet is the Internet protocol family, on the first card with an IP
	// address (Ethernet cards first, then ATM cards); nil when there is
	// none.
	Inet *inet.Stack
	// VIA is the M-VIA kernel agent on the host's cards, when the machine
	// file's [via] asks for it; nil otherwise.
	VIA *via.Agent
	// TOP is the host's TOP station when the machine file's [top] asks
	// for the TOP environment (top.go); the host then has no Kernel.
	TOP *top.Station
	// ISO is the kernel's ISO protocol family when the machine file's
	// [iso] asks for it (iso.go); nil otherwise.
	ISO *netiso.Family
}

// netStack returns the host's device layer, creating it with the first
// network card.
func (h *Host) netStack() *netdev.Stack {
	if h.Net == nil {
		h.Net = netdev.New(h.Kernel)
	}
	return h.Net
}

// Device is a built device with its counters for reports.
type Device interface {
	memory.Device
	// Counters returns named counters, in a fixed order.
	Counters() []report.Counter
}

// Build assembles the host hs on event kernel k in the given detail,
// plugs its network cards into net, and boots its kernel. Programs are
// added by the workload afterwards. Functional detail needs the machine's
// [functional] costs.
func Build(k *sim.Kernel, net *Network, hs *HostSpec, detail memory.Detail) (*Host, error) {
	name, spec := hs.Name, hs.Machine
	if err := validName(name); err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	hier, err := memory.NewHierarchy(spec.Cache)
	if err != nil {
		return nil, fmt.Errorf("%s: cache: %w", name, err)
	}
	sys := memory.NewSystem(k, name, memory.NewPhys(spec.Memory.Size), hier)
	if detail == memory.DetailFunctional {
		if spec.Functional == nil {
			return nil, fmt.Errorf("%s: machine %q has no [functional] costs for functional detail: run simkron calibrate", name, spec.Machine.Name)
		}
		sys.SetFunctional(*spec.Functional)
	}
	c, err := cpu.New(k, name+".cpu0", spec.CPU, sys)
	if err != nil {
		return nil, err
	}
	h := &Host{Name: name, Spec: spec, HostSpec: hs, Sys: sys, CPU: c, Buses: map[string]*memory.Bus{}, irqs: map[int]string{}, net: net}
	if uint64(spec.Memory.KernelText) >= uint64(spec.Memory.Size) {
		return nil, fmt.Errorf("%s: memory.kernel_text 0x%x lies beyond memory (%v)", name, spec.Memory.KernelText, spec.Memory.Size)
	}
	h.Syms = cpu.NewSymbolTable(memory.Addr(spec.Memory.KernelText), spec.Costs)
	if spec.TOP.Enabled {
		err = h.newStation()
	} else {
		h.Kernel, err = kernel.Boot(name, c, h.Syms, spec.Kernel)
	}
	if err != nil {
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
	for i := range spec.Devices {
		if err := h.addDevice(k, &spec.Devices[i]); err != nil {
			return nil, fmt.Errorf("%s: device %q: %w", name, spec.Devices[i].Name, err)
		}
	}
	for _, a := range hs.ATM {
		if h.atmCard(a.Device) == nil {
			return nil, fmt.Errorf("%s: atm: machine %q has no atmtaxi device %q", name, spec.Machine.Name, a.Device)
		}
	}
	for _, nic := range hs.NICs {
		if h.nic(nic.Device) == nil {
			return nil, fmt.Errorf("%s: nic: machine %q has no network device %q", name, spec.Machine.Name, nic.Device)
		}
	}
	// The Internet protocols run on the first card with an address.
	for _, nic := range h.NICs {
		if nic.Spec != nil && nic.Spec.IP != (ethersim.IP4{}) {
			h.Inet, err = inet.New(h.Kernel, h.Net, nic.Driver.Queue(), nic.Spec.IP, nic.Spec.Netmask, spec.Inet)
			if err != nil {
				return nil, fmt.Errorf("%s: inet: %w", name, err)
			}
			break
		}
	}
	for _, a := range h.ATMCards {
		if h.Inet == nil && a.Spec != nil && a.Spec.IP != (ethersim.IP4{}) {
			h.Inet, err = inet.New(h.Kernel, h.Net, a.Driver.Interface().Queue(), a.Spec.IP, a.Spec.Netmask, spec.Inet)
			if err != nil {
				return nil, fmt.Errorf("%s: inet: %w", name, err)
			}
		}
	}
	if err := h.addVIA(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := h.addISO(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if h.TOP != nil {
		if err := h.startStation(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return h, nil
	}
	h.Kernel.Spawn("init", func(*kernel.Thread) {
		for _, f := range h.inits {
			f()
		}
	})
	return h, nil
}

// CheckCosts reports cost overrides that name nothing the host defined,
// each at its line of the machine file (a config.Errors) when the machine
// came from one; call it once every program is in place.
func (h *Host) CheckCosts() error {
	bad := h.Syms.UnusedOverrides()
	if len(bad) == 0 {
		return nil
	}
	if h.Spec == nil || h.Spec.file == nil {
		return fmt.Errorf("%s: costs: %q names no modelled function or loop (see simkron symbols)", h.Name, bad[0])
	}
	var errs config.Errors
	for _, name := range bad {
		errs = append(errs, h.Spec.file.Errorf([]string{"costs", name}, "names no modelled function or loop of host %s (see simkron symbols)", h.Name))
	}
	return errs
}
