// Package workload holds the compact, scheduler-side view of a Workload: its
// identity, queue, priority, queue-order time and an interned Shape (what its
// PodSets request and where their pods may run). Pending queues hold these
// instead of full API objects, and workloads of the same shape share one
// Shape, so a deep queue costs little memory and a whole shape can be
// skipped when one of its members does not fit.
//
// The package is pure: no I/O, no globals.
package workload

import (
	"cmp"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Info is what the queues and the scheduling core know about a workload.
// Infos are treated as immutable once queued: an update replaces the Info.
type Info struct {
	// Key is the workload's namespace and name.
	Key types.NamespacedName
	// UID breaks ties in queue order.
	UID types.UID
	// ResourceVersion is the version of the object the Info was built from;
	// writes based on a decision about this Info carry it as a precondition.
	ResourceVersion string
	// LocalQueue is spec.queueName.
	LocalQueue kueue.LocalQueueName
	// ClusterQueue is the ClusterQueue behind the LocalQueue.
	ClusterQueue kueue.ClusterQueueReference
	// Priority is the effective priority; higher is admitted first.
	Priority int32
	// QueueOrderTime (Unix nanoseconds) orders workloads of equal priority:
	// the creation time, or the eviction time after some evictions.
	QueueOrderTime int64
	// RequeueAt (Unix nanoseconds) is the end of a requeue backoff; 0 if none.
	RequeueAt int64
	// Shape is what the workload requests; shared by identical workloads.
	Shape *Shape
	// Preempting is set once the workload has evicted others to make room:
	// it then goes first among workloads of its priority, so that the freed
	// quota goes to it.
	Preempting bool
	// Hint, for a preempting workload, is the assignment it evicted others
	// for; it is tried first, so the workload takes the quota that was
	// freed for it rather than choosing anew.
	Hint *Hint
	// Replaces, for a slice of an elastic job that grows, is the admitted
	// slice it replaces: the Shape then asks only for the pods added, on
	// the flavors the replaced slice holds, and an admission takes over
	// the replaced slice's quota (see docs/design/elastic.md).
	Replaces *Replacement
}

// Replacement is the admitted slice a growing elastic workload replaces.
type Replacement struct {
	Key types.NamespacedName
	UID types.UID
	// Counts are the workload's whole pod counts per PodSet (the Shape's
	// are what it adds).
	Counts []int32
	// Flavors are the replaced slice's flavors per PodSet and resource.
	Flavors []map[corev1.ResourceName]kueue.ResourceFlavorReference
}

// Hint pins an evaluation to an earlier assignment: per PodSet, the pod
// count and the flavor of each resource.
type Hint struct {
	Counts  []int32
	Flavors []map[corev1.ResourceName]kueue.ResourceFlavorReference
	// Victims are the workloads evicted for it. While they are all still
	// being evicted, later cycles keep them as the workload's victims
	// rather than searching again (they free the same quota either way).
	Victims []Victim
}

// Victim is a workload evicted for a preempting one, and why (a Preempted
// condition reason).
type Victim struct {
	Key          types.NamespacedName
	UID          types.UID
	ClusterQueue kueue.ClusterQueueReference
	Reason       string
}

// Compare orders two workloads of one queue: higher priority first, then a
// workload waiting for its victims, then earlier queue-order time, then UID.
// Priority comes before preempting so that a low-priority preemptor never
// holds up a higher-priority head. It returns a negative number when a goes
// first.
func Compare(a, b *Info) int {
	if c := cmp.Compare(b.Priority, a.Priority); c != 0 {
		return c
	}
	if a.Preempting != b.Preempting {
		if a.Preempting {
			return -1
		}
		return 1
	}
	if c := cmp.Compare(a.QueueOrderTime, b.QueueOrderTime); c != 0 {
		return c
	}
	if c := cmp.Compare(a.UID, b.UID); c != 0 {
		return c
	}
	return cmp.Compare(a.Key.String(), b.Key.String())
}

// Queue is the ordered list of pending workloads of one ClusterQueue, as the
// queues hand it to the scheduling core. The slices may be shared: nobody
// modifies them.
type Queue struct {
	ClusterQueue kueue.ClusterQueueReference
	Workloads    []*Info
	// Namespaces, when not nil, lists the distinct namespaces of Workloads,
	// so that the core can check them once per namespace.
	Namespaces []string
}
