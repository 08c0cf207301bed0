package top_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"

	"simkron/cpu"
	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/osi"
	"simkron/stack/top"
)

// upperTsharkPrefs are the dissector preferences the upper-layer capture
// tests pass, all at Wireshark 4.0's defaults, stated so that a change of
// default cannot silently change what is checked: COTP is decoded above
// CLNP for NSAP selector 0x21 (the TP4 entities' selector) and not for
// others, CLNP and COTP reassembly are on, COTP is not the ATN variant,
// and the session dissector segments. SES is found over COTP by its
// heuristic (on by default), PRES by the session dissector.
var upperTsharkPrefs = []string{"-o", "clnp.tp_nsap_selector:0x21", "-o", "clnp.always_decode_transport:FALSE",
	"-o", "clnp.reassemble:TRUE", "-o", "cotp.reassemble:TRUE", "-o", "cotp.decode_atn:FALSE", "-o", "ses.desegment:TRUE"}

// capTPDU is one TPDU found in a capture.
type capTPDU struct {
	frame int
	src   [6]byte
	b     header.TPDU
}

// captureTPDUs reads every TPDU of every CLNP DT PDU in a capture (no
// NSDU there is segmented).
func captureTPDUs(t testing.TB, capture []byte) []capTPDU {
	t.Helper()
	rd, err := pcapgo.NewReader(bytes.NewReader(capture))
	if err != nil {
		t.Fatal(err)
	}
	var out []capTPDU
	for n := 1; ; n++ {
		f, _, err := rd.ReadPacketData()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		e := header.Ethernet(f)
		l := int(e.Type())
		if len(f) < 20 || !header.IsLengthField(e.Type()) || f[14] != header.LLCSAPISONet || f[17] != header.CLNPNLPID {
			continue
		}
		p := header.CLNP(f[17 : 14+l])
		if !p.IsValid(len(p)) || p.Type() != header.CLNPTypeDT {
			continue
		}
		nsdu := p.Payload()
		for len(nsdu) >= 2 && int(nsdu[0])+1 <= len(nsdu) {
			h := header.TPDU(nsdu)
			if header.TPDUHasData(h.Code()) {
				out = append(out, capTPDU{n, e.Src(), h})
				break
			}
			out = append(out, capTPDU{n, e.Src(), h[:h.HeaderLen()]})
			nsdu = nsdu[h.HeaderLen():]
		}
	}
}

// tsharkFields runs tshark over the capture with the fields asked for,
// one line a frame, fields split by "|", occurrences by ";".
func tsharkFields(t testing.TB, capture []byte, fields ...string) [][]string {
	t.Helper()
	path := lookTshark(t)
	file := filepath.Join(t.TempDir(), "upper.pcap")
	if err := os.WriteFile(file, capture, 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-2", "-r", file}, upperTsharkPrefs...)
	args = append(args, "-T", "fields", "-E", "separator=|", "-E", "aggregator=;")
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	out, err := exec.Command(path, args...).Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	var rows [][]string
	for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		r := strings.Split(l, "|")
		if len(r) != len(fields) {
			t.Fatalf("tshark line %q", l)
		}
		rows = append(rows, r)
	}
	return rows
}

// tshark 4.0 cannot verify a COTP checksum: packet-cotp.c runs
// osi_calc_checksum over the parameter's length (2 octets) from the
// TPDU's first octet instead of over the TPDU, so it calls every
// checksum bad, right or wrong. Its COTP checksum verdict is therefore
// ignored, and each TPDU's checksum checked here instead, octet by
// octet modulo 255 (X.224 annex D.4); CLNP's, which tshark computes
// right, is taken from tshark.
const tsharkCOTPChecksumBug = "Bad checksum"

// allowed reports whether an expert item is one the upper-layer
// captures may show: notes and chats, tshark's COTP checksum verdict
// (see above), and the BER dissector saying it has no dissector for the
// layer users' private abstract syntax (their octets are no ASN.1 type
// Wireshark knows).
func allowedExpert(e string) bool {
	switch {
	case strings.Contains(e, "(Note/"), strings.Contains(e, "(Chat/"):
		return true
	case strings.Contains(e, "(Error/Checksum)") && strings.Contains(e, tsharkCOTPChecksumBug):
		return true
	case strings.Contains(e, "(Warning/Undecoded)") && strings.Contains(e, "Dissector for OID not implemented"):
		return true
	}
	return false
}

// checkUpperCapture runs the common checks and returns the COTP types
// and SES types tshark decoded.
func checkUpperCapture(t *testing.T, capture []byte, frames int, injected string) (cotp, ses map[string]int, pres map[string]int) {
	rows := tsharkFields(t, capture, "frame.number", "_ws.malformed", "_ws.expert", "clnp.checksum.status", "cotp.type",
		"cotp.checksum.status", "ses.type", "pres.cptype", "pres.cpapdu", "pres.fully_encoded_data", "clnp.cnf.type", "eth.src")
	if len(rows) != frames {
		t.Errorf("tshark read %d frames, the segment carried %d", len(rows), frames)
	}
	cotp, ses, pres = map[string]int{}, map[string]int{}, map[string]int{}
	for _, r := range rows {
		if r[1] != "" {
			t.Errorf("frame %s is malformed: %q", r[0], r)
		}
		for _, e := range strings.Split(r[2], ";") {
			if e != "" && !allowedExpert(e) {
				t.Errorf("frame %s: %s", r[0], e)
			}
		}
		if r[10] == "" {
			continue // not CLNP
		}
		for _, s := range strings.Split(r[3], ";") {
			if s != "1" {
				t.Errorf("frame %s: CLNP checksum status %q, want 1 (good)", r[0], r[3])
			}
		}
		if strings.Split(r[10], ";")[0] == "28" && r[4] == "" && r[11] != injected {
			t.Errorf("frame %s: a CLNP DT whose NSDU is not decoded as COTP: %q", r[0], r)
		}
		types := strings.Split(r[4], ";")
		sums := strings.Split(r[5], ";")
		for _, c := range types {
			if c != "" {
				cotp[c]++
			}
		}
		if r[4] != "" && len(sums) != len(types) {
			t.Errorf("frame %s: %d TPDUs but %d checksums examined", r[0], len(types), len(sums))
		}
		for _, s := range strings.Split(r[6], ";") {
			if s != "" {
				ses[s]++
			}
		}
		for i, name := range []string{"cp", "cpa", "td"} {
			if r[7+i] != "" {
				pres[name]++
			}
		}
	}
	n := 0
	for _, x := range captureTPDUs(t, capture) {
		if _, ok := x.b.Param(x.b.Code() == header.TPDUCodeAK && x.b.LI()%2 == 1, header.TPDUParamChecksum); !ok {
			t.Errorf("frame %d: TPDU %#x without the checksum", x.frame, x.b.Code())
			continue
		}
		n++
		if !fletcherOracle(x.b) {
			t.Errorf("frame %d: TPDU %#x fails its checksum: % x", x.frame, x.b.Code(), []byte(x.b[:x.b.HeaderLen()]))
		}
	}
	if n == 0 {
		t.Error("no TPDU in the capture")
	}
	return cotp, ses, pres
}

// fletcherOracle recomputes the ISO checksum's sums octet by octet.
func fletcherOracle(b []byte) bool {
	c0, c1 := 0, 0
	for _, v := range b {
		c0 = (c0 + int(v)) % 255
		c1 = (c1 + c0) % 255
	}
	return c0 == 0 && c1 == 0
}

// The presentation users' exchange as Wireshark reads it: every frame
// LLC, CLNP with good header checksums, COTP (CR, CC, DT, AK, DR, DC),
// SES (CN, AC, GT+DT, FN, DN) and PRES (CP, CPA, TD) decoded; nothing
// malformed; every TPDU's checksum right.
func TestUpperPcapTshark(t *testing.T) {
	cfg := defaultUpper()
	cfg.echoEvery = 5
	r := buildUpper(t, top.LevelPresentation, 300, 20, false, cfg)
	var capture bytes.Buffer
	if err := r.seg.Tap(&capture); err != nil {
		t.Fatal(err)
	}
	r.run(t, 10*sim.Second)
	r.k.RunUntil(r.k.Now() + sim.Second)
	cotp, ses, pres := checkUpperCapture(t, capture.Bytes(), int(r.seg.Stats().Frames), "")
	t.Logf("COTP %v, SES %v, PRES %v", cotp, ses, pres)
	for _, c := range []string{"0x0e", "0x0d", "0x0f", "0x06", "0x08", "0x0c"} {
		if cotp[c] == 0 {
			t.Errorf("no COTP TPDU of type %s decoded", c)
		}
	}
	for _, s := range []string{"13", "14", "1", "9", "10"} {
		if ses[s] == 0 {
			t.Errorf("no SPDU of type %s decoded", s)
		}
	}
	if pres["cp"] != 1 || pres["cpa"] != 1 || pres["td"] < 20 {
		t.Errorf("PRES decoded: %v, want one CP, one CPA and a TD for each message and echo", pres)
	}
}

// Expedited data, an RJ (no class 4 TPDU) answered by an ER, and the
// release that follows the ER, as Wireshark reads them: ED, EA, ER, DR
// and DC decoded, nothing malformed.
func TestUpperPcapTsharkErrors(t *testing.T) {
	r := buildUpper(t, top.LevelTP4, 512, 300, false, defaultUpper())
	var capture bytes.Buffer
	if err := r.seg.Tap(&capture); err != nil {
		t.Fatal(err)
	}
	p := newSegProber(t, r.k, r.seg, 9)
	env := r.a.h.NewEnv("test", cpu.LayerAPPL)
	ed := env.NewTimer("test.ed", func() {
		ch, a := r.a.h.Bufs().New(osi.Tx, 6)
		r.a.c.Write(a, []byte("urgent"))
		r.sa.Request(top.PrimExpeditedReq, ch, 0)
	})
	r.a.h.OnStart(func() { ed.Start(40 * sim.Millisecond) })
	r.k.Schedule(sim.NewEvent("test.rj", func() {
		// An RJ for the recipient's connection, as from the originator.
		ref, _ := r.sb.Conn().Ref()
		f := header.TPDUFields{Code: header.TPDUCodeRJ, DstRef: ref, CDT: 8, Params: []byte{header.TPDUParamChecksum, 2, 0, 0}}
		rj := make([]byte, header.TPDUHeaderLen(&f))
		header.TPDU(rj).Encode(&f)
		header.TPDU(rj).SetChecksum(false)
		p.sendAt(r.k.Now()+1, r.b.addr, clnpPDU(r.a.nsap.WithSelector(tp4Sel), r.b.nsap.WithSelector(tp4Sel), rj, 30, header.CLNPFlagSP|header.CLNPFlagER, &header.CLNPSegmentation{ID: 9, Total: uint16(57 + len(rj))}, false))
	}), 150*sim.Millisecond)
	r.start()
	r.k.RunUntil(3 * sim.Second)
	if !r.ua.Aborted || r.ta.T.Stats().RxER != 1 || r.tb.T.Stats().TxER != 1 || r.tb.T.Stats().RxED != 1 {
		t.Errorf("originator aborted %v; a %+v; b %+v", r.ua.Aborted, r.ta.T.Stats(), r.tb.T.Stats())
	}
	// Wireshark decodes an RJ only without a checksum (classes 2 and 3):
	// the injected one, which class 4 does not have, stays undecoded.
	cotp, _, _ := checkUpperCapture(t, capture.Bytes(), int(r.seg.Stats().Frames), "02:00:00:00:00:09")
	t.Logf("COTP %v", cotp)
	for _, c := range []string{"0x01", "0x02", "0x07", "0x08", "0x0c"} {
		if cotp[c] == 0 {
			t.Errorf("no COTP TPDU of type %s decoded", c)
		}
	}
}
