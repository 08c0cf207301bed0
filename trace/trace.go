// Package trace holds the one way simkron's models are observed: a trace
// source, a named point in a model (a function entered, an interrupt
// taken, a frame reaching a card, a DMA engine starting) that fires typed
// values to every listener connected to it, as ns-3's traced callbacks
// do. The cpu, the devices, the network and the stacks declare their
// sources as fields, each named for the edge it marks; annotations,
// captures, the measuring programs and tests connect to them.
//
// Listeners only look: they must not charge cycles, schedule or cancel
// events, or write simulated state, so that a run with listeners is the
// same run as one without (docs/design.md, "Symbols, layers and
// observation").
//
// A source nobody listens to costs its model one length test: a model
// that must build the value it fires (an event record, a slice of a
// frame) asks Listened first. Firing allocates nothing; the value is
// passed by value, and a listener that keeps a slice it was given copies
// it (the model reuses its buffers).
//
// The package imports nothing: every layer of the simulator may declare
// sources.
package trace

// Source is a trace source firing values of type T. Its zero value has no
// listeners and is ready to use. A Source is not safe for use by more than
// one goroutine, as nothing in one simulation is.
type Source[T any] struct {
	fns []func(T)
	// ids numbers the listeners in fns, for their disconnection.
	ids  []uint64
	next uint64
}

// Connect adds fn to the listeners; listeners are called in the order
// they were connected, after those connected before them. A nil fn is
// ignored. It returns the function that disconnects fn (a listener that
// watches for a while: a trace window); disconnecting twice does
// nothing, and a listener disconnected while the source fires is still
// called this time if its turn had not come.
func (s *Source[T]) Connect(fn func(T)) (disconnect func()) {
	if fn == nil {
		return func() {}
	}
	s.next++
	id := s.next
	s.fns = append(s.fns, fn)
	s.ids = append(s.ids, id)
	return func() {
		for i, x := range s.ids {
			if x == id {
				// New arrays: a Fire in progress keeps iterating the old.
				s.fns = append(s.fns[:i:i], s.fns[i+1:]...)
				s.ids = append(s.ids[:i:i], s.ids[i+1:]...)
				return
			}
		}
	}
}

// Listened reports whether any listener is connected: the guard a model
// puts around building a value it would fire to nobody.
func (s *Source[T]) Listened() bool { return len(s.fns) != 0 }

// Fire calls every listener with v, in the order they were connected.
func (s *Source[T]) Fire(v T) {
	for _, fn := range s.fns {
		fn(v)
	}
}

// Gauge is how much a model holds of something that comes and goes (a
// queue's length) when it changes: what a trace draws as a counter
// track.
type Gauge struct {
	// Name names what is held among its model's ("eth0 tx queue"), the
	// same at every change of one thing.
	Name string
	// Unit says what Value counts ("frames", "datagrams", "bytes"); one
	// Name has one Unit.
	Unit  string
	Value int64
}

// Gauged is a model whose gauges can be watched: what an observer looks
// for among a host's components.
type Gauged interface {
	// Gauges fires each of the model's gauges when its value changes. A
	// listener only looks.
	Gauges() *Source[Gauge]
}
