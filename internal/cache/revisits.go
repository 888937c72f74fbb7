package cache

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// revisitSet holds the workloads the workload controller should reconcile
// again, deduplicated, with a signal: however many times a workload is
// asked for before the controller drains the set, it is revisited once,
// and no goroutine is started per request.
type revisitSet struct {
	mu     sync.Mutex
	keys   map[types.NamespacedName]struct{}
	signal chan struct{}
}

func newRevisitSet() revisitSet {
	return revisitSet{keys: map[types.NamespacedName]struct{}{}, signal: make(chan struct{}, 1)}
}

func (r *revisitSet) add(key types.NamespacedName) {
	r.mu.Lock()
	r.keys[key] = struct{}{}
	r.mu.Unlock()
	select {
	case r.signal <- struct{}{}:
	default:
	}
}

func (r *revisitSet) take() []types.NamespacedName {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]types.NamespacedName, 0, len(r.keys))
	for k := range r.keys {
		out = append(out, k)
	}
	clear(r.keys)
	return out
}

// Revisit asks for a workload to be reconciled again.
func (c *Cache) Revisit(key types.NamespacedName) { c.revisits.add(key) }

// RevisitSignal receives a value when workloads wait to be revisited;
// TakeRevisits then returns them (each once) and empties the set.
func (c *Cache) RevisitSignal() <-chan struct{} { return c.revisits.signal }

// TakeRevisits returns the workloads to revisit and empties the set.
func (c *Cache) TakeRevisits() []types.NamespacedName { return c.revisits.take() }
