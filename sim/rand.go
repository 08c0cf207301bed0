package sim

import (
	"hash/fnv"
	"math/rand/v2"
)

// Stream returns a random stream for the component called name. Each name
// gives an independent sequence derived from the master seed alone, so
// adding a component never shifts another's randomness. Calling Stream
// twice with one name gives two generators with the same sequence.
func (k *Scheduler) Stream(name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(k.seed, h.Sum64()))
}
