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
	"simkron/machine/part"
	"simkron/memory"
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
	spec.File = f
	add(f.DecodePartial(&spec))
	for _, sec := range part.Sections() {
		add(f.DecodePartial(spec.Sections[sec.Key], sec.Key))
	}
	for _, i := range f.Keys("device") {
		d := DefaultDevice()
		add(f.DecodePartial(&d, "device", i))
		t, ok := part.LookupDevice(d.Type)
		if !ok {
			var names []string
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
	errs = append(errs, notAgain(errs, checkEnvironment(f, &spec))...)
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
		t, ok := part.LookupDevice(d.Type)
		if !ok {
			continue // an unknown type, reported already
		}
		if t.Check != nil {
			for _, pr := range t.Check(&s.Devices[i]) {
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

// checkEnvironment finds what the machine's environment cannot run: the
// environment's own check, the families of another environment the file
// enables, and devices it has no driver for.
func checkEnvironment(f *config.File, s *Spec) config.Errors {
	env := s.Environment()
	var errs config.Errors
	if env.Check != nil {
		for _, pr := range env.Check(s) {
			errs = append(errs, f.Errorf(pr.Key, "%s", pr.Msg))
		}
	}
	for _, fam := range part.Families() {
		if fam.Environment != env.Name && fam.Enabled != nil && fam.Enabled(s.Sections[fam.Section.Key]) {
			errs = append(errs, f.Errorf([]string{fam.Section.Key, "enabled"}, "%s for the %s", env.Lacks, fam.Noun))
		}
	}
	for i, d := range s.Devices {
		if _, known := part.LookupDevice(d.Type); known && !part.Drives(env.Name, d.Type) {
			errs = append(errs, f.Errorf([]string{"device", strconv.Itoa(i), "type"}, "%s", env.NoDriver(d.Type)))
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
	// Every technology's tables, and each host's bindings of its cards.
	techs := part.Technologies()
	for _, t := range techs {
		add(f.DecodePartial(exp.Networks[t.Name]))
	}
	for i := range exp.Hosts {
		exp.Hosts[i].Bindings = map[string]any{}
		for _, t := range techs {
			b := t.Bindings()
			add(f.DecodePartial(b, "host", strconv.Itoa(i)))
			exp.Hosts[i].Bindings[t.Name] = b
		}
	}
	// Every registered workload's section decodes into its Params.
	types := workload.Types()
	names := workload.Names()
	f.Accept([]string{"workload"}, names...)
	for _, t := range types {
		add(f.DecodeInto(exp.Workload.Params[t.Name], "workload", t.Name))
	}
	// An experiment's [host.KEY] of a part's table is checked here on the
	// defaults, and decoded onto the machine's table once its file is read.
	overBad := map[string]bool{} // host index and key
	for i := range exp.Hosts {
		hk := strconv.Itoa(i)
		for _, sec := range part.Sections() {
			if sec.HostOverride == nil || !f.Has("host", hk, sec.Key) {
				continue
			}
			err := f.DecodeInto(sec.HostOverride(sec.Defaults()), "host", hk, sec.Key)
			overBad[hk+"\x00"+sec.Key] = err != nil
			add(err)
		}
	}
	for _, t := range techs {
		if t.Decode != nil {
			errs = append(errs, t.Decode(f, exp.Networks[t.Name], exp.Hosts)...)
		}
	}
	add(f.CheckUnused())
	errs = append(errs, notAgain(errs, checkExperiment(f, &exp))...)
	errs = append(errs, notAgain(errs, checkSections(f, &exp, own))...)
	for _, t := range techs {
		if t.Check != nil {
			errs = append(errs, notAgain(errs, t.Check(f, exp.Networks[t.Name], exp.Hosts))...)
		}
	}
	errs = append(errs, notAgain(errs, checkBindings(f, &exp))...)
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
	// What the experiment says of each host's cards and parts, now that
	// its machine file is read.
	for i := range exp.Hosts {
		if exp.Hosts[i].Machine != nil {
			errs = append(errs, applyHost(f, &exp, i, overBad)...)
		}
	}
	if len(errs) > 0 {
		sortErrors(errs)
		return nil, errs
	}
	return &exp, nil
}

// applyHost applies to host i's copy of its machine what the experiment
// says of it: its environment's check of the host, its cards' bindings
// (each technology's Apply), what the families take from them, and the
// [host.KEY] overrides of the parts' tables (whose keys overBad says
// were wrong).
func applyHost(f *config.File, e *Experiment, i int, overBad map[string]bool) config.Errors {
	h := &e.Hosts[i]
	hk := strconv.Itoa(i)
	env := h.Machine.Environment()
	var errs config.Errors
	if env.CheckHost != nil {
		for _, pr := range env.CheckHost(e.Hosts, i) {
			errs = append(errs, f.Errorf(pr.Key, "%s", pr.Msg))
		}
	}
	for _, t := range part.Technologies() {
		if t.Apply != nil {
			errs = append(errs, t.Apply(f, e.Networks[t.Name], e.Hosts, i)...)
		}
	}
	for _, fam := range part.Families() {
		if fam.Load != nil && fam.Environment == env.Name {
			fam.Load(h, h.Machine.Sections[fam.Section.Key])
		}
	}
	for _, owner := range sectionOwners() {
		sec := owner.section
		if sec.HostOverride == nil || !f.Has("host", hk, sec.Key) || overBad[hk+"\x00"+sec.Key] {
			continue
		}
		if owner.env != nil && owner.env != env {
			errs = append(errs, f.Errorf([]string{"host", hk, sec.Key}, "machine %q %s", h.Machine.Machine.Name, owner.env.NotRun))
			continue
		}
		params := h.Machine.Sections[sec.Key]
		if err := f.DecodeInto(sec.HostOverride(params), "host", hk, sec.Key); err != nil {
			errs = append(errs, err.(config.Errors)...)
			continue
		}
		if fam := owner.family; fam != nil && fam.Environment != env.Name && fam.Enabled != nil && fam.Enabled(params) {
			errs = append(errs, f.Errorf([]string{"host", hk, sec.Key, "enabled"}, "host %q: %s for the %s", h.Name, env.Lacks, fam.Noun))
		}
	}
	return errs
}

// sectionOwner is a part's machine-file table with the part that owns it.
type sectionOwner struct {
	section part.Section
	env     *part.Environment
	family  *part.Family
}

// sectionOwners returns the tables of the environments and the families,
// in part.Sections' order.
func sectionOwners() []sectionOwner {
	var out []sectionOwner
	for _, e := range part.Environments() {
		out = append(out, sectionOwner{section: e.Section, env: e})
	}
	for _, fam := range part.Families() {
		out = append(out, sectionOwner{section: fam.Section, family: fam})
	}
	return out
}

// checkBindings finds what no technology can alone: an IPv4 address two
// cards are given, whatever their technologies, and a file two networks'
// captures would both write.
func checkBindings(f *config.File, e *Experiment) config.Errors {
	var errs config.Errors
	ips := map[[4]byte]string{}
	files := map[string]string{}
	for _, t := range part.Technologies() {
		for i := range e.Hosts {
			h := &e.Hosts[i]
			b := h.Bindings[t.Name]
			if b == nil {
				continue
			}
			for _, en := range t.Entries(b) {
				ip, _, ok := en.IPv4()
				if !ok {
					continue
				}
				if prev := ips[ip]; prev != "" {
					errs = append(errs, f.Errorf(append(append([]string{"host", strconv.Itoa(i)}, en.Key...), "ip"), "%s is already %s's", ipString(ip), prev))
				}
				ips[ip] = h.Name + "." + en.DeviceName()
			}
		}
		if t.Captures != nil {
			for _, c := range t.Captures(e.tables(t)) {
				if prev, dup := files[c.Name]; dup {
					errs = append(errs, f.Errorf(c.Key, "%s is already %s's capture", c.Name, prev))
					continue
				}
				files[c.Name] = c.What
			}
		}
	}
	return errs
}

// ipString writes an IPv4 address in dotted decimal.
func ipString(a [4]byte) string { return fmt.Sprintf("%d.%d.%d.%d", a[0], a[1], a[2], a[3]) }

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
				addr, on    [4]byte
				mask        [4]byte
			}{{r.Name, p.Name, b, a, am}, {p.Name, r.Name, a, b, bm}} {
				if !sameSubnet(c.addr, c.on, c.mask) {
					errs = append(errs, f.Errorf(append([]string{"workload", name}, keyPath(r.Key)...),
						"host %q (%s) is not on host %q's subnet (%s, netmask %s), and the simulated hosts have no router: give their cards addresses on one subnet",
						c.host, ipString(c.addr), c.other, ipString(c.on), ipString(c.mask)))
					break
				}
			}
		}
	}
	return errs
}

// HostAddress returns the IPv4 address of host h's Internet protocols,
// and false when none of its cards has an address (or its machine file
// is not read).
func HostAddress(h *HostSpec) ([4]byte, bool) {
	a, _, ok := hostAddr(h)
	return a, ok
}

// hostAddr returns the address and netmask the Internet protocols of a
// host use, as the host is built: those of the card part.Addressed
// finds.
func hostAddr(h *HostSpec) (addr, mask [4]byte, ok bool) {
	e, ok := part.Addressed(h)
	if !ok {
		return addr, mask, false
	}
	return e.IPv4()
}

// sameSubnet reports whether addr lies on the subnet of on under mask.
func sameSubnet(addr, on, mask [4]byte) bool {
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
