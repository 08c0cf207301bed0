package machine_test

import (
	"math"
	"testing"

	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/stack/apps/latency"
)

func layerSum(ls []latency.LayerCost) float64 {
	var s float64
	for _, l := range ls {
		s += l.Cycles
	}
	return s
}

func layerOf(ls []latency.LayerCost, layer string) float64 {
	for _, l := range ls {
		if l.Layer == layer {
			return l.Cycles
		}
	}
	return 0
}

// The TCP sweep beside the UDP one: every echo comes back whole, each
// latency's split by layer sums to it exactly, and the shapes are those of
// the Linux/SimOS study: on send TCP (segmentation, copy, checksum) is the
// largest layer and IP small; a message of several segments waits for the
// wire on receive.
func TestTCPSweep(t *testing.T) {
	exp, err := machine.LoadExperiment("../configs/tcp-ne2000.toml")
	if err != nil {
		t.Fatal(err)
	}
	machinetest.Segments(exp)[0].Pcap = false
	sizes := []int{4, 1460, 1461, 8192, 32768}
	tcpParams(exp).Sizes = sizes
	tcpParams(exp).Messages = 5
	udpParams(exp).Sizes = sizes
	udpParams(exp).Messages = 5
	res, _ := runSweep(t, exp)
	if len(udpRows(res)) != len(sizes) || len(tcpRows(res)) != len(sizes) {
		t.Fatalf("%d UDP rows and %d TCP rows, want %d each", len(udpRows(res)), len(tcpRows(res)), len(sizes))
	}
	for i, row := range tcpRows(res) {
		t.Logf("TCP %5d B: %d segs, send %.0f (TCP %.0f IP %.0f), recv %.0f, rtt %.0f us; UDP send %.0f recv %.0f",
			row.Size, row.Packets, row.Send.Mean, layerOf(row.SendLayers, "TCP"), layerOf(row.SendLayers, "IP"),
			row.Receive.Mean, row.RTTMicros, udpRows(res)[i].Send.Mean, udpRows(res)[i].Receive.Mean)
		if row.Messages != 5 || row.Lost != 0 || row.Corrupt != 0 {
			t.Errorf("%d B: %d messages, %d lost, %d corrupt", row.Size, row.Messages, row.Lost, row.Corrupt)
		}
		// Both hosts measure each message once each way.
		if row.Send.N != 10 || row.Receive.N != 10 {
			t.Errorf("%d B: %d send and %d receive samples, want 10 each", row.Size, row.Send.N, row.Receive.N)
		}
		if want := (row.Size + 1459) / 1460; row.Packets != want {
			t.Errorf("%d B: %d segments, want %d", row.Size, row.Packets, want)
		}
		if got, want := layerSum(row.SendLayers), row.Send.Mean; math.Abs(got-want) > 1e-6*want {
			t.Errorf("%d B: send layers sum to %.3f, send latency %.3f", row.Size, got, want)
		}
		if got, want := layerSum(row.RecvLayers), row.Receive.Mean; math.Abs(got-want) > 1e-6*want {
			t.Errorf("%d B: receive layers sum to %.3f, receive latency %.3f", row.Size, got, want)
		}
		if row.Size >= 1460 {
			if tcp, ip := layerOf(row.SendLayers, "TCP"), layerOf(row.SendLayers, "IP"); tcp < 4*ip {
				t.Errorf("%d B send: TCP %.0f cycles, IP %.0f: TCP should dominate", row.Size, tcp, ip)
			}
			if tcp, ip := layerOf(row.RecvLayers, "TCP"), layerOf(row.RecvLayers, "IP"); tcp < 4*ip {
				t.Errorf("%d B receive: TCP %.0f cycles, IP %.0f: TCP should dominate", row.Size, tcp, ip)
			}
		}
	}
	// 23 segments of 1460 bytes on a 10 Mbit/s wire take at least 27 ms to
	// arrive; the receive latency of 32 KiB covers them (33 MHz clock).
	if last := tcpRows(res)[len(sizes)-1]; last.Receive.Min < 0.027*33e6 {
		t.Errorf("32 KiB received in %.0f cycles: faster than the wire", last.Receive.Min)
	}
	// One byte past the MSS costs a second segment.
	if a, b := tcpRows(res)[1], tcpRows(res)[2]; b.Receive.Median <= a.Receive.Median {
		t.Errorf("receive 1461 B (%.0f) not above 1460 B (%.0f)", b.Receive.Median, a.Receive.Median)
	}
}
