package machine_test

import (
	"os"
	"path/filepath"
	"strings"
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
	b, err := os.ReadFile("../configs/atm-ip.toml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	text = text[:strings.Index(text, "[workload]")] + `[workload]
type = "ttcp"
[workload.ttcp]
transmitter = "dsA"
receiver = "dsB"
[[workload.ttcp.case]]
name = "32k"
writes = 16
size = 32768
sndbuf = "32KiB"
rcvbuf = "32KiB"
nodelay = true
`
	text = strings.ReplaceAll(text, "pcr = 30000\n", "")
	text = strings.ReplaceAll(text, "[host.atm.driver]\nrx_interrupt = \"cell\"\n",
		"[host.atm.params]\nheader_insertion = true\naal5_crc = true\nvci_sort = true\n[host.atm.driver]\ntx = \"pio\"\nrx = \"sort\"\nheader_insertion = true\ncrc_assist = true\n")
	abs, err := filepath.Abs("../configs/machines")
	if err != nil {
		t.Fatal(err)
	}
	text = strings.ReplaceAll(text, `machine = "machines/`, `machine = "`+abs+`/`)
	p := filepath.Join(t.TempDir(), "rto.toml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	exp, err := machine.LoadExperiment(p)
	if err != nil {
		t.Fatal(err)
	}
	r, err := machine.New(exp, machine.Options{})
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
