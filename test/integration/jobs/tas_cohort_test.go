package jobs

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// A high-priority job of a ClusterQueue that must borrow to run (nominal 4
// CPUs, 8 asked) finds both racks held by low-priority jobs of another
// ClusterQueue of its cohort that runs wholly on borrowed quota (nominal
// 0). The cohort's quota (a lender of 32 CPUs) is more than the nodes
// hold, so the job fits the quota and not the nodes: with
// borrowWithinCohort it preempts the newer of the low-priority jobs, with
// reason InCohortReclaimWhileBorrowing, and takes its rack; the older keeps
// running.
func TestTopologyPreemptionWhileBorrowing(t *testing.T) {
	startManager(t)
	ns, fl, hosts := tasNodes(t)
	cohort := kueue.CohortReference(ns + "-co")
	queue := func(name, nominal string, pol *kueue.ClusterQueuePreemption) {
		create(t,
			&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name}, Spec: kueue.ClusterQueueSpec{
				NamespaceSelector: &metav1.LabelSelector{}, Preemption: pol, CohortName: cohort,
				ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
					Flavors: []kueue.FlavorQuotas{{Name: kueue.ResourceFlavorReference(fl),
						Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse(nominal)}}}}}},
			}},
			&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: kueue.LocalQueueSpec{
				ClusterQueue: kueue.ClusterQueueReference(ns + "-" + name)}})
	}
	queue("lender", "32", nil)
	queue("low", "0", nil)
	queue("high", "4", &kueue.ClusterQueuePreemption{ReclaimWithinCohort: kueue.PreemptionPolicyAny,
		BorrowWithinCohort: &kueue.BorrowWithinCohort{Policy: kueue.BorrowWithinCohortPolicyLowerPriority}})
	create(t,
		&kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: ns + "-low"}, Value: 0},
		&kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: ns + "-high"}, Value: 100})
	rackJob := func(name, queue string) {
		j := newJob(ns, name, queue, 8, "1")
		j.Labels["kueue.x-k8s.io/priority-class"] = ns + "-" + queue
		j.Spec.Template.Annotations = map[string]string{"kueue.x-k8s.io/podset-required-topology": rackLabel}
		create(t, j)
	}
	placedIn := func(job string) (string, error) {
		racks, _, err := placedRacks(t, ns, job, hosts)
		if err != nil {
			return "", err
		}
		if len(racks) != 1 {
			return "", fmt.Errorf("placed in racks %v", racks)
		}
		for r := range racks {
			return r, nil
		}
		return "", nil
	}
	placed := func(job string) func() error {
		return func() error { _, err := placedIn(job); return err }
	}
	rackJob("low-first", "low")
	eventually(t, "low-first placed", placed("low-first"))
	// Admission times are stored in seconds: the second job must be
	// admitted in a later second to be the newer one.
	time.Sleep(1100 * time.Millisecond)
	rackJob("low-second", "low")
	eventually(t, "low-second placed", placed("low-second"))
	freed, _ := placedIn("low-second")
	rackJob("high", "high")
	eventually(t, "high placed in the rack of the newer low-priority job", func() error {
		got, err := placedIn("high")
		if err != nil || got != freed {
			return fmt.Errorf("high in rack %q (%v), want %q", got, err, freed)
		}
		return nil
	})
	second := workloadOf(t, getJob(t, ns, "low-second"))
	if c := condition(second, kueue.WorkloadPreempted); c == nil || c.Status != metav1.ConditionTrue ||
		c.Reason != kueue.InCohortReclaimWhileBorrowingReason {
		t.Fatalf("low-second: Preempted %+v, want reason %s", c, kueue.InCohortReclaimWhileBorrowingReason)
	}
	if c := condition(workloadOf(t, getJob(t, ns, "low-first")), kueue.WorkloadEvicted); c != nil && c.Status == metav1.ConditionTrue {
		t.Fatalf("low-first was evicted too: %+v", c)
	}
}
