package workload

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/cache"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// maxPodsPerPodSet bounds counts so that arithmetic cannot overflow on
// absurd input; such a workload is refused with a clear condition.
const maxPodsPerPodSet = 1 << 24

// Options tune how Workloads become scheduler entries.
type Options struct {
	// ExcludedResourcePrefixes are ignored for quota.
	ExcludedResourcePrefixes []string
	// RequeueAtEvictionTime orders a workload evicted for pods-ready
	// timeout or an admission check by its eviction time (Kueue's default
	// requeuingStrategy.timestamp Eviction) rather than its creation time.
	RequeueAtEvictionTime bool
	// PodsReady enables waitForPodsReady; nil disables it.
	PodsReady *PodsReadyOptions
}

// checkPodSets reports malformed PodSets the API server let through.
func checkPodSets(wl *kueue.Workload) error {
	if len(wl.Spec.PodSets) == 0 {
		return fmt.Errorf("spec.podSets is empty")
	}
	for i, ps := range wl.Spec.PodSets {
		if ps.Count < 0 || ps.Count > maxPodsPerPodSet {
			return fmt.Errorf("spec.podSets[%d].count %d is out of range (0..%d)", i, ps.Count, maxPodsPerPodSet)
		}
		if ps.MinCount != nil && (*ps.MinCount < 1 || *ps.MinCount > ps.Count) {
			return fmt.Errorf("spec.podSets[%d].minCount %d must be between 1 and count %d", i, *ps.MinCount, ps.Count)
		}
		perPod := resources.PodRequests(&ps.Template.Spec)
		for name, a := range perPod {
			if a < 0 {
				return fmt.Errorf("spec.podSets[%d] requests a negative amount of %s", i, name)
			}
			if a > 0 && resources.Mul(a, int64(ps.Count)) == resources.Unlimited {
				return fmt.Errorf("spec.podSets[%d] requests more %s than can be counted", i, name)
			}
		}
		if _, ok := perPod[corev1.ResourcePods]; ok {
			return fmt.Errorf("spec.podSets[%d] requests the reserved resource %q", i, corev1.ResourcePods)
		}
	}
	return nil
}

// infoFor builds the scheduler's entry for a pending workload.
func (r *Reconciler) infoFor(wl *kueue.Workload) *workload.Info {
	info := &workload.Info{
		Key:             keyOf(wl),
		UID:             wl.UID,
		ResourceVersion: wl.ResourceVersion,
		LocalQueue:      wl.Spec.QueueName,
		Priority:        r.priorityOf(wl),
		QueueOrderTime:  r.queueOrderTime(wl),
		Shape:           workload.ShapeFromPodSets(wl.Spec.PodSets, workload.ShapeOptions{ExcludedResourcePrefixes: r.Options.ExcludedResourcePrefixes}),
	}
	if rs := wl.Status.RequeueState; rs != nil && rs.RequeueAt != nil {
		info.RequeueAt = rs.RequeueAt.UnixNano()
	}
	if cq, ok := r.Cache.ClusterQueueFor(cache.LocalQueueKey{Namespace: wl.Namespace, Name: wl.Spec.QueueName}); ok {
		info.ClusterQueue = cq
	}
	return info
}

// priorityOf is spec.priority, or the value of the named
// WorkloadPriorityClass, or 0. (The API requires spec.priority whenever
// priorityClassRef is set; the lookup covers objects stored before.)
func (r *Reconciler) priorityOf(wl *kueue.Workload) int32 {
	if wl.Spec.Priority != nil {
		return *wl.Spec.Priority
	}
	if ref := wl.Spec.PriorityClassRef; ref != nil && ref.Kind == kueue.WorkloadPriorityClassKind {
		if v, ok := r.Cache.PriorityClass(ref.Name); ok {
			return v
		}
	}
	return 0
}

// queueOrderTime is the creation time, or the eviction time after an
// eviction for pods-ready timeout or by an admission check.
func (r *Reconciler) queueOrderTime(wl *kueue.Workload) int64 {
	t := wl.CreationTimestamp.UnixNano()
	if !r.Options.RequeueAtEvictionTime {
		return t
	}
	if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted); c != nil &&
		(c.Reason == kueue.WorkloadEvictedByPodsReadyTimeout || c.Reason == kueue.WorkloadEvictedByAdmissionCheck) {
		return c.LastTransitionTime.UnixNano()
	}
	return t
}

// admittedFor builds the record of a workload holding quota, from its
// status.admission: usage per flavor minus reclaimable pods.
func (r *Reconciler) admittedFor(wl *kueue.Workload) *state.Admitted {
	adm := wl.Status.Admission
	a := &state.Admitted{
		Key:            keyOf(wl),
		UID:            wl.UID,
		ClusterQueue:   adm.ClusterQueue,
		LocalQueue:     wl.Spec.QueueName,
		Admitted:       meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted),
		Evicting:       meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted),
		PodsReady:      meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadPodsReady),
		Priority:       r.priorityOf(wl),
		QueueOrderTime: r.queueOrderTime(wl),
		Usage:          resources.FlavorResourceQuantities{},
	}
	if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved); c != nil {
		a.ReservedAt = c.LastTransitionTime.UnixNano()
	}
	reclaimable := map[kueue.PodSetReference]int32{}
	for _, rp := range wl.Status.ReclaimablePods {
		reclaimable[rp.Name] = rp.Count
	}
	for _, psa := range adm.PodSetAssignments {
		count := int64(1)
		if psa.Count != nil {
			count = int64(*psa.Count)
		}
		for name, q := range psa.ResourceUsage {
			flavor, ok := psa.Flavors[name]
			if !ok {
				continue
			}
			total := resources.FromQuantity(q)
			if n := int64(reclaimable[psa.Name]); n > 0 && count > 0 {
				total = resources.Sub(total, resources.Mul(total/count, min(n, count)))
			}
			fr := resources.FlavorResource{Flavor: flavor, Resource: name}
			a.Usage[fr] = resources.Add(a.Usage[fr], max(0, total))
		}
	}
	a.MinUsage = minUsage(wl, a.Usage)
	return a
}

// minUsage is the usage at minCount for a PodSet allowing partial
// admission (the workload could come back that small).
func minUsage(wl *kueue.Workload, usage resources.FlavorResourceQuantities) resources.FlavorResourceQuantities {
	var out resources.FlavorResourceQuantities
	for _, ps := range wl.Spec.PodSets {
		if ps.MinCount == nil {
			continue
		}
		for _, psa := range wl.Status.Admission.PodSetAssignments {
			if psa.Name != ps.Name || psa.Count == nil || *psa.Count <= *ps.MinCount {
				continue
			}
			if out == nil {
				out = usage.Clone()
			}
			for name, q := range psa.ResourceUsage {
				if flavor, ok := psa.Flavors[name]; ok {
					perPod := resources.FromQuantity(q) / int64(*psa.Count)
					fr := resources.FlavorResource{Flavor: flavor, Resource: name}
					out[fr] = resources.Sub(out[fr], resources.Mul(perPod, int64(*psa.Count-*ps.MinCount)))
				}
			}
		}
	}
	return out
}
