package hierarchy

import (
	"maps"
	"slices"
	"strings"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Clone returns a deep copy, so that a scheduling cycle can add usage
// without touching the live tree.
func (t *Tree) Clone() *Tree {
	out := &Tree{
		queues:  make(map[kueue.ClusterQueueReference]*Node, len(t.queues)),
		cohorts: make(map[kueue.CohortReference]*Node, len(t.cohorts)),
	}
	copies := make(map[*Node]*Node, len(t.queues)+len(t.cohorts))
	copyOf := func(n *Node) *Node {
		c := &Node{
			name: n.name, kind: n.kind, explicit: n.explicit, broken: n.broken, height: n.height,
			children: make(map[*Node]struct{}, len(n.children)),
			quotas:   n.quotas, // never mutated in place; replaced on update
			subtree:  n.subtree.Clone(),
			usage:    n.usage.Clone(),
		}
		copies[n] = c
		return c
	}
	for name, n := range t.queues {
		out.queues[name] = copyOf(n)
	}
	for name, n := range t.cohorts {
		out.cohorts[name] = copyOf(n)
	}
	for orig, c := range copies {
		if orig.parent != nil {
			c.parent = copies[orig.parent]
		}
		for child := range orig.children {
			c.children[copies[child]] = struct{}{}
		}
	}
	return out
}

// ClusterQueueNames returns every ClusterQueue name, sorted.
func (t *Tree) ClusterQueueNames() []kueue.ClusterQueueReference {
	return slices.Sorted(maps.Keys(t.queues))
}

// CohortNames returns every Cohort name (explicit or implicit), sorted.
func (t *Tree) CohortNames() []kueue.CohortReference {
	return slices.Sorted(maps.Keys(t.cohorts))
}

// Children returns n's children sorted by kind (Cohorts first) and name.
func (n *Node) Children() []*Node {
	out := slices.Collect(maps.Keys(n.children))
	slices.SortFunc(out, func(a, b *Node) int {
		if a.kind != b.kind {
			return int(b.kind) - int(a.kind)
		}
		return strings.Compare(a.name, b.name)
	})
	return out
}
