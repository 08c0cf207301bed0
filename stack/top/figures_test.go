package top_test

import (
	"testing"

	"simkron/cpu"
	"simkron/sim"
	"simkron/stack/osi"
	"simkron/stack/top"
)

// upperRun is one connection-mode measurement with the cost readings
// taken as it starts and ends.
type upperRun struct {
	res          top.Result
	aStart, aEnd osi.Reading
	bStart, bEnd osi.Reading
	r            *coRig
}

func measureUpper(t testing.TB, lv top.Level, size, msgs int, loop bool, cfg upperCfg) upperRun {
	t.Helper()
	r := buildUpper(t, lv, size, msgs, loop, cfg)
	m := upperRun{r: r}
	r.ua.OnFirstSend = func() { m.aStart, m.bStart = osi.Read(r.a.c), osi.Read(r.b.c) }
	r.ua.OnDone = func() { m.aEnd, m.bEnd = osi.Read(r.a.c), osi.Read(r.b.c) }
	m.res = r.run(t, sim.Time(msgs)*20*sim.Millisecond+10*sim.Second)
	if got := r.ub.Received(); got.Messages != uint64(msgs) || got.Corrupt != 0 {
		t.Fatalf("%v: recipient got %+v, want %d intact messages", lv, got, msgs)
	}
	noGuestErrors(t, r.a, r.b)
	return m
}

func TestTP4Peek(t *testing.T) {
	for _, size := range []int{128, 1024} {
		m := measureUpper(t, top.LevelTP4, size, 2000, false, defaultUpper())
		_, ta := splitTable(m.r.a.h.Catalog(), m.aStart, m.aEnd, cpu.LayerTP4, m.res.Messages)
		_, tb := splitTable(m.r.b.h.Catalog(), m.bStart, m.bEnd, cpu.LayerTP4, m.res.Messages)
		t.Logf("%d B remote %.2f Mbit/s\noriginator %s\nrecipient %s", size, m.res.Mbps(), ta, tb)
	}
	for _, size := range []int{128, 1024} {
		m := measureUpper(t, top.LevelTP4, size, 2000, true, defaultUpper())
		t.Logf("%d B loop %.2f Mbit/s", size, m.res.Mbps())
	}
}
