package inet_test

import (
	"strings"
	"testing"

	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/trace"
)

// gaugeLog is what a host's Internet layer's Gauges fired, by name.
type gaugeLog struct {
	units  map[string]string
	values map[string][]int64
}

func watchGauges(h *machine.Host) *gaugeLog {
	l := &gaugeLog{units: map[string]string{}, values: map[string][]int64{}}
	machinetest.Inet(h).Gauges().Connect(func(g trace.Gauge) {
		l.units[g.Name] = g.Unit
		l.values[g.Name] = append(l.values[g.Name], g.Value)
	})
	return l
}

// The sockets' queues as their lengths change, over a TCP and a UDP echo
// sweep: each UDP socket's receive queue a datagram at a time, each TCP
// connection's unread bytes within its receive buffer, both back to 0
// once the programs have read everything, and a connection's backlog
// (when a segment came while a call held the socket) back to 0 too. The
// server's echo socket, the client's, and the TCP connection at both
// ends are all there.
func TestGaugesShowSocketQueues(t *testing.T) {
	exp := tcpEcho(t, []int64{64, 8192}, 3)
	r := build(t, exp, machine.Options{NoCapture: true})
	logs := map[string]*gaugeLog{}
	for _, h := range r.Hosts {
		logs[h.Name] = watchGauges(h)
	}
	if res := execute(t, r); !res.Complete {
		t.Fatal(res.Incomplete)
	}
	rcvbuf := int64(machinetest.InetParams(exp.Hosts[0].Machine).TCPRecvBuffer)
	kinds := map[string]int{}
	for host, l := range logs {
		for name, vs := range l.values {
			unit := l.units[name]
			kind := ""
			switch {
			case strings.HasPrefix(name, "udp ") && strings.HasSuffix(name, " receive queue") && unit == "datagrams":
				kind = "udp"
			case strings.HasPrefix(name, "tcp ") && strings.HasSuffix(name, " receive queue") && unit == "bytes":
				kind = "tcp"
			case strings.HasPrefix(name, "tcp ") && strings.HasSuffix(name, " backlog") && unit == "segments":
				kind = "backlog"
			default:
				t.Errorf("%s: a gauge %q in %s", host, name, unit)
				continue
			}
			kinds[host+" "+kind]++
			peak := int64(0)
			for i, v := range vs {
				peak = max(peak, v)
				step := v
				if i > 0 {
					step -= vs[i-1]
				}
				if v < 0 || kind != "tcp" && step != 1 && step != -1 || kind == "tcp" && v > rcvbuf {
					t.Errorf("%s: %s: %v", host, name, vs)
					break
				}
			}
			if peak == 0 || vs[len(vs)-1] != 0 {
				t.Errorf("%s: %s: up to %d, ends at %d", host, name, peak, vs[len(vs)-1])
			}
		}
	}
	for _, want := range []string{"pcA udp", "pcB udp", "pcA tcp", "pcB tcp"} {
		if kinds[want] != 1 {
			t.Errorf("%d gauges of %s, want 1 (all: %v)", kinds[want], want, kinds)
		}
	}
}
