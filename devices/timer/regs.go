package timer

// Register offsets (32-bit registers, little-endian). The layout is
// simkron's own, in the spirit of SimOS's timer device (a real-time-clock
// word readable by the kernel at a fixed address, SimOS Table 1: timer at
// 0xA0E00000, 4 bytes) extended with a periodic tick and a one-shot.
//
//	off  name     access  meaning
//	0x00 RTC      R       seconds since 1970-01-01 (epoch + simulated time)
//	0x04 CTRL     R/W     bit 0 TICK_EN, bit 1 ONESHOT_EN
//	0x08 HZ       R       periodic tick rate in ticks per second
//	0x0C ONESHOT  R/W     write: arm the one-shot to fire after N microseconds
//	                      (0 disarms); read: microseconds left, rounded up
//	0x10 STATUS   R/W1C   bit 0 TICK, bit 1 ONESHOT; write 1 to clear
//	0x14 TICKS    R       ticks since the periodic tick was enabled
//
// The interrupt line is level-triggered: asserted while STATUS & CTRL != 0.
const (
	RegRTC     = 0x00
	RegCtrl    = 0x04
	RegHZ      = 0x08
	RegOneShot = 0x0C
	RegStatus  = 0x10
	RegTicks   = 0x14

	// Size is the register window.
	Size = 0x18
)

// Bits of CTRL and STATUS.
const (
	BitTick    = 1 << 0
	BitOneShot = 1 << 1
)
