package demo

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// t0 is the time the fixtures start at.
var t0 = time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)

// queue is a team's ClusterQueue with 8 GPUs in a100 and v100, and the
// given usage in status: used and borrowed GPUs per flavor.
func queue(name string, pending, admitted int32, used, borrowed map[string]int64) kueue.ClusterQueue {
	cq := kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: name}}
	g := kueue.ResourceGroup{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU, GPUResource}}
	for _, fl := range GPUKinds {
		g.Flavors = append(g.Flavors, kueue.FlavorQuotas{Name: kueue.ResourceFlavorReference(fl), Resources: []kueue.ResourceQuota{
			{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse("64")},
			{Name: GPUResource, NominalQuota: resource.MustParse("8")},
		}})
		cq.Status.FlavorsUsage = append(cq.Status.FlavorsUsage, kueue.FlavorUsage{
			Name: kueue.ResourceFlavorReference(fl),
			Resources: []kueue.ResourceUsage{
				{Name: corev1.ResourceCPU, Total: resource.MustParse("3")},
				{Name: GPUResource, Total: *resource.NewQuantity(used[fl], resource.DecimalSI),
					Borrowed: *resource.NewQuantity(borrowed[fl], resource.DecimalSI)},
			},
		})
	}
	cq.Spec.ResourceGroups = []kueue.ResourceGroup{g}
	cq.Status.PendingWorkloads, cq.Status.AdmittedWorkloads = pending, admitted
	return cq
}

// workload is the Workload of the Job with UID jobUID, created at
// t0+created.
func workload(uid, jobUID types.UID, ns string, created time.Duration) kueue.Workload {
	return kueue.Workload{ObjectMeta: metav1.ObjectMeta{
		Name: "job-" + string(uid), Namespace: ns, UID: uid,
		CreationTimestamp: metav1.NewTime(t0.Add(created)),
		OwnerReferences:   []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "j", UID: jobUID}},
	}}
}

// withCondition sets a True condition at t0+at.
func withCondition(wl kueue.Workload, typ, reason string, at time.Duration) kueue.Workload {
	wl.Status.Conditions = append(wl.Status.Conditions, metav1.Condition{
		Type: typ, Status: metav1.ConditionTrue, Reason: reason, LastTransitionTime: metav1.NewTime(t0.Add(at)),
	})
	return wl
}

// withPreemptions counts n evictions by preemption in scheduling stats.
func withPreemptions(wl kueue.Workload, n int32) kueue.Workload {
	wl.Status.SchedulingStats = &kueue.SchedulingStats{Evictions: []kueue.WorkloadSchedulingStatsEviction{
		{Reason: kueue.WorkloadEvictedByPreemption, Count: n},
		{Reason: "PodsReadyTimeout", Count: 7},
	}}
	return wl
}
