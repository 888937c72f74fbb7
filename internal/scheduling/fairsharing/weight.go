package fairsharing

import (
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/hierarchy"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/state"
)

// Weight returns a node's fair-sharing weight in milli-units: the
// ClusterQueue's or Cohort's spec.fairSharing.weight, 1 when unset or for an
// implicit Cohort.
func Weight(queues map[kueue.ClusterQueueReference]*state.ClusterQueue, cohorts map[kueue.CohortReference]*state.Cohort, n *hierarchy.Node) resources.Amount {
	if n.Kind() == hierarchy.ClusterQueueKind {
		if cq, ok := queues[kueue.ClusterQueueReference(n.Name())]; ok {
			return cq.FairWeight
		}
	} else if c, ok := cohorts[kueue.CohortReference(n.Name())]; ok {
		return c.FairWeight
	}
	return resources.One
}
