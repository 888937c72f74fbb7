package scheduling

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/scheduling/preemption"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// tasCohort is tasCluster's nodes (racks a and b, 8 CPUs each) shared by
// ClusterQueues "cq" (nominal 8 CPUs of flavor "tas", with preemption),
// "other" (nominal otherNominal) and "idle" (nominal 16, unused: the
// cohort has more quota than nodes) in cohort "co", each borrowing up to
// 16.
func tasCohort(t *testing.T, preemption *kueue.ClusterQueuePreemption, otherNominal string) *state.State {
	t.Helper()
	return tasCohortOf(t, preemption, nil, "8", otherNominal)
}

// tasCohortOf is tasCohort with "cq"'s nominal quota and "other"'s
// preemption policies given.
func tasCohortOf(t *testing.T, preemption, otherPreemption *kueue.ClusterQueuePreemption, cqNominal, otherNominal string) *state.State {
	t.Helper()
	st := tasClusterWith(t, nil, "tas")
	for _, q := range []struct {
		name, nominal string
		pol           *kueue.ClusterQueuePreemption
	}{{"cq", cqNominal, preemption}, {"other", otherNominal, otherPreemption}, {"idle", "16", nil}} {
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

// decideWith is decideOne with options (fair sharing).
func decideWith(t *testing.T, st *state.State, opts Options, ws ...*workload.Info) map[string]Decision {
	t.Helper()
	return decideIn(t, st, "cq", opts, ws...)
}

// decideIn is decideWith for the workloads of another ClusterQueue.
func decideIn(t *testing.T, st *state.State, cq kueue.ClusterQueueReference, opts Options, ws ...*workload.Info) map[string]Decision {
	t.Helper()
	for _, w := range ws {
		w.ClusterQueue = cq
	}
	res := Decide(st.Snapshot(), []workload.Queue{{ClusterQueue: cq, Workloads: ws}}, opts)
	out := map[string]Decision{}
	for _, d := range res.AllDecisions() {
		out[d.Workload.Key.Name] = d
	}
	return out
}

// borrowingForRack sets up a ClusterQueue "cq" (nominal 4 CPUs) whose
// 8-pod workload must borrow, and the nodes held by two priority-0
// workloads of "other" (nominal otherNominal, using all 16 CPUs).
func borrowingForRack(t *testing.T, pol *kueue.ClusterQueuePreemption, otherNominal string) *state.State {
	st := tasCohortOf(t, pol, pol, "4", otherNominal)
	holdingIn(t, st, "other", "first", 0, 1, map[string]int32{"a1": 4, "a2": 4})
	holdingIn(t, st, "other", "second", 0, 2, map[string]int32{"b1": 4, "b2": 4})
	return st
}

func highForRack(prio int32) *workload.Info {
	w := tasWorkload("high", 8, &kueue.PodSetTopologyRequest{Required: ptr.To(testRack)}, 10)
	w.Priority = prio
	return w
}

// A workload that must borrow to run and finds the nodes held by another
// ClusterQueue takes, by borrowWithinCohort, the newest lower-priority
// workload that ran wholly on borrowed quota (InCohortReclaimWhileBorrowing);
// without the policy, above maxPriorityThreshold, at equal priority, or
// when the victims ran partly on their own queue's quota, it waits.
func TestTopologyPreemptionWhileBorrowing(t *testing.T) {
	lower := &kueue.ClusterQueuePreemption{ReclaimWithinCohort: kueue.PreemptionPolicyAny,
		BorrowWithinCohort: &kueue.BorrowWithinCohort{Policy: kueue.BorrowWithinCohortPolicyLowerPriority}}
	d := decideOne(t, borrowingForRack(t, lower, "4"), highForRack(10))["high"]
	if d.Admit || d.Reason != WaitingForPreemptedWorkloads || len(d.Victims) != 1 || d.Victims[0].Workload.Key.Name != "second" ||
		d.Victims[0].Reason != kueue.InCohortReclaimWhileBorrowingReason {
		t.Fatalf("want the other queue's newer workload taken while borrowing; got admit=%v %s %+v", d.Admit, d.Reason, d.Victims)
	}
	threshold := &kueue.ClusterQueuePreemption{ReclaimWithinCohort: kueue.PreemptionPolicyAny,
		BorrowWithinCohort: &kueue.BorrowWithinCohort{Policy: kueue.BorrowWithinCohortPolicyLowerPriority, MaxPriorityThreshold: ptr.To(int32(-1))}}
	for name, c := range map[string]struct {
		st   *state.State
		prio int32
	}{
		"reclaim only":                {borrowingForRack(t, &kueue.ClusterQueuePreemption{ReclaimWithinCohort: kueue.PreemptionPolicyAny}, "4"), 10},
		"above the threshold":         {borrowingForRack(t, threshold, "4"), 10},
		"equal priority":              {borrowingForRack(t, lower, "4"), 0},
		"victims partly within quota": {borrowingForRack(t, lower, "12"), 10},
	} {
		if d := decideOne(t, c.st, highForRack(c.prio))["high"]; d.Admit || d.Reason != TopologyPlacementFailed || len(d.Victims) > 0 {
			t.Errorf("%s: want TopologyPlacementFailed without victims, got %s %+v", name, d.Reason, d.Victims)
		}
	}
}

// Under fair sharing, a borrowing workload takes another queue's workload
// for room on the nodes when its strategy says its share stays fair
// (InCohortFairSharing): "other" borrows 12 CPUs, and without "second"
// would still borrow 4, as much as "cq" will. When "other" borrows less
// (nominal 8: 0 once "second" is gone), LessThanOrEqualToFinalShare refuses
// and LessThanInitialShare (4 below 8) allows.
func TestTopologyPreemptionByFairSharing(t *testing.T) {
	pol := &kueue.ClusterQueuePreemption{ReclaimWithinCohort: kueue.PreemptionPolicyAny}
	final := Options{FairSharing: &FairSharing{Strategies: []preemption.Strategy{preemption.LessThanOrEqualToFinalShare}}}
	initial := Options{FairSharing: &FairSharing{Strategies: []preemption.Strategy{preemption.LessThanInitialShare}}}
	d := decideWith(t, borrowingForRack(t, pol, "4"), final, highForRack(0))["high"]
	if d.Admit || d.Reason != WaitingForPreemptedWorkloads || len(d.Victims) != 1 || d.Victims[0].Workload.Key.Name != "second" ||
		d.Victims[0].Reason != kueue.InCohortFairSharingReason {
		t.Fatalf("want the other queue's newer workload taken by fair sharing; got admit=%v %s %+v", d.Admit, d.Reason, d.Victims)
	}
	if d := decideWith(t, borrowingForRack(t, pol, "8"), final, highForRack(0))["high"]; d.Admit || d.Reason != TopologyPlacementFailed {
		t.Errorf("LessThanOrEqualToFinalShare: want TopologyPlacementFailed, got %s %+v", d.Reason, d.Victims)
	}
	d = decideWith(t, borrowingForRack(t, pol, "8"), initial, highForRack(0))["high"]
	if len(d.Victims) != 1 || d.Victims[0].Reason != kueue.InCohortFairSharingReason {
		t.Errorf("LessThanInitialShare: want one victim by fair sharing, got %s %+v", d.Reason, d.Victims)
	}
	if d := decideWith(t, borrowingForRack(t, &kueue.ClusterQueuePreemption{}, "4"), final, highForRack(0))["high"]; len(d.Victims) > 0 {
		t.Errorf("without reclaimWithinCohort nothing is taken, got %+v", d.Victims)
	}
}

// A victim taken for room on the nodes, back in its queue (which has the
// same policies), does not take the rack back from the workload that
// evicted it: neither while borrowing (lower priority) nor by fair sharing
// (its queue's share with it back is above the preemptor's).
func TestTopologyPreemptionVictimDoesNotTakeItBack(t *testing.T) {
	lower := &kueue.ClusterQueuePreemption{ReclaimWithinCohort: kueue.PreemptionPolicyAny,
		BorrowWithinCohort: &kueue.BorrowWithinCohort{Policy: kueue.BorrowWithinCohortPolicyLowerPriority}}
	fair := Options{FairSharing: &FairSharing{Strategies: []preemption.Strategy{
		preemption.LessThanOrEqualToFinalShare, preemption.LessThanInitialShare}}}
	for name, c := range map[string]struct {
		pol  *kueue.ClusterQueuePreemption
		opts Options
		prio int32
	}{
		"while borrowing": {lower, Options{}, 10},
		"fair sharing":    {&kueue.ClusterQueuePreemption{ReclaimWithinCohort: kueue.PreemptionPolicyAny}, fair, 0},
	} {
		st := borrowingForRack(t, c.pol, "4")
		d := decideWith(t, st, c.opts, highForRack(c.prio))["high"]
		if len(d.Victims) != 1 {
			t.Fatalf("%s: want one victim, got %s %+v", name, d.Reason, d.Victims)
		}
		// The victim is gone and the preemptor placed where it was.
		st.Forget(d.Victims[0].Workload.Key)
		holdingIn(t, st, "cq", "high", c.prio, 3, map[string]int32{"b1": 4, "b2": 4})
		back := tasWorkload("second", 8, &kueue.PodSetTopologyRequest{Required: ptr.To(testRack)}, 2)
		if d := decideIn(t, st, "other", c.opts, back)["second"]; d.Admit || len(d.Victims) > 0 {
			t.Errorf("%s: the victim came back and took %+v (%s)", name, d.Victims, d.Reason)
		}
	}
}
