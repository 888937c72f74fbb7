package scenario

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Labels the generated objects carry.
const (
	// ClassLabel names the class of a queue, cohort or workload.
	ClassLabel = "bench.kuota.dev/class"
	// RuntimeLabel is a workload's runtime in milliseconds.
	RuntimeLabel = "bench.kuota.dev/runtime-ms"
)

// ClusterQueueObject builds a queue's ClusterQueue: cpu quota in one
// flavor, the queue's preemption policies, open to every namespace.
func (q Queue) ClusterQueueObject(flavor string) *kueue.ClusterQueue {
	quota := kueue.ResourceQuota{Name: corev1.ResourceCPU, NominalQuota: q.Nominal}
	if q.BorrowingLimit != nil {
		bl := q.BorrowingLimit.DeepCopy()
		quota.BorrowingLimit = &bl
	}
	return &kueue.ClusterQueue{
		ObjectMeta: metav1.ObjectMeta{Name: q.Name, Labels: map[string]string{ClassLabel: q.Class}},
		Spec: kueue.ClusterQueueSpec{
			CohortName:        kueue.CohortReference(q.Cohort),
			NamespaceSelector: &metav1.LabelSelector{},
			Preemption: &kueue.ClusterQueuePreemption{
				ReclaimWithinCohort: kueue.PreemptionPolicy(q.ReclaimWithinCohort),
				WithinClusterQueue:  kueue.PreemptionPolicy(q.WithinClusterQueue),
			},
			ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
				Flavors: []kueue.FlavorQuotas{{Name: kueue.ResourceFlavorReference(flavor), Resources: []kueue.ResourceQuota{quota}}}}},
		},
	}
}

// LocalQueueObject builds a queue's LocalQueue (in the namespace of the
// queue's name).
func (q Queue) LocalQueueObject() *kueue.LocalQueue {
	return &kueue.LocalQueue{
		ObjectMeta: metav1.ObjectMeta{Namespace: q.Name, Name: q.Name, Labels: map[string]string{ClassLabel: q.Class}},
		Spec:       kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(q.Name)},
	}
}

// CohortObject builds a Cohort of the plan.
func CohortObject(name string) *kueue.Cohort {
	return &kueue.Cohort{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{ClassLabel: "cohort"}}}
}

// WorkloadObject builds the Workload of a planned one: one podset "main"
// of the class's pods (one unless podCount says otherwise), each
// requesting the class's CPUs, with the class's topology request if any,
// the class's priority, and labels naming the class and runtime.
func (w Workload) WorkloadObject() *kueue.Workload {
	return &kueue.Workload{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.Queue, Name: w.Name, Labels: map[string]string{
			ClassLabel: w.Class, RuntimeLabel: strconv.FormatInt(w.Runtime.Milliseconds(), 10)}},
		Spec: kueue.WorkloadSpec{
			QueueName: kueue.LocalQueueName(w.Queue),
			Priority:  ptr.To(w.Priority),
			PodSets: []kueue.PodSet{{Name: kueue.DefaultPodSetName, Count: w.Pods(), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: w.Request}}}},
			}}, TopologyRequest: w.Topology.DeepCopy()}},
		},
	}
}
