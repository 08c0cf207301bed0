package trace_test

import (
	"fmt"
	"testing"

	"simkron/trace"
)

func TestSourceCallsListenersInOrder(t *testing.T) {
	var s trace.Source[int]
	if s.Listened() {
		t.Fatal("a new source is listened to")
	}
	s.Fire(1) // nobody listens: nothing happens
	var got []string
	s.Connect(func(v int) { got = append(got, fmt.Sprint("a", v)) })
	s.Connect(nil)
	s.Connect(func(v int) { got = append(got, fmt.Sprint("b", v)) })
	if !s.Listened() {
		t.Fatal("a source with listeners says it has none")
	}
	s.Fire(2)
	s.Fire(3)
	want := []string{"a2", "b2", "a3", "b3"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// Firing allocates nothing, with or without listeners.
func TestFireAllocatesNothing(t *testing.T) {
	type event struct {
		line  int
		entry bool
	}
	var s trace.Source[event]
	if n := testing.AllocsPerRun(100, func() { s.Fire(event{3, true}) }); n != 0 {
		t.Errorf("firing to nobody: %v allocations", n)
	}
	sum := 0
	s.Connect(func(e event) { sum += e.line })
	if n := testing.AllocsPerRun(100, func() { s.Fire(event{3, true}) }); n != 0 {
		t.Errorf("firing to a listener: %v allocations", n)
	}
	if sum == 0 {
		t.Error("the listener was not called")
	}
}

func ExampleSource() {
	// A model declares its sources as fields ...
	type card struct {
		received trace.Source[[]byte]
	}
	var c card
	// ... an observer connects to one ...
	c.received.Connect(func(frame []byte) { fmt.Printf("%d bytes\n", len(frame)) })
	// ... and the model fires it, building nothing when nobody listens.
	if c.received.Listened() {
		c.received.Fire(make([]byte, 64))
	}
	// Output: 64 bytes
}

func BenchmarkFireUnlistened(b *testing.B) {
	var s trace.Source[*int]
	v := new(int)
	for b.Loop() {
		if s.Listened() {
			s.Fire(v)
		}
	}
}

func TestDisconnect(t *testing.T) {
	var s trace.Source[int]
	var got []string
	var offB func()
	offA := s.Connect(func(v int) { got = append(got, fmt.Sprint("a", v)) })
	offB = s.Connect(func(v int) {
		got = append(got, fmt.Sprint("b", v))
		offB() // a listener may leave while the source fires
	})
	s.Connect(func(v int) { got = append(got, fmt.Sprint("c", v)) })
	s.Fire(1)
	offA()
	offA() // twice does nothing
	s.Fire(2)
	want := []string{"a1", "b1", "c1", "c2"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	off := s.Connect(nil)
	off()
	if !s.Listened() {
		t.Error("disconnecting a nil listener removed another")
	}
}
