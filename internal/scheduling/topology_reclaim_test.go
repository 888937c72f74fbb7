package scheduling

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/state"
)

// tasCohort is tasCluster's nodes (racks a and b, 8 CPUs each) shared by
// ClusterQueues "cq" (nominal 8 CPUs of flavor "tas", with preemption),
// "other" (nominal otherNominal) and "idle" (nominal 16, unused: the
// cohort has more quota than nodes) in cohort "co", each borrowing up to
// 16.
func tasCohort(t *testing.T, preemption *kueue.ClusterQueuePreemption, otherNominal string) *state.State {
	t.Helper()
	st := tasClusterWith(t, nil, "tas")
	for _, q := range []struct {
		name, nominal string
		pol           *kueue.ClusterQueuePreemption
	}{{"cq", "8", preemption}, {"other", otherNominal, nil}, {"idle", "16", nil}} {
		cq, err := state.NewClusterQueue(&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: q.name}, Spec: kueue.ClusterQueueSpec{
			NamespaceSelector: &metav1.LabelSelector{}, Preemption: q.pol, CohortName: "co",
			ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
				Flavors: []kueue.FlavorQuotas{{Name: "tas", Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU,
					NominalQuota: resource.MustParse(q.nominal), BorrowingLimit: ptr.To(resource.MustParse("16"))}}}}}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		st.SetClusterQueue(cq)
	}
	return st
}

// A workload that fits its ClusterQueue's nominal quota (and the cohort's)
// but finds the nodes taken by another ClusterQueue of its cohort, which
// borrows,
// reclaims them (reclaimWithinCohort): the fewest of that queue's
// workloads that free a rack, the most recently admitted, with reason
// InCohortReclamation. Without the policy, or when the other queue does
// not borrow, it waits.
func TestTopologyPreemptionReclaimsFromTheCohort(t *testing.T) {
	rack := &kueue.PodSetTopologyRequest{Required: ptr.To(testRack)}
	setup := func(pol *kueue.ClusterQueuePreemption, otherNominal string) *state.State {
		st := tasCohort(t, pol, otherNominal)
		holdingIn(t, st, "other", "first", 0, 1, map[string]int32{"a1": 4, "a2": 4})
		holdingIn(t, st, "other", "second", 0, 2, map[string]int32{"b1": 4, "b2": 4})
		return st
	}
	st := setup(&kueue.ClusterQueuePreemption{ReclaimWithinCohort: kueue.PreemptionPolicyAny}, "8")
	d := decideOne(t, st, tasWorkload("high", 8, rack, 10))["high"]
	if d.Admit || d.Reason != WaitingForPreemptedWorkloads || len(d.Victims) != 1 || d.Victims[0].Workload.Key.Name != "second" ||
		d.Victims[0].Reason != kueue.InCohortReclamationReason {
		t.Fatalf("want the other queue's newer workload reclaimed; got admit=%v %s %+v", d.Admit, d.Reason, d.Victims)
	}
	for name, st := range map[string]*state.State{
		"no reclaim policy":             setup(&kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyLowerPriority}, "8"),
		"the other queue not borrowing": setup(&kueue.ClusterQueuePreemption{ReclaimWithinCohort: kueue.PreemptionPolicyAny}, "16"),
	} {
		if d := decideOne(t, st, tasWorkload("high", 8, rack, 10))["high"]; d.Admit || d.Reason != TopologyPlacementFailed || len(d.Victims) > 0 {
			t.Errorf("%s: want TopologyPlacementFailed without victims, got %s %+v", name, d.Reason, d.Victims)
		}
	}
}
