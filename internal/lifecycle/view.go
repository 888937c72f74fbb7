package lifecycle

import (
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/state"
)

// View is what the cache knows about a workload's queues and priority
// class, taken under its lock for one decision.
type View struct {
	// LocalQueueKnown says whether the workload's LocalQueue is known;
	// LocalQueueStop is its stop policy and ClusterQueueName the queue it
	// feeds.
	LocalQueueKnown  bool
	LocalQueueStop   kueue.StopPolicy
	ClusterQueueName kueue.ClusterQueueReference
	// ClusterQueue is the ClusterQueue the LocalQueue feeds, nil when
	// unknown.
	ClusterQueue *state.ClusterQueue
	// AdmittedIn is the ClusterQueue named in status.admission, nil when
	// there is no admission or the queue is unknown.
	AdmittedIn *state.ClusterQueue
	// LimitRanges are the bounds of the workload's namespace, nil when
	// none.
	LimitRanges *LimitRanges
	// Claims resolves the workload's DRA device claims; nil when no
	// deviceClassMappings are configured (claims are not charged).
	Claims *Claims
	// PriorityClasses resolves WorkloadPriorityClass values; nil knows
	// none.
	PriorityClasses func(name string) (int32, bool)
	// Nodes are the nodes an admitted workload's topology assignments
	// place pods on, once the manager has listed the nodes; nil otherwise.
	Nodes map[string]NodeCheck
}

// stopped reports a stop policy other than None.
func stopped(p kueue.StopPolicy) bool { return p != "" && p != kueue.None }
