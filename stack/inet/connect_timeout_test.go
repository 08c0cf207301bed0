package inet_test

import (
	"testing"

	"simkron/ethersim"
	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/sim"
)

// A TCP connect that nothing answers gives up as Linux's does
// (net.ipv4.tcp_syn_retries = 6 with a 1 s initial RTO: retransmissions
// 1, 2, 4 ... 32 s apart and the last wait 64 s, 127 s in all), and the
// workload then fails cleanly: the run ends there (the echo server or the
// ttcp receiver, still waiting for the connection, is not waited for),
// incomplete with the reason, not at stop_at.
func TestConnectTimesOut(t *testing.T) {
	for _, tc := range []struct {
		workload, reason string
	}{
		{"tcp", "tcp sweep: pcA: connect: ETIMEDOUT"},
		{"ttcp", `ttcp run "fddi-stall": pcA: connect: ETIMEDOUT`},
	} {
		t.Run(tc.workload, func(t *testing.T) {
			cfg := machinetest.Config("tcp-ne2000.toml")
			if tc.workload == "ttcp" {
				cfg = machinetest.Config("ttcp-stall.toml")
			}
			exp, err := machine.LoadExperiment(cfg)
			if err != nil {
				t.Fatal(err)
			}
			machinetest.Segments(exp)[0].Pcap = false
			exp.Info.StopAt = 900 * sim.Second
			if tc.workload == "tcp" {
				tcpParams(exp).CompareUDP = false
			} else {
				exp.Hosts[0].Name, exp.Hosts[1].Name = "pcA", "pcB"
				ttcpParams(exp).Transmitter, ttcpParams(exp).Receiver = "pcA", "pcB"
			}
			machinetest.NICSpecs(&exp.Hosts[0])[0].Faults = ethersim.FaultParams{Drop: 1}
			r := build(t, exp, machine.Options{NoCapture: true})
			res, err := r.Execute(machine.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Complete || res.Incomplete != tc.reason {
				t.Errorf("complete %v, %q; want incomplete, %q", res.Complete, res.Incomplete, tc.reason)
			}
			// The connect starts within the first tick or two and gives
			// up 127 s later.
			if end := sim.Time(res.SimTimePS); end < 127*sim.Second || end > 127*sim.Second+50*sim.Millisecond {
				t.Errorf("the run ended at %v, want 127 s after the connect", end)
			}
			st := machinetest.Inet(host(t, r, "pcA")).Stats()
			if st.TCPActiveOpens != 1 || st.TCPAttemptFails != 1 || st.TCPTimeouts != 7 {
				t.Errorf("pcA: %d active opens, %d failed, %d retransmission timeouts; want 1, 1 and 7 (6 retransmissions, then giving up)",
					st.TCPActiveOpens, st.TCPAttemptFails, st.TCPTimeouts)
			}
		})
	}
}
