package top_test

import (
	"fmt"
	"strings"
	"testing"

	"simkron/cpu"
	"simkron/sim"
	"simkron/stack/osi"
	"simkron/stack/top"
)

// The study's upper-layer figures (docs/reference/osi-top.md sec. 9), as the mechanisms
// give them: nothing here sets a throughput, a share or a factor; the
// tests check the orderings the mechanisms imply, and that changing the
// machine or a TP4 parameter moves the figures the way they say.

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
	if !r.ua.Released || !r.ub.Released {
		t.Fatalf("%v: not released (%v, %v)", lv, r.ua.Released, r.ub.Released)
	}
	noGuestErrors(t, r.a, r.b)
	return m
}

// The study's message sizes.
var figSizes = []int{128, 256, 384, 512, 640, 768, 896, 1024, 1152}

// figMsgs is the messages per point: fewer than the study's 10,000 to
// keep the tests fast; a point's rate is per message, and the set-up is
// outside the timed part.
const figMsgs = 1000

func ackCfg(step int, checksum bool) upperCfg {
	cfg := defaultUpper()
	cfg.tp.AckStep = step
	cfg.tp.Checksum = checksum
	return cfg
}

type table struct {
	title string
	cols  []string
	rows  [][]string
}

func (tb *table) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%8s", tb.title, "size")
	for _, c := range tb.cols {
		fmt.Fprintf(&b, " %14s", c)
	}
	b.WriteByte('\n')
	for _, r := range tb.rows {
		fmt.Fprintf(&b, "%8s", r[0])
		for _, v := range r[1:] {
			fmt.Fprintf(&b, " %14s", v)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Figure 11: the transport, session and presentation users in
// loopback, with an AK per DT and the checksum, and with an AK every 4
// DTs and no checksum. Each layer adds its per-primitive costs (TP4 ≥
// session ≥ presentation at every size); larger messages go faster;
// fewer AKs and no checksum go faster at every size and level.
func TestFigure11(t *testing.T) {
	levels := []top.Level{top.LevelTP4, top.LevelSession, top.LevelPresentation}
	cfgs := []struct {
		name string
		cfg  upperCfg
	}{{"ack 1, checksum", ackCfg(1, true)}, {"ack 4, no checksum", ackCfg(4, false)}}
	got := map[string]map[top.Level][]float64{}
	tb := table{title: "Figure 11, loopback: user throughput (Mbit/s)"}
	for _, c := range cfgs {
		got[c.name] = map[top.Level][]float64{}
		for _, lv := range levels {
			tb.cols = append(tb.cols, fmt.Sprintf("%v %s", lv, map[string]string{"ack 1, checksum": "a1+c", "ack 4, no checksum": "a4"}[c.name]))
			for _, size := range figSizes {
				m := measureUpper(t, lv, size, figMsgs, true, c.cfg)
				got[c.name][lv] = append(got[c.name][lv], m.res.Mbps())
			}
		}
	}
	for i, size := range figSizes {
		row := []string{fmt.Sprint(size)}
		for _, c := range cfgs {
			for _, lv := range levels {
				row = append(row, fmt.Sprintf("%.2f", got[c.name][lv][i]))
			}
		}
		tb.rows = append(tb.rows, row)
	}
	t.Log("\n" + tb.String())
	for _, c := range cfgs {
		for i, size := range figSizes {
			for j := 1; j < len(levels); j++ {
				if up, down := got[c.name][levels[j]][i], got[c.name][levels[j-1]][i]; up > down {
					t.Errorf("%s, %d B: %v user %.2f Mbit/s above %v user %.2f", c.name, size, levels[j], up, levels[j-1], down)
				}
			}
			for _, lv := range levels {
				if i > 0 && got[c.name][lv][i] <= got[c.name][lv][i-1] {
					t.Errorf("%s, %v: %d B at %.2f Mbit/s not above %d B at %.2f", c.name, lv, size, got[c.name][lv][i], figSizes[i-1], got[c.name][lv][i-1])
				}
			}
		}
	}
	for _, lv := range levels {
		for i, size := range figSizes {
			if a, b := got[cfgs[0].name][lv][i], got[cfgs[1].name][lv][i]; b <= a {
				t.Errorf("%v %d B: ack 4 without checksum %.2f not above ack 1 with it %.2f", lv, size, b, a)
			}
		}
	}
}

// Figure 13: the transport user, checksum off, acknowledgement steps 1
// to 4, loopback and remote. Fewer AKs cost less at both ends, so in
// loopback, where the CPU is the bottleneck, the throughput rises with
// the step at every size. On the wire it need not: the credit of 8 DTs
// has to cover the DTs the recipient holds until its k-th and the AK's
// wait at the sender behind the DTs queued for the card, and at step 4
// it runs dry (TestAckStepRemoteTrace follows it frame by frame); with a
// credit of 15 the window covers the pipe again and the larger step is
// no slower. Both are checked.
func TestFigure13(t *testing.T) {
	for _, loop := range []bool{true, false} {
		where := map[bool]string{true: "loopback", false: "remote"}[loop]
		tb := table{title: fmt.Sprintf("Figure 13, %s: transport user, no checksum (Mbit/s)", where), cols: []string{"ack 1", "ack 2", "ack 3", "ack 4"}}
		sizes := figSizes
		if !loop {
			sizes = []int{128, 512, 1024}
		}
		for _, size := range sizes {
			row := []string{fmt.Sprint(size)}
			var prev float64
			for step := 1; step <= 4; step++ {
				m := measureUpper(t, top.LevelTP4, size, figMsgs, loop, ackCfg(step, false))
				v := m.res.Mbps()
				row = append(row, fmt.Sprintf("%.2f", v))
				if loop && step > 1 && v <= prev {
					t.Errorf("%s %d B: ack step %d at %.2f Mbit/s not above step %d at %.2f", where, size, step, v, step-1, prev)
				}
				prev = v
			}
			tb.rows = append(tb.rows, row)
		}
		t.Log("\n" + tb.String())
	}
	var mbps [2][2]float64
	var waits [2][2]uint64
	for i, credit := range []int{8, 15} {
		for j, step := range []int{1, 4} {
			cfg := ackCfg(step, false)
			cfg.tp.Credit = credit
			m := measureUpper(t, top.LevelTP4, 1024, figMsgs, false, cfg)
			mbps[i][j], waits[i][j] = m.res.Mbps(), m.r.a.drv.Stats().TxWaits
		}
	}
	t.Logf("remote 1024 B, credit 8: ack 1 %.2f, ack 4 %.2f Mbit/s (sender waited for its card %d, %d times); credit 15: %.2f, %.2f (%d, %d)",
		mbps[0][0], mbps[0][1], waits[0][0], waits[0][1], mbps[1][0], mbps[1][1], waits[1][0], waits[1][1])
	if waits[0][1] >= waits[0][0] || mbps[1][1] < mbps[1][0]*0.999 || mbps[1][1] <= mbps[0][1] {
		t.Errorf("the window does not explain the remote ack steps: %v Mbit/s, %v waits", mbps, waits)
	}
}

// tp4Split returns TP4's processing split at both ends of a remote run.
func tp4Split(t testing.TB, size, msgs int, cfg upperCfg) (orig, recp osi.Split, run upperRun) {
	m := measureUpper(t, top.LevelTP4, size, msgs, false, cfg)
	orig = m.r.a.h.Catalog().Split(m.aStart, m.aEnd, cpu.LayerTP4)
	recp = m.r.b.h.Catalog().Split(m.bStart, m.bEnd, cpu.LayerTP4)
	return orig, recp, m
}

// Figure 12: TP4's processing at 128 B split into the study's
// categories at the originator and the recipient (remote, AK per DT,
// checksum on), and the checksum's share against the message size. The
// checksum, memory management, task scheduling and others all have a
// part; the parts sum to the whole; the checksum's share grows with the
// size at both ends (its cost is per octet, the rest per TPDU).
func TestFigure12(t *testing.T) {
	cfg := defaultUpper()
	o, r, m := tp4Split(t, 128, figMsgs, cfg)
	_, to := splitTable(m.r.a.h.Catalog(), m.aStart, m.aEnd, cpu.LayerTP4, figMsgs)
	_, tr := splitTable(m.r.b.h.Catalog(), m.bStart, m.bEnd, cpu.LayerTP4, figMsgs)
	t.Logf("TP4 at 128 B, remote, %.2f Mbit/s\noriginator %s\nrecipient %s", m.res.Mbps(), to, tr)
	for _, s := range []struct {
		who string
		sp  osi.Split
	}{{"originator", o}, {"recipient", r}} {
		var sum int64
		for _, cat := range osi.Categories {
			sum += s.sp.Of(cat)
		}
		if sum != s.sp.Total || s.sp.Total == 0 {
			t.Errorf("%s: categories sum to %d of %d", s.who, sum, s.sp.Total)
		}
		for _, cat := range []osi.Category{osi.CatChecksum, osi.CatMemory, osi.CatSched, osi.CatOther} {
			if s.sp.Of(cat) == 0 {
				t.Errorf("%s: no %v in TP4's processing", s.who, cat)
			}
		}
		if s.sp.Of(osi.CatCopy) != 0 {
			t.Errorf("%s: TP4 copies (%d cycles); it should chain", s.who, s.sp.Of(osi.CatCopy))
		}
	}
	tb := table{title: "Figure 12: the checksum's share of TP4's processing (remote)", cols: []string{"originator %", "recipient %"}}
	var po, pr float64
	for _, size := range []int{128, 256, 512, 1024} {
		o, r, _ := tp4Split(t, size, figMsgs/2, cfg)
		so, sr := o.Percent(osi.CatChecksum), r.Percent(osi.CatChecksum)
		tb.rows = append(tb.rows, []string{fmt.Sprint(size), fmt.Sprintf("%.1f", so), fmt.Sprintf("%.1f", sr)})
		if so <= po || sr <= pr {
			t.Errorf("%d B: checksum share %.1f%% / %.1f%% not above the smaller size's %.1f%% / %.1f%%", size, so, sr, po, pr)
		}
		po, pr = so, sr
	}
	t.Log("\n" + tb.String())
	// Without the checksum there is none of it.
	cfg.tp.Checksum = false
	o, r, _ = tp4Split(t, 128, figMsgs/4, cfg)
	if o.Of(osi.CatChecksum) != 0 || r.Of(osi.CatChecksum) != 0 {
		t.Errorf("checksum off: %d and %d checksum cycles", o.Of(osi.CatChecksum), r.Of(osi.CatChecksum))
	}
}

// Changing the machine or a TP4 parameter moves the figures the way the
// mechanisms say:
//
//   - a twice faster clock nearly doubles the loopback throughput (all
//     CPU work; memory latencies are cycles of the board's clock here)
//     and leaves the remote one, bound by the wire and the ISA bus, near
//     where it was;
//   - a twice faster ISA bus cycle raises the remote throughput (the
//     card copies take half as long) and leaves loopback where it was
//     (its path never touches the bus; only the start-up does, which
//     shifts the run against the 55 ms tick a little);
//   - a dearer checksum loop raises the checksum's share and lowers the
//     throughput;
//   - a credit of one DT makes the transfer stop-and-wait;
//   - a TPDU size below the message makes two DTs of each TSDU.
func TestUpperMechanisms(t *testing.T) {
	const msgs = 400
	base := defaultUpper()
	run := func(loop bool, size int, cfg upperCfg) upperRun {
		return measureUpper(t, top.LevelTP4, size, msgs, loop, cfg)
	}
	ratio := func(a, b upperRun) float64 { return a.res.Mbps() / b.res.Mbps() }

	fast := defaultUpper()
	fast.machine.cpu.Clock = 66 * sim.MHz
	loop1, loop2 := run(true, 1024, base), run(true, 1024, fast)
	rem1, rem2 := run(false, 1024, base), run(false, 1024, fast)
	t.Logf("clock 33 -> 66 MHz: loopback %.2f -> %.2f, remote %.2f -> %.2f Mbit/s", loop1.res.Mbps(), loop2.res.Mbps(), rem1.res.Mbps(), rem2.res.Mbps())
	if r := ratio(loop2, loop1); r < 1.7 || r > 2.05 {
		t.Errorf("doubling the clock moved loopback by %.2f×, want nearly 2", r)
	}
	if r := ratio(rem2, rem1); r < 1 || r > 1.25 {
		t.Errorf("doubling the clock moved remote by %.2f×, want little (wire- and bus-bound)", r)
	}

	isa := defaultUpper()
	isa.machine.isa = 500 * sim.Nanosecond
	rem3, loop3 := run(false, 1024, isa), run(true, 1024, isa)
	t.Logf("ISA cycle 1 -> 0.5 us: remote %.2f -> %.2f, loopback %.2f -> %.2f Mbit/s", rem1.res.Mbps(), rem3.res.Mbps(), loop1.res.Mbps(), loop3.res.Mbps())
	if r := ratio(rem3, rem1); r < 1.1 {
		t.Errorf("a twice faster ISA bus moved remote by %.2f×, want a clear rise", r)
	}
	if r := ratio(loop3, loop1); r < 0.998 || r > 1.002 {
		t.Errorf("the ISA bus changed loopback by %.4f×: %v -> %v", r, loop1.res.Duration(), loop3.res.Duration())
	}

	dear := defaultUpper()
	dear.machine.costs = map[string]int64{"tp4_cksum.byte": 8}
	o1, _, m1 := tp4Split(t, 128, msgs, base)
	o2, _, m2 := tp4Split(t, 128, msgs, dear)
	l4 := run(true, 1024, dear)
	t.Logf("checksum loop 4 -> 8 instructions an octet: share at 128 B %.1f%% -> %.1f%%, loopback 1024 B %.2f -> %.2f Mbit/s", o1.Percent(osi.CatChecksum), o2.Percent(osi.CatChecksum), loop1.res.Mbps(), l4.res.Mbps())
	if o2.Percent(osi.CatChecksum) <= o1.Percent(osi.CatChecksum) || l4.res.Mbps() >= loop1.res.Mbps() || m2.res.Mbps() > m1.res.Mbps() {
		t.Error("a dearer checksum did not raise its share and lower the throughput")
	}

	one := defaultUpper()
	one.tp.Credit = 1
	rem4 := run(false, 1024, one)
	t.Logf("credit 8 -> 1, remote 1024 B: %.2f -> %.2f Mbit/s", rem1.res.Mbps(), rem4.res.Mbps())
	if r := ratio(rem4, rem1); r > 0.8 {
		t.Errorf("stop-and-wait at %.2f× the windowed rate, want well below", r)
	}

	small := defaultUpper()
	small.tp.TPDUSize = 1024
	l5, l6 := run(true, 1152, base), run(true, 1152, small)
	t.Logf("TPDU 2048 -> 1024 B, loopback 1152 B: %.2f -> %.2f Mbit/s, %d -> %d DTs", l5.res.Mbps(), l6.res.Mbps(), l5.r.ta.T.Stats().TxDT, l6.r.ta.T.Stats().TxDT)
	if l6.res.Mbps() >= l5.res.Mbps() || l6.r.ta.T.Stats().TxDT < 2*msgs {
		t.Error("a TPDU below the message size did not segment and slow the transfer")
	}
}
