package machine_test

import (
	"bytes"
	"testing"

	"simkron/machine"
)

// A run that records no capture (Options.NoCapture) gives the same result
// byte for byte and no capture files; with captures, the Ethernet pcap and
// the ATM link's pcap and cell trace are there.
func TestNoCapture(t *testing.T) {
	for _, cfg := range []string{"udp-r4000", "atm-ip"} {
		t.Run(cfg, func(t *testing.T) {
			run := func(noCapture bool) ([]byte, []machine.Capture) {
				exp, err := machine.LoadExperiment("../configs/" + cfg + ".toml")
				if err != nil {
					t.Fatal(err)
				}
				udpParams(exp).Messages = 5
				r, err := machine.New(exp, machine.Options{NoCapture: noCapture})
				if err != nil {
					t.Fatal(err)
				}
				res, err := r.Execute(machine.Options{})
				if err != nil {
					t.Fatal(err)
				}
				var b bytes.Buffer
				if err := res.WriteJSON(&b); err != nil {
					t.Fatal(err)
				}
				return b.Bytes(), r.Net.Captures()
			}
			with, caps := run(false)
			without, none := run(true)
			if !bytes.Equal(with, without) {
				t.Error("result.json differs without captures")
			}
			if len(caps) == 0 || len(none) != 0 {
				t.Errorf("%d captures recorded, %d without: want some, then none", len(caps), len(none))
			}
			for _, c := range caps {
				if len(c.Data) < 100 {
					t.Errorf("%s: %d bytes", c.FileName(), len(c.Data))
				}
			}
		})
	}
}
