package state

import (
	"maps"
	"slices"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// cowMap is a map that snapshots share: once shared, it is copied before
// its next change, so a snapshot costs nothing for what did not change.
type cowMap[K comparable, V any] struct {
	m      map[K]V
	shared bool
	// version counts the changes.
	version uint64
}

func newCowMap[K comparable, V any]() cowMap[K, V] { return cowMap[K, V]{m: map[K]V{}} }

func (c *cowMap[K, V]) set(k K, v V) {
	c.own()
	c.m[k] = v
	c.version++
}

func (c *cowMap[K, V]) del(k K) {
	if _, ok := c.m[k]; !ok {
		return
	}
	c.own()
	delete(c.m, k)
	c.version++
}

func (c *cowMap[K, V]) own() {
	if c.shared {
		c.m = maps.Clone(c.m)
		c.shared = false
	}
}

// share returns the map for a snapshot, which must not modify it.
func (c *cowMap[K, V]) share() map[K]V {
	c.shared = true
	return c.m
}

// admittedLists holds each ClusterQueue's admitted workloads, sorted, for
// snapshots to share: a base that is never modified once shared, and the
// lists changed since (nil for a queue with none left). A snapshot copies
// only the changes; they are folded into a new base once they are many.
type admittedLists struct {
	base        map[kueue.ClusterQueueReference][]*Admitted
	delta       map[kueue.ClusterQueueReference][]*Admitted
	deltaShared bool
}

func (l *admittedLists) set(name kueue.ClusterQueueReference, list []*Admitted) {
	if l.deltaShared || l.delta == nil {
		l.delta = maps.Clone(l.delta)
		if l.delta == nil {
			l.delta = map[kueue.ClusterQueueReference][]*Admitted{}
		}
		l.deltaShared = false
	}
	l.delta[name] = list
}

// share returns a view for a snapshot.
func (l *admittedLists) share() admittedView {
	if len(l.delta) > 16+len(l.base)/8 {
		base := make(map[kueue.ClusterQueueReference][]*Admitted, len(l.base)+len(l.delta))
		for name, list := range l.base {
			base[name] = list
		}
		for name, list := range l.delta {
			if list == nil {
				delete(base, name)
			} else {
				base[name] = list
			}
		}
		l.base, l.delta, l.deltaShared = base, nil, false
	}
	l.deltaShared = true
	return admittedView{base: l.base, delta: l.delta}
}

// admittedView is a snapshot's view of admittedLists.
type admittedView struct {
	base, delta map[kueue.ClusterQueueReference][]*Admitted
}

func (v admittedView) get(name kueue.ClusterQueueReference) []*Admitted {
	if list, ok := v.delta[name]; ok {
		return list
	}
	return v.base[name]
}

// names returns the queues with admitted workloads, sorted.
func (v admittedView) names() []kueue.ClusterQueueReference {
	var out []kueue.ClusterQueueReference
	for name := range v.base {
		if _, changed := v.delta[name]; !changed {
			out = append(out, name)
		}
	}
	for name, list := range v.delta {
		if list != nil {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
