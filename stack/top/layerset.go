package top

import (
	"fmt"

	"simkron/stack/driver/pktdrv"
	"simkron/stack/osi"
	"simkron/stack/osi/clnp"
	"simkron/stack/osi/pres"
	"simkron/stack/osi/session"
	"simkron/stack/osi/tp4"
)

// Protocols are the settings a program's layer entities are built with.
type Protocols struct {
	CLNP    clnp.Params
	TP4     tp4.Params
	Session session.Params
	Pres    pres.Params
	// TP4Selector is the NSAP selector of the transport entity.
	TP4Selector byte
}

// DefaultProtocols returns every entity's defaults, TP4 at selector 0x21
// (the selector Wireshark decodes COTP at by default).
func DefaultProtocols() Protocols {
	return Protocols{CLNP: clnp.DefaultParams(), TP4: tp4.DefaultParams(), Session: session.DefaultParams(), Pres: pres.DefaultParams(), TP4Selector: 0x21}
}

// Layers are a program's layer entities, from the MAC up to the level its
// user needs; the ones above that level are nil.
type Layers struct {
	MAC     *MAC
	LLC     *LLC
	CLNS    *CLNS
	TP4     *TP4
	Session *Session
	Pres    *Presentation
}

// BuildLayers makes the entities a user of level lv sits on, over the
// packet driver drv, the network entity at NSAP nsap: nothing for the
// packet-driver user, the MAC for the MAC user, and so on up to the
// session entity for the presentation user's presentation entity.
func (h *Runtime) BuildLayers(lv Level, drv *pktdrv.Driver, nsap osi.NSAP, p Protocols) (*Layers, error) {
	var l Layers
	if lv < LevelPktDrv || lv > LevelPresentation {
		return nil, fmt.Errorf("top: no user level %d", lv)
	}
	if lv == LevelPktDrv {
		return &l, nil
	}
	l.MAC = h.NewMAC(drv)
	if lv == LevelMAC {
		return &l, nil
	}
	l.LLC = h.NewLLC(l.MAC)
	if lv == LevelLLC {
		return &l, nil
	}
	cp := p.CLNP
	cp.NSAP = nsap
	var err error
	if l.CLNS, err = h.NewCLNS(l.LLC, cp); err != nil {
		return nil, err
	}
	if lv == LevelCLNS {
		return &l, nil
	}
	if l.TP4, err = h.NewTP4(l.CLNS, p.TP4Selector, p.TP4); err != nil {
		return nil, err
	}
	if lv == LevelTP4 {
		return &l, nil
	}
	l.Session = h.NewSession(l.TP4, p.Session)
	if lv == LevelSession {
		return &l, nil
	}
	if l.Pres, err = h.NewPresentation(l.Session, p.Pres); err != nil {
		return nil, err
	}
	return &l, nil
}

// ConnEnd names one end of a connection-mode user's connection at every
// layer: its TSAP, SSAP and PSAP selectors.
type ConnEnd struct {
	TSAP, SSAP, PSAP []byte
}

// BindConnUser binds the connection-mode user u of level lv to the
// layers: its endpoint is local; a connect request calls remote at the
// system whose NSAP is peer (its transport entity at the same selector
// as this one's).
func (l *Layers) BindConnUser(u *ConnUser, lv Level, local, remote ConnEnd, peer osi.NSAP) error {
	at := tp4.Address{NSAP: peer.WithSelector(l.TP4.sel), TSAP: remote.TSAP}
	switch lv {
	case LevelTP4:
		s, err := l.TP4.Bind(local.TSAP, at, u.Up())
		if err != nil {
			return err
		}
		u.Attach(s.SAP, s.WaitReady)
	case LevelSession:
		s, err := l.Session.Bind(local.SSAP, local.TSAP, remote.SSAP, at, u.Up())
		if err != nil {
			return err
		}
		u.Attach(s.SAP, s.WaitReady)
	case LevelPresentation:
		s, err := l.Pres.Bind(local.PSAP, local.SSAP, local.TSAP, remote.PSAP, remote.SSAP, at, u.Up())
		if err != nil {
			return err
		}
		u.Attach(s.SAP, s.WaitReady)
	default:
		return fmt.Errorf("top: %v is not a connection-mode level", lv)
	}
	return nil
}

// ParseLevel reads a level's name as Level.String writes it.
func ParseLevel(s string) (Level, error) {
	for lv := LevelPktDrv; lv <= LevelPresentation; lv++ {
		if lv.String() == s {
			return lv, nil
		}
	}
	return 0, fmt.Errorf("no layer user %q (pktdrv, mac, llc, clns, tp4, session, presentation)", s)
}
