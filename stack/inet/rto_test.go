package inet_test

import (
	"testing"

	"simkron/internal/machinetest"
	"simkron/machine"
)

// A lossless path never times out: 16 writes of 32 KiB over classical IP
// between two DECstations whose ATM cards sort VCIs (a fast receive, so
// round trips are short and the RTO sits at its floor) once had one
// retransmission timeout, the RTO of max(SRTT + 4 RTTVAR, 200 ms) racing
// the receiver's 200 ms delayed ACK. With SRTT + max(4 RTTVAR, 200 ms),
// as Linux bounds it, the delayed ACK always comes first.
func TestNoSpuriousRTO(t *testing.T) {
	b := machinetest.Edit(t, machinetest.Config("atm-ip.toml"))
	for i := range 2 {
		h := "host[" + string(rune('0'+i)) + "]"
		// Unpaced VCs, and cards with every assist, the VCI sorter
		// receiving.
		b.Delete(h+".atm[0].vc[0].pcr").
			Set(h+".atm[0].params", map[string]any{"header_insertion": true, "aal5_crc": true, "vci_sort": true}).
			Set(h+".atm[0].driver", map[string]any{"tx": "pio", "rx": "sort", "header_insertion": true, "crc_assist": true})
	}
	b.Set("workload", map[string]any{"type": "ttcp", "ttcp": map[string]any{
		"transmitter": "dsA", "receiver": "dsB",
		"case": []map[string]any{{"name": "32k", "writes": 16, "size": 32768, "sndbuf": "32KiB", "rcvbuf": "32KiB", "nodelay": true}},
	}})
	r, err := machine.New(b.Experiment(), machine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute(machine.Options{})
	if err != nil || !res.Complete {
		t.Fatalf("run: %v %s", err, res.Incomplete)
	}
	for _, h := range r.Hosts {
		d := machinetest.ATMCards(h)[0].Driver.Stats()
		if d.Overruns+d.RxBroken+d.RxBadCRC+d.RxBadLength != 0 {
			t.Fatalf("%s: the path lost cells: %+v", h.Name, d)
		}
		if st := machinetest.Inet(h).Stats(); st.TCPTimeouts != 0 || st.TCPRetransSegs != 0 {
			t.Errorf("%s: %d retransmission timeouts, %d segments resent on a lossless path", h.Name, st.TCPTimeouts, st.TCPRetransSegs)
		}
	}
}
