package part

import (
	"fmt"

	"simkron/config"
	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
)

// Machine describes one kind of machine: a TOML file under
// configs/machines. Its own tables are the hardware every host has; the
// tables of the registered environments and families ([kernel], [top],
// [inet], [iso], [via]) are in Sections.
type Machine struct {
	Machine  Info                   `toml:"machine"`
	CPU      cpu.Params             `toml:"cpu"`
	Memory   MemoryParams           `toml:"memory"`
	Cache    memory.HierarchyParams `toml:"cache"`
	Buses    []memory.BusParams     `toml:"bus"`
	Devices  []DeviceSpec           `toml:"-"` // [[device]], decoded per type
	Uncached []UncachedSpec         `toml:"uncached"`
	// Functional holds the calibrated costs of functional detail (written
	// by simkron calibrate); nil when the file has no [functional].
	Functional *memory.FunctionalParams `toml:"functional" help:"average costs of functional detail, measured by simkron calibrate from a full-detail run"`
	// Costs overrides instruction counts of modelled functions and loops
	// by name (see `simkron symbols`).
	// Its bounds are 0 and cpu.MaxInstructions (a test holds them equal).
	Costs map[string]int64 `toml:"costs" min:"0" max:"10000" unit:"instructions" help:"instruction counts by function or loop name, replacing the defaults: per call, or per item of a loop"`
	// Sections are the decoded tables of the registered environments and
	// families, by key ("kernel", "inet"): each a pointer to the part's
	// params (Section.Defaults), defaults where the file has no table.
	Sections map[string]any `toml:"-"`
	// Path is the file the machine came from ("" when built in code).
	Path string `toml:"-"`
	// File is the parsed file, for errors found once the host is built
	// (a [costs] name no function has); nil when built in code.
	File *config.File `toml:"-"`
}

// Info names a machine.
type Info struct {
	Name        string `toml:"name" help:"short name of the machine"`
	Description string `toml:"description" help:"one line for reports"`
}

// MemoryParams sizes physical memory and places the code in it.
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

// DefaultDevice returns the defaults of a [[device]] entry.
func DefaultDevice() DeviceSpec { return DeviceSpec{Space: memory.SpaceIO, IRQ: -1} }

// UncachedSpec is an address range that bypasses the caches.
type UncachedSpec struct {
	Name    string   `toml:"name" help:"what lives there"`
	Base    uint64   `toml:"base" help:"first address"`
	Size    sim.Size `toml:"size" help:"length"`
	Latency int64    `toml:"latency" min:"1" max:"100000" unit:"cycles" help:"cycles per reference"`
}

// InUncached reports whether [base, base+n) lies inside one of the
// machine's uncached ranges.
func (m *Machine) InUncached(base, n uint64) bool {
	for _, u := range m.Uncached {
		if base+n >= base && base >= u.Base && base+n <= u.Base+uint64(u.Size) {
			return true
		}
	}
	return false
}

// Device returns the machine's device called name, or nil.
func (m *Machine) Device(name string) *DeviceSpec {
	for i := range m.Devices {
		if m.Devices[i].Name == name {
			return &m.Devices[i]
		}
	}
	return nil
}

// Environment returns the environment the machine's hosts run: the one
// whose table selects it, or the default.
func (m *Machine) Environment() *Environment {
	for _, e := range environments {
		if e.Selected != nil && e.Selected(m.Sections[e.Section.Key]) {
			return e
		}
	}
	return defaultEnvironment()
}

// SectionOf returns the machine's decoded table key as the *T its part
// declared, or panics (a part reading another's table by a wrong type is
// a simulator bug).
func SectionOf[T any](m *Machine, key string) *T {
	v, ok := m.Sections[key].(*T)
	if !ok {
		panic(fmt.Sprintf("part: machine table [%s] is %T, not %T", key, m.Sections[key], v))
	}
	return v
}

// Section is a table of a machine file that an environment or a family
// reads: [KEY].
type Section struct {
	Key string
	// Help heads the table in simkron params.
	Help string
	// Defaults returns a pointer to the part's default params, into which
	// the table is decoded (strictly: unknown keys, types and bounds are
	// errors at their line).
	Defaults func() any
	// HostOverride, when set, lets an experiment's [host.KEY] override
	// keys of the table for one host: it returns the pointer into the
	// decoded params that [host.KEY] is decoded onto (the params
	// themselves, or the part of them a host may change).
	HostOverride func(params any) any
}

// HostSpec is one [[host]] of an experiment.
type HostSpec struct {
	Name        string   `toml:"name" help:"host name, used in every report and file name (a name: letters, digits, '-' and '_', at most 64)"`
	MachineFile string   `toml:"machine" help:"machine file, relative to the experiment file"`
	Machine     *Machine `toml:"-"`
	// Bindings are the decoded tables that plug the host's cards into
	// the network, by technology (Technology.Bindings).
	Bindings map[string]any `toml:"-"`
}

// BindingsOf returns the host's decoded bindings of technology tech as
// the *T it declared, nil when the host has none.
func BindingsOf[T any](h *HostSpec, tech string) *T {
	if h == nil || h.Bindings[tech] == nil {
		return nil
	}
	v, ok := h.Bindings[tech].(*T)
	if !ok {
		panic(fmt.Sprintf("part: bindings of %s are %T, not %T", tech, h.Bindings[tech], v))
	}
	return v
}
