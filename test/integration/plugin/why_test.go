package plugin

import (
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/why"
)

// why and top against a real API server: a workload short of quota (4
// cpu, 3 held by another), one whose LocalQueue does not exist, and the
// queues' table (its counts from the status written here, as the manager
// would).
func TestWhyAndTop(t *testing.T) {
	ns := namespace(t, "why-top")
	cq := &kueue.ClusterQueue{ObjectMeta: metav1Name("why-cq"), Spec: kueue.ClusterQueueSpec{NamespaceSelector: &metav1.LabelSelector{},
		ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU}, Flavors: []kueue.FlavorQuotas{
			{Name: "why-f", Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse("4")}}}}}}}}
	create(t, &kueue.ResourceFlavor{ObjectMeta: metav1Name("why-f")}, cq,
		&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "why-cq"}})
	holder := newWorkload(ns, "holder", "lq", nil, nil)
	holder.Spec.PodSets[0].Count = 3
	holder.Spec.MaximumExecutionTimeSeconds = ptr.To[int32](3600)
	waiting := newWorkload(ns, "waiting", "lq", nil, nil)
	waiting.Spec.PodSets[0].Count = 2
	lost := newWorkload(ns, "lost", "nope", nil, nil)
	create(t, holder, waiting, lost)
	holder.Status.Admission = &kueue.Admission{ClusterQueue: "why-cq", PodSetAssignments: []kueue.PodSetAssignment{{Name: "main", Count: ptr.To[int32](3),
		Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{corev1.ResourceCPU: "why-f"}, ResourceUsage: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}}}}
	holder.Status.Conditions = []metav1.Condition{condition(kueue.WorkloadQuotaReserved, time.Now()), condition(kueue.WorkloadAdmitted, time.Now())}
	updateStatus(t, holder)
	get(t, client.ObjectKey{Name: "why-cq"}, cq)
	cq.Status = kueue.ClusterQueueStatus{PendingWorkloads: 1, ReservingWorkloads: 1, AdmittedWorkloads: 1, FlavorsUsage: []kueue.FlavorUsage{
		{Name: "why-f", Resources: []kueue.ResourceUsage{{Name: corev1.ResourceCPU, Total: resource.MustParse("3")}}}}}
	updateStatus(t, cq)

	tr := newTranscript(t)
	tr.ok("why", "waiting", "-n", ns, "--no-estimate")
	tr.ok("why", "lost", "-n", ns)
	tr.fails("why", "ghost", "-n", ns)
	tr.fails("why", "waiting", "-n", ns, "-o", "yaml")
	tr.ok("top", "-n", ns, "--once")
	tr.check()

	out, err := tr.run("", "why", "waiting", "-n", ns, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var ex why.Explanation
	if err := json.Unmarshal([]byte(out), &ex); err != nil {
		t.Fatal(err)
	}
	if e := ex.Estimate; e == nil || !e.Known || e.Seconds < 3500 || e.Seconds > 3600 {
		t.Errorf("estimate %+v, want about an hour (the holder's maximum execution time)", e)
	}
}
