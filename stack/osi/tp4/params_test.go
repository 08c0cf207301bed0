package tp4_test

import (
	"strings"
	"testing"

	"simkron/config"
	"simkron/sim"
	"simkron/stack/osi/pres"
	"simkron/stack/osi/session"
	"simkron/stack/osi/tp4"
)

// The parameters decode from TOML with their units; bounds and the
// cross-field checks reject what cannot work, naming the key.
func TestParamsFromTOML(t *testing.T) {
	f, err := config.ParseBytes("x.toml", []byte(`
[tp4]
tpdu_size = "1KiB"
ack_step = 4
retransmit_time = "500ms"
checksum = false
[session]
disconnect_time = "2s"
[pres]
abstract_syntax = "1.0.9506.2.1"
context_id = 3
`))
	if err != nil {
		t.Fatal(err)
	}
	p, sp, pp := tp4.DefaultParams(), session.DefaultParams(), pres.DefaultParams()
	if err := f.DecodeInto(&p, "tp4"); err != nil {
		t.Fatal(err)
	}
	if err := f.DecodeInto(&sp, "session"); err != nil {
		t.Fatal(err)
	}
	if err := f.DecodeInto(&pp, "pres"); err != nil {
		t.Fatal(err)
	}
	if p.TPDUSize != sim.KiB || p.AckStep != 4 || p.T1 != 500*sim.Millisecond || p.Checksum || sp.DisconnectTime != 2*sim.Second || pp.AbstractSyntax.String() != "1.0.9506.2.1" || pp.ContextID != 3 {
		t.Errorf("decoded %+v %+v %+v", p, sp, pp)
	}
	for _, tc := range []struct{ toml, key string }{
		{"tpdu_size = \"1000B\"", "tpdu_size"},
		{"credit = 20", "credit"},
		{"ack_step = 9", "ack_step"},
		{"inactivity_time = \"5s\"\nwindow_time = \"10s\"", "inactivity_time"},
		{"retransmit_time = \"100ms\"\nack_time = \"200ms\"", "retransmit_time"},
	} {
		f, err := config.ParseBytes("bad.toml", []byte("[tp4]\n"+tc.toml+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		p := tp4.DefaultParams()
		if err := f.DecodeInto(&p, "tp4"); err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%q: error %v, want one naming %s", tc.toml, err, tc.key)
		}
	}
}
