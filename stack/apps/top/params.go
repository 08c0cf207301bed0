package top

import (
	"fmt"
	"slices"

	"simkron/stack/header"
	"simkron/stack/osi/clnp"
	"simkron/stack/osi/pres"
	"simkron/stack/osi/session"
	"simkron/stack/osi/tp4"
	tophost "simkron/stack/top"
)

// Params configures the measurements: [workload.top].
type Params struct {
	Originator string `toml:"originator" help:"TOP host that sends the messages and times them, in the remote cases"`
	Recipient  string `toml:"recipient" help:"TOP host that receives them and echoes the last, in the remote cases"`
	Loopback   string `toml:"loopback" help:"TOP host whose packet driver loops frames back ([host.top.pktdrv] loopback = true), for the loopback cases: originator and recipient in one program"`
	Sizes      []int  `toml:"sizes" nonempty:"true" min:"16" max:"65535" help:"message sizes in octets, the useful bytes a user sends (its 16-octet message header included)"`
	Messages   int    `toml:"messages" min:"1" max:"1000000" help:"messages per point (the study's 10,000); the throughput runs from the first sent to the reply to the last"`
	EchoEvery  int    `toml:"echo_every" min:"0" max:"1000000" help:"the recipient also echoes every n-th message (0: only the last, as the study timed)"`
	Buffers    int    `toml:"buffers" min:"1" max:"256" help:"message buffers each user sends from, in rotation (a buffer is reused once no layer holds it any more)"`
	// SplitSizes picks the pies among the split cases' sizes.
	SplitSizes []int `toml:"split_sizes" min:"16" max:"65535" help:"sizes at which the split cases' cost splits are drawn as pie charts"`
	// The settings of the programs' layer entities (each host's NSAP is
	// its [top] nsap).
	CLNP    clnp.Params    `toml:"clnp"`
	TP4     tp4.Params     `toml:"tp4"`
	Session session.Params `toml:"session"`
	Pres    pres.Params    `toml:"pres"`
	Cases   []Case         `toml:"case" nonempty:"true" help:"the measurements, in order"`
}

// Case is one set of measurements: every level it names at every size,
// remote and in loopback as it says.
type Case struct {
	Name     string   `json:"name" toml:"name" help:"the case's name in tables and charts"`
	Levels   []string `json:"levels" toml:"levels" nonempty:"true" help:"the layer users measured: pktdrv, mac, llc, clns, tp4, session, presentation"`
	Remote   bool     `json:"remote" toml:"remote" help:"measure between the originator and the recipient"`
	Loopback bool     `json:"loopback" toml:"loopback" help:"measure on the loopback host"`
	Chart    string   `json:"chart" toml:"chart" help:"the chart (and its tables) the case's throughputs are drawn in; cases that name the same chart share it"`
	Split    bool     `json:"split" toml:"split" help:"report where each level's own layer's processing goes, by the study's categories, against size (tables, a chart) and at split_sizes (pies)"`
	AckStep  int      `json:"ack_step,omitempty" toml:"ack_step" min:"0" max:"64" help:"TP4's acknowledgement step in this case (0: tp4.ack_step)"`
	Checksum string   `json:"checksum,omitempty" toml:"checksum" help:"TP4's checksum in this case: \"on\", \"off\" (its non-use negotiated), or empty for tp4.checksum"`
	Credit   int      `json:"credit,omitempty" toml:"credit" min:"0" max:"65535" help:"TP4's credit in this case (0: tp4.credit)"`
}

// SetDefaults gives a new [[workload.top.case]] both places.
func (c *Case) SetDefaults() { *c = Case{Remote: true, Loopback: true, Chart: "throughput"} }

// Validate checks the case's own fields.
func (c Case) Validate() error {
	if c.Name == "" {
		return fmt.Errorf("name: a case needs a name")
	}
	if len(c.Levels) == 0 {
		return fmt.Errorf("levels: name at least one layer user")
	}
	for _, l := range c.Levels {
		if _, err := tophost.ParseLevel(l); err != nil {
			return fmt.Errorf("levels: %v", err)
		}
	}
	if !c.Remote && !c.Loopback {
		return fmt.Errorf("remote: a case measures remote, in loopback, or both")
	}
	switch c.Checksum {
	case "", "on", "off":
	default:
		return fmt.Errorf("checksum: %q is neither \"on\", \"off\" nor empty", c.Checksum)
	}
	return nil
}

// levels returns the case's levels, parsed.
func (c Case) levels() []tophost.Level {
	var out []tophost.Level
	for _, l := range c.Levels {
		lv, _ := tophost.ParseLevel(l)
		out = append(out, lv)
	}
	return out
}

// tp4 returns the case's TP4 settings over the workload's.
func (c Case) tp4(base tp4.Params) tp4.Params {
	if c.AckStep > 0 {
		base.AckStep = c.AckStep
	}
	if c.Credit > 0 {
		base.Credit = c.Credit
	}
	switch c.Checksum {
	case "on":
		base.Checksum = true
	case "off":
		base.Checksum = false
	}
	return base
}

// StudySizes are the TOP study's message sizes: 128 to 1152 octets in
// steps of 128.
var StudySizes = []int{128, 256, 384, 512, 640, 768, 896, 1024, 1152}

// DefaultParams returns the study's sizes and count, one case of the
// lower layer users.
func DefaultParams() Params {
	p := Params{Sizes: slices.Clone(StudySizes), Messages: 10000, Buffers: 16, SplitSizes: []int{1024},
		CLNP: clnp.DefaultParams(), TP4: tp4.DefaultParams(), Session: session.DefaultParams(), Pres: pres.DefaultParams()}
	var c Case
	c.SetDefaults()
	c.Name, c.Levels = "lower", []string{"pktdrv", "mac", "llc", "clns"}
	p.Cases = []Case{c}
	return p
}

// Validate checks what spans fields: sizes the levels can carry, the TP4
// settings each case makes. (Every experiment decodes every workload's
// section, so the hosts a case needs are checked when the workload is
// made, by needHosts.)
func (p Params) Validate() error {
	if p.CLNP.NSAP != clnp.DefaultParams().NSAP {
		return fmt.Errorf("clnp.nsap: each host's NSAP is its [top] nsap, not the workload's")
	}
	for i, c := range p.Cases {
		if err := c.tp4(p.TP4).Validate(); err != nil {
			// TP4's keys are the case's where it has them (ack_step,
			// credit), else found at the case.
			return fmt.Errorf("case.%d.%v (the case's TP4 settings over tp4's)", i, err)
		}
		for _, lv := range c.levels() {
			for _, n := range p.Sizes {
				if max := maxSize(lv); n > max {
					return fmt.Errorf("sizes: %d octets is more than the %v user sends in one message (%d)", n, lv, max)
				}
			}
		}
	}
	if p.Originator != "" && p.Originator == p.Recipient {
		return fmt.Errorf("recipient: the originator and the recipient must be different hosts (a host talks to itself in loopback)")
	}
	return nil
}

// maxSize is the largest message a level's user sends.
func maxSize(lv tophost.Level) int {
	switch lv {
	case tophost.LevelPktDrv, tophost.LevelMAC:
		return header.IEEE8023MaxLength
	case tophost.LevelLLC:
		return header.IEEE8023MaxLength - header.LLCHeaderLen
	}
	return 65535
}

// needHosts checks that the hosts the cases need are named.
func (p Params) needHosts() error {
	for i, c := range p.Cases {
		if c.Remote && (p.Originator == "" || p.Recipient == "") {
			return fmt.Errorf("case[%d].remote: the remote cases need an originator and a recipient", i)
		}
		if c.Loopback && p.Loopback == "" {
			return fmt.Errorf("case[%d].loopback: the loopback cases need a loopback host", i)
		}
	}
	return nil
}
