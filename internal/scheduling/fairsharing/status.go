package fairsharing

import (
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/hierarchy"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/state"
)

// Shares holds the weighted shares that ClusterQueue and Cohort status
// publish (status.fairSharing.weightedShare).
type Shares struct {
	ClusterQueues map[kueue.ClusterQueueReference]int64
	Cohorts       map[kueue.CohortReference]int64
}

// WeightedShares computes the weighted share of every ClusterQueue and
// Cohort of a tree: 0 when at or below its own quota, math.MaxInt64 for
// a weight-0 node that borrows. The tree may be the live one (status reads
// its incremental usage under the cache lock) or a snapshot's.
func WeightedShares(tree *hierarchy.Tree, weight Weights) Shares {
	out := Shares{
		ClusterQueues: map[kueue.ClusterQueueReference]int64{},
		Cohorts:       map[kueue.CohortReference]int64{},
	}
	for _, name := range tree.ClusterQueueNames() {
		n := tree.ClusterQueue(name)
		share, _ := Share(n, nil, weight(n))
		out.ClusterQueues[name] = Published(share)
	}
	for _, name := range tree.CohortNames() {
		n := tree.Cohort(name)
		share, _ := Share(n, nil, weight(n))
		out.Cohorts[name] = Published(share)
	}
	return out
}

// SnapshotWeights gives the weights of a snapshot's queues and cohorts.
func SnapshotWeights(snap *state.Snapshot) Weights {
	return func(n *hierarchy.Node) resources.Amount { return Weight(snap.ClusterQueues, snap.Cohorts, n) }
}

// StateWeights gives the weights of the live state's queues and cohorts;
// use it under the lock that guards the state.
func StateWeights(s *state.State) Weights {
	return func(n *hierarchy.Node) resources.Amount {
		if n.Kind() == hierarchy.ClusterQueueKind {
			if cq, ok := s.ClusterQueue(kueue.ClusterQueueReference(n.Name())); ok {
				return cq.FairWeight
			}
		} else if c, ok := s.Cohort(kueue.CohortReference(n.Name())); ok {
			return c.FairWeight
		}
		return resources.One
	}
}
