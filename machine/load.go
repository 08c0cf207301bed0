package machine

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"simkron/config"
	"simkron/ethersim"
	"simkron/memory"
	"simkron/stack/inet"
	"simkron/workload"
)

// LoadMachine reads a machine file strictly. Every problem is reported
// with the file, line and key; a nil error means the machine can be built.
func LoadMachine(path string) (*Spec, error) { return loadMachine(path, nil) }

func loadMachine(path string, sets []Override) (*Spec, error) {
	f, err := config.Parse(path)
	if err != nil {
		return nil, err
	}
	if errs := apply(f, sets); errs != nil {
		return nil, errs
	}
	return decodeMachine(f)
}

// Override replaces one key of an experiment before it is decoded, as
// `simkron sweep --set KEY=VALUE` does: Key is a dotted path in the
// experiment file ("host.inet.mtu": every [[host]]'s; "host[1].inet.mtu":
// the second's), or, after "machine.", in every host's machine file
// ("machine.cache.l2.size"). Value is what config.ParseValue makes of the
// text; Origin names the override in messages.
type Override struct {
	Key    string
	Value  any
	Origin string
}

// MachinePrefix starts the key of an Override that applies to every
// host's machine file.
const MachinePrefix = "machine."

// apply sets the overrides into f; problems name their origin.
func apply(f *config.File, sets []Override) config.Errors {
	var errs config.Errors
	for _, o := range sets {
		if err := f.Set(o.Key, o.Value, o.Origin); err != nil {
			errs = append(errs, &config.Error{File: f.Path() + ": " + o.Origin, Msg: err.Error()})
		}
	}
	return errs
}

func decodeMachine(f *config.File) (*Spec, error) {
	var errs config.Errors
	add := func(err error) {
		var es config.Errors
		if errors.As(err, &es) {
			errs = append(errs, es...)
		} else if err != nil {
			errs = append(errs, &config.Error{File: f.Path(), Msg: err.Error()})
		}
	}
	spec := DefaultSpec()
	spec.Path = f.Path()
	spec.file = f
	add(f.DecodePartial(&spec))
	for _, i := range f.Keys("device") {
		d := DefaultDevice()
		add(f.DecodePartial(&d, "device", i))
		t, ok := deviceTypes[d.Type]
		if !ok {
			names := make([]string, 0, len(deviceTypes))
			for _, t := range DeviceTypes() {
				names = append(names, t.Name)
			}
			errs = append(errs, f.Errorf([]string{"device", i, "type"}, "unknown device type %q (known: %v)", d.Type, names))
			f.MarkUsed("device", i, "params")
			f.MarkUsed("device", i, "driver")
		} else {
			d.Params = t.Defaults()
			add(f.DecodeInto(d.Params, "device", i, "params"))
			if t.DriverDefaults != nil {
				d.Driver = t.DriverDefaults()
				add(f.DecodeInto(d.Driver, "device", i, "driver"))
			}
		}
		spec.Devices = append(spec.Devices, d)
	}
	add(f.CheckUnused())
	errs = append(errs, notAgain(errs, checkMachine(f, &spec))...)
	errs = append(errs, notAgain(errs, checkTOP(f, &spec))...)
	if len(errs) > 0 {
		sortErrors(errs)
		return nil, errs
	}
	return &spec, nil
}

// checkMachine finds what no single field can: names, references between
// tables, overlapping address ranges.
func checkMachine(f *config.File, s *Spec) config.Errors {
	var errs config.Errors
	at := func(key ...string) []string { return key }
	if s.Machine.Name == "" {
		errs = append(errs, f.Errorf(at("machine", "name"), "a machine needs a name"))
	}
	if s.Cache.L1 == nil && s.Cache.L1I == nil {
		errs = append(errs, f.Errorf(at("cache"), "no first-level cache: give [cache.l1] or [cache.l1i] and [cache.l1d]"))
	}
	if f.Has("functional") {
		// A cost left out would silently be 0 cycles: calibrate writes all.
		for _, k := range []string{"read", "write", "copy", "fetch"} {
			if !f.Has("functional", k) {
				errs = append(errs, f.Errorf(at("functional"), "functional.%s is missing: give all four costs (read, write, copy, fetch), as simkron calibrate prints them", k))
			}
		}
	}
	if s.Memory.KernelText >= uint64(s.Memory.Size) {
		errs = append(errs, f.Errorf(at("memory", "kernel_text"), "0x%x lies beyond memory (%v)", s.Memory.KernelText, s.Memory.Size))
	} else if need := s.Memory.KernelText + 1<<20 + uint64(s.Kernel.HeapSize); need > uint64(s.Memory.Size) {
		errs = append(errs, f.Errorf(at("kernel", "heap_size"), "%v of heap after the kernel at 0x%x needs %d bytes of memory; memory.size is %v", s.Kernel.HeapSize, s.Memory.KernelText, need, s.Memory.Size))
	}
	buses := map[string]bool{}
	for i, b := range s.Buses {
		k := strconv.Itoa(i)
		if err := validName(b.Name); err != nil {
			errs = append(errs, f.Errorf(at("bus", k, "name"), "%v", err))
		} else if buses[b.Name] {
			errs = append(errs, f.Errorf(at("bus", k, "name"), "bus %q is defined twice", b.Name))
		}
		buses[b.Name] = true
	}
	names := map[string]bool{}
	irqs := map[int]string{}
	type span struct {
		name      string
		space     memory.Space
		base, end uint64
	}
	var spans []span
	for i, d := range s.Devices {
		k := strconv.Itoa(i)
		if err := validName(d.Name); err != nil {
			errs = append(errs, f.Errorf(at("device", k, "name"), "%v", err))
		} else if names[d.Name] {
			errs = append(errs, f.Errorf(at("device", k, "name"), "device %q is defined twice", d.Name))
		}
		names[d.Name] = true
		if d.Bus != "" && !buses[d.Bus] {
			errs = append(errs, f.Errorf(at("device", k, "bus"), "bus %q is not defined in a [[bus]]", d.Bus))
		}
		if d.IRQ >= s.CPU.Lines {
			errs = append(errs, f.Errorf(at("device", k, "irq"), "line %d does not exist: cpu.irq_lines is %d", d.IRQ, s.CPU.Lines))
		} else if other, used := irqs[d.IRQ]; used && d.IRQ >= 0 {
			errs = append(errs, f.Errorf(at("device", k, "irq"), "line %d is already used by device %q (lines are not shared)", d.IRQ, other))
		}
		irqs[d.IRQ] = d.Name
		t, ok := deviceTypes[d.Type]
		if !ok {
			continue // an unknown type, reported already
		}
		if t.check != nil {
			for _, pr := range t.check(&s.Devices[i]) {
				errs = append(errs, f.Errorf(append([]string{"device", k}, pr.Key...), "%s", pr.Msg))
			}
		}
		cur := span{d.Name, d.Space, d.Base, d.Base + t.Size}
		for _, o := range spans {
			if o.space == cur.space && cur.base < o.end && o.base < cur.end {
				errs = append(errs, f.Errorf(at("device", k, "base"), "%s range [0x%x, 0x%x) of %q overlaps [0x%x, 0x%x) of %q", cur.space, cur.base, cur.end, d.Name, o.base, o.end, o.name))
			}
		}
		spans = append(spans, cur)
	}
	for i, u := range s.Uncached {
		if u.Base+uint64(u.Size) > uint64(s.Memory.Size) {
			errs = append(errs, f.Errorf(at("uncached", strconv.Itoa(i), "size"), "[0x%x, 0x%x) extends beyond memory (%v)", u.Base, u.Base+uint64(u.Size), s.Memory.Size))
		}
	}
	return errs
}

// LoadExperiment reads an experiment file and every machine file it
// names. A nil error means the experiment can run.
func LoadExperiment(path string) (*Experiment, error) { return LoadExperimentWith(path, nil) }

// LoadExperimentWith is LoadExperiment with overrides of its keys and its
// machine files' (see Override), checked as strictly as the files.
func LoadExperimentWith(path string, sets []Override) (*Experiment, error) {
	f, err := config.Parse(path)
	if err != nil {
		return nil, err
	}
	return loadExperiment(f, sets)
}

// LoadExperimentBytes is LoadExperimentWith for an experiment's text,
// as if read from the file path (which names it in errors; its machine
// files are relative to the path's folder).
func LoadExperimentBytes(path string, text []byte, sets []Override) (*Experiment, error) {
	f, err := config.ParseBytes(path, text)
	if err != nil {
		return nil, err
	}
	return loadExperiment(f, sets)
}

func loadExperiment(f *config.File, sets []Override) (*Experiment, error) {
	path := f.Path()
	var own, machineSets []Override
	for _, o := range sets {
		if k, ok := strings.CutPrefix(o.Key, MachinePrefix); ok {
			o.Key = k
			machineSets = append(machineSets, o)
		} else {
			own = append(own, o)
		}
	}
	if errs := apply(f, own); errs != nil {
		return nil, errs
	}
	exp := DefaultExperiment()
	exp.Path = path
	exp.file = f
	var errs config.Errors
	add := func(err error) {
		if err != nil {
			errs = append(errs, err.(config.Errors)...)
		}
	}
	add(f.DecodePartial(&exp))
	// Every registered workload's section decodes into its Params.
	types := workload.Types()
	names := workload.Names()
	f.Accept([]string{"workload"}, names...)
	for _, t := range types {
		add(f.DecodeInto(exp.Workload.Params[t.Name], "workload", t.Name))
	}
	inetBad := map[int]bool{}
	for i := range exp.Hosts {
		// Checked here on the defaults, decoded onto the machine's
		// settings once its file is read.
		if scratch := inet.DefaultParams(); f.Has("host", strconv.Itoa(i), "inet") {
			err := f.DecodeInto(&scratch, "host", strconv.Itoa(i), "inet")
			inetBad[i] = err != nil
			add(err)
		}
	}
	topBad, isoBad := map[int]bool{}, map[int]bool{}
	for i := range exp.Hosts {
		bad, err := checkHostTOPKeys(f, i)
		topBad[i] = bad
		add(err)
		bad, err = checkHostISOKeys(f, i)
		isoBad[i] = bad
		add(err)
	}
	atmBad, atmErrs := decodeATMOverrides(f, &exp)
	errs = append(errs, atmErrs...)
	errs = append(errs, bridgesOnATM(f)...)
	add(f.CheckUnused())
	errs = append(errs, notAgain(errs, checkExperiment(f, &exp))...)
	errs = append(errs, notAgain(errs, checkSections(f, &exp, own))...)
	errs = append(errs, notAgain(errs, checkATM(f, &exp))...)
	errs = append(errs, notAgain(errs, checkBridges(f, &exp))...)
	// Machine files: their errors name their own file and line, each
	// file's once; a file that cannot be read is reported at the line of
	// the experiment that names it.
	reported := map[string]bool{}
	for i := range exp.Hosts {
		h := &exp.Hosts[i]
		if h.MachineFile == "" {
			continue
		}
		mp := h.MachineFile
		if !filepath.IsAbs(mp) {
			mp = filepath.Join(filepath.Dir(path), mp)
		}
		spec, err := loadMachine(mp, machineSets)
		if err == nil {
			h.Machine = spec
			continue
		}
		if reported[mp] {
			continue
		}
		reported[mp] = true
		var es config.Errors
		if _, unread := errors.AsType[*fs.PathError](err); unread && errors.As(err, &es) {
			errs = append(errs, f.Errorf([]string{"host", strconv.Itoa(i), "machine"}, "%s: %s", h.MachineFile, es[0].Msg))
			continue
		}
		add(err)
	}
	errs = append(errs, checkDetail(f, &exp)...)
	errs = append(errs, notAgain(errs, checkRoutes(f, &exp))...)
	// What the experiment says of each TOP host, and of each machine's
	// devices and stack.
	for i := range exp.Hosts {
		if !topBad[i] {
			errs = append(errs, decodeHostTOP(f, &exp.Hosts[i], i)...)
		}
		if !isoBad[i] {
			errs = append(errs, decodeHostISO(f, &exp.Hosts[i], i)...)
		}
		errs = append(errs, checkHostTOP(f, &exp.Hosts[i], i)...)
	}
	for i, h := range exp.Hosts {
		if h.Machine == nil {
			continue
		}
		hk := strconv.Itoa(i)
		ipDone := false
		for j, n := range h.NICs {
			key := func(k string) []string { return []string{"host", hk, "nic", strconv.Itoa(j), k} }
			var dev *DeviceSpec
			for k := range h.Machine.Devices {
				if h.Machine.Devices[k].Name == n.Device {
					dev = &h.Machine.Devices[k]
				}
			}
			if dev == nil || deviceTypes[dev.Type].DriverDefaults == nil {
				errs = append(errs, f.Errorf(key("device"), "machine %q has no network device %q", h.Machine.Machine.Name, n.Device))
				continue
			}
			if n.MTU == 0 {
				continue
			}
			if set := deviceTypes[dev.Type].setMTU; set == nil {
				errs = append(errs, f.Errorf(key("mtu"), "a %s card's MTU cannot be set", dev.Type))
			} else if err := set(dev, n.MTU); err != nil {
				errs = append(errs, f.Errorf(key("mtu"), "%d: %v", n.MTU, err))
			}
			for _, sg := range exp.Segments {
				if sg.Name == n.Segment && n.MTU+18 > int(sg.MaxFrame) {
					errs = append(errs, f.Errorf(key("mtu"), "%d needs frames of %d bytes; segment %q carries at most %v (its max_frame)", n.MTU, n.MTU+18, sg.Name, sg.MaxFrame))
				}
			}
			if n.IP != (ethersim.IP4{}) && !ipDone {
				h.Machine.Inet.MTU = n.MTU
			}
			ipDone = ipDone || n.IP != (ethersim.IP4{})
		}
		errs = append(errs, applyATM(f, &exp, i, atmBad, ipDone)...)
		if f.Has("host", hk, "inet") && !inetBad[i] {
			add(f.DecodeInto(&h.Machine.Inet, "host", hk, "inet"))
		}
	}
	if len(errs) > 0 {
		sortErrors(errs)
		return nil, errs
	}
	return &exp, nil
}

func checkExperiment(f *config.File, e *Experiment) config.Errors {
	var errs config.Errors
	if len(e.Hosts) == 0 {
		errs = append(errs, f.Errorf(nil, "no [[host]]: an experiment needs at least one host"))
	}
	names := map[string]bool{}
	for i, h := range e.Hosts {
		k := strconv.Itoa(i)
		if err := validName(h.Name); err != nil {
			errs = append(errs, f.Errorf([]string{"host", k, "name"}, "%v", err))
		} else if names[h.Name] {
			errs = append(errs, f.Errorf([]string{"host", k, "name"}, "host %q is defined twice", h.Name))
		}
		names[h.Name] = true
		if h.MachineFile == "" {
			errs = append(errs, f.Errorf([]string{"host", k}, "machine is missing: name a machine file"))
		}
	}
	segs := map[string]bool{}
	for i, sg := range e.Segments {
		k := strconv.Itoa(i)
		if err := validName(sg.Name); err != nil {
			errs = append(errs, f.Errorf([]string{"segment", k, "name"}, "%v", err))
		} else if segs[sg.Name] {
			errs = append(errs, f.Errorf([]string{"segment", k, "name"}, "segment %q is defined twice", sg.Name))
		}
		segs[sg.Name] = true
	}
	macs := map[ethersim.MAC]string{}
	ips := map[ethersim.IP4]string{}
	for i, h := range e.Hosts {
		for j, n := range h.NICs {
			key := func(k string) []string { return []string{"host", strconv.Itoa(i), "nic", strconv.Itoa(j), k} }
			if !segs[n.Segment] {
				errs = append(errs, f.Errorf(key("segment"), "segment %q is not defined in a [[segment]]", n.Segment))
			}
			where := fmt.Sprintf("%s.%s", h.Name, n.Device)
			switch {
			case n.MAC == ethersim.MAC{}:
				errs = append(errs, f.Errorf(key("mac"), "a card needs a station address"))
			case n.MAC[0]&1 != 0:
				errs = append(errs, f.Errorf(key("mac"), "%v is a group address; a station address must be unicast", n.MAC))
			case macs[n.MAC] != "":
				errs = append(errs, f.Errorf(key("mac"), "%v is already %s's", n.MAC, macs[n.MAC]))
			}
			macs[n.MAC] = where
			if prev := ips[n.IP]; prev != "" && n.IP != (ethersim.IP4{}) {
				errs = append(errs, f.Errorf(key("ip"), "%v is already %s's", n.IP, prev))
			}
			ips[n.IP] = where
		}
	}
	for _, name := range sortedKeys(e.Layers) {
		if l := e.Layers[name]; l == "" || strings.ContainsAny(l, " \t") {
			errs = append(errs, f.Errorf([]string{"layers", name}, "layer %q must be a non-empty word", l))
		}
	}
	// The workloads must be registered, each once, and the hosts they
	// name must exist.
	w := e.Workload
	seen := map[string]bool{}
	for i, name := range append([]string{w.Type}, w.Then...) {
		key := []string{"workload", "type"}
		if i > 0 {
			key = []string{"workload", "then", strconv.Itoa(i - 1)}
		}
		t, ok := workload.Lookup(name)
		if !ok {
			hint := ""
			if s := config.Suggest(name, workload.Names()); s != "" {
				hint = fmt.Sprintf("did you mean %q? ", s)
			}
			errs = append(errs, f.Errorf(key, "unknown workload %q (%sknown: %s)", name, hint, workload.List()))
			continue
		}
		if seen[name] {
			errs = append(errs, f.Errorf(key, "workload %q runs twice: one [workload.%s] configures one run", name, name))
			continue
		}
		seen[name] = true
		if t.Hosts != nil {
			refs := t.Hosts(w.Params[name])
			for _, r := range refs {
				key := append([]string{"workload", name}, keyPath(r.Key)...)
				if !names[r.Name] {
					errs = append(errs, f.Errorf(key, "no [[host]] is called %q", r.Name))
					continue
				}
				if p := peerOf(refs, r); p != nil && p.Name == r.Name {
					errs = append(errs, f.Errorf(key, "%s and %s name the same host %q: they must be different hosts", p.Key, r.Key, r.Name))
				}
			}
		}
	}
	return errs
}

// peerOf returns the HostRef r names as its Peer, or nil.
func peerOf(refs []workload.HostRef, r workload.HostRef) *workload.HostRef {
	if r.Peer == "" {
		return nil
	}
	for i := range refs {
		if refs[i].Key == r.Peer {
			return &refs[i]
		}
	}
	panic(fmt.Sprintf("machine: a workload's host %q names peer %q, which is none of its hosts", r.Key, r.Peer))
}

// running returns the workloads the experiment runs, in order, each once:
// type and then.
func running(e *Experiment) []string {
	var out []string
	for _, name := range append([]string{e.Workload.Type}, e.Workload.Then...) {
		if _, ok := workload.Lookup(name); ok && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// checkSections refuses a [workload.NAME] section that configures a
// workload which neither runs nor is read by one that runs: its settings
// would be ignored without a word (an experiment that says type = "udp"
// and tunes [workload.tcp]). It is an error rather than a warning, as
// every other key nothing reads is. When an override chose the workloads
// (simkron compare, or --set workload.type), the file's other sections
// are left alone: they configure the file's own workload. So are they
// when a workload named is unknown (reported already: a misspelt type
// leaves its section unused).
func checkSections(f *config.File, e *Experiment, sets []Override) config.Errors {
	for _, name := range append([]string{e.Workload.Type}, e.Workload.Then...) {
		if _, ok := workload.Lookup(name); !ok {
			return nil
		}
	}
	for _, o := range sets {
		if k, err := config.ParseKey(o.Key); err == nil && len(k) >= 2 && k[0] == "workload" && (k[1] == "type" || k[1] == "then") {
			return nil
		}
	}
	used := map[string]bool{}
	for _, name := range running(e) {
		used[name] = true
		t, _ := workload.Lookup(name)
		if t.Reads != nil {
			for _, r := range t.Reads(e.Workload.Params[name]) {
				used[r] = true
			}
		}
	}
	var errs config.Errors
	for _, name := range workload.Names() {
		if f.Has("workload", name) && !used[name] {
			errs = append(errs, f.Errorf([]string{"workload", name},
				"configures the %s workload, which does not run (type = %q%s) and which no workload that runs reads: remove the section, or run it (then = [%q])",
				name, e.Workload.Type, thenText(e.Workload.Then), name))
		}
	}
	return errs
}

func thenText(then []string) string {
	if len(then) == 0 {
		return ""
	}
	q := make([]string, len(then))
	for i, t := range then {
		q[i] = strconv.Quote(t)
	}
	return ", then = [" + strings.Join(q, ", ") + "]"
}

// checkRoutes asks the hosts a workload sends IPv4 packets between to lie
// on each other's subnets when both have an address: the simulated stack
// has no router, and a host off the subnet would fail with ENETUNREACH
// once the run has started.
func checkRoutes(f *config.File, e *Experiment) config.Errors {
	hosts := map[string]*HostSpec{}
	for i := range e.Hosts {
		hosts[e.Hosts[i].Name] = &e.Hosts[i]
	}
	var errs config.Errors
	for _, name := range running(e) {
		t, _ := workload.Lookup(name)
		if t.Hosts == nil {
			continue
		}
		refs := t.Hosts(e.Workload.Params[name])
		for _, r := range refs {
			p := peerOf(refs, r)
			if p == nil || !r.Route || hosts[r.Name] == nil || hosts[p.Name] == nil || r.Name == p.Name {
				continue
			}
			a, am, ok1 := hostAddr(hosts[p.Name])
			b, bm, ok2 := hostAddr(hosts[r.Name])
			if !ok1 || !ok2 {
				continue
			}
			for _, c := range [2]struct {
				host, other string
				addr, on    ethersim.IP4
				mask        ethersim.IP4
			}{{r.Name, p.Name, b, a, am}, {p.Name, r.Name, a, b, bm}} {
				if !sameSubnet(c.addr, c.on, c.mask) {
					errs = append(errs, f.Errorf(append([]string{"workload", name}, keyPath(r.Key)...),
						"host %q (%v) is not on host %q's subnet (%v, netmask %v), and the simulated hosts have no router: give their cards addresses on one subnet",
						c.host, c.addr, c.other, c.on, c.mask))
					break
				}
			}
		}
	}
	return errs
}

// hostAddr returns the address and netmask the Internet protocols of a
// host use, as the host is built: those of its first card with an address
// in the machine file's device order, Ethernet cards before ATM cards.
func hostAddr(h *HostSpec) (addr, mask ethersim.IP4, ok bool) {
	if h.Machine == nil {
		return addr, mask, false
	}
	for _, d := range h.Machine.Devices {
		for _, n := range h.NICs {
			if n.Device == d.Name && n.IP != (ethersim.IP4{}) {
				return n.IP, n.Netmask, true
			}
		}
	}
	for _, d := range h.Machine.Devices {
		for _, a := range h.ATM {
			if a.Device == d.Name && a.IP != (ethersim.IP4{}) {
				return a.IP, a.Netmask, true
			}
		}
	}
	return addr, mask, false
}

// sameSubnet reports whether addr lies on the subnet of on under mask.
func sameSubnet(addr, on, mask ethersim.IP4) bool {
	for i := range addr {
		if addr[i]&mask[i] != on[i]&mask[i] {
			return false
		}
	}
	return true
}

// keyPath splits a workload's host key, "client" or "case[2].host", into
// the elements of its key path ("case", "2", "host").
func keyPath(key string) []string {
	var out []string
	for _, part := range strings.Split(key, ".") {
		name, rest, _ := strings.Cut(part, "[")
		out = append(out, name)
		for rest != "" {
			var i string
			i, rest, _ = strings.Cut(rest, "]")
			out = append(out, i)
			rest = strings.TrimPrefix(rest, "[")
		}
	}
	return out
}

// notAgain returns the errors of checks that no single key can show,
// less those at a key that is wrong already: the checks run even when
// keys are wrong, so that every problem is reported at once, and a wrong
// key is reported once.
func notAgain(have, checks config.Errors) config.Errors {
	bad := map[string]bool{}
	for _, e := range have {
		bad[e.File+"\x00"+e.Key] = true
	}
	var out config.Errors
	for _, e := range checks {
		if e.Key == "" || !bad[e.File+"\x00"+e.Key] {
			out = append(out, e)
		}
	}
	return out
}

func sortErrors(es config.Errors) {
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].File != es[j].File {
			return es[i].File < es[j].File
		}
		return es[i].Line < es[j].Line
	})
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkDetail asks functional detail for every host's machine file to
// hold [functional] costs, naming each file that lacks them once, at the
// experiment's detail key.
func checkDetail(f *config.File, e *Experiment) config.Errors {
	if e.Info.Detail != memory.DetailFunctional {
		if e.Info.FullFrom != 0 {
			return config.Errors{f.Errorf([]string{"experiment", "full_detail_from"}, "ends a functional warm-up, but the experiment's detail is full: set detail = \"functional\" or leave the key out")}
		}
		return nil
	}
	var errs config.Errors
	seen := map[string]bool{}
	for _, h := range e.Hosts {
		if h.Machine == nil || h.Machine.Functional != nil || seen[h.Machine.Path] {
			continue
		}
		seen[h.Machine.Path] = true
		errs = append(errs, f.Errorf([]string{"experiment", "detail"},
			"functional: machine file %s (host %s) has no [functional] section: run `simkron calibrate %s` and add the section it prints to the machine file",
			h.Machine.Path, h.Name, f.Path()))
	}
	return errs
}
