// Package machine assembles simulated hosts and their network from an
// experiment and runs a workload on them. It holds the order of
// assembly and knows no part by name: the network technologies, host
// environments, device models and protocol families a host is built from
// are parts (package machine/part) that register themselves; machine
// imports them all through machine/parts, decodes the tables each
// declares, runs their checks, builds each host and the network in a
// fixed order (Build), and takes the result. docs/design.md describes
// the order and the parts.
package machine

import (
	"simkron/annotations"
	"simkron/config"
	"simkron/cpu"
	"simkron/machine/part"
	_ "simkron/machine/parts" // every registered part
	"simkron/memory"
	"simkron/sim"
	"simkron/workload"
)

// The specs of a machine and of an experiment's hosts are the parts'
// (package part), so that a part reads them without importing machine.
type (
	// Spec describes one kind of machine: a TOML file under
	// configs/machines.
	Spec = part.Machine
	// Info names a machine.
	Info = part.Info
	// MemoryParams sizes physical memory and places the code in it.
	MemoryParams = part.MemoryParams
	// DeviceSpec places one device of a machine.
	DeviceSpec = part.DeviceSpec
	// UncachedSpec is an address range that bypasses the caches.
	UncachedSpec = part.UncachedSpec
	// HostSpec is one [[host]] of an experiment.
	HostSpec = part.HostSpec
	// Capture is one network's pcap file or trace.
	Capture = part.Capture
	// DeviceType is a device model (part.RegisterDevice).
	DeviceType = part.DeviceType
)

// DefaultSpec returns the defaults every machine file starts from, with
// every registered environment's and family's table at its defaults.
func DefaultSpec() Spec {
	s := Spec{
		CPU:    cpu.DefaultParams(),
		Memory: MemoryParams{Size: 16 * sim.MiB, KernelText: 0x100000},
		// No cache is preset: a machine file describes its own levels.
		Cache:    memory.HierarchyParams{MemLatency: 10, MemWriteLatency: 2},
		Sections: map[string]any{},
	}
	for _, sec := range part.Sections() {
		s.Sections[sec.Key] = sec.Defaults()
	}
	return s
}

// DefaultDevice returns the defaults of a [[device]] entry.
func DefaultDevice() DeviceSpec { return part.DefaultDevice() }

// DeviceTypes returns the registered device models, sorted by name.
func DeviceTypes() []*DeviceType { return part.DeviceTypes() }

// Experiment is a whole run: hosts and a workload.
type Experiment struct {
	Info ExperimentInfo `toml:"experiment"`
	// Layers moves modelled functions to other layers for this run, by
	// name ("ip_rcv" = "IPIN"), on every host.
	Layers map[string]string `toml:"layers" help:"layer of a modelled function by name, replacing its default (see simkron symbols)"`
	Hosts  []HostSpec        `toml:"host"`
	// Networks are the decoded tables of every network technology, by
	// its name (part.Technology.Tables: [[segment]], [[atm_link]], ...).
	Networks map[string]any `toml:"-"`
	Workload WorkloadSpec   `toml:"workload"`
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
	// Linked lets hosts joined only by switches run on their own clocks
	// (linked islands, linked.go).
	Linked      bool     `toml:"linked" help:"run hosts joined only by a switch without a capture, whose workload lets them run apart, each on its own clock and thread, synchronised by the switch's lookahead (same results but for the simulator's own counts; faster only when each host has much to simulate between frames: see docs/speed.md)"`
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
// with every registered workload's defaults and every technology's
// tables empty.
func DefaultExperiment() Experiment {
	w := WorkloadSpec{Type: "membench", Params: map[string]any{}}
	for _, t := range workload.Types() {
		w.Params[t.Name] = t.Params()
	}
	nets := map[string]any{}
	for _, t := range part.Technologies() {
		nets[t.Name] = t.Tables()
	}
	return Experiment{
		Info: ExperimentInfo{Seed: 1, StopAt: 60 * sim.Second,
			AnnotationCommands: annotations.DefaultCommands, AnnotationHostTime: sim.Time(annotations.DefaultTime.Nanoseconds()) * sim.Nanosecond,
			AnnotationRunTime: sim.Time(annotations.DefaultRunTime.Nanoseconds()) * sim.Nanosecond},
		Networks: nets,
		Workload: w,
	}
}

// MaxName is the longest name of a host, segment, link, switch, bus or
// device, in bytes (part.MaxName).
const MaxName = part.MaxName

func validName(s string) error { return part.ValidName(s) }
