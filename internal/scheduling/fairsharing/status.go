package fairsharing

import (
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/state"
)

// Shares holds the weighted shares that ClusterQueue and Cohort status
// publish (status.fairSharing.weightedShare).
type Shares struct {
	ClusterQueues map[kueue.ClusterQueueReference]int64
	Cohorts       map[kueue.CohortReference]int64
}

// WeightedShares computes the weighted share of every ClusterQueue and
// Cohort of a snapshot: 0 when at or below its own quota, math.MaxInt64 for
// a weight-0 node that borrows.
func WeightedShares(snap *state.Snapshot) Shares {
	out := Shares{
		ClusterQueues: map[kueue.ClusterQueueReference]int64{},
		Cohorts:       map[kueue.CohortReference]int64{},
	}
	for _, name := range snap.Tree.ClusterQueueNames() {
		n := snap.Tree.ClusterQueue(name)
		share, _ := Share(n, nil, Weight(snap.ClusterQueues, snap.Cohorts, n))
		out.ClusterQueues[name] = Published(share)
	}
	for _, name := range snap.Tree.CohortNames() {
		n := snap.Tree.Cohort(name)
		share, _ := Share(n, nil, Weight(snap.ClusterQueues, snap.Cohorts, n))
		out.Cohorts[name] = Published(share)
	}
	return out
}
