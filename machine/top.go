package machine

import (
	"fmt"
	"strconv"

	"simkron/config"
	"simkron/ethersim"
	"simkron/report"
	"simkron/stack/driver/pktdrv"
	"simkron/stack/top"
)

// TOPSpec is a machine file's [top] table: whether the host runs the TOP
// study's single-program DOS environment (stack/top: a Station running
// TOP programs over the resident packet driver) instead of the simulated
// kernel, and the station's settings: the programs' memory regions,
// scheduler and timing wheel, the packet driver, the NSAP. An
// experiment's [host.top] overrides its keys for one host, as
// [host.inet] does [inet]'s. Workloads find the station on the host as a
// *top.Station and give it programs; what the programs' layer entities
// run with (CLNP, TP4, session, presentation) is the workload's.
//
// A TOP host has no kernel: its devices are the PC's 8254 (type pit,
// where [top] pit_base and pit_irq say) and NE2000s, each driven by a
// resident packet driver; its cards carry no IP address.
type TOPSpec struct {
	Enabled bool `toml:"enabled" help:"run the TOP study's single-program DOS environment (the TOP run-time over the resident packet driver, stack/top) instead of the simulated kernel"`
	top.StationParams
}

// defaultTOP is the [top] table a machine file starts from: no TOP
// environment, the station's defaults when one is asked for.
func defaultTOP() TOPSpec { return TOPSpec{StationParams: top.DefaultStationParams()} }

// topDevices are the device types a TOP host drives.
var topDevices = map[string]bool{"pit": true, "ne2000": true}

// newStation makes the host's station before its devices, whose packet
// drivers it gets as the NE2000s are built.
func (h *Host) newStation() error {
	st, err := top.NewStation(h.Name, h.CPU, h.Syms, h.Spec.TOP.StationParams)
	if err != nil {
		return err
	}
	h.TOP = st
	return nil
}

// residentDriver is a station's packet driver as a NIC's driver: the
// station's start-up initialises it, and it has no kernel device queue.
type residentDriver struct{ *pktdrv.Driver }

func (residentDriver) Init()      {}
func (residentDriver) Queue() int { return -1 }

// pktdrvCounters are a packet driver's figures for reports.
func pktdrvCounters(d *pktdrv.Driver) []report.Counter {
	s := d.Stats()
	return []report.Counter{
		{Name: "pktdrv.tx_frames", Value: s.TxFrames}, {Name: "pktdrv.rx_frames", Value: s.RxFrames},
		{Name: "pktdrv.tx_errors", Value: s.TxErrors}, {Name: "pktdrv.rx_errors", Value: s.RxErrors},
		{Name: "pktdrv.rx_dropped", Value: s.RxDropped}, {Name: "pktdrv.overruns", Value: s.Overruns},
		{Name: "pktdrv.tx_waits", Value: s.TxWaits}, {Name: "pktdrv.loopback_frames", Value: s.LoopbackFrames},
	}
}

// checkTOP finds what a machine file that runs the TOP environment
// cannot have: a kernel's devices and agents, no timer for the BIOS
// tick, code and data that overlap.
func checkTOP(f *config.File, s *Spec) config.Errors {
	t := &s.TOP
	if !t.Enabled {
		return nil
	}
	var errs config.Errors
	if s.VIA.Enabled {
		errs = append(errs, f.Errorf([]string{"via", "enabled"}, "a TOP host has no kernel for the VIA agent"))
	}
	if s.ISO.Enabled {
		errs = append(errs, f.Errorf([]string{"iso", "enabled"}, "a TOP host has no kernel for the ISO family (its OSI stack is the TOP programs')"))
	}
	tick := false
	for i, d := range s.Devices {
		if _, known := deviceTypes[d.Type]; known && !topDevices[d.Type] {
			errs = append(errs, f.Errorf([]string{"device", strconv.Itoa(i), "type"}, "a TOP host has no kernel to drive a %s: it drives a pit and NE2000s (through the packet driver)", d.Type))
		}
		if d.Type == "pit" && d.Base == t.PITBase && d.IRQ == t.PITIRQ {
			tick = true
		}
	}
	if !tick {
		errs = append(errs, f.Errorf([]string{"top", "pit_base"}, "no pit device at %#x on irq %d (top.pit_base, top.pit_irq) for the BIOS tick", t.PITBase, t.PITIRQ))
	}
	if s.Memory.KernelText >= t.DataBase {
		errs = append(errs, f.Errorf([]string{"memory", "kernel_text"}, "the programs' code at %#x must lie below their data (top.data_base %#x)", s.Memory.KernelText, t.DataBase))
	}
	if t.ResidentBase >= s.Memory.KernelText {
		errs = append(errs, f.Errorf([]string{"top", "resident_base"}, "%#x must lie below the programs' code (memory.kernel_text %#x)", t.ResidentBase, s.Memory.KernelText))
	}
	return errs
}

// checkHostTOP finds what an experiment cannot ask of its TOP host i.
func checkHostTOP(f *config.File, h *HostSpec, i int) config.Errors {
	if h.Machine == nil || !h.Machine.TOP.Enabled {
		return nil
	}
	var errs config.Errors
	hk := strconv.Itoa(i)
	for j, n := range h.NICs {
		key := func(k string) []string { return []string{"host", hk, "nic", strconv.Itoa(j), k} }
		if n.IP != (ethersim.IP4{}) {
			errs = append(errs, f.Errorf(key("ip"), "host %q runs the TOP environment: no Internet protocols, no IP address", h.Name))
		}
		if n.MTU != 0 {
			errs = append(errs, f.Errorf(key("mtu"), "host %q runs the TOP environment: its packet driver sends 802.3 frames of up to 1514 bytes", h.Name))
		}
	}
	if len(h.ATM) > 0 {
		errs = append(errs, f.Errorf([]string{"host", hk, "atm"}, "host %q runs the TOP environment, which has no ATM cards", h.Name))
	}
	return errs
}

// checkHostTOPKeys decodes the experiment's [host.top] of host i onto the
// defaults, before the machine files are read, so that its keys are
// checked (and known) whatever the machine file says; it reports whether
// they were bad.
func checkHostTOPKeys(f *config.File, i int) (bad bool, err error) {
	hk := strconv.Itoa(i)
	if !f.Has("host", hk, "top") {
		return false, nil
	}
	scratch := top.DefaultStationParams()
	err = f.DecodeInto(&scratch, "host", hk, "top")
	return err != nil, err
}

// decodeHostTOP applies the experiment's good [host.top] of host i to
// its machine's [top] station settings; whether the host runs the TOP
// environment is its machine file's.
func decodeHostTOP(f *config.File, h *HostSpec, i int) config.Errors {
	hk := strconv.Itoa(i)
	if h.Machine == nil || !f.Has("host", hk, "top") {
		return nil
	}
	if !h.Machine.TOP.Enabled {
		return config.Errors{f.Errorf([]string{"host", hk, "top"}, "machine %q does not run the TOP environment ([top] enabled in its file)", h.Machine.Machine.Name)}
	}
	if err := f.DecodeInto(&h.Machine.TOP.StationParams, "host", hk, "top"); err != nil {
		return err.(config.Errors)
	}
	return nil
}

// startStation links the station's program image and starts its
// context, once every device is built.
func (h *Host) startStation() error {
	if err := h.TOP.Start(); err != nil {
		return fmt.Errorf("top: %w", err)
	}
	return nil
}
