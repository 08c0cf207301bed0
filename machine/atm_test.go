package machine_test

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"simkron/card"
	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/report"
	"simkron/stack/apps/ttcp"
	"simkron/stack/apps/yesv2"
	"simkron/stack/apps/yesv2interleave"
)

// atmExperiment is a small ATM experiment: two DECstation 5000/25s on
// links into a switch, and a third on a loop-back cable.
const atmExperiment = `[experiment]
name = "atm"
stop_at = "2s"

[[atm_link]]
name = "a"
[[atm_link]]
name = "b"
[[atm_link]]
name = "lo"
loopback = true

[[atm_switch]]
name = "sw"
ports = ["a", "b"]
[[atm_switch.route]]
in = "a"
vc = "0/100"
out = "b"
out_vc = "0/200"
duplex = true

[[host]]
name = "ha"
machine = "ds.toml"
[[host.atm]]
device = "atm0"
link = "a"
ip = "10.1.0.1"
[[host.atm.vc]]
ip = "10.1.0.2"
vpi = 0
vci = 100

[[host]]
name = "hb"
machine = "ds.toml"
[[host.atm]]
device = "atm0"
link = "b"
ip = "10.1.0.2"
[[host.atm.vc]]
ip = "10.1.0.1"
vpi = 0
vci = 200

[[host]]
name = "hl"
machine = "ds.toml"
[[host.atm]]
device = "atm0"
link = "lo"
[host.atm.driver]
tx = "dma-b"

[workload]
type = "yesv2"
[workload.yesv2]
cycles = 2
warmup = 1
[[workload.yesv2.case]]
name = "loop"
host = "hl"
`

func dsMachine(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../configs/machines/ds5000-25.toml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestATMConfigLoadsAndRuns(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "ds.toml", dsMachine(t))
	exp, err := machine.LoadExperiment(write(t, dir, "e.toml", atmExperiment))
	if err != nil {
		t.Fatal(err)
	}
	// The card with the host's address carries IP at the driver's MTU.
	if got := machinetest.InetParams(exp.Hosts[0].Machine).MTU; got != 9180 {
		t.Errorf("IP MTU on the ATM card: %d, want the driver's 9180", got)
	}
	r, err := machine.New(exp, machine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := r.Hosts[0]
	if machinetest.Inet(h) == nil || len(machinetest.ATMCards(h)) != 1 || machinetest.ATMCards(h)[0].End == nil {
		t.Fatalf("host ha: inet %v, ATM cards %v", machinetest.Inet(h) != nil, machinetest.ATMCards(h))
	}
	// The workloads' view: the card is a card.Card of link type
	// LLC/SNAP, and the driver a component of its own.
	var asCard card.Card = machinetest.ATMCards(h)[0]
	if asCard.Link() != card.LLCSNAP {
		t.Errorf("the ATM card's link type is %q, not %q", asCard.Link(), card.LLCSNAP)
	}
	if got := machinetest.ATMCards(r.Hosts[2])[0].Driver.Params().Tx; got != "dma-b" {
		t.Errorf("[host.atm.driver] tx: the driver has %q", got)
	}
	if machinetest.ATMCards(r.Hosts[0])[0].Driver.Params().Tx != "pio" {
		t.Error("one host's override reached another's driver")
	}
	res, err := r.Execute(machine.Options{})
	if err != nil || !res.Complete {
		t.Fatalf("run: %v, %s", err, res.Incomplete)
	}
}

// Every mistake in the ATM tables is an error naming file, line and key.
func TestATMConfigErrors(t *testing.T) {
	tests := []struct {
		name     string
		machine  bool // edit the machine file instead
		old, new string
		want     string // substring of the error; LINE is replaced by the line of mark
		mark     string
	}{
		{name: "unknown link", old: `link = "a"`, new: `link = "x"`, mark: `link = "x"`, want: `e.toml:LINE: host[0].atm[0].link: atm link "x" is not defined`},
		{name: "port not a link", old: `ports = ["a", "b"]`, new: `ports = ["a", "c"]`, mark: `ports = ["a", "c"]`, want: `e.toml:LINE: atm_switch[0].ports[1]: atm link "c" is not defined`},
		{name: "loop-back as port", old: `ports = ["a", "b"]`, new: `ports = ["a", "b", "lo"]`, mark: `ports = ["a", "b", "lo"]`, want: `atm_switch[0].ports[2]: atm link "lo" is a loop-back cable`},
		{name: "port twice", old: `ports = ["a", "b"]`, new: `ports = ["a", "b", "a"]`, mark: `ports = ["a", "b", "a"]`, want: `atm_switch[0].ports[2]: the network end of atm link "a" is already a port`},
		{name: "route to no port", old: `out = "b"`, new: `out = "lo"`, mark: `out = "lo"`, want: `e.toml:LINE: atm_switch[0].route[0].out: atm link "lo" is not a port of switch "sw"`},
		{name: "route twice", old: "duplex = true", new: "duplex = true\n[[atm_switch.route]]\nin = \"b\"\nvc = \"0/200\"\nout = \"a\"", mark: `in = "b"`, want: `atm_switch[0].route[1].vc: VC 0/200 arriving on "b" is routed twice`},
		{name: "bad VC label", old: `vc = "0/100"`, new: `vc = "0-100"`, mark: `vc = "0-100"`, want: `e.toml:LINE: atm_switch[0].route[0].vc:`},
		{name: "host end twice", old: `link = "b"`, new: `link = "a"`, want: `host[1].atm[0].link: the host end of atm link "a" is already ha.atm0's`},
		{name: "not an ATM card", old: "device = \"atm0\"\nlink = \"a\"", new: "device = \"timer0\"\nlink = \"a\"", mark: `device = "timer0"`, want: `e.toml:LINE: host[0].atm[0].device: machine "ds5000-25" has no atmtaxi device "timer0"`},
		{name: "unknown driver key", old: `tx = "dma-b"`, new: `txx = "dma-b"`, mark: "txx", want: `e.toml:LINE: host[2].atm[0].driver.txx: unknown key`},
		{name: "assist not fitted", old: `tx = "dma-b"`, new: `crc_assist = true`, want: `host[2].atm[0]: device "atm0" of machine "ds5000-25": driver.crc_assist: the board has no AAL5 CRC assist fitted`},
		{name: "VC twice", old: "vci = 200", new: "vci = 200\n[[host.atm.vc]]\nip = \"10.1.0.3\"\nvpi = 0\nvci = 200", want: "host[1].atm[0].vc: with the machine file's driver.vc: vc[1].vci: VC 0/200 serves two neighbours"},
		{name: "address twice", old: `ip = "10.1.0.2"` + "\n[[host.atm.vc]]\nip = \"10.1.0.1\"", new: `ip = "10.1.0.1"` + "\n[[host.atm.vc]]\nip = \"10.1.0.1\"", want: `host[1].atm[0].ip: 10.1.0.1 is already ha.atm0's`},
		{name: "net faults on a loop-back", old: "loopback = true", new: "loopback = true\n[atm_link.net_faults]\ncell_loss = 0.1", want: `atm_link[2].net_faults: a loop-back cable has one end`},
		{name: "fault out of range", old: "name = \"b\"", new: "name = \"b\"\n[atm_link.faults]\ncell_loss = 2.0", mark: "cell_loss", want: `e.toml:LINE: atm_link[1].faults.cell_loss:`},
		{name: "loop-back case on no host", old: `host = "hl"`, new: `host = "hx"`, mark: `host = "hx"`, want: `e.toml:LINE: workload.yesv2.case[0].host: no [[host]] is called "hx"`},
		{name: "PDUs and ACKs on one VC", old: "warmup = 1", new: "warmup = 1\npdu_vci = 101", want: "workload.yesv2.ack_vci: 101 is pdu_vci too"},
		{name: "two cases on one host", old: `host = "hl"`, new: "host = \"hl\"\n[[workload.yesv2.case]]\nname = \"x\"\nhost = \"hl\"", want: `workload.yesv2.case[1].host: host "hl" runs another case already`},
		{name: "interleave VCIs", old: `host = "hl"`, new: "host = \"hl\"\n[[workload.yesv2-interleave.case]]\nname = \"x\"\nreceiver = \"ha\"\nsenders = [\"hb\"]\nsend_vci = 100\nrecv_vcis = [100, 101]", want: "workload.yesv2-interleave.case[0].recv_vcis: 2 VCIs for 1 senders: one each"},
		{name: "driver DMA longer than the board's", machine: true, old: "# bytes (mode A) in one transfer.\ndma_max_bytes = \"2KiB\"", new: "# bytes (mode A) in one transfer.\ndma_max_bytes = \"1KiB\"", want: `device[1].driver.dma_max_bytes: 2KiB is longer than the board's DMA limit, params.dma_max_bytes = 1KiB`},
		{name: "sorter not fitted", machine: true, old: `rx = "pio"`, new: `rx = "sort"`, mark: `rx = "sort"`, want: `ds.toml:LINE: device[1].driver.rx: "sort" needs the board's VCI sorter`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			m, e := dsMachine(t), atmExperiment
			if tc.machine {
				m = edit(t, m, tc.old, tc.new)
			} else {
				e = edit(t, e, tc.old, tc.new)
			}
			want := tc.want
			if tc.mark != "" {
				text := e
				if tc.machine {
					text = m
				}
				want = strings.Replace(want, "LINE", strconv.Itoa(lineOf(text, tc.mark)), 1)
			}
			write(t, dir, "ds.toml", m)
			_, err := machine.LoadExperiment(write(t, dir, "e.toml", e))
			if err == nil {
				t.Fatalf("no error; want one containing %q", want)
			}
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error:\n%v\nwant it to contain %q", err, want)
			}
		})
	}
}

// runConfig runs one of configs/*.toml.
func runConfig(t testing.TB, name string) (*machine.Run, *report.Result) {
	t.Helper()
	exp, err := machine.LoadExperiment(filepath.Join("../configs", name))
	if err != nil {
		t.Fatal(err)
	}
	r, err := machine.New(exp, machine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute(machine.Options{})
	if err != nil || !res.Complete {
		t.Fatalf("%s: %v %s", name, err, res.Incomplete)
	}
	for _, h := range res.Hosts {
		if h.GuestErrors != 0 {
			t.Errorf("%s: %d guest errors: %v", h.Name, h.GuestErrors, h.GuestLog)
		}
	}
	return r, res
}

// The loop-back table against the seed's calibration figures
// (docs/reference/atm-taxi.md sec. 5): the PIO rates, derived as the seed
// derives them, within 5%, the DMA transfer rates within 10%; and the
// assists as the seed predicts them: the CRC assist and header insertion
// raise the transmit rate, the CRC assist the receive rate, and the VCI
// sorter more than doubles the receive rate of interleaved PDUs.
func TestATMYesV2Config(t *testing.T) {
	_, res := runConfig(t, "atm-yesv2.toml")
	rows := map[string]yesv2.Row{}
	for _, r := range section[[]yesv2.Row](res, "yesv2") {
		rows[r.Host] = r
	}
	near := func(what string, got, want, tol float64) {
		t.Helper()
		if got < want*(1-tol) || got > want*(1+tol) {
			t.Errorf("%s: %.1f Mbit/s, the seed measured %.0f", what, got, want)
		}
	}
	near("Ultrix PIO transmit", rows["ultrix-pio"].TxMbps, 28, 0.05)
	near("Ultrix PIO receive", rows["ultrix-pio"].RxMbps, 16, 0.05)
	near("Wanda PIO transmit", rows["wanda-pio"].TxMbps, 46, 0.05)
	near("Wanda PIO receive", rows["wanda-pio"].RxMbps, 19, 0.05)
	near("Ultrix DMA memory to FIFO (multi-cell)", rows["ultrix-dma"].DMATxMbps, 128, 0.1)
	near("Wanda DMA memory to FIFO (per cell)", rows["wanda-dma"].DMATxMbps, 125, 0.1)
	near("Wanda DMA FIFO to memory", rows["wanda-dma"].DMARxMbps, 67, 0.1)
	for host, r := range rows {
		if r.SeqErrors+r.Overruns+r.BadCRC != 0 {
			t.Errorf("%s: drops %+v", host, r)
		}
		if sum := r.SendUS + r.LineUS + r.ReceiveUS + r.AckUS; sum < r.CycleUS*0.999 || sum > r.CycleUS*1.001 {
			t.Errorf("%s: stages sum to %.1f us, the cycle is %.1f", host, sum, r.CycleUS)
		}
		// The FIFO intervals lie inside their stages (the VCI sorter takes
		// cells into memory as they arrive, during the send), and with
		// the overhead they make up the cycle.
		if r.TxFIFOUS <= 0 || r.TxFIFOUS > r.SendUS+r.LineUS || r.RxFIFOUS <= 0 || r.RxFIFOUS > r.SendUS+r.LineUS+r.ReceiveUS ||
			math.Abs(r.TxFIFOUS+r.RxFIFOUS+r.OverheadUS-r.CycleUS) > 0.001*r.CycleUS {
			t.Errorf("%s: T %.1f, R %.1f, O %.1f us of a %.1f us cycle (A %.1f, B %.1f, C %.1f)", host, r.TxFIFOUS, r.RxFIFOUS, r.OverheadUS, r.CycleUS, r.SendUS, r.LineUS, r.ReceiveUS)
		}
	}
	sw, crc, ins := rows["wanda-aal5"], rows["wanda-crc"], rows["wanda-insert"]
	if !(sw.TxMbps < crc.TxMbps && crc.TxMbps < ins.TxMbps && sw.RxMbps < crc.RxMbps) {
		t.Errorf("assists: tx software CRC %.1f, CRC assist %.1f, with insertion %.1f; rx %.1f, %.1f", sw.TxMbps, crc.TxMbps, ins.TxMbps, sw.RxMbps, crc.RxMbps)
	}
	il := map[string]yesv2interleave.Row{}
	for _, r := range section[[]yesv2interleave.Row](res, "yesv2_interleave") {
		il[r.Case] = r
	}
	soft, sorted := il["two senders, software reassembly"], il["two senders, VCI sort"]
	if soft.RxMbps == 0 || sorted.RxMbps < 2*soft.RxMbps {
		t.Errorf("interleaved receive: sorted %.1f Mbit/s, software %.1f", sorted.RxMbps, soft.RxMbps)
	}
}

// ttcp runs over the ATM cards unchanged: the stream arrives whole
// through the switch, in segments of the MTU the experiment sets.
func TestATMTTCP(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "ds.toml", dsMachine(t))
	// MTU 1500: 32-cell PDUs, which the receive FIFO holds whole until
	// the header-flag interrupt.
	e := strings.NewReplacer(`ip = "10.1.0.1"`+"\n[[", `ip = "10.1.0.1"`+"\nmtu = 1500\n[[", `ip = "10.1.0.2"`+"\n[[", `ip = "10.1.0.2"`+"\nmtu = 1500\n[[").Replace(
		atmExperiment[:strings.Index(atmExperiment, "[workload]")]) + `[workload]
type = "ttcp"
[workload.ttcp]
transmitter = "ha"
receiver = "hb"
[[workload.ttcp.case]]
name = "atm"
writes = 16
size = 8192
`
	exp, err := machine.LoadExperiment(write(t, dir, "e.toml", e))
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
	runs := section[[]ttcp.Result](res, "ttcp")
	if len(runs) != 1 || runs[0].Bytes != 16*8192 || runs[0].Corrupt != 0 || runs[0].MSS != 1460 {
		t.Errorf("ttcp over ATM: %+v", runs)
	}
}
