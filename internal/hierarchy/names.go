package hierarchy

import (
	"maps"
	"slices"
	"strings"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// ClusterQueueNames returns every ClusterQueue name, sorted.
func (t *Tree) ClusterQueueNames() []kueue.ClusterQueueReference {
	return slices.Sorted(maps.Keys(t.index.queues))
}

// CohortNames returns every Cohort name (explicit or implicit), sorted.
func (t *Tree) CohortNames() []kueue.CohortReference {
	return slices.Sorted(maps.Keys(t.index.cohorts))
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
