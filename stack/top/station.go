package top

import (
	"fmt"

	"simkron/cpu"
	"simkron/devices/pit"
	"simkron/memory"
	"simkron/stack/dos"
	"simkron/stack/driver/pktdrv"
	"simkron/stack/osi"
	"simkron/stack/osi/clnp"
	"simkron/stack/osi/pres"
	"simkron/stack/osi/session"
	"simkron/stack/osi/tp4"
)

// A Station is a PC of the TOP measurements as DOS runs it: one core, the
// packet drivers that stay resident, the BIOS's timer tick, and TOP
// programs run one after another, each a Runtime booted afresh, as the
// study ran one specialised layer user per measurement.
//
// The station's one context is the command interpreter. At start-up it
// does what the BIOS's power-on self test and AUTOEXEC did: it programs
// the 8254 for the 18.2 Hz tick, hooks the BIOS tick handler (INT 08h,
// counting ticks at 0040:006C) and initialises the resident packet
// drivers. Then it runs the programs given to Exec, in order: each is
// booted on the same memory (its loader writes its structures' initial
// image), built by its Load function, run until it exits (Runtime.Exit),
// and its exit functions give back what it took (the packet drivers'
// handles, the timer interrupt). With nothing to run the interpreter
// waits, halted; a program given meanwhile starts at the next interrupt
// (at the latest the next BIOS tick), as a program typed at the prompt
// would.
//
// Every program runs the same program image: Start links every layer
// entity and layer user into the text once, in a fixed order, so that a
// function has the same address whichever programs ran before (the
// seed's TOP stack was one program; the layer user a run measures is
// chosen at run time).
//
// Simplifications: DOS itself costs nothing but the interpreter's one
// routine per program; programs are not read from a disk; a program
// keeps no state from one run to the next except what stays in memory
// and the caches.
type Station struct {
	name    string
	c       *cpu.CPU
	syms    *cpu.SymbolTable
	p       StationParams
	addr    [6]byte
	nsap    osi.NSAP
	drivers []*pktdrv.Driver
	ctx     *cpu.Context
	queue   []Program
	cur     *Runtime
	idle    bool
	next    memory.Addr // resident data
	stats   StationStats
	// OnIdle, when set, runs in the station's context whenever the last
	// program given has ended and none waits (a workload may give the
	// next one there).
	OnIdle func()
	sym    struct{ shell, post, tick *cpu.Symbol }
	tmp    [4]byte
}

// StationParams configures a station: the programs' memory and managers
// (Params, whose keys are the station table's own), the resident packet
// drivers, and the station's NSAP.
type StationParams struct {
	Params
	PktDrv pktdrv.Params `toml:"pktdrv" help:"the resident packet drivers of the station's NE2000s"`
	// NSAP is the station's network address; zero: osi.LocalNSAP of its
	// first card's station address.
	NSAP         osi.NSAP `toml:"nsap" help:"the station's NSAP in hex, its selector octet last (empty: 49 0001, the first card's station address as the system ID, selector 00)"`
	ResidentBase uint64   `toml:"resident_base" help:"physical address of the resident drivers' data (above the BIOS data area, below the programs' code)"`
}

// DefaultStationParams returns the programs' defaults and a packet
// driver on the wire.
func DefaultStationParams() StationParams {
	return StationParams{Params: DefaultParams(), PktDrv: pktdrv.DefaultParams(), ResidentBase: 0x600}
}

// Validate checks what the bounds cannot.
func (p StationParams) Validate() error {
	if p.ResidentBase < 0x500 {
		return fmt.Errorf("resident_base: %#x overlaps the interrupt vectors and the BIOS data area below 0x500", p.ResidentBase)
	}
	if p.ResidentBase+residentSize > p.DataBase {
		return fmt.Errorf("resident_base: %#x leaves no room for the resident data below data_base %#x", p.ResidentBase, p.DataBase)
	}
	return nil
}

// residentSize bounds the resident drivers' data.
const residentSize = 1024

// StationStats counts the station's programs and ticks.
type StationStats struct {
	Programs uint64 `stat:"programs" help:"programs run to their exit"`
	Failed   uint64 `stat:"failed" help:"programs whose Load failed"`
	Ticks    uint64 `stat:"ticks" help:"BIOS ticks counted by the station's own handler"`
}

// Program is one run of a TOP program on a station.
type Program struct {
	// Name names the program in errors.
	Name string
	// Load builds the program on its freshly booted host: layer
	// entities, users, start-up functions (OnStart), and where it calls
	// Exit. It runs in the station's context before the program's
	// start-up; an error ends the run at once.
	Load func(h *Runtime) error
	// Started, when set, runs once the program's start-up functions have
	// run, before its main loop (in its context).
	Started func(h *Runtime)
	// Exited, when set, runs when the program has returned to DOS (in
	// the station's context); err is Load's error, if any.
	Exited func(h *Runtime, err error)
}

// Costs of the station's own routines (instructions per call).
var (
	defShell = cpu.Def{Name: "dos_exec", Layer: cpu.LayerKERN, Instructions: 200, CodeBytes: 512, Why: "COMMAND.COM and INT 21h AH=4Bh: find the program, set up its PSP, call it; on return free its memory"}
	defPOST  = cpu.Def{Name: "bios_post", Layer: cpu.LayerKERN, Instructions: 100, CodeBytes: 256, Why: "the BIOS's start-up for the tick: program the 8254 (divisor 65536), set INT 08h (once)"}
	defTick  = cpu.Def{Name: "bios_int08", Layer: cpu.LayerKERN, Instructions: 16, CodeBytes: 96, Why: "BIOS INT 08h: count the tick at 0040:006C, call INT 1Ch, EOI"}
)

// NewStation makes the station called name on core c, whose programs'
// text goes into syms (its own routines are placed first). Packet
// drivers are added with AddPacketDriver before Start.
func NewStation(name string, c *cpu.CPU, syms *cpu.SymbolTable, p StationParams) (*Station, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := p.Params.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s := &Station{name: name, c: c, syms: syms, p: p, next: memory.Addr(p.ResidentBase)}
	s.sym.shell = syms.Define(defShell)
	s.sym.post = syms.Define(defPOST)
	s.sym.tick = syms.Define(defTick)
	c.EnableSelfCycles()
	return s, nil
}

// Name returns the station's name.
func (s *Station) Name() string { return s.name }

// CPU returns the core.
func (s *Station) CPU() *cpu.CPU { return s.c }

// Symbols returns the program text's symbol table.
func (s *Station) Symbols() *cpu.SymbolTable { return s.syms }

// Params returns the configuration.
func (s *Station) Params() StationParams { return s.p }

// Stats returns the counters.
func (s *Station) Stats() StationStats { return s.stats }

// Address returns the station address of its first card (zero without
// one).
func (s *Station) Address() [6]byte { return s.addr }

// NSAP returns the station's network address (selector 00 unless the
// configuration gave another).
func (s *Station) NSAP() osi.NSAP { return s.nsap }

// Drivers returns the resident packet drivers, in the order they were
// added.
func (s *Station) Drivers() []*pktdrv.Driver { return s.drivers }

// Program returns the program running now, nil between programs.
func (s *Station) Program() *Runtime { return s.cur }

// AddPacketDriver makes the resident packet driver of the NE2000 at base
// (in space) on line irq, whose station address is mac. The first card's
// address names the station.
func (s *Station) AddPacketDriver(name string, space memory.Space, base memory.Addr, irq int, mac [6]byte) (*pktdrv.Driver, error) {
	if s.ctx != nil {
		panic("top: a packet driver added to a started station")
	}
	if s.next+64 > memory.Addr(s.p.ResidentBase)+residentSize {
		return nil, fmt.Errorf("%s: no resident data left for packet driver %s", s.name, name)
	}
	d, err := pktdrv.New(s.c, s.syms, name, space, base, irq, s.next, s.p.PktDrv)
	if err != nil {
		return nil, err
	}
	s.next += 64
	if len(s.drivers) == 0 {
		s.addr = mac
	}
	s.drivers = append(s.drivers, d)
	return d, nil
}

// Start links the program image, then starts the station's context at
// the current time. Call it once, after every packet driver is added.
func (s *Station) Start() error {
	s.nsap = s.p.NSAP
	if s.nsap.IsZero() {
		s.nsap = osi.LocalNSAP(s.addr, 0)
	}
	if err := s.link(); err != nil {
		return err
	}
	s.ctx = s.c.NewContext(s.name+".dos", cpu.KindThread, func(*cpu.Context) { s.run() })
	s.c.Start(s.ctx)
	return nil
}

// Exec queues p to run after the programs given before.
func (s *Station) Exec(p Program) {
	s.queue = append(s.queue, p)
}

// Busy reports whether a program runs or waits.
func (s *Station) Busy() bool { return s.cur != nil || len(s.queue) > 0 }

// run is the station's context: start-up, then the programs.
func (s *Station) run() {
	c := s.c
	c.Call(s.sym.post, func() {
		base := memory.Addr(s.p.PITBase)
		c.Out(memory.SpaceIO, base+pit.RegControl, 1, 0x34) // counter 0, LSB then MSB, mode 2
		c.Out(memory.SpaceIO, base+pit.RegCounter0, 1, 0)
		c.Out(memory.SpaceIO, base+pit.RegCounter0, 1, 0)
		c.SetHandler(s.p.PITIRQ, "bios_int08", s.biosTick)
	})
	for _, d := range s.drivers {
		d.Init()
	}
	for {
		if len(s.queue) == 0 {
			if !s.idle {
				s.idle = true
				if s.OnIdle != nil {
					s.OnIdle()
				}
				continue
			}
			c.Halt()
			continue
		}
		s.idle = false
		p := s.queue[0]
		s.queue = s.queue[1:]
		s.exec(p)
	}
}

// exec boots, builds and runs one program.
func (s *Station) exec(p Program) {
	c := s.c
	var h *Runtime
	var err error
	c.Call(s.sym.shell, func() {
		h, err = s.boot()
		if err == nil {
			s.cur = h
			if err = p.Load(h); err != nil {
				err = fmt.Errorf("%s: program %s: %w", s.name, p.Name, err)
			}
		}
	})
	if err == nil {
		h.started = p.Started
		h.run()
		s.stats.Programs++
	} else {
		s.stats.Failed++
	}
	s.cur = nil
	if p.Exited != nil {
		p.Exited(h, err)
	}
}

// boot boots a program on the station's memory.
func (s *Station) boot() (*Runtime, error) {
	h, err := boot(s.name, s.c, s.syms, s.p.Params, s)
	if err != nil {
		return nil, err
	}
	// The resident drivers' card transfers and copies are memory copies,
	// whichever layer of the program calls them.
	for _, d := range s.drivers {
		for _, sym := range d.CopySymbols() {
			h.File(sym, osi.CatCopy)
		}
	}
	return h, nil
}

// hookTick is a program taking INT 08h at its start-up: its handler
// counts the BIOS tick and advances its timer wheel; at its exit the
// BIOS's handler is back.
func (s *Station) hookTick(h *Runtime) {
	s.c.SetHandler(s.p.PITIRQ, "int08", h.int08)
	h.OnExit(func() { s.c.SetHandler(s.p.PITIRQ, "bios_int08", s.biosTick) })
}

// started runs a program's Started once its start-up is done.
func (s *Station) started(h *Runtime) {
	if h.started != nil {
		h.started(h)
	}
}

// biosTick is the BIOS's INT 08h between programs.
func (s *Station) biosTick() {
	c := s.c
	c.Enter(s.sym.tick)
	defer c.Exit(s.sym.tick)
	s.stats.Ticks++
	c.Read(dos.BIOSTickCount, s.tmp[:])
	n := uint32(s.tmp[0]) | uint32(s.tmp[1])<<8 | uint32(s.tmp[2])<<16 | uint32(s.tmp[3])<<24
	n++
	s.tmp[0], s.tmp[1], s.tmp[2], s.tmp[3] = byte(n), byte(n>>8), byte(n>>16), byte(n>>24)
	c.Write(dos.BIOSTickCount, s.tmp[:])
}

// Selectors and SAPs the program image's layer users are linked with.
const (
	linkSAP = 0x7C
	linkSel = 0x21
)

// link places the program image's text: a host with every layer entity
// and every layer user is built once and never run, so that each
// function is defined, in a fixed order, before any program runs.
func (s *Station) link() error {
	h, err := s.boot()
	if err != nil {
		return err
	}
	if len(s.drivers) == 0 {
		return nil
	}
	drv := s.drivers[0]
	mac := h.NewMAC(drv)
	llc := h.NewLLC(mac)
	cp := clnp.DefaultParams()
	cp.NSAP = s.nsap
	clns, err := h.NewCLNS(llc, cp)
	if err != nil {
		return err
	}
	tp, err := h.NewTP4(clns, linkSel, tp4.DefaultParams())
	if err != nil {
		return err
	}
	ses := h.NewSession(tp, session.DefaultParams())
	pr, err := h.NewPresentation(ses, pres.DefaultParams())
	if err != nil {
		return err
	}
	for _, lv := range []Level{LevelPktDrv, LevelMAC, LevelLLC, LevelCLNS} {
		if _, err := h.NewUser(UserParams{Level: lv, Size: MsgHeader, SAP: linkSAP, Selector: linkSel + 1}, drv, mac, llc, clns); err != nil {
			return err
		}
	}
	remote := tp.Address([]byte("link"))
	for _, lv := range []Level{LevelTP4, LevelSession, LevelPresentation} {
		u, err := h.NewConnUser(UserParams{Level: lv, Size: MsgHeader})
		if err != nil {
			return err
		}
		tsel := []byte{'l', byte(lv)}
		switch lv {
		case LevelTP4:
			_, err = tp.Bind(tsel, remote, u.Up())
		case LevelSession:
			_, err = ses.Bind([]byte{1}, tsel, []byte{2}, remote, u.Up())
		default:
			_, err = pr.Bind([]byte{1}, []byte{3}, tsel, []byte{2}, []byte{4}, remote, u.Up())
		}
		if err != nil {
			return err
		}
	}
	return nil
}
