package lifecycle

import (
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/workload"
)

// Options tune how Workloads become scheduler records and how their
// lifecycle runs; they come from the Configuration.
type Options struct {
	// ExcludedResourcePrefixes are ignored for quota.
	ExcludedResourcePrefixes []string
	// Transformations rewrite pod requests before quota is checked.
	Transformations []resources.Transformation
	// DeviceClasses maps DRA DeviceClass names to the logical resource
	// their devices are charged as (resources.deviceClassMappings); empty
	// charges no DRA claim (claims.go).
	DeviceClasses map[string]corev1.ResourceName
	// RequeueAtEvictionTime orders a workload evicted for pods-ready
	// timeout or an admission check by its eviction time (Kueue's default
	// requeuingStrategy.timestamp Eviction) rather than its creation time.
	RequeueAtEvictionTime bool
	// PodsReady enables waitForPodsReady; nil disables it.
	PodsReady *PodsReadyOptions
	// Retention deletes finished Workloads and the jobs of deactivated
	// ones after a while.
	Retention Retention
	// ReplaceFailedNodes moves the pods a topology assignment places on a
	// failed node to other nodes, keeping the workload admitted, before
	// evicting it (gate TASFailedNodeReplacement, on by default).
	ReplaceFailedNodes bool
}

// PodsReadyOptions configure waitForPodsReady: an admitted workload whose
// pods are not all ready within Timeout of its admission (or, after they
// were ready, within RecoveryTimeout of a pod failing) is evicted and
// requeued with a growing backoff, or deactivated past the backoff limit.
type PodsReadyOptions struct {
	Timeout time.Duration
	// RecoveryTimeout of 0 disables the recovery check.
	RecoveryTimeout time.Duration
	Backoff         Backoff
}

// Backoff describes waitForPodsReady's requeuing backoff.
type Backoff struct {
	Base, Max time.Duration
	// Limit is the number of requeues allowed; nil means no limit.
	Limit *int32
}

// Exceeded reports whether one more requeue goes over the limit.
func (b Backoff) Exceeded(st *kueue.WorkloadStatus) bool {
	if b.Limit == nil {
		return false
	}
	count := int32(0)
	if st.RequeueState != nil {
		count = ptr.Deref(st.RequeueState.Count, 0)
	}
	return count+1 > *b.Limit
}

// Requeue counts one more requeue in status.requeueState and sets
// requeueAt to now + base×2^(count−1), capped at Max.
func (b Backoff) Requeue(st *kueue.WorkloadStatus, now time.Time) {
	if st.RequeueState == nil {
		st.RequeueState = &kueue.RequeueState{}
	}
	count := ptr.Deref(st.RequeueState.Count, 0) + 1
	st.RequeueState.Count = ptr.To(count)
	wait := b.Max
	if exp := float64(b.Base) * math.Pow(2, float64(count-1)); exp < float64(b.Max) {
		wait = time.Duration(exp)
	}
	st.RequeueState.RequeueAt = ptr.To(metav1.NewTime(now.Add(wait).Truncate(time.Second)))
}

// Shape says how a Workload's PodSets become a shape.
func (o *Options) Shape() workload.ShapeOptions {
	return workload.ShapeOptions{ExcludedResourcePrefixes: o.ExcludedResourcePrefixes, Transformations: o.Transformations}
}
