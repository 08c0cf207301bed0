package top_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/report"
	_ "simkron/stack/apps"

	"github.com/BurntSushi/toml"
)

const (
	lowerConfig = "../../../configs/top-lower.toml"
	upperConfig = "../../../configs/top-upper.toml"
)

// testMessages is the messages per point in the tests: a tenth of the
// study's (a point's rate is per message; the set-up is outside the
// timed part).
const testMessages = 1000

// variant returns config edited by key: its workload's sizes and
// messages set and, when cases (TOML text of [[workload.top.case]]
// tables) is not empty, its cases replaced by cases.
func variant(t testing.TB, config string, sizes []int, messages int, cases string) *machinetest.Builder {
	t.Helper()
	b := machinetest.Edit(t, config).Set("workload.top.sizes", sizes).Set("workload.top.messages", messages)
	if cases != "" {
		var c struct {
			Workload struct {
				Top struct{ Case []map[string]any }
			}
		}
		if _, err := toml.Decode(cases, &c); err != nil || len(c.Workload.Top.Case) == 0 {
			t.Fatalf("cases %q: %v", cases, err)
		}
		b.Set("workload.top.case", c.Workload.Top.Case)
	}
	return b
}

// point is a point of the result as the section has it.
type point struct {
	Level, Where   string
	Size, Messages int
	Cases          []string
	Mbps           float64
	TickMbps       float64 `json:"tick_mbps"`
	Seconds        float64
	Ticks          uint32
	TsendUS        float64 `json:"tsend_us"`
	CopyUS         float64 `json:"copy_us"`
	Checksum       *bool
	AckStep        int `json:"ack_step"`
	Received       struct{ Messages, Corrupt uint64 }
	Lost           uint64
	Originator     []split
	Recipient      []split
	Error          string
}

type split struct {
	Layer      string
	Cycles     float64
	Categories []struct {
		Name   string
		Cycles float64
	}
}

// share returns a category's share of the split in percent.
func (s split) share(cat string) float64 {
	for _, c := range s.Categories {
		if c.Name == cat {
			return 100 * c.Cycles / s.Cycles
		}
	}
	return -1
}

type points []point

// at returns the point of a level, place, size and case.
func (ps points) at(t testing.TB, level, where string, size int, cs string) point {
	t.Helper()
	for _, p := range ps {
		if p.Level == level && p.Where == where && p.Size == size {
			for _, c := range p.Cases {
				if c == cs || cs == "" {
					return p
				}
			}
		}
	}
	t.Fatalf("no point %s %s %d %q", level, where, size, cs)
	return point{}
}

func (p point) split(t testing.TB, end int, layer string) split {
	t.Helper()
	s := p.Originator
	if end == 1 {
		s = p.Recipient
	}
	for _, l := range s {
		if l.Layer == layer {
			return l
		}
	}
	t.Fatalf("%s %s %d: no %s split at end %d", p.Level, p.Where, p.Size, layer, end)
	return split{}
}

// run runs the experiment text (read as if from config) and returns its
// result, its points and the run.
func run(t testing.TB, config string, text []byte, sets ...machine.Override) (*report.Result, points, *machine.Run) {
	t.Helper()
	exp, err := machine.LoadExperimentBytes(config, text, sets)
	if err != nil {
		t.Fatal(err)
	}
	r, err := machine.New(exp, machine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute(machine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete {
		t.Fatalf("incomplete: %s", res.Incomplete)
	}
	var sec struct{ Points points }
	for _, s := range res.Sections {
		if s.Name == "top" {
			b, _ := json.Marshal(s.Value)
			if err := json.Unmarshal(b, &sec); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, p := range sec.Points {
		if p.Error != "" || p.Received.Messages+p.Lost != uint64(p.Messages) || p.Received.Corrupt != 0 {
			t.Errorf("%s %s %d: %q, received %+v", p.Level, p.Where, p.Size, p.Error, p.Received)
		}
	}
	return res, sec.Points, r
}

// The lower layer users of configs/top-lower.toml, at two sizes: the
// calibration of the reference (docs/reference/osi-top.md sec. 9) and the orderings the
// mechanisms imply.
//
//   - MAC user, remote, 1024 B: about 6 Mbit/s with Tsend about 1.4 ms
//     (bands 5.5-6.3 Mbit/s and 1.3-1.5 ms: the seed's "about"). Tsend is
//     the ISA bus's 1 us per 16-bit word of the frame's load (0.52 ms)
//     and its 0.86 ms on the wire, which the one transmit buffer
//     serialises.
//   - MAC user in loopback, 1024 B: 38-46 Mbit/s (the seed's 42-43 with
//     its chart's 10%), the packet driver's copy 0.10-0.19 ms (the seed's
//     0.22 ms cannot hold with 42 Mbit/s: 8192 bits in 0.22 ms are 37.2
//     Mbit/s before anything else runs).
//   - In loopback every layer adds cost (packet driver ≥ MAC ≥ LLC ≥
//     CLNS), loopback beats the wire for large messages (where Tsend
//     dominates), larger messages go faster.
//   - LLC's time goes mostly to the copy, at the originator into the
//     contiguous transmit buffer, at the recipient out of the receive
//     buffer; CLNS's mostly to memory management; every split's
//     categories sum to its total.
//   - The report's first table puts the study's calibration figures
//     beside the simulated ones.
//   - Timed by the 55 ms tick a run of seconds is within a tick of exact.
func TestLowerFigures(t *testing.T) {
	res, ps, _ := run(t, lowerConfig, []byte(variant(t, lowerConfig, []int{128, 1024}, testMessages, "").Text()))
	if tb := res.Figures.Tables; len(tb) == 0 || !strings.Contains(tb[0].Title, "calibration") || len(tb[0].Rows) != 5 {
		t.Errorf("the report does not start with the study's five calibration figures: %+v", tb[:min(1, len(tb))])
	}
	mac := ps.at(t, "mac", "remote", 1024, "")
	t.Logf("MAC user remote 1024 B: %.2f Mbit/s (tick %.2f), Tsend %.1f us", mac.Mbps, mac.TickMbps, mac.TsendUS)
	if mac.Mbps < 5.5 || mac.Mbps > 6.3 || mac.TsendUS < 1300 || mac.TsendUS > 1500 {
		t.Errorf("MAC user remote 1024 B: %.2f Mbit/s, Tsend %.1f us; want 5.5-6.3 and 1300-1500", mac.Mbps, mac.TsendUS)
	}
	loop := ps.at(t, "mac", "loopback", 1024, "")
	t.Logf("MAC user loopback 1024 B: %.2f Mbit/s, copy %.1f us", loop.Mbps, loop.CopyUS)
	if loop.Mbps < 38 || loop.Mbps > 46 || loop.CopyUS < 100 || loop.CopyUS > 190 {
		t.Errorf("MAC user loopback 1024 B: %.2f Mbit/s, copy %.1f us; want 38-46 and 100-190", loop.Mbps, loop.CopyUS)
	}
	levels := []string{"pktdrv", "mac", "llc", "clns"}
	for _, n := range []int{128, 1024} {
		for i, lv := range levels {
			l, r := ps.at(t, lv, "loopback", n, ""), ps.at(t, lv, "remote", n, "")
			if n == 1024 && l.Mbps <= r.Mbps {
				t.Errorf("%s %d B: loopback %.2f not above remote %.2f", lv, n, l.Mbps, r.Mbps)
			}
			if i > 0 {
				if up := ps.at(t, levels[i-1], "loopback", n, ""); l.Mbps > up.Mbps {
					t.Errorf("loopback %d B: %s at %.2f above %s at %.2f", n, lv, l.Mbps, levels[i-1], up.Mbps)
				}
			}
			if n == 1024 && ps.at(t, lv, "remote", 128, "").Mbps >= r.Mbps {
				t.Errorf("%s remote: 128 B not slower than 1024 B", lv)
			}
			if d := r.TickMbps - r.Mbps; r.Seconds > 1 && (d > 0.05*r.Mbps || d < -0.05*r.Mbps) {
				t.Errorf("%s remote %d B: by the tick %.2f, exact %.2f", lv, n, r.TickMbps, r.Mbps)
			}
		}
	}
	for end, who := range []string{"originator", "recipient"} {
		llc := ps.at(t, "llc", "remote", 1024, "").split(t, end, "LLC")
		t.Logf("LLC at the %s, 1024 B: %.0f cycles, copy %.1f%%", who, llc.Cycles, llc.share("memory copy"))
		for _, cat := range []string{"memory management", "task scheduling", "others"} {
			if llc.share("memory copy") <= llc.share(cat) {
				t.Errorf("LLC at the %s: copy %.1f%% not above %s %.1f%%", who, llc.share("memory copy"), cat, llc.share(cat))
			}
		}
	}
	clns := ps.at(t, "clns", "remote", 1024, "").split(t, 0, "CLNS")
	for _, cat := range []string{"memory copy", "checksum", "task scheduling", "others"} {
		if clns.share("memory management") <= clns.share(cat) {
			t.Errorf("CLNS at the originator: memory management %.1f%% not above %s %.1f%%", clns.share("memory management"), cat, clns.share(cat))
		}
	}
	for _, p := range ps {
		for _, s := range append(append([]split(nil), p.Originator...), p.Recipient...) {
			var sum float64
			for _, c := range s.Categories {
				sum += c.Cycles
			}
			if d := sum - s.Cycles; d > 1e-6*s.Cycles || d < -1e-6*s.Cycles {
				t.Errorf("%s %s %d %s: categories sum to %.1f of %.1f", p.Level, p.Where, p.Size, s.Layer, sum, s.Cycles)
			}
		}
	}
}

// The upper layer users of configs/top-upper.toml at two sizes: in
// loopback, where the CPU is the bottleneck, each layer adds its
// per-primitive costs (TP4 ≥ session ≥ presentation), an AK every 4 DTs
// without the checksum beats an AK per DT with it, and the throughput
// rises with the acknowledgement step (Figures 11 and 13); TP4's split
// at 128 B has all four of the study's categories and no copy (it
// chains), the checksum's share rises with the size at both ends
// (Figure 12), and without the checksum there is none of it.
func TestUpperFigures(t *testing.T) {
	_, ps, _ := run(t, upperConfig, []byte(variant(t, upperConfig, []int{128, 1024}, testMessages, "").Text()))
	levels := []string{"tp4", "session", "presentation"}
	for _, n := range []int{128, 1024} {
		for i, lv := range levels {
			a1 := ps.at(t, lv, "loopback", n, "ack 1, checksum")
			a4 := ps.at(t, lv, "loopback", n, "ack 4, no checksum")
			if a4.Mbps <= a1.Mbps {
				t.Errorf("%s %d B loopback: ack 4 without checksum %.2f not above ack 1 with it %.2f", lv, n, a4.Mbps, a1.Mbps)
			}
			if i > 0 {
				for _, c := range []string{"ack 1, checksum", "ack 4, no checksum"} {
					if up, me := ps.at(t, levels[i-1], "loopback", n, c), ps.at(t, lv, "loopback", n, c); me.Mbps > up.Mbps {
						t.Errorf("%s %d B loopback: %s at %.2f above %s at %.2f", c, n, lv, me.Mbps, levels[i-1], up.Mbps)
					}
				}
			}
		}
		prev := 0.0
		for step := 1; step <= 4; step++ {
			p := ps.at(t, "tp4", "loopback", n, fmt.Sprintf("ack %d", step))
			if p.AckStep != step || p.Checksum == nil || *p.Checksum {
				t.Fatalf("ack %d: the point has ack step %d, checksum %v", step, p.AckStep, p.Checksum)
			}
			if p.Mbps <= prev {
				t.Errorf("%d B loopback: ack step %d at %.2f Mbit/s not above the step before (%.2f)", n, step, p.Mbps, prev)
			}
			prev = p.Mbps
		}
	}
	var prev [2]float64
	for _, n := range []int{128, 1024} {
		p := ps.at(t, "tp4", "remote", n, "ack 1, checksum")
		for end := range 2 {
			s := p.split(t, end, "TP4")
			if n == 128 {
				t.Logf("TP4 at 128 B, end %d: %+v", end, s.Categories)
				for _, cat := range []string{"checksum", "memory management", "task scheduling", "others"} {
					if s.share(cat) <= 0 {
						t.Errorf("TP4 at 128 B, end %d: no %s", end, cat)
					}
				}
				if s.share("memory copy") != 0 {
					t.Errorf("TP4 at 128 B, end %d: copies %.1f%%; it should chain", end, s.share("memory copy"))
				}
			}
			if sh := s.share("checksum"); sh <= prev[end] {
				t.Errorf("TP4 %d B, end %d: checksum share %.1f%% not above the smaller size's %.1f%%", n, end, sh, prev[end])
			} else {
				prev[end] = sh
			}
		}
		if sh := ps.at(t, "tp4", "remote", n, "ack 1").split(t, 0, "TP4").share("checksum"); sh != 0 {
			t.Errorf("TP4 %d B without the checksum: %.1f%% checksum", n, sh)
		}
	}
}

// The same configuration and seed give the same result, byte for byte.
func TestDeterminism(t *testing.T) {
	cases := `[[workload.top.case]]
name = "mixed"
levels = ["mac", "clns", "session"]
`
	text := []byte(variant(t, upperConfig, []int{256}, 100, cases).Text())
	var out [2][]byte
	for i := range out {
		res, _, _ := run(t, upperConfig, text)
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	if string(out[0]) != string(out[1]) {
		t.Error("two runs of the same experiment differ")
	}
}

// A connectionless user's recipient slower than its originator: the CLNS
// user remote at 128 B, whose recipient spends more per message (the
// packet driver's interrupt and block-in, LLC's copy out of the receive
// buffer, CLNS's mapping) than its originator's frame takes on the ISA
// bus and the wire. Nothing below TP4 controls the flow, so its receive
// buffers overrun and messages are lost: the point counts them and its
// throughput is the useful bytes that arrived, not an error; the last
// message's reply still ends the measurement. TP4 above loses nothing.
func TestConnectionlessOverrun(t *testing.T) {
	cases := `[[workload.top.case]]
name = "overrun"
levels = ["clns", "tp4"]
loopback = false
`
	const msgs = 10000
	_, ps, _ := run(t, lowerConfig, []byte(variant(t, lowerConfig, []int{128}, msgs, cases).Text()))
	clns := ps.at(t, "clns", "remote", 128, "")
	t.Logf("CLNS user, remote, 128 B, %d messages: %d received, %d lost, %.2f Mbit/s of what arrived", msgs, clns.Received.Messages, clns.Lost, clns.Mbps)
	if clns.Lost == 0 || clns.Error != "" || clns.Received.Messages+clns.Lost != msgs {
		t.Errorf("CLNS user: %d received, %d lost, error %q: want the recipient overrun and counted", clns.Received.Messages, clns.Lost, clns.Error)
	}
	if tp := ps.at(t, "tp4", "remote", 128, ""); tp.Lost != 0 || tp.Received.Messages != msgs {
		t.Errorf("TP4 user: %d received, %d lost: want every message", tp.Received.Messages, tp.Lost)
	}
}
