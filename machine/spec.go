// Package machine assembles simulated hosts from their descriptions and
// runs experiments on them. It is the one place that knows every
// component: hardware (memory, cpu, devices), the software that runs on it
// (stack/...) and the network between hosts; docs/design.md names it as the
// natural home for building hosts from a config.
package machine

import (
	"fmt"

	"simkron/annotations"
	"simkron/config"
	"simkron/cpu"
	"simkron/ethersim"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/inet"
	"simkron/stack/kernel"
	"simkron/workload"
)

// Spec describes one kind of machine: a TOML file under configs/machines.
type Spec struct {
	Machine  Info                   `toml:"machine"`
	CPU      cpu.Params             `toml:"cpu"`
	Memory   MemoryParams           `toml:"memory"`
	Cache    memory.HierarchyParams `toml:"cache"`
	Kernel   kernel.Params          `toml:"kernel"`
	Inet     inet.Params            `toml:"inet"`
	Buses    []memory.BusParams     `toml:"bus"`
	Devices  []DeviceSpec           `toml:"-"` // [[device]], decoded per type by LoadMachine
	Uncached []UncachedSpec         `toml:"uncached"`
	VIA      VIASpec                `toml:"via"`
	TOP      TOPSpec                `toml:"top"`
	ISO      ISOSpec                `toml:"iso"`
	// Functional holds the calibrated costs of functional detail (written
	// by simkron calibrate); nil when the file has no [functional].
	Functional *memory.FunctionalParams `toml:"functional" help:"average costs of functional detail, measured by simkron calibrate from a full-detail run"`
	// Path is the file the machine came from ("" when built in code).
	Path string `toml:"-"`
	// file is the parsed file, for errors found once the host is built
	// (a [costs] name no function has); nil when built in code.
	file *config.File
	// Costs overrides instruction counts of modelled functions and loops
	// by name (see `simkron symbols`).
	// Its bounds are 0 and cpu.MaxInstructions (a test holds them equal).
	Costs map[string]int64 `toml:"costs" min:"0" max:"10000" unit:"instructions" help:"instruction counts by function or loop name, replacing the defaults: per call, or per item of a loop"`
}

// Info names a machine.
type Info struct {
	Name        string `toml:"name" help:"short name of the machine"`
	Description string `toml:"description" help:"one line for reports"`
}

// MemoryParams sizes physical memory and places the kernel in it.
type MemoryParams struct {
	Size       sim.Size `toml:"size" min:"64KiB" max:"4GiB" help:"physical memory"`
	KernelText uint64   `toml:"kernel_text" help:"physical address where kernel code is placed"`
}

// DeviceSpec places one device; Params holds its type's own parameters.
type DeviceSpec struct {
	Name  string       `toml:"name" help:"device name, unique in the machine (hostA.<name> in reports) (a name: letters, digits, '-' and '_', at most 64)"`
	Type  string       `toml:"type" help:"device model: see simkron params"`
	Space memory.Space `toml:"space" help:"address space: io (port I/O) or mem (memory-mapped)"`
	Base  uint64       `toml:"base" help:"first register address"`
	Bus   string       `toml:"bus" help:"bus the registers are reached over (a [[bus]] name); empty: the memory bus"`
	IRQ   int          `toml:"irq" min:"-1" max:"31" help:"interrupt line, -1 for none"`
	// Params is the decoded [device.params] table of the type (the
	// hardware); Driver the [device.driver] table (the kernel's driver
	// for it), for types that have one.
	Params any `toml:"-"`
	Driver any `toml:"-"`
}

// UncachedSpec is an address range that bypasses the caches.
type UncachedSpec struct {
	Name    string   `toml:"name" help:"what lives there"`
	Base    uint64   `toml:"base" help:"first address"`
	Size    sim.Size `toml:"size" help:"length"`
	Latency int64    `toml:"latency" min:"1" max:"100000" unit:"cycles" help:"cycles per reference"`
}

// DefaultSpec returns the defaults every machine file starts from.
func DefaultSpec() Spec {
	return Spec{
		CPU:    cpu.DefaultParams(),
		Memory: MemoryParams{Size: 16 * sim.MiB, KernelText: 0x100000},
		// No cache is preset: a machine file describes its own levels.
		Cache:  memory.HierarchyParams{MemLatency: 10, MemWriteLatency: 2},
		Kernel: kernel.DefaultParams(),
		Inet:   inet.DefaultParams(),
		VIA:    defaultVIA(),
		TOP:    defaultTOP(),
		ISO:    defaultISO(),
	}
}

// DefaultDevice returns the defaults of a [[device]] entry.
func DefaultDevice() DeviceSpec { return DeviceSpec{Space: memory.SpaceIO, IRQ: -1} }

// HostSpec is one host of an experiment.
type HostSpec struct {
	Name        string    `toml:"name" help:"host name, used in every report and file name (a name: letters, digits, '-' and '_', at most 64)"`
	MachineFile string    `toml:"machine" help:"machine file, relative to the experiment file"`
	NICs        []NICSpec `toml:"nic" help:"network cards of the machine and the segments they plug into"`
	ATM         []ATMSpec `toml:"atm" help:"ATM cards of the machine and the links they plug into (see machine/atm.go)"`
	Machine     *Spec     `toml:"-"`
	// A [host.inet] table overrides keys of the machine file's [inet] for
	// this host (LoadExperiment applies it to Machine).
}

// NICSpec plugs one network device of a host's machine into a segment.
type NICSpec struct {
	Device  string               `toml:"device" help:"the [[device]] name in the host's machine file"`
	Segment string               `toml:"segment" help:"the [[segment]] it is plugged into"`
	MAC     ethersim.MAC         `toml:"mac" help:"station address, e.g. \"02:00:00:00:00:01\" (stored in the card's PROM)"`
	IP      ethersim.IP4         `toml:"ip" help:"IPv4 address of the host on this card (0.0.0.0: no Internet protocols)"`
	Netmask ethersim.IP4         `toml:"netmask" help:"subnet mask of the card's network"`
	Faults  ethersim.FaultParams `toml:"faults" help:"faults on frames arriving at this card"`
	MTU     int                  `toml:"mtu" min:"0" max:"65535" help:"interface MTU on this card (0: the machine file's): sets the card's driver and, on the card with the host's address, IP; frames of mtu + 18 bytes must fit the segment's max_frame (raise both to stand in for FDDI: 4352 and 4370B)"`
}

// SetDefaults fills a new [[host.nic]] with a class C netmask.
func (n *NICSpec) SetDefaults() { n.Netmask = ethersim.IP4{255, 255, 255, 0} }

// SegmentSpec is one Ethernet segment (or switch) of the experiment.
type SegmentSpec struct {
	Name string `toml:"name" help:"segment name, and of its capture NAME.pcap (a name: letters, digits, '-' and '_', at most 64)"`
	ethersim.SegmentParams
	Pcap bool `toml:"pcap" help:"write every frame to <out>/<name>.pcap with its simulated time"`
	// Bridges join the segment to real hosts (machine/bridge.go).
	Bridges []BridgeSpec `toml:"bridge" help:"bridges of the segment to real hosts through Linux TAP devices; the run is then paced to the wall clock"`
}

// SetDefaults fills a new [[segment]] with Ethernet's defaults.
func (s *SegmentSpec) SetDefaults() { s.SegmentParams = ethersim.DefaultSegmentParams() }

// Experiment is a whole run: hosts and a workload.
type Experiment struct {
	Info ExperimentInfo `toml:"experiment"`
	// Layers moves modelled functions to other layers for this run, by
	// name ("ip_rcv" = "IPIN"), on every host.
	Layers   map[string]string `toml:"layers" help:"layer of a modelled function by name, replacing its default (see simkron symbols)"`
	Segments []SegmentSpec     `toml:"segment"`
	// The ATM network: TAXI links and switches (machine/atm.go).
	ATMLinks    []ATMLinkSpec   `toml:"atm_link"`
	ATMSwitches []ATMSwitchSpec `toml:"atm_switch"`
	Hosts       []HostSpec      `toml:"host"`
	Workload    WorkloadSpec    `toml:"workload"`
	// Path is the file the experiment came from ("" when built in code).
	Path string `toml:"-"`
	// file is the parsed file, for errors found once the hosts are built
	// (a [layers] name no function has); nil when built in code.
	file *config.File
}

// ExperimentInfo holds the run-wide settings.
type ExperimentInfo struct {
	Name        string   `toml:"name" help:"experiment name"`
	Description string   `toml:"description" help:"one line for reports"`
	Seed        uint64   `toml:"seed" help:"master seed of every random stream (overridden by --seed)"`
	StopAt      sim.Time `toml:"stop_at" min:"1ns" help:"simulated time at which the run stops even if the workload has not ended"`
	// Detail chooses the memory model (memory.Detail).
	Detail memory.Detail `toml:"detail" help:"memory model: \"full\" (every reference through the caches) or \"functional\" (no caches: each reference costs the average in the machine file's [functional], measured by simkron calibrate)"`
	// FullFrom ends functional detail's warm-up (0: never).
	FullFrom sim.Time `toml:"full_detail_from" help:"with detail = \"functional\": the simulated time from which every host runs in full detail, its caches empty (warm up in functional detail, measure in full); 0 or absent: functional to the end"`
	// SyncQuantum lets device accesses run ahead of the event clock
	// (cpu.CPU.SetSyncQuantum); 0: exact.
	SyncQuantum sim.Time `toml:"sync_quantum" max:"1ms" help:"how far ahead of the event clock a core may make a device access instead of running the events due first (the device sees it up to this early): fewer hand-overs between hosts, less host time, results no longer exact; 0 or absent: exact"`
	Annotations []string `toml:"annotations" help:"Tcl annotation scripts run with the experiment, relative to its file (simkron run --annotate adds more)"`
	// The budget of annotation scripts (package annotations).
	AnnotationCommands int64    `toml:"annotation_commands" min:"1000" max:"1000000000000" help:"Tcl commands one script's load or one annotation body may run; more is a script error that stops the run"`
	AnnotationHostTime sim.Time `toml:"annotation_host_time" min:"1ms" max:"3600s" help:"host time one script's load or one annotation body may take; Tcl stops it between commands, and a single command still running at twice this is abandoned; more is a script error that stops the run"`
	AnnotationRunTime  sim.Time `toml:"annotation_run_time" min:"1ms" max:"86400s" help:"host time every script's load and every annotation body of the run may take together; more is a script error that stops the run"`
}

// WorkloadSpec chooses the programs that run: a registered workload type
// (package workload) and the decoded [workload.NAME] section of every
// registered type, so that a workload may run another's programs too.
type WorkloadSpec struct {
	Type string `toml:"type" help:"workload type: one of the registered workloads (simkron run --help lists them)"`
	// Then are more workloads, run one after another on the same hosts.
	Then []string `toml:"then" help:"workload types to run after type, in order, each once every host's programs of the one before have ended (it starts at the host's next clock tick); each is configured in its own [workload.NAME]"`
	// Params maps each registered type's name to its decoded section
	// (its defaults when the file has none).
	Params map[string]any `toml:"-"`
}

// DefaultExperiment returns the defaults an experiment file starts from,
// with every registered workload's defaults.
func DefaultExperiment() Experiment {
	w := WorkloadSpec{Type: "membench", Params: map[string]any{}}
	for _, t := range workload.Types() {
		w.Params[t.Name] = t.Params()
	}
	return Experiment{
		Info: ExperimentInfo{Seed: 1, StopAt: 60 * sim.Second,
			AnnotationCommands: annotations.DefaultCommands, AnnotationHostTime: sim.Time(annotations.DefaultTime.Nanoseconds()) * sim.Nanosecond,
			AnnotationRunTime: sim.Time(annotations.DefaultRunTime.Nanoseconds()) * sim.Nanosecond},
		Workload: w,
	}
}

// MaxName is the longest name of a host, segment, link, switch, bus or
// device, in bytes. Names become file names (<out>/SEGMENT.pcap,
// <out>/LINK.cells) and parts of the hierarchical names in reports
// (hostA.nic0.rx): 64 is far from a file system's 255 and far beyond a
// name a person reads.
const MaxName = 64

func validName(s string) error {
	if s == "" {
		return fmt.Errorf("name is empty")
	}
	if len(s) > MaxName {
		return fmt.Errorf("name %q… is %d characters long; a name has at most %d (it names files and counters)", s[:16], len(s), MaxName)
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return fmt.Errorf("name %q may hold only letters, digits, '-' and '_'", s)
		}
	}
	return nil
}
