package validation

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// expectPaths fails unless errs names exactly the given fields (in any
// order, each as many times as listed). No paths means valid.
func expectPaths(t *testing.T, errs field.ErrorList, want ...string) {
	t.Helper()
	got := make([]string, 0, len(errs))
	for _, e := range errs {
		got = append(got, e.Field)
	}
	slices.Sort(got)
	want = slices.Clone(want)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("error fields = %v, want %v\nerrors: %v", got, want, errs.ToAggregate())
	}
	for _, e := range errs {
		if !strings.Contains(e.Error(), e.Field) {
			t.Errorf("error message %q does not name its field %s", e.Error(), e.Field)
		}
	}
}

func q(s string) resource.Quantity { return resource.MustParse(s) }

func qp(s string) *resource.Quantity { return ptr.To(resource.MustParse(s)) }

// quota builds a ResourceQuota: name, nominal, then optional borrowing and
// lending limits ("" for unset).
func quota(name corev1.ResourceName, nominal string, limits ...string) kueue.ResourceQuota {
	rq := kueue.ResourceQuota{Name: name, NominalQuota: q(nominal)}
	if len(limits) > 0 && limits[0] != "" {
		rq.BorrowingLimit = qp(limits[0])
	}
	if len(limits) > 1 && limits[1] != "" {
		rq.LendingLimit = qp(limits[1])
	}
	return rq
}

func flavor(name kueue.ResourceFlavorReference, quotas ...kueue.ResourceQuota) kueue.FlavorQuotas {
	return kueue.FlavorQuotas{Name: name, Resources: quotas}
}

func group(covered []corev1.ResourceName, flavors ...kueue.FlavorQuotas) kueue.ResourceGroup {
	return kueue.ResourceGroup{CoveredResources: covered, Flavors: flavors}
}

var cpuMem = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}

// basicGroups is a valid quota table: cpu and memory in flavors a and b,
// gpus in flavor g.
func basicGroups() []kueue.ResourceGroup {
	return []kueue.ResourceGroup{
		group(cpuMem,
			flavor("a", quota("cpu", "10"), quota("memory", "10Gi")),
			flavor("b", quota("cpu", "5"), quota("memory", "5Gi"))),
		group([]corev1.ResourceName{"nvidia.com/gpu"}, flavor("g", quota("nvidia.com/gpu", "8"))),
	}
}

func clusterQueue(mut ...func(*kueue.ClusterQueue)) *kueue.ClusterQueue {
	cq := &kueue.ClusterQueue{
		ObjectMeta: metav1.ObjectMeta{Name: "cq"},
		Spec:       kueue.ClusterQueueSpec{ResourceGroups: basicGroups(), NamespaceSelector: &metav1.LabelSelector{}},
	}
	for _, m := range mut {
		m(cq)
	}
	return cq
}

func cohort(mut ...func(*kueue.Cohort)) *kueue.Cohort {
	c := &kueue.Cohort{ObjectMeta: metav1.ObjectMeta{Name: "co"}, Spec: kueue.CohortSpec{ResourceGroups: basicGroups()}}
	for _, m := range mut {
		m(c)
	}
	return c
}

// podSet builds a PodSet of count pods, each with one container
// requesting the given resources.
func podSet(name kueue.PodSetReference, count int32, requests corev1.ResourceList) kueue.PodSet {
	return kueue.PodSet{
		Name:  name,
		Count: count,
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: requests}}},
		}},
	}
}

func workload(mut ...func(*kueue.Workload)) *kueue.Workload {
	wl := &kueue.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: "wl", Namespace: "ns", Generation: 1},
		Spec: kueue.WorkloadSpec{
			QueueName: "lq",
			PodSets: []kueue.PodSet{
				podSet("driver", 1, corev1.ResourceList{"cpu": q("1")}),
				podSet("workers", 4, corev1.ResourceList{"cpu": q("500m"), "memory": q("1Gi")}),
			},
		},
	}
	for _, m := range mut {
		m(wl)
	}
	return wl
}

// admissionFor is a valid admission of the default workload.
func admissionFor() *kueue.Admission {
	return &kueue.Admission{
		ClusterQueue: "cq",
		PodSetAssignments: []kueue.PodSetAssignment{
			{Name: "driver", Count: ptr.To[int32](1), Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{"cpu": "a"},
				ResourceUsage: corev1.ResourceList{"cpu": q("1")}},
			{Name: "workers", Count: ptr.To[int32](4),
				Flavors:       map[corev1.ResourceName]kueue.ResourceFlavorReference{"cpu": "a", "memory": "a"},
				ResourceUsage: corev1.ResourceList{"cpu": q("2"), "memory": q("4Gi")}},
		},
	}
}

func setCondition(wl *kueue.Workload, typ string, status metav1.ConditionStatus) {
	for i := range wl.Status.Conditions {
		if wl.Status.Conditions[i].Type == typ {
			wl.Status.Conditions[i].Status = status
			return
		}
	}
	wl.Status.Conditions = append(wl.Status.Conditions, metav1.Condition{Type: typ, Status: status, Reason: "Test"})
}

// reservedWorkload is the default workload holding a reservation.
func reservedWorkload(mut ...func(*kueue.Workload)) *kueue.Workload {
	wl := workload(func(wl *kueue.Workload) {
		wl.Status.Admission = admissionFor()
		setCondition(wl, kueue.WorkloadQuotaReserved, metav1.ConditionTrue)
	})
	for _, m := range mut {
		m(wl)
	}
	return wl
}

// changed returns a copy of wl with mut applied.
func changed(wl *kueue.Workload, mut func(*kueue.Workload)) *kueue.Workload {
	out := wl.DeepCopy()
	mut(out)
	return out
}
