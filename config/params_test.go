package config_test

import (
	"errors"
	"fmt"

	"simkron/config"
	"simkron/sim"
)

// The Params structs below exercise every convention the decoder supports.

type cacheParams struct {
	Size sim.Size `toml:"size" help:"capacity" min:"1KiB" max:"1MiB"`
	Ways int      `toml:"ways" help:"associativity" min:"1" max:"64" unit:"ways"`
	Line sim.Size `toml:"line" help:"line size" min:"16B" max:"4KiB"`
}

// Validate checks that the geometry divides evenly.
func (c cacheParams) Validate() error {
	if c.Size%(c.Line*sim.Size(c.Ways)) != 0 {
		return config.Fieldf("line", "%v × %d ways does not divide %v", c.Line, c.Ways, c.Size)
	}
	return nil
}

type linkParams struct {
	Rate  sim.BitRate `toml:"rate" help:"line rate" min:"1kbps"`
	Delay sim.Time    `toml:"delay" help:"propagation delay" max:"1s"`
}

type slotParams struct {
	IRQ  uint8  `toml:"irq" help:"interrupt line" max:"15"`
	Base uint32 `toml:"base" help:"I/O base address"`
	Name string `toml:"name" help:"device name"`
}

func (s *slotParams) SetDefaults() { s.IRQ = 3 }

type common struct {
	Trace bool `toml:"trace" help:"log every event"`
}

type testParams struct {
	common
	Clock   sim.Frequency    `toml:"clock" help:"CPU clock rate" min:"1MHz" max:"1GHz"`
	Cycles  int64            `toml:"cycles" help:"cost of a trap" unit:"cycles" min:"0"`
	Load    float64          `toml:"load" help:"offered load" min:"0" max:"1"`
	Small   int8             `toml:"small" help:"a narrow integer"`
	Name    string           `toml:"name" help:"host name"`
	Cache   cacheParams      `toml:"cache"`
	Link    *linkParams      `toml:"link"`
	Slots   []slotParams     `toml:"slot"`
	Costs   map[string]int64 `toml:"costs" help:"per-operation cost overrides" unit:"cycles" min:"0" max:"1000"`
	Weights []int            `toml:"weights" help:"queue weights" min:"1" nonempty:"true"`
	Skipped int              `toml:"-"`
	private int
}

// Validate checks across fields: slots must not share a base address.
func (p *testParams) Validate() error {
	var errs config.FieldErrors
	seen := map[uint32]int{}
	for i, s := range p.Slots {
		if j, ok := seen[s.Base]; ok {
			errs = append(errs, config.Fieldf(fmt.Sprintf("slot.%d.base", i), "base %#x already used by slot %d", s.Base, j))
		}
		seen[s.Base] = i
	}
	if p.Name == "forbidden" {
		errs = append(errs, &config.FieldError{Key: "name", Msg: "is reserved"})
	}
	if p.Name == "plain" {
		return errors.New("plain error")
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

func defaultParams() testParams {
	return testParams{
		Clock:   33 * sim.MHz,
		Cycles:  100,
		Load:    0.5,
		Name:    "host",
		Cache:   cacheParams{Size: 8 * sim.KiB, Ways: 2, Line: 32},
		Link:    &linkParams{Rate: 10 * sim.Mbps, Delay: 5 * sim.Microsecond},
		Costs:   map[string]int64{"load": 2, "store": 3},
		Weights: []int{1, 1},
		private: 7,
	}
}
