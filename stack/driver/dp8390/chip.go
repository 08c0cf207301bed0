package dp8390

import (
	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
)

// Chip is one DP8390 as its drivers program it: the registers at Base in
// Space, reached through the core C, every access a bus cycle the core
// charges. Its methods are the register sequences of the data sheet that
// every driver of the chip runs the same way, as Linux's 8390 core
// (8390.c) serves ne.c and its siblings; a driver wraps them in its own
// modelled functions and keeps its own counters.
type Chip struct {
	C     *cpu.CPU
	Space memory.Space
	Base  memory.Addr
}

// In reads register reg.
func (p *Chip) In(reg memory.Addr) byte { return byte(p.C.In(p.Space, p.Base+reg, 1)) }

// Out writes v to register reg.
func (p *Chip) Out(reg memory.Addr, v byte) { p.C.Out(p.Space, p.Base+reg, 1, uint64(v)) }

// Reset pulses the reset port and waits, at most 100 reads, for ISR.RST,
// which it then acknowledges with the rest of ISR. It reports whether the
// chip answered.
func (p *Chip) Reset() bool {
	p.Out(RegReset, p.In(RegReset))
	for range 100 {
		if p.In(RegISR)&IsrReset != 0 {
			p.Out(RegISR, 0xFF)
			return true
		}
	}
	return false
}

// ReadPROM reads the 32-byte station address PROM byte-wide by remote DMA
// into simulated memory at scratch and returns it (on a 16-bit card each
// byte appears twice; bytes 28 and 30 are 0x57 on an NE2000).
func (p *Chip) ReadPROM(scratch memory.Addr) [32]byte {
	for _, s := range [...]struct {
		reg memory.Addr
		v   byte
	}{
		{RegCmd, CrNoDMA | CrPage0 | CrStop}, {RegDCR, DcrByte}, {RegRBCR0, 0}, {RegRBCR1, 0},
		{RegIMR, 0}, {RegISR, 0xFF}, {RegRCR, RcrMonitor}, {RegTCR, TcrLoopback},
		{RegRBCR0, 32}, {RegRBCR1, 0}, {RegRSAR0, 0}, {RegRSAR1, 0}, {RegCmd, CrRRead | CrStart},
	} {
		p.Out(s.reg, s.v)
	}
	p.C.InString(p.Space, p.Base+RegData, 1, scratch, 32)
	var prom [32]byte
	p.C.Read(scratch, prom[:])
	p.Out(RegISR, ISRRDC)
	return prom
}

// Init programs the chip in the National Semiconductor order
// (docs/reference/ne2000.md section 9; Linux NS8390_init): word transfers, the
// transmit page tpsr, the receive ring [pstart, pstop), the station
// address mac, and leaves it stopped in internal loopback with every
// interrupt masked.
func (p *Chip) Init(tpsr, pstart, pstop byte, mac [6]byte) {
	p.Out(RegCmd, CrNoDMA|CrPage0|CrStop)
	p.Out(RegDCR, DcrWord)
	p.Out(RegRBCR0, 0)
	p.Out(RegRBCR1, 0)
	p.Out(RegRCR, RcrMonitor)
	p.Out(RegTCR, TcrLoopback)
	p.Out(RegTPSR, tpsr)
	p.Out(RegPStart, pstart)
	p.Out(RegBnry, pstop-1)
	p.Out(RegPStop, pstop)
	p.Out(RegISR, 0xFF)
	p.Out(RegIMR, 0)
	p.Out(RegCmd, CrNoDMA|CrPage1|CrStop)
	for i, b := range mac {
		p.Out(RegPAR0+memory.Addr(i), b)
	}
	p.Out(RegCurr, pstart)
	p.Out(RegCmd, CrNoDMA|CrPage0|CrStop)
}

// Start ends Init: interrupts unmasked, the chip started, normal transmit
// and reception of broadcasts (and every frame when promiscuous).
func (p *Chip) Start(promiscuous bool) {
	p.Out(RegISR, 0xFF)
	p.Out(RegIMR, IMRAll)
	p.Out(RegCmd, CrNoDMA|CrPage0|CrStart)
	p.Out(RegTCR, TcrNormal)
	rcr := byte(RcrAB)
	if promiscuous {
		rcr |= RcrPRO | RcrAM
	}
	p.Out(RegRCR, rcr)
}

// RemoteRead reads count bytes of packet RAM at card address off into
// simulated memory at dst by remote-DMA read, 16 bits a bus cycle (an odd
// count is rounded up: word mode moves whole words); the chip wraps the
// receive ring by itself.
func (p *Chip) RemoteRead(dst memory.Addr, count, off int) {
	count += count & 1
	p.Out(RegCmd, CrNoDMA|CrPage0|CrStart)
	p.Out(RegRBCR0, byte(count))
	p.Out(RegRBCR1, byte(count>>8))
	p.Out(RegRSAR0, byte(off))
	p.Out(RegRSAR1, byte(off>>8))
	p.Out(RegCmd, CrRRead|CrStart)
	p.C.InString(p.Space, p.Base+RegData, 2, dst, count)
	p.Out(RegISR, ISRRDC)
}

// RemoteWrite writes count bytes from simulated memory at src into packet
// RAM at page by remote-DMA write, 16 bits a bus cycle (an odd count is
// rounded up), then polls (at most 100 reads) for the remote-DMA-complete
// bit and acknowledges it.
func (p *Chip) RemoteWrite(src memory.Addr, count int, page byte) {
	count += count & 1
	p.Out(RegCmd, CrNoDMA|CrPage0|CrStart)
	p.Out(RegISR, ISRRDC)
	p.Out(RegRBCR0, byte(count))
	p.Out(RegRBCR1, byte(count>>8))
	p.Out(RegRSAR0, 0)
	p.Out(RegRSAR1, page)
	p.Out(RegCmd, CrRWrite|CrStart)
	p.C.OutString(p.Space, p.Base+RegData, 2, src, count)
	for range 100 {
		if p.In(RegISR)&ISRRDC != 0 {
			break
		}
	}
	p.Out(RegISR, ISRRDC)
}

// Overrun recovers from a full receive ring by the data sheet's sequence
// (docs/reference/ne2000.md section 10; Linux ei_rx_overrun): stop,
// spin for wait, clear the remote byte count, go to loopback, restart,
// empty the ring with receive, acknowledge, back to normal transmit, and
// resend a frame the stop cut off.
func (p *Chip) Overrun(wait sim.Time, receive func()) {
	wasTx := p.In(RegCmd)&CrTrans != 0
	p.Out(RegCmd, CrNoDMA|CrPage0|CrStop)
	p.C.Charge(p.C.Clock().Cycles(wait)) // udelay: the core spins
	p.Out(RegRBCR0, 0)
	p.Out(RegRBCR1, 0)
	resend := wasTx && p.In(RegISR)&(IsrTx|IsrTxErr) == 0
	p.Out(RegTCR, TcrLoopback)
	p.Out(RegCmd, CrNoDMA|CrPage0|CrStart)
	receive()
	p.Out(RegISR, IsrOver)
	p.Out(RegTCR, TcrNormal)
	if resend {
		p.Out(RegCmd, CrNoDMA|CrPage0|CrStart|CrTrans)
	}
}
