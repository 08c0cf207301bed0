package machine_test

import (
	"fmt"
	"strings"
	"testing"

	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/report/shape"
	"simkron/sim"
	"simkron/stack/apps/latency"
)

// A run stopped by stop_at before its sweeps ended reports what was
// measured by then, the same in its sections and in its tables: a
// message sent and not answered is lost, one never sent is "not sent"
// (not lost), and what was not measured shows as "-", not 0. With
// compare_udp the TCP sweep, which never started, has every message not
// sent.
func TestIncompleteSweeps(t *testing.T) {
	exp, err := machine.LoadExperiment("../configs/tcp-ne2000.toml")
	if err != nil {
		t.Fatal(err)
	}
	machinetest.Segments(exp)[0].Pcap = false
	exp.Info.StopAt = 150 * sim.Millisecond
	r, err := machine.New(exp, machine.Options{NoCapture: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute(machine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete {
		t.Fatal("the run completed: stop_at too late for the test")
	}
	messages := udpParams(exp).Messages
	tables := map[string]shape.Table{}
	for _, tb := range res.Figures.Tables {
		if proto, ok := strings.CutSuffix(strings.SplitN(tb.Title, " (", 2)[0], " echo sweep"); ok {
			tables[proto] = tb
		}
	}
	var partly, none int
	for _, proto := range []string{"udp", "tcp"} {
		rows := section[[]latency.Row](res, proto)
		table, ok := tables[map[string]string{"udp": "UDP", "tcp": "TCP"}[proto]]
		if !ok || len(table.Rows) != len(rows) {
			t.Fatalf("%s: no table of its %d rows", proto, len(rows))
		}
		col := map[string]int{}
		for i, c := range table.Columns {
			if _, ok := col[c.Heading()]; !ok {
				col[c.Heading()] = i
			}
		}
		for i, row := range rows {
			if got := row.Messages + row.Lost + row.NotSent; got != messages {
				t.Errorf("%s %d B: %d answered + %d lost + %d not sent = %d, want %d", proto, row.Size, row.Messages, row.Lost, row.NotSent, got, messages)
			}
			switch {
			case row.NotSent == messages:
				none++
				if row.Lost != 0 || row.Send.N != 0 {
					t.Errorf("%s %d B: never sent, yet %d lost, %d sends measured", proto, row.Size, row.Lost, row.Send.N)
				}
			case row.NotSent > 0:
				partly++
			}
			cells := table.Rows[i]
			want := map[string]string{"msgs": fmt.Sprint(row.Messages), "lost": fmt.Sprint(row.Lost), "not sent": fmt.Sprint(row.NotSent),
				"rtt us": "-", "send mean": "-", "recv mean": "-"}
			if row.Messages > 0 {
				want["rtt us"] = fmt.Sprintf("%.1f", row.RTTMicros)
			}
			if row.Send.N > 0 {
				want["send mean"] = fmt.Sprintf("%.0f", row.Send.Mean)
			}
			if row.Receive.N > 0 {
				want["recv mean"] = fmt.Sprintf("%.0f", row.Receive.Mean)
			}
			for h, w := range want {
				if j, ok := col[h]; !ok || cells[j] != w {
					t.Errorf("%s %d B: the table's %q is %q, the section's %q", proto, row.Size, h, cells[min(j, len(cells)-1)], w)
				}
			}
		}
	}
	if partly != 1 || none == 0 {
		t.Errorf("%d sizes partly sent, %d not at all: want 1 and some", partly, none)
	}
	// Only measured sizes are drawn.
	for _, b := range res.Figures.Breakdowns {
		for _, p := range b.Points {
			if p.Latency == nil {
				t.Errorf("%s: %d B drawn, never measured", b.Label(), p.Size)
			}
		}
	}
}
