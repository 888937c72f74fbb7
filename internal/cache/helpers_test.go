package cache

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/lifecycle"
	"github.com/kuota-dev/kuota/internal/state"
)

// pendingWL builds a pending Workload of one pod requesting cpu in
// namespace ns, queued in LocalQueue lq.
func pendingWL(name, lq, rv, cpu string) *kueue.Workload {
	return &kueue.Workload{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name), ResourceVersion: rv},
		Spec: kueue.WorkloadSpec{QueueName: kueue.LocalQueueName(lq), Priority: ptr.To[int32](0), PodSets: []kueue.PodSet{{Name: "main", Count: 1,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}}}},
	}
}

// admittedWL is pendingWL admitted in ClusterQueue cq on flavor f.
func admittedWL(name, lq, rv, cq, cpu string) *kueue.Workload {
	wl := pendingWL(name, lq, rv, cpu)
	wl.Status.Admission = &kueue.Admission{ClusterQueue: kueue.ClusterQueueReference(cq), PodSetAssignments: []kueue.PodSetAssignment{{
		Name: "main", Count: ptr.To[int32](1), Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{corev1.ResourceCPU: "f"},
		ResourceUsage: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}
	wl.Status.Conditions = []metav1.Condition{
		{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved"},
		{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, Reason: "Admitted"},
	}
	return wl
}

// clusterQueue returns a ClusterQueue with nominal cpu on flavor f.
func clusterQueue(t *testing.T, name, cohort, nominal string) *state.ClusterQueue {
	t.Helper()
	cq, err := state.NewClusterQueue(&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueue.ClusterQueueSpec{
		CohortName: kueue.CohortReference(cohort), NamespaceSelector: &metav1.LabelSelector{},
		ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
			Flavors: []kueue.FlavorQuotas{{Name: "f", Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU,
				NominalQuota: resource.MustParse(nominal)}}}}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return cq
}

// newTestCache returns a cache with flavor f, ClusterQueue cq (nominal
// cpu) and LocalQueue ns/lq feeding it.
func newTestCache(t *testing.T, nominal string) *Cache {
	t.Helper()
	c := New(lifecycle.Options{})
	c.SetFlavor(&state.Flavor{Name: "f"})
	c.SetNamespace("ns", nil)
	c.SetClusterQueue(clusterQueue(t, "cq", "", nominal))
	c.SetLocalQueue(LocalQueueKey{Namespace: "ns", Name: "lq"}, "cq", kueue.None)
	drainWake(c)
	return c
}

// drainWake empties the scheduler's wake channel.
func drainWake(c *Cache) {
	select {
	case <-c.Wake():
	default:
	}
}

// woken reports (and consumes) a pending wake-up of the scheduler.
func woken(c *Cache) bool {
	select {
	case <-c.Wake():
		return true
	default:
		return false
	}
}
