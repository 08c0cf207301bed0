package annotations

import (
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"simkron/memory"
)

// maxMemRead bounds `mem read`, so that a typo cannot ask for gigabytes.
const maxMemRead = 1 << 16

// cmdAnnotation implements `annotation set KIND ...`.
func (e *Engine) cmdAnnotation(args []string) (string, error) {
	if len(args) < 1 || args[0] != "set" {
		return "", e.loadError(errors.New(`wrong # args: should be "annotation set pc|exc|device|cycle|sim ... body"`))
	}
	if !e.loading || e.active {
		return "", errors.New("annotation set: annotations are set while scripts load, not from a body")
	}
	if len(args) < 3 {
		return "", e.loadError(errors.New(`wrong # args: should be "annotation set pc|exc|device|cycle|sim ... body"`))
	}
	if err := e.set(args[1], args[2:len(args)-1], args[len(args)-1]); err != nil {
		return "", e.loadError(err)
	}
	return "", nil
}

// set adds an annotation of kind on the point named by spec with body.
func (e *Engine) set(kind string, spec []string, body string) error {
	what := kind + " " + strings.Join(spec, " ")
	file, line, cmd := e.where()
	// The body's first line: the command's line plus the lines before
	// the body's text inside the command.
	if i := strings.LastIndex(cmd, body); i >= 0 && body != "" {
		line += strings.Count(cmd[:i], "\n")
	}
	a := &annotation{id: e.nextID, what: what, file: file, line: line}
	a.run = func() { e.bodyJob(a) }
	// The body is a Tcl value of its own, which Tcl compiles the first
	// time it runs and keeps compiled.
	obj, err := e.tcl.newObj(body)
	if err != nil {
		return fmt.Errorf("annotation set %s: %v", what, err)
	}
	if err := e.setOn(a, kind, spec); err != nil {
		e.tcl.free(obj)
		return err
	}
	a.body = obj
	e.all = append(e.all, a)
	e.nextID++
	return nil
}

// setOn adds a to the point kind and spec name.
func (e *Engine) setOn(a *annotation, kind string, spec []string) error {
	switch kind {
	case "pc":
		if len(spec) != 1 {
			return errors.New(`wrong # args: should be "annotation set pc SYMBOL:START|END body"`)
		}
		name, where, ok := cutLast(spec[0], ":")
		if !ok || (where != "START" && where != "END") {
			return fmt.Errorf("annotation set pc %s: want SYMBOL:START or SYMBOL:END", spec[0])
		}
		found := false
		for _, h := range e.hosts {
			s, ok := h.v.Syms.Lookup(name)
			if !ok {
				continue
			}
			found = true
			if where == "START" {
				h.start = addAt(h.start, s.Index(), a)
			} else {
				h.end = addAt(h.end, s.Index(), a)
			}
		}
		if !found {
			return fmt.Errorf("annotation set pc %s: no host defines symbol %q (see simkron symbols)", spec[0], name)
		}
	case "exc":
		if len(spec) < 1 || len(spec) > 2 {
			return errors.New(`wrong # args: should be "annotation set exc ?LINE? entry|exit body"`)
		}
		k, err := entryExit(spec[len(spec)-1])
		if err != nil {
			return err
		}
		if len(spec) == 1 {
			for _, h := range e.hosts {
				h.excAny[k] = append(h.excAny[k], a)
			}
			break
		}
		n, err := strconv.Atoi(spec[0])
		if err != nil || n < 0 || n > 31 {
			return fmt.Errorf("annotation set exc %s: the line must be a number 0..31", spec[0])
		}
		for _, h := range e.hosts {
			h.addExc(n, k, a)
		}
	case "device":
		events := []string{"frame", "sent", "irq", "read", "write", "dmastart", "dmaend"}
		if len(spec) != 2 || !slices.Contains(events, spec[1]) {
			return errors.New(`wrong # args: should be "annotation set device ?HOST.?DEVICE frame|sent|irq|read|write|dmastart|dmaend body"`)
		}
		hostName, dev, qualified := strings.Cut(spec[0], ".")
		if !qualified {
			dev = hostName
		}
		found := false
		for _, h := range e.hosts {
			if qualified && h.v.Name != hostName {
				continue
			}
			switch spec[1] {
			case "frame", "sent":
				if _, ok := h.v.Frames[dev]; ok {
					if spec[1] == "frame" {
						h.frames[dev] = append(h.frames[dev], a)
					} else {
						h.sends[dev] = append(h.sends[dev], a)
					}
					found = true
				}
			case "irq":
				if n, ok := h.v.IRQs[dev]; ok {
					h.addExc(n, 0, a)
					found = true
				}
			default: // register and string-transfer accesses
				if deviceMapped(h.v.Sys, dev) {
					if h.io[dev] == nil {
						h.io[dev] = map[string][]*annotation{}
					}
					h.io[dev][spec[1]] = append(h.io[dev][spec[1]], a)
					found = true
				}
			}
		}
		if !found {
			what := "device"
			switch spec[1] {
			case "frame", "sent":
				what = "network card"
			case "irq":
				what = "device with an interrupt line"
			}
			return fmt.Errorf("annotation set device %s %s: no host has a %s %q", spec[0], spec[1], what, spec[0])
		}
	case "cycle":
		if len(spec) != 1 {
			return errors.New(`wrong # args: should be "annotation set cycle N body"`)
		}
		n, err := strconv.ParseInt(spec[0], 0, 64)
		if err != nil || n <= 0 {
			return fmt.Errorf("annotation set cycle %s: N must be a positive number of cycles", spec[0])
		}
		a.period, a.next = n, 1
		a.nextAt = e.hosts[0].v.CPU.Clock().Time(n)
		e.cycles = append(e.cycles, a)
	case "sim":
		if len(spec) != 1 || spec[0] != "exit" {
			return errors.New(`wrong # args: should be "annotation set sim exit body"`)
		}
		e.exits = append(e.exits, a)
	default:
		return fmt.Errorf("annotation set %s: unknown point (want pc, exc, device, cycle or sim)", kind)
	}
	return nil
}

func (h *hostState) addExc(line, k int, a *annotation) {
	for len(h.exc) <= line {
		h.exc = append(h.exc, [2][]*annotation{})
	}
	h.exc[line][k] = append(h.exc[line][k], a)
}

func entryExit(s string) (int, error) {
	switch s {
	case "entry":
		return 0, nil
	case "exit":
		return 1, nil
	}
	return 0, fmt.Errorf("annotation set exc: %q is neither entry nor exit", s)
}

func addAt(s [][]*annotation, i int, a *annotation) [][]*annotation {
	for len(s) <= i {
		s = append(s, nil)
	}
	s[i] = append(s[i], a)
	return s
}

func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// here returns the point of the running body, or an error naming cmd
// outside one.
func (e *Engine) here(cmd string, args []string, want int) (*point, error) {
	if len(args) != want {
		return nil, fmt.Errorf("wrong # args: should be %q", cmd)
	}
	if !e.active {
		return nil, fmt.Errorf("%s: only inside an annotation body", cmd)
	}
	return &e.cur, nil
}

func (e *Engine) cmdCycles(args []string) (string, error) {
	p, err := e.here("cycles", args, 0)
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(p.h.v.CPU.Cycles(), 10), nil
}

func (e *Engine) cmdNow(args []string) (string, error) {
	p, err := e.here("now", args, 0)
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(int64(p.now), 10), nil
}

func (e *Engine) cmdHost(args []string) (string, error) {
	p, err := e.here("host", args, 0)
	if err != nil {
		return "", err
	}
	return p.h.v.Name, nil
}

func (e *Engine) cmdCPU(args []string) (string, error) {
	p, err := e.here("cpu", args, 0)
	if err != nil {
		return "", err
	}
	return p.h.v.CPU.Name(), nil
}

func (e *Engine) cmdSymbol(args []string) (string, error) {
	p, err := e.here("symbol", args, 0)
	if err != nil {
		return "", err
	}
	if s := p.h.v.CPU.Symbol(); s != nil {
		return s.Name, nil
	}
	return "", nil
}

func (e *Engine) cmdFrame(args []string) (string, error) {
	p, err := e.here("frame", args, 0)
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(p.frame), nil
}

// cmdSymbols lists every symbol name any host defines, sorted, as a Tcl
// list (symbol names hold no spaces or braces).
func (e *Engine) cmdSymbols(args []string) (string, error) {
	if len(args) != 0 {
		return "", errors.New(`wrong # args: should be "symbols"`)
	}
	seen := map[string]bool{}
	var names []string
	for _, h := range e.hosts {
		for _, s := range h.v.Syms.Symbols() {
			if !seen[s.Name] {
				seen[s.Name] = true
				names = append(names, s.Name)
			}
		}
	}
	slices.Sort(names)
	return strings.Join(names, " "), nil
}

// cmdLayer implements `layer` (the innermost symbol's declared layer) and
// `layer map SYMBOL LAYER`.
func (e *Engine) cmdLayer(args []string) (string, error) {
	if len(args) == 3 && args[0] == "map" {
		sym, layer := args[1], args[2]
		if layer == "" || strings.ContainsAny(layer, " \t\n") {
			return "", fmt.Errorf("layer map %s: %q is not a layer name", sym, layer)
		}
		for _, h := range e.hosts {
			if _, ok := h.v.Syms.Lookup(sym); ok {
				e.layerMap[sym] = layer
				return "", nil
			}
		}
		return "", e.loadErrorIfLoading(fmt.Errorf("layer map: no host defines symbol %q", sym))
	}
	p, err := e.here("layer", args, 0)
	if err != nil {
		return "", errors.New(`wrong # args: should be "layer" in a body, or "layer map SYMBOL LAYER"`)
	}
	if s := p.h.v.CPU.Symbol(); s != nil {
		return string(s.Layer), nil
	}
	return "", nil
}

func (e *Engine) loadErrorIfLoading(err error) error {
	if e.loading && !e.active {
		return e.loadError(err)
	}
	return err
}

// cmdMem implements `mem read ADDR LEN`: bytes of physical memory as hex,
// read without touching the caches and at no cost.
func (e *Engine) cmdMem(args []string) (string, error) {
	if len(args) != 3 || args[0] != "read" {
		return "", errors.New(`wrong # args: should be "mem read ADDR LEN"`)
	}
	p, err := e.here("mem read", args[1:], 2)
	if err != nil {
		return "", err
	}
	addr, err := strconv.ParseUint(args[1], 0, 64)
	if err != nil {
		return "", fmt.Errorf("mem read: address %q is not a number", args[1])
	}
	n, err := strconv.ParseInt(args[2], 0, 64)
	if err != nil || n < 0 || n > maxMemRead {
		return "", fmt.Errorf("mem read: length %q is not a number 0..%d", args[2], maxMemRead)
	}
	buf := make([]byte, n)
	if err := p.h.v.Sys.Phys.Read(memory.Addr(addr), buf); err != nil {
		return "", fmt.Errorf("mem read: %v", err)
	}
	return hex.EncodeToString(buf), nil
}

func (e *Engine) cmdStat(args []string) (string, error) {
	p, err := e.here("stat NAME", args, 1)
	if err != nil {
		return "", err
	}
	v, err := statValue(p.h.v, args[0])
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(v, 10), nil
}

// deviceMapped reports whether a device called name is in the host's
// device registry.
func deviceMapped(sys *memory.System, name string) bool {
	for _, m := range sys.Devices.Mappings() {
		if m.Name == name {
			return true
		}
	}
	return false
}

// cmdIO answers `io reg|value|size|bytes|write` inside a device read,
// write, dmastart or dmaend body.
func (e *Engine) cmdIO(args []string) (string, error) {
	if len(args) != 1 {
		return "", errors.New(`wrong # args: should be "io reg|value|size|bytes|write"`)
	}
	p, err := e.here("io", nil, 0)
	if err != nil {
		return "", err
	}
	if p.io.Device == "" {
		return "", errors.New("io: only inside a device read, write, dmastart or dmaend annotation")
	}
	switch args[0] {
	case "reg":
		return strconv.FormatUint(p.io.Offset, 10), nil
	case "value":
		return strconv.FormatUint(p.io.Value, 10), nil
	case "size":
		return strconv.Itoa(p.io.Size), nil
	case "bytes":
		return strconv.Itoa(p.io.Block), nil
	case "write":
		if p.io.Write {
			return "1", nil
		}
		return "0", nil
	}
	return "", fmt.Errorf("io %s: want reg, value, size, bytes or write", args[0])
}

// cmdDev answers `dev reg NAME REG`: the register at offset REG of the
// current host's device NAME, read without side effects (memory.Peeker).
func (e *Engine) cmdDev(args []string) (string, error) {
	if len(args) != 3 || args[0] != "reg" {
		return "", errors.New(`wrong # args: should be "dev reg NAME REG"`)
	}
	p, err := e.here("dev", nil, 0)
	if err != nil {
		return "", err
	}
	off, err := strconv.ParseUint(args[2], 0, 64)
	if err != nil {
		return "", fmt.Errorf("dev reg %s %s: REG must be a register offset", args[1], args[2])
	}
	for _, m := range p.h.v.Sys.Devices.Mappings() {
		if m.Name != args[1] {
			continue
		}
		pk, ok := m.Dev.(memory.Peeker)
		if !ok {
			return "", fmt.Errorf("dev reg: device %s cannot be read by an observer", args[1])
		}
		v, ok := pk.Peek(off)
		if !ok {
			return "", fmt.Errorf("dev reg %s %s: that register cannot be read without side effects", args[1], args[2])
		}
		return strconv.FormatUint(v, 10), nil
	}
	return "", fmt.Errorf("dev reg: host %s has no device %s", p.h.v.Name, args[1])
}
