package machine_test

// End-to-end tests of the NE2000 path: a program's frame goes through the
// sender's system call, driver and card, over the simulated Ethernet, into
// the receiver's card, ring, driver, device layer and program. Each test
// builds its experiment in Go from configs/ne2000-mac.toml and checks
// counters at every layer against one another, so a frame lost or damaged
// anywhere shows up as an inequality.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gopacket/gopacket/pcapgo"

	"simkron/devices/ne2000"
	"simkron/ethersim"
	"simkron/internal/machinetest"
	"simkron/internal/testtool"
	"simkron/machine"
	"simkron/machine/parts/ethernet"
	"simkron/report"
	"simkron/sim"
	macbench "simkron/stack/apps/mac"
	drvne2000 "simkron/stack/driver/ne2000"
	"simkron/stack/netdev"
)

const (
	macConfig      = "../configs/ne2000-mac.toml"
	loopbackConfig = "../configs/ne2000-loopback.toml"
)

// loadMac loads the two-host MAC experiment (pcA sends to pcB on lan0)
// with the given sizes and frames per size. The receiver gives up after
// 50 ms without a frame: longer than the 20 ms gap between sizes, so a
// run that loses frames still ends soon after its last one.
func loadMac(t testing.TB, sizes []int, frames int) *machine.Experiment {
	t.Helper()
	exp, err := machine.LoadExperiment(macConfig)
	if err != nil {
		t.Fatal(err)
	}
	macParams(exp).Sizes = sizes
	macParams(exp).Frames = frames
	macParams(exp).Timeout = 50 * sim.Millisecond
	return exp
}

// ownMachine gives host i a machine description of its own, so that
// changing its buses or devices leaves the other hosts alone.
func ownMachine(exp *machine.Experiment, i int) *machine.Spec {
	m := machinetest.Clone(exp.Hosts[i].Machine)
	exp.Hosts[i].Machine = m
	return m
}

// nicDriver returns a private copy of the driver parameters of host i's
// nic0, to be changed before the run is built.
func nicDriver(t testing.TB, exp *machine.Experiment, i int) *drvne2000.Params {
	t.Helper()
	m := ownMachine(exp, i)
	for k := range m.Devices {
		if m.Devices[k].Name == "nic0" {
			p := *m.Devices[k].Driver.(*drvne2000.Params)
			m.Devices[k].Driver = &p
			return &p
		}
	}
	t.Fatalf("host %s has no nic0", exp.Hosts[i].Name)
	return nil
}

// addHost plugs one more 486 (pcA's machine) into lan0 with the address
// 02:00:00:00:00:<last> and returns its index.
func addHost(exp *machine.Experiment, name string, last byte) int {
	hs := exp.Hosts[0]
	hs.Name = name
	hs.Bindings = map[string]any{ethernet.Name: &ethernet.Bindings{NICs: []ethernet.NICSpec{{
		Device:  "nic0",
		Segment: "lan0",
		MAC:     ethersim.MAC{2, 0, 0, 0, 0, last},
		IP:      ethersim.IP4{10, 0, 0, last},
	}}}}
	exp.Hosts = append(exp.Hosts, hs)
	ownMachine(exp, len(exp.Hosts)-1)
	return len(exp.Hosts) - 1
}

// benchHost is what macbench needs of a host built by machine.New (the
// run's own helper for this is unexported).
func benchHost(h *machine.Host) *macbench.Endpoint {
	n := machinetest.NICs(h)[0]
	return &macbench.Endpoint{
		Name: h.Name, Kernel: machinetest.Kernel(h), Net: machinetest.Net(h), Dev: n.Queue(), MAC: [6]byte(n.Spec.MAC), TxTime: n.TxTime,
	}
}

// startBench starts a MAC workload from tx to rx next to whatever the run
// already does; it must be called after machine.New and before Execute.
func startBench(t testing.TB, r *machine.Run, p macbench.Params, tx, rx string) *macbench.Bench {
	t.Helper()
	txh := machinetest.Host(t, r, tx)
	p.Sender, p.Receiver = tx, rx
	b, err := macbench.New(p, benchHost(txh), benchHost(machinetest.Host(t, r, rx)), machinetest.NICs(txh)[0].Port.Segment().Params().Rate)
	if err != nil {
		t.Fatal(err)
	}
	b.Start()
	return b
}

func lan0(t testing.TB, r *machine.Run) *ethersim.Segment {
	t.Helper()
	seg, ok := machinetest.Ethernet(r.Net).Segment("lan0")
	if !ok {
		t.Fatal("no segment lan0")
	}
	return seg
}

// ringState reads, after a run, how many receive-ring pages hold frames
// the driver has not taken yet (from BNRY+1 up to CURR) and the pending
// CRC and missed-frame tallies. It selects register pages through CR, so
// it changes the card: only call it once the simulation is over.
func ringState(card *ne2000.NE2000) (unreadPages int, cntr1, cntr2 uint64) {
	const cmd = ne2000.CrSTA | ne2000.RDAbort
	card.Write(ne2000.RegCR, 1, cmd|ne2000.CrPS1) // page 2
	pstart := int(card.Read(ne2000.P2PSTART, 1))
	pstop := int(card.Read(ne2000.P2PSTOP, 1))
	card.Write(ne2000.RegCR, 1, cmd|ne2000.CrPS0) // page 1
	curr := int(card.Read(ne2000.P1CURR, 1))
	card.Write(ne2000.RegCR, 1, cmd) // page 0
	next := int(card.Read(ne2000.P0BNRY, 1)) + 1
	if next >= pstop {
		next = pstart
	}
	cntr1 = card.Read(ne2000.P0CNTR1, 1)
	cntr2 = card.Read(ne2000.P0CNTR2, 1)
	ring := pstop - pstart
	return (curr - next + ring) % ring, cntr1, cntr2
}

func payloadByte(i int) byte { return byte(i*13 + i>>8) }

// TestMacDeliversEveryByte sends frames of several sizes from pcA to pcB:
// 46 bytes of payload make the smallest legal frame (60 bytes, 64 with the
// FCS, so the card has nothing to pad), 1500 the largest. The receiving
// program compares every payload byte; in addition a third, promiscuous
// host on the segment hands every frame to a handler of this test, which
// reads the frame out of that host's simulated memory (where the driver's
// remote-DMA read put it) and checks all of it, headers included.
func TestMacDeliversEveryByte(t *testing.T) {
	sizes := []int{46, 47, 100, 1024, 1500}
	const frames = 20
	exp := loadMac(t, sizes, frames)
	spy := addHost(exp, "pcS", 0x5)
	nicDriver(t, exp, spy).Promiscuous = true
	r := machinetest.Build(t, exp, machine.Options{})

	a, b, s := machinetest.Host(t, r, "pcA"), machinetest.Host(t, r, "pcB"), machinetest.Host(t, r, "pcS")
	var seen []string // one line per problem
	var got []int     // payload sizes in arrival order
	next := 0         // expected sequence number within the size
	err := machinetest.Net(s).Register(macbench.EtherType, func(f netdev.Buf) {
		buf := make([]byte, f.Len)
		s.Sys.Phys.Read(f.Addr, buf) // looking, not charged
		machinetest.Kernel(s).Kfree(f.Addr)
		if len(buf) < 22 {
			seen = append(seen, "short frame")
			return
		}
		si := int(binary.BigEndian.Uint32(buf[14:18]))
		seq := int(binary.BigEndian.Uint32(buf[18:22]))
		if si >= len(sizes) {
			seen = append(seen, "bad size index")
			return
		}
		want := make([]byte, 14+sizes[si])
		copy(want[0:6], machinetest.NICs(b)[0].Spec.MAC[:])
		copy(want[6:12], machinetest.NICs(a)[0].Spec.MAC[:])
		binary.BigEndian.PutUint16(want[12:14], macbench.EtherType)
		binary.BigEndian.PutUint32(want[14:18], uint32(si))
		binary.BigEndian.PutUint32(want[18:22], uint32(seq))
		for i := 8; i < sizes[si]; i++ {
			want[14+i] = payloadByte(i)
		}
		if seq != next%frames {
			seen = append(seen, "out of order")
		}
		next++
		if !bytes.Equal(buf, want) {
			seen = append(seen, cmp.Diff(want, buf))
		}
		got = append(got, sizes[si])
	})
	if err != nil {
		t.Fatal(err)
	}
	res := machinetest.Execute(t, r)
	// The run stops when pcB's program has its last frame; pcS saw the
	// same bits at the same instant but may still be in its interrupt
	// handler: let it finish.
	r.Sched.RunUntil(r.Sched.Now() + 10*sim.Millisecond)

	for _, row := range macRows(res) {
		if row.Sent != frames || row.Received != frames || row.Corrupt != 0 || row.FrameBytes != 14+row.Size+4 {
			t.Errorf("size %d: sent %d received %d corrupt %d frame bytes %d; want %d, %d, 0, %d",
				row.Size, row.Sent, row.Received, row.Corrupt, row.FrameBytes, frames, frames, 14+row.Size+4)
		}
	}
	if len(macRows(res)) != len(sizes) {
		t.Fatalf("%d rows, want %d", len(macRows(res)), len(sizes))
	}
	if len(seen) > 0 {
		t.Errorf("observer found %d bad frames, first: %s", len(seen), seen[0])
	}
	var want []int
	for _, sz := range sizes {
		for range frames {
			want = append(want, sz)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("frames seen by the observer (-want +got):\n%s", diff)
	}
	// Every frame on the wire is max(64, 18+payload) bytes with its FCS.
	var wireBytes uint64
	for _, sz := range sizes {
		wireBytes += uint64(frames * max(ethersim.MinFrame, 14+sz+4))
	}
	st := lan0(t, r).Stats()
	if st.Frames != uint64(len(want)) || st.Bytes != wireBytes || st.Collisions != 0 {
		t.Errorf("lan0: %d frames, %d bytes, %d collisions; want %d, %d, 0", st.Frames, st.Bytes, st.Collisions, len(want), wireBytes)
	}
}

// TestMacFCSCatchesCorruption flips one bit in 20% of the frames reaching
// pcB. CRC-32 detects every single-bit error (IEEE 802.3 clause 3.2.9), so
// no damaged frame may reach the program: each is either refused by the
// address filter (the bit was in the destination address) or counted as a
// CRC error and dropped (RCR.SEP is clear), and the program receives
// exactly the others, all intact.
func TestMacFCSCatchesCorruption(t *testing.T) {
	// 2 x 400 frames: about 160 corrupted, beyond the 128 at which the
	// CRC tally's MSB raises ISR.CNT and the driver reads it.
	sizes := []int{46, 1500}
	const frames = 400
	exp := loadMac(t, sizes, frames)
	machinetest.NICSpecs(&exp.Hosts[1])[0].Faults.Corrupt = 0.2
	r := machinetest.Build(t, exp, machine.Options{})
	res := machinetest.Execute(t, r)

	nic := machinetest.NICs(machinetest.Host(t, r, "pcB"))[0]
	port, card, drv := nic.Port.Stats(), ne2k(nic).Stats(), ne2kDriver(nic).Stats()
	unread, cntr1, cntr2 := ringState(ne2k(nic))
	t.Logf("wire corrupted %d, card crc %d filtered %d, driver crc %d, tally pending %d", port.Corrupted, card.CRCErrors, card.RxFiltered, drv.CRCErrors, cntr1)

	sent, received := 0, 0
	for _, row := range macRows(res) {
		sent += row.Sent
		received += row.Received
		if row.Corrupt != 0 {
			t.Errorf("size %d: %d corrupt frames reached the program", row.Size, row.Corrupt)
		}
	}
	// 800 draws at p = 0.2: mean 160, sd 11.3; outside [100, 220] is
	// more than 5 sd away.
	if port.Corrupted < 100 || port.Corrupted > 220 {
		t.Errorf("wire corrupted %d frames of %d; want about 160", port.Corrupted, sent)
	}
	if card.CRCErrors+card.RxFiltered != port.Corrupted {
		t.Errorf("card: %d CRC errors + %d filtered, want the %d frames the wire corrupted", card.CRCErrors, card.RxFiltered, port.Corrupted)
	}
	if card.CRCErrors < 128 {
		t.Errorf("card: %d CRC errors, the test needs at least 128 to see the driver read the tally", card.CRCErrors)
	}
	// The driver reads CNTR1 when its MSB is set; what it has not read
	// yet is still in the counter.
	if drv.CRCErrors == 0 || drv.CRCErrors+cntr1 != card.CRCErrors {
		t.Errorf("driver CRC errors %d + pending tally %d, want card's %d (and the driver to have read some)", drv.CRCErrors, cntr1, card.CRCErrors)
	}
	// The receiver keeps up with one frame at a time: nothing is missed
	// and nothing is left in the ring.
	if card.Missed != 0 || cntr2 != 0 || card.RxErrored != 0 || drv.RxErrors != 0 || unread != 0 {
		t.Errorf("card missed %d (tally %d), stored errored %d, driver rx errors %d, ring pages unread %d; want 0", card.Missed, cntr2, card.RxErrored, drv.RxErrors, unread)
	}
	if want := sent - int(port.Corrupted); received != want || card.RxFrames != uint64(want) || drv.RxFrames != uint64(want) {
		t.Errorf("received %d (card %d, driver %d), want sent %d - corrupted %d = %d", received, card.RxFrames, drv.RxFrames, sent, port.Corrupted, want)
	}
}

// TestMacOverflowRecovers floods pcB with minimum-size frames while its
// ISA bus is three times slower (3 us a cycle) and pcA loads the next
// frame while one is on the wire (two transmit slots): pcB cannot empty
// its ring as fast as it fills, the ring overflows, and the driver's
// recovery (stop, wait, drain, restart) must bring reception back each
// time. Every frame pcA sent is then accounted for, layer by layer.
func TestMacOverflowRecovers(t *testing.T) {
	const frames = 1000
	exp := loadMac(t, []int{46}, frames)
	machinetest.NoWorkload(exp)
	ownMachine(exp, 1).Buses[0].AccessTime = 3 * sim.Microsecond
	nicDriver(t, exp, 0).TxBuffers = 2
	r := machinetest.Build(t, exp, machine.Options{})
	p := *macParams(exp)
	bench := startBench(t, r, p, "pcA", "pcB")
	b := machinetest.Host(t, r, "pcB")
	nic := machinetest.NICs(b)[0]
	// Run up to the first overflow, note what the driver had read, then
	// let Execute run the rest.
	r.Sched.RunWhile(func() bool { return ne2k(nic).Stats().Overflows == 0 && r.Sched.Next() < sim.Second })
	if ne2k(nic).Stats().Overflows == 0 {
		t.Fatal("no overflow in the first second")
	}
	readBefore := ne2kDriver(nic).Stats().RxFrames
	res := machinetest.Execute(t, r)

	row := bench.Rows()[0]
	card, drv, port, ns := ne2k(nic).Stats(), ne2kDriver(nic).Stats(), nic.Port.Stats(), machinetest.Net(b).Stats()
	unread, _, cntr2 := ringState(ne2k(nic))
	t.Logf("sent %d received %d; card stored %d missed %d offline %d overflows %d; driver %d overruns %d; ring unread %d; socket drops %d",
		row.Sent, row.Received, card.RxFrames, card.Missed, card.RxOffline, card.Overflows, drv.RxFrames, drv.Overruns, unread, bench.SocketDrops())

	if card.Overflows == 0 || drv.Overruns != card.Overflows {
		t.Errorf("card overflows %d, driver overruns %d: want equal and > 0 (the card stays wedged until the driver stops it)", card.Overflows, drv.Overruns)
	}
	// A 64-byte frame takes one 256-byte page and the ring (pages 0x4C to
	// 0x7F) holds at most 51 of them: reading many times that after the
	// first overflow, and overflowing again, shows reception resumed.
	const ringFrames = 0x80 - 0x4C - 1
	after := drv.RxFrames - readBefore
	t.Logf("first overflow after %d frames read; %d read after it", readBefore, after)
	if card.Overflows < 2 || after < 4*ringFrames || row.Received < 4*ringFrames {
		t.Errorf("%d overflows, %d frames read after the first, %d received: want reception to resume (>= 2 overflows, >= %d frames)",
			card.Overflows, after, row.Received, 4*ringFrames)
	}
	if res.Hosts[0].GuestErrors != 0 || res.Hosts[1].GuestErrors != 0 || drv.RxErrors != 0 || row.Corrupt != 0 {
		t.Errorf("guest errors %d/%d, driver rx errors %d, corrupt %d; want 0", res.Hosts[0].GuestErrors, res.Hosts[1].GuestErrors, drv.RxErrors, row.Corrupt)
	}
	// Accounting, from the wire up:
	//   sent = arrived at the port (no faults configured)
	//        = stored in the ring + missed (ring full or wedged) + offline
	//          (arrived while the driver had the chip stopped or in loopback)
	//   stored = read by the driver + still in the ring at the end (the
	//          driver takes at most ten frames per interrupt, as Linux's
	//          ei_receive, so the last ones wait for a next frame)
	//   read by the driver = passed up by the device layer (no backlog drop)
	//   passed up = received by the program + dropped at its socket
	type acct struct{ Sent, Arrived, Stored, Read, Up, Received uint64 }
	got := acct{
		Sent:     uint64(row.Sent),
		Arrived:  port.RxFrames,
		Stored:   card.RxFrames + card.Missed + card.RxOffline,
		Read:     drv.RxFrames + uint64(unread) + card.Missed + card.RxOffline,
		Up:       ns.RxFrames + ns.RxDropped + uint64(unread) + card.Missed + card.RxOffline,
		Received: uint64(row.Received) + bench.SocketDrops() + ns.RxDropped + uint64(unread) + card.Missed + card.RxOffline,
	}
	want := acct{frames, frames, frames, frames, frames, frames}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("frames accounted at each layer (-want +got):\n%s", diff)
	}
	if drv.Missed+cntr2 != card.Missed {
		t.Errorf("driver missed %d + pending tally %d, want card's %d", drv.Missed, cntr2, card.Missed)
	}
	if card.CRCErrors != 0 || card.RxFiltered != 0 || card.RxRunts != 0 {
		t.Errorf("card: crc %d filtered %d runts %d, want 0", card.CRCErrors, card.RxFiltered, card.RxRunts)
	}
}

// collisionRun builds three hosts on lan0 that each send and receive: the
// run's own MAC workload pcA -> pcB and two more started by hand, pcC ->
// pcA and pcB -> pcC (a host's device layer takes one handler per
// EtherType, so no host can receive two of them). With one transmit slot
// each sender loads a frame while others are on the wire; when two of them
// finish loading during the same transmission, both defer and start
// together after the inter-frame gap: a collision.
func collisionRun(t testing.TB, seed uint64) (res []byte, trace []ethersim.TraceRecord, r *machine.Run, benches []*macbench.Bench) {
	t.Helper()
	exp := loadMac(t, []int{1500}, 100)
	// A frame that keeps colliding backs off up to 1023 slot times
	// (52 ms) an attempt, for up to 16 attempts, while the other two
	// senders win the medium (the capture effect): the receivers must
	// wait longer than that before they give up.
	macParams(exp).Timeout = sim.Second
	addHost(exp, "pcC", 0xc)
	machinetest.Segments(exp)[0].Pcap = false
	r = machinetest.Build(t, exp, machine.Options{Seed: &seed})
	lan0(t, r).Trace.Connect(func(tr ethersim.TraceRecord) {
		if tr.Kind == ethersim.TraceCollision || tr.Kind == ethersim.TraceBackoff || tr.Kind == ethersim.TraceAbort {
			trace = append(trace, tr)
		}
	})
	p := *macParams(exp)
	benches = []*macbench.Bench{startBench(t, r, p, "pcC", "pcA"), startBench(t, r, p, "pcB", "pcC")}
	result := machinetest.Execute(t, r)
	var buf bytes.Buffer
	if err := result.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	rows := [][]macbench.Row{macRows(result)}
	for _, b := range benches {
		rows = append(rows, b.Rows())
	}
	js, err := json.Marshal(rows)
	if err != nil {
		t.Fatal(err)
	}
	buf.Write(js)
	return buf.Bytes(), trace, r, benches
}

// TestMacCollisions runs three senders on one shared segment: collisions
// must happen, every frame must be delivered intact or given up after the
// attempt limit, and the run must depend on its seed and nothing else.
func TestMacCollisions(t *testing.T) {
	js1, trace1, r, benches := collisionRun(t, 1)
	seg := lan0(t, r).Stats()

	var sent, aborted, collisions uint64
	for _, h := range r.Hosts {
		ps := machinetest.NICs(h)[0].Port.Stats()
		ds := ne2kDriver(machinetest.NICs(h)[0]).Stats()
		t.Logf("%s: sent %d, collisions %d, deferrals %d, aborts %d", h.Name, ps.TxFrames, ps.Collisions, ps.Deferrals, ps.Aborts)
		sent += ps.TxFrames
		aborted += ps.Aborts
		collisions += ps.Collisions
		if ds.TxErrors != ps.Aborts {
			t.Errorf("%s: driver tx errors %d, want the %d frames the wire gave up", h.Name, ds.TxErrors, ps.Aborts)
		}
		if cs := ne2k(machinetest.NICs(h)[0]).Stats(); cs.Missed != 0 || cs.Overflows != 0 {
			t.Errorf("%s: card missed %d, overflows %d; want 0", h.Name, cs.Missed, cs.Overflows)
		}
	}
	t.Logf("lan0: %d frames, %d collisions", seg.Frames, seg.Collisions)
	if seg.Collisions == 0 {
		t.Fatal("no collisions on lan0")
	}
	// The segment counts attempts that ended in a collision, one per
	// station involved, as the stations do.
	if collisions != seg.Collisions {
		t.Errorf("stations counted %d collisions, the segment %d", collisions, seg.Collisions)
	}
	if seg.Frames != sent {
		t.Errorf("lan0 carried %d frames, stations sent %d", seg.Frames, sent)
	}
	// Each bench: what was sent arrived intact, unless given up.
	senders := []string{"pcA", "pcC", "pcB"}
	rows := [][]macbench.Row{}
	for _, b := range benches {
		rows = append(rows, b.Rows())
	}
	var res report.Result
	if err := json.NewDecoder(bytes.NewReader(js1)).Decode(&res); err != nil {
		t.Fatal(err)
	}
	rows = append([][]macbench.Row{macRows(&res)}, rows...)
	for i, rs := range rows {
		row := rs[0]
		ab := machinetest.NICs(machinetest.Host(t, r, senders[i]))[0].Port.Stats().Aborts
		if row.Corrupt != 0 || uint64(row.Received)+ab != uint64(row.Sent) || row.Sent != 100 {
			t.Errorf("%s: sent %d received %d corrupt %d aborted %d; want 100 = received + aborted, 0 corrupt", senders[i], row.Sent, row.Received, row.Corrupt, ab)
		}
	}

	js2, trace2, _, _ := collisionRun(t, 1)
	if !bytes.Equal(js1, js2) {
		t.Error("two runs with seed 1 differ")
	}
	if diff := cmp.Diff(trace1, trace2); diff != "" {
		t.Errorf("collision traces of two runs with seed 1 differ:\n%s", diff)
	}
	_, trace3, _, _ := collisionRun(t, 2)
	if cmp.Equal(trace1, trace3) {
		t.Error("seeds 1 and 2 gave the same collision trace: the backoff draws do not depend on the seed")
	}
}

// TestMacAddressFilter puts two more hosts on lan0 while pcA sends to pcB:
// pcC's card must refuse every frame in its address filter, so its driver
// never sees one (and its interrupt line stays quiet), while pcS, whose
// driver sets RCR.PRO, takes them all.
func TestMacAddressFilter(t *testing.T) {
	exp := loadMac(t, []int{46, 1500}, 50)
	addHost(exp, "pcC", 0xc)
	spy := addHost(exp, "pcS", 0x5)
	nicDriver(t, exp, spy).Promiscuous = true
	r := machinetest.Build(t, exp, machine.Options{})
	res := machinetest.Execute(t, r)
	r.Sched.RunUntil(r.Sched.Now() + 10*sim.Millisecond) // let pcS finish the last frame

	sent := uint64(0)
	for _, row := range macRows(res) {
		sent += uint64(row.Sent)
		if row.Received != row.Sent || row.Corrupt != 0 {
			t.Errorf("size %d: sent %d received %d corrupt %d", row.Size, row.Sent, row.Received, row.Corrupt)
		}
	}
	type view struct{ Arrived, Filtered, Stored, DriverRx, Interrupts, Unknown uint64 }
	look := func(name string) view {
		h := machinetest.Host(t, r, name)
		n := machinetest.NICs(h)[0]
		c := ne2k(n).Stats()
		return view{n.Port.Stats().RxFrames, c.RxFiltered, c.RxFrames, ne2kDriver(n).Stats().RxFrames, c.Interrupts, machinetest.Net(h).Stats().RxUnknown}
	}
	// pcC: nothing gets past the filter, so no receive interrupt either
	// (its driver has nothing to transmit).
	if diff := cmp.Diff(view{sent, sent, 0, 0, 0, 0}, look("pcC")); diff != "" {
		t.Errorf("pcC (-want +got):\n%s", diff)
	}
	// pcS: everything is stored and passed up; nobody there handles
	// EtherType 0x88B5, so the device layer counts each as unknown.
	s := look("pcS")
	if s.Arrived != sent || s.Filtered != 0 || s.Stored != sent || s.DriverRx != sent || s.Unknown != sent {
		t.Errorf("pcS: %+v; want every one of %d frames stored, read and unknown", s, sent)
	}
}

// TestMacPcap checks the segment's capture against the traffic: one
// record per frame, in strictly increasing simulated time, each the frame
// pcA sent (padding included, FCS not). If tshark is installed it must
// find nothing malformed.
func TestMacPcap(t *testing.T) {
	sizes := []int{46, 128, 1500}
	const frames = 5
	exp := loadMac(t, sizes, frames)
	r := machinetest.Build(t, exp, machine.Options{})
	machinetest.Execute(t, r)
	caps := r.Net.Captures()
	if len(caps) != 1 || caps[0].Segment != "lan0" {
		t.Fatalf("captures %v, want one of lan0", caps)
	}
	data := caps[0].Data
	rd, err := pcapgo.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	a, b := machinetest.NICs(machinetest.Host(t, r, "pcA"))[0].Spec.MAC, machinetest.NICs(machinetest.Host(t, r, "pcB"))[0].Spec.MAC
	var n int
	var last int64
	for {
		pkt, ci, err := rd.ReadPacketData()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		si, seq := n/frames, n%frames
		want := make([]byte, 14+sizes[si])
		copy(want[0:6], b[:])
		copy(want[6:12], a[:])
		binary.BigEndian.PutUint16(want[12:14], macbench.EtherType)
		binary.BigEndian.PutUint32(want[14:18], uint32(si))
		binary.BigEndian.PutUint32(want[18:22], uint32(seq))
		for i := 8; i < sizes[si]; i++ {
			want[14+i] = payloadByte(i)
		}
		if !bytes.Equal(pkt, want) {
			t.Errorf("packet %d (size %d seq %d):\n%s", n, sizes[si], seq, cmp.Diff(want, pkt))
		}
		if ci.CaptureLength != len(pkt) || ci.Length != len(pkt) {
			t.Errorf("packet %d: capture length %d, length %d, data %d", n, ci.CaptureLength, ci.Length, len(pkt))
		}
		ts := ci.Timestamp.UnixNano()
		if n > 0 && ts <= last {
			t.Errorf("packet %d at %d ns, not after %d ns", n, ts, last)
		}
		last = ts
		n++
	}
	if st := lan0(t, r).Stats(); n != len(sizes)*frames || uint64(n) != st.Frames {
		t.Errorf("%d packets in the capture, lan0 carried %d, want %d", n, st.Frames, len(sizes)*frames)
	}
	// The last frame's last bit left before the run ended.
	if last > int64(r.Sched.Now()/sim.Nanosecond) {
		t.Errorf("last timestamp %d ns after the run's end %v", last, r.Sched.Now())
	}

	tshark, ok := testtool.Have(t, "tshark")
	if !ok {
		return
	}
	f := filepath.Join(t.TempDir(), "lan0.pcap")
	if err := os.WriteFile(f, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// tshark's warnings (running as root, say) go to standard error.
	out, err := exec.Command(tshark, "-n", "-r", f, "-Y", "_ws.malformed || _ws.expert.severity >= error", "-T", "fields", "-e", "frame.number").Output()
	if err != nil || len(bytes.TrimSpace(out)) != 0 {
		t.Errorf("tshark found malformed frames (err %v):\n%s", err, out)
	}
	out, err = exec.Command(tshark, "-n", "-r", f, "-q", "-z", "expert,error").Output()
	if err != nil || strings.Contains(string(out), "Errors (") {
		t.Errorf("tshark expert errors (err %v):\n%s", err, out)
	}
	out, err = exec.Command(tshark, "-n", "-r", f, "-T", "fields", "-e", "eth.type").Output()
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Fields(string(out)); len(lines) != n || slices.ContainsFunc(lines, func(s string) bool { return s != "0x88b5" }) {
		t.Errorf("tshark eth.type: %q, want %d x 0x88b5", lines, n)
	}
}

// TestMacCalibration pins the MAC-level figures to the 486/NE2000
// measurements the configs model: about 5.5 Mbit/s of payload at 1024
// bytes between two hosts (one transmit slot: load over ISA, then wire
// time, frame after frame) and about 1.4 ms from loading the card to the
// transmit-done interrupt; without card and wire (driver loopback) the
// software path alone is much faster.
func TestMacCalibration(t *testing.T) {
	exp := loadMac(t, []int{1024}, 100)
	res := machinetest.Execute(t, machinetest.Build(t, exp, machine.Options{}))
	row := macRows(res)[0]
	t.Logf("two hosts, 1024 B: %.3f Mbit/s, tx time %.1f us, %d/%d received", row.ThroughputMbps, row.TxTimeUS, row.Received, row.Sent)
	if row.Received != row.Sent || row.ThroughputMbps < 5.0 || row.ThroughputMbps > 6.5 || row.TxTimeUS < 1250 || row.TxTimeUS > 1600 {
		t.Errorf("two hosts, 1024 B: received %d/%d, %.3f Mbit/s (want 5.0-6.5), tx time %.1f us (want 1250-1600)",
			row.Received, row.Sent, row.ThroughputMbps, row.TxTimeUS)
	}

	lexp, err := machine.LoadExperiment(loopbackConfig)
	if err != nil {
		t.Fatal(err)
	}
	macParams(lexp).Sizes = []int{1024}
	macParams(lexp).Frames = 100
	lres := machinetest.Execute(t, machinetest.Build(t, lexp, machine.Options{}))
	lrow := macRows(lres)[0]
	t.Logf("loopback, 1024 B: %.3f Mbit/s, %d/%d received", lrow.ThroughputMbps, lrow.Received, lrow.Sent)
	if lrow.Received != lrow.Sent || lrow.Corrupt != 0 || lrow.ThroughputMbps < 15 {
		t.Errorf("loopback, 1024 B: received %d/%d corrupt %d, %.3f Mbit/s (want >= 15)", lrow.Received, lrow.Sent, lrow.Corrupt, lrow.ThroughputMbps)
	}
}
