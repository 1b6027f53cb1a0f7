package partitioner

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// topicMap maps topic names to per-topic state. Reads are a pointer load and
// a map lookup, with no lock and no allocation; adding a topic copies the
// map (topics are few and added once). Entries are never removed, as Kafka's
// per-topic partitioner state never is.
type topicMap[T any] struct {
	newT func() *T // creates the state of a topic seen for the first time

	m  atomic.Pointer[map[string]*T] // immutable once stored
	mu sync.Mutex                    // serializes writers of m
}

func newTopicMap[T any](newT func() *T) *topicMap[T] {
	return &topicMap[T]{newT: newT}
}

// get returns the state of topic, creating it on first use.
func (tm *topicMap[T]) get(topic string) *T {
	if m := tm.m.Load(); m != nil {
		if t, ok := (*m)[topic]; ok {
			return t
		}
	}
	tm.mu.Lock()
	defer tm.mu.Unlock()
	old := tm.m.Load()
	var n map[string]*T
	if old == nil {
		n = make(map[string]*T, 1)
	} else {
		if t, ok := (*old)[topic]; ok {
			return t
		}
		n = make(map[string]*T, len(*old)+1)
		for k, v := range *old {
			n[k] = v
		}
	}
	t := tm.newT()
	n[topic] = t
	tm.m.Store(&n)
	return t
}

// randSource is the random number source of one partitioner instance. Kafka
// draws Utils.toPositive(ThreadLocalRandom.current().nextInt()); int31 is the
// same draw from an injectable source.
type randSource struct {
	mu   sync.Mutex    // protects next, which need not be safe for concurrent use
	next func() uint32 // uniformly distributed 32-bit values
}

// newRandSource wraps next, or when next is nil a generator of its own
// (PCG from math/rand/v2) seeded from the runtime's random source, so that
// two instances never share a sequence.
func newRandSource(next func() uint32) *randSource {
	if next == nil {
		next = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())).Uint32
	}
	return &randSource{next: next}
}

// int31 returns a random value in [0, 2^31): ToPositive of a random int32.
func (r *randSource) int31() int32 {
	r.mu.Lock()
	v := r.next()
	r.mu.Unlock()
	return ToPositive(int32(v))
}
