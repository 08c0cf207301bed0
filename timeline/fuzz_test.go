package timeline_test

import (
	"testing"

	"simkron/timeline"
)

// A small trace as the writer makes it: a host with its overview, a
// thread with nested calls, an interrupt, a halt, a DMA burst, a frame
// and a measurement.
const smallTrace = `{"displayTimeUnit":"ns","otherData":{"generator":"simkron","window":""},
"traceEvents":[
{"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"hA"}},
{"ph":"M","name":"process_name","pid":2,"tid":0,"args":{"name":"lan0"}},
{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"cpu0"}},
{"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"t"}},
{"ph":"M","name":"thread_name","pid":1,"tid":3,"args":{"name":"irq 3 (nic0)"}},
{"ph":"i","name":"window opens","cat":"cpu","pid":1,"tid":1,"ts":0,"s":"t","args":{"cycle":0,"idle":0,"layers":{"UDP":0,"DEV":0},"clock_hz":1000000000}},
{"ph":"X","name":"f","cat":"UDP","pid":1,"tid":2,"ts":0,"dur":0.01},
{"ph":"X","name":"g","cat":"UDP","pid":1,"tid":2,"ts":0.002,"dur":0.003},
{"ph":"X","name":"isr","cat":"DEV","pid":1,"tid":3,"ts":0.01,"dur":0.005},
{"ph":"X","name":"irq 3 (nic0)","cat":"cpu","pid":1,"tid":1,"ts":0.01,"dur":0.005},
{"ph":"X","name":"t","cat":"cpu","pid":1,"tid":1,"ts":0,"dur":0.02},
{"ph":"b","name":"nic0 DMA","cat":"dma","pid":1,"tid":0,"ts":0.001,"id":1},
{"ph":"e","name":"nic0 DMA","cat":"dma","pid":1,"tid":0,"ts":0.004,"id":1},
{"ph":"b","name":"hA.nic0 → hB.nic0 64B","cat":"wire","pid":2,"tid":0,"ts":0.003,"id":2,"args":{"bytes":64}},
{"ph":"e","name":"hA.nic0 → hB.nic0 64B","cat":"wire","pid":2,"tid":0,"ts":0.009,"id":2},
{"ph":"b","name":"udp:64:1 send hA","cat":"measure","pid":1,"tid":1,"ts":0,"id":3,"args":{"message":"udp:64:1","direction":"send","layers":{"UDP":10,"-":5},"pieces":[{"from":0,"to":20,"count":"thread","context":"t"}]}},
{"ph":"e","name":"udp:64:1 send hA","cat":"measure","pid":1,"tid":1,"ts":0.02,"id":3},
{"ph":"i","name":"window closes","cat":"cpu","pid":1,"tid":1,"ts":0.02,"s":"t","args":{"cycle":20,"idle":0,"layers":{"UDP":10,"DEV":5,"-":5},"clock_hz":1000000000}}
]}
`

func TestReadSmallTrace(t *testing.T) {
	tr, err := timeline.Read([]byte(smallTrace))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range tr.Check() {
		t.Error(m)
	}
	if len(tr.Frames) != 1 || tr.Frames[0].Sender != "hA" || tr.Frames[0].Receiver != "hB" || tr.Frames[0].Bytes != 64 {
		t.Errorf("frames %+v", tr.Frames)
	}
}

// Read takes any bytes: an error for what is not a trace it wrote, never
// a panic, and what it accepts can be summed and checked.
func FuzzRead(f *testing.F) {
	f.Add([]byte(smallTrace))
	f.Add([]byte(`{"otherData":{"generator":"simkron"},"traceEvents":[]}`))
	f.Add([]byte(`{"otherData":{"generator":"simkron"},"traceEvents":[{"ph":"X","pid":1,"tid":1,"ts":"1e9","dur":1}]}`))
	f.Add([]byte(`{"otherData":{"generator":"simkron"},"traceEvents":[{"ph":"e","id":7,"ts":1}]}`))
	f.Add([]byte(`[1,2,3]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := timeline.Read(data)
		if err != nil {
			return
		}
		tr.Check()
		for _, h := range tr.Hosts {
			for i := 1; i < len(h.Atoms); i++ {
				if h.Atoms[i].From < h.Atoms[i-1].To {
					t.Fatalf("host %s: atoms overlap: %+v, %+v", h.Name, h.Atoms[i-1], h.Atoms[i])
				}
			}
		}
	})
}
