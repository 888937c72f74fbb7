package lifecycle

import (
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// maxPodsPerPodSet bounds counts so that arithmetic cannot overflow on
// absurd input; such a workload is refused with a clear condition.
const maxPodsPerPodSet = 1 << 24

// KeyOf returns a workload's key.
func KeyOf(wl *kueue.Workload) types.NamespacedName {
	return types.NamespacedName{Namespace: wl.Namespace, Name: wl.Name}
}

// CheckPodSets reports malformed PodSets the API server let through,
// among them requests Kuota cannot count: a quantity, a pod's total or
// the whole workload's total of a resource beyond resources.MaxAmount.
func CheckPodSets(wl *kueue.Workload) error {
	if len(wl.Spec.PodSets) == 0 {
		return fmt.Errorf("spec.podSets is empty")
	}
	total := resources.Requests{}
	for i, ps := range wl.Spec.PodSets {
		if ps.Count < 0 || ps.Count > maxPodsPerPodSet {
			return fmt.Errorf("spec.podSets[%d].count %d is out of range (0..%d)", i, ps.Count, maxPodsPerPodSet)
		}
		if ps.MinCount != nil && (*ps.MinCount < 1 || *ps.MinCount > ps.Count) {
			return fmt.Errorf("spec.podSets[%d].minCount %d must be between 1 and count %d", i, *ps.MinCount, ps.Count)
		}
		perPod, err := resources.PodRequests(&ps.Template.Spec)
		if err != nil {
			return fmt.Errorf("spec.podSets[%d]: %w", i, err)
		}
		for _, name := range perPod.Names() {
			if perPod[name] < 0 {
				return fmt.Errorf("spec.podSets[%d] requests a negative amount of %s", i, name)
			}
		}
		if _, ok := perPod[corev1.ResourcePods]; ok {
			return fmt.Errorf("spec.podSets[%d] requests the reserved resource %q", i, corev1.ResourcePods)
		}
		total.Add(perPod.Scaled(int64(ps.Count)))
		if err := total.Check(); err != nil {
			return fmt.Errorf("spec.podSets[%d]: with %d pods, the workload %w", i, ps.Count, err)
		}
	}
	return nil
}

// Info builds the scheduler's entry for a pending workload. The shape is
// not interned; the queues intern it.
func Info(wl *kueue.Workload, v *View, opts *Options) *workload.Info {
	info := &workload.Info{
		Key:             KeyOf(wl),
		UID:             wl.UID,
		ResourceVersion: wl.ResourceVersion,
		LocalQueue:      wl.Spec.QueueName,
		ClusterQueue:    v.ClusterQueueName,
		Priority:        Priority(wl, v),
		QueueOrderTime:  QueueOrderTime(wl, opts),
		Shape:           workload.ShapeFromPodSets(wl.Spec.PodSets, shapeOptions(v, opts)),
	}
	if rs := wl.Status.RequeueState; rs != nil && rs.RequeueAt != nil {
		info.RequeueAt = rs.RequeueAt.UnixNano()
	}
	return info
}

// shapeOptions adds the view's DRA claims to the options' shape rules.
func shapeOptions(v *View, opts *Options) workload.ShapeOptions {
	so := opts.Shape()
	if v.Claims != nil {
		so.Claims = func(spec *corev1.PodSpec) resources.Requests {
			r, _ := v.Claims.PodClaims(spec)
			return r
		}
	}
	return so
}

// Priority is spec.priority, or the value of the named
// WorkloadPriorityClass, or 0. (The API requires spec.priority whenever
// priorityClassRef is set; the lookup covers objects stored before.)
func Priority(wl *kueue.Workload, v *View) int32 {
	if wl.Spec.Priority != nil {
		return *wl.Spec.Priority
	}
	if ref := wl.Spec.PriorityClassRef; ref != nil && ref.Kind == kueue.WorkloadPriorityClassKind && v.PriorityClasses != nil {
		if value, ok := v.PriorityClasses(ref.Name); ok {
			return value
		}
	}
	return 0
}

// QueueOrderTime is the creation time, or the eviction time after an
// eviction for pods-ready timeout or by an admission check (Unix
// nanoseconds).
func QueueOrderTime(wl *kueue.Workload, opts *Options) int64 {
	t := wl.CreationTimestamp.UnixNano()
	if !opts.RequeueAtEvictionTime {
		return t
	}
	if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted); c != nil &&
		(c.Reason == kueue.WorkloadEvictedByPodsReadyTimeout || c.Reason == kueue.WorkloadEvictedByAdmissionCheck) {
		return c.LastTransitionTime.UnixNano()
	}
	return t
}

// QueuedSince is when the workload's current wait began: its creation or
// its last requeue.
func QueuedSince(wl *kueue.Workload) time.Time {
	t := wl.CreationTimestamp.Time
	if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadRequeued); c != nil && c.Status == "True" && c.LastTransitionTime.After(t) {
		t = c.LastTransitionTime.Time
	}
	return t
}

// Admitted builds the record of a workload holding quota, from its
// status.admission: usage per flavor minus reclaimable pods.
func Admitted(wl *kueue.Workload, v *View, opts *Options) *state.Admitted {
	adm := wl.Status.Admission
	a := &state.Admitted{
		Key:            KeyOf(wl),
		UID:            wl.UID,
		ClusterQueue:   adm.ClusterQueue,
		LocalQueue:     wl.Spec.QueueName,
		Admitted:       meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted),
		Evicting:       meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted),
		PodsReady:      meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadPodsReady),
		Priority:       Priority(wl, v),
		QueueOrderTime: QueueOrderTime(wl, opts),
		Usage:          resources.FlavorResourceQuantities{},
		// Read only if the ClusterQueue's object is gone (state.setGone).
		GoneQueueCohort: kueue.CohortReference(wl.Annotations[state.CohortAnnotation]),
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
			total := recorded(name, q)
			if n := int64(reclaimable[psa.Name]); n > 0 && count > 0 {
				total = resources.Sub(total, resources.Mul(total/count, min(n, count)))
			}
			fr := resources.FlavorResource{Flavor: flavor, Resource: name}
			a.Usage[fr] = resources.Add(a.Usage[fr], max(0, total))
		}
	}
	a.MinUsage = minUsage(wl, a.Usage)
	a.Topology = TopologyUses(adm)
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
			if psa.Name != ps.Name || psa.Count == nil || *psa.Count <= *ps.MinCount || *psa.Count == 0 {
				continue
			}
			if out == nil {
				out = usage.Clone()
			}
			for name, q := range psa.ResourceUsage {
				if flavor, ok := psa.Flavors[name]; ok {
					perPod := recorded(name, q) / int64(*psa.Count)
					fr := resources.FlavorResource{Flavor: flavor, Resource: name}
					out[fr] = resources.Sub(out[fr], resources.Mul(perPod, int64(*psa.Count-*ps.MinCount)))
				}
			}
		}
	}
	return out
}

// ApplicableChecks lists the admission checks of the ClusterQueue that apply
// to an admission: those without onFlavors, and those naming a flavor the
// admission uses.
func ApplicableChecks(cq *state.ClusterQueue, adm *kueue.Admission) []kueue.AdmissionCheckReference {
	var out []kueue.AdmissionCheckReference
	for _, rule := range cq.AdmissionChecks {
		if len(rule.OnFlavors) == 0 || usesAnyFlavor(adm, rule.OnFlavors) {
			out = append(out, rule.Name)
		}
	}
	return out
}

func usesAnyFlavor(adm *kueue.Admission, flavors []kueue.ResourceFlavorReference) bool {
	for _, psa := range adm.PodSetAssignments {
		for _, f := range psa.Flavors {
			if slices.Contains(flavors, f) {
				return true
			}
		}
	}
	return false
}

// TopologyUses lists the topology capacity an admission takes: for each
// PodSet placed by topology, its flavor, placement and one pod's requests
// (its usage over its count). Nil when no PodSet was placed by topology.
func TopologyUses(adm *kueue.Admission) []state.TopologyUse {
	var out []state.TopologyUse
	for i := range adm.PodSetAssignments {
		psa := &adm.PodSetAssignments[i]
		if psa.TopologyAssignment == nil || len(psa.Flavors) == 0 {
			continue
		}
		out = append(out, state.TopologyUse{Flavor: TopologyFlavor(psa), Assignment: psa.TopologyAssignment, PerPod: PerPod(psa)})
	}
	return out
}

// TopologyFlavor is the flavor whose topology a PodSet assignment's pods
// are placed in: the flavor of its first resource by name.
func TopologyFlavor(psa *kueue.PodSetAssignment) kueue.ResourceFlavorReference {
	names := slices.Sorted(maps.Keys(psa.Flavors))
	return psa.Flavors[names[0]]
}

// PerPod is one pod's usage in a PodSet assignment: its usage over its
// count.
func PerPod(psa *kueue.PodSetAssignment) resources.Requests {
	count := int64(1)
	if psa.Count != nil && *psa.Count > 0 {
		count = int64(*psa.Count)
	}
	out := resources.Requests{}
	for name, q := range psa.ResourceUsage {
		out[name] = recorded(name, q) / count
	}
	return out
}

// recorded converts a quantity an admission records. One Kuota cannot
// count (another writer's; Kuota admits nothing that large) counts as
// resources.Max, more than any quota: the quota stays taken while the
// workload holds it, and the tree gives it back exactly on release.
func recorded(name corev1.ResourceName, q resource.Quantity) resources.Amount {
	a, err := resources.FromQuantity(name, q)
	switch {
	case err == nil:
		return a
	case q.Sign() < 0:
		return -resources.Max
	}
	return resources.Max
}
