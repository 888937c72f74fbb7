package framework

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Queues is the queue setup most job integration tests start from, in one
// namespace ns: flavor <ns>-f, whose node label pool=<ns>-f and toleration
// of the taint dedicated=<ns>-f:NoSchedule admitted pods must carry;
// ClusterQueue <ns>-cq, open to every namespace, preempting lower
// priorities within itself, with Nominal quota of that flavor; LocalQueues
// of the given names feeding it; and WorkloadPriorityClasses
// <ns>-<name> of the given values.
type Queues struct {
	Nominal     corev1.ResourceList
	LocalQueues []string
	Priorities  map[string]int32
}

// FlavorName and ClusterQueueName are the names Objects gives them.
func FlavorName(ns string) string       { return ns + "-f" }
func ClusterQueueName(ns string) string { return ns + "-cq" }

// Objects returns the objects to create, flavor first.
func (q Queues) Objects(ns string) []client.Object {
	fl, cq := FlavorName(ns), ClusterQueueName(ns)
	covered := make([]corev1.ResourceName, 0, len(q.Nominal))
	quotas := make([]kueue.ResourceQuota, 0, len(q.Nominal))
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if v, ok := q.Nominal[r]; ok {
			covered = append(covered, r)
			quotas = append(quotas, kueue.ResourceQuota{Name: r, NominalQuota: v})
		}
	}
	objs := []client.Object{
		&kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: fl}, Spec: kueue.ResourceFlavorSpec{
			NodeLabels:  map[string]string{"pool": fl},
			Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: fl, Effect: corev1.TaintEffectNoSchedule}}}},
		&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: cq}, Spec: kueue.ClusterQueueSpec{
			NamespaceSelector: &metav1.LabelSelector{},
			Preemption:        &kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyLowerPriority},
			ResourceGroups: []kueue.ResourceGroup{{CoveredResources: covered,
				Flavors: []kueue.FlavorQuotas{{Name: kueue.ResourceFlavorReference(fl), Resources: quotas}}}},
		}},
	}
	for _, name := range q.LocalQueues {
		objs = append(objs, &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(cq)}})
	}
	for name, v := range q.Priorities {
		objs = append(objs, &kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name}, Value: v})
	}
	return objs
}

// CPU is a quota of cpu only; CPUAndMemory adds memory.
func CPU(cpu string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
}

// CPUAndMemory is a quota of cpu and memory.
func CPUAndMemory(cpu, memory string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
}
