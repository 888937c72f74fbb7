package manager

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// waitPreempted waits until a victim shows the preemption: Evicted=True
// reason Preempted, Preempted=True with the preemption reason, then (no job
// owns it) its reservation cleared and Requeued=True.
func waitPreempted(t *testing.T, ns, name, preemptionReason string) {
	t.Helper()
	waitEvicted(t, ns, name, kueue.WorkloadEvictedByPreemption)
	waitWorkload(t, ns, name, "preempted and requeued", func(wl *kueue.Workload) error {
		if err := hasCondition(wl, kueue.WorkloadPreempted, metav1.ConditionTrue, preemptionReason); err != nil {
			return err
		}
		return hasCondition(wl, kueue.WorkloadRequeued, metav1.ConditionTrue, kueue.WorkloadEvictedByPreemption)
	})
}

// A high-priority workload preempts a low-priority one in its ClusterQueue
// (withinClusterQueue: LowerPriority): the victim is evicted, its
// reservation cleared and it goes back to its queue; the preemptor is
// admitted.
func TestPreemptionWithinClusterQueue(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	cq, fl := scoped(ns, "cq"), scoped(ns, "f")
	create(t, flavor(fl, nil), clusterQueue(cq, "", fl, "2", preemption(kueue.PreemptionPolicyLowerPriority, "")),
		localQueue(ns, "lq", cq))
	create(t, newWorkload(ns, "low", "lq", 2, "1", 0))
	waitAdmitted(t, ns, "low", cq)

	create(t, newWorkload(ns, "high", "lq", 2, "1", 100))
	waitPreempted(t, ns, "low", kueue.InClusterQueueReason)
	waitAdmitted(t, ns, "high", cq)
	high := getWorkload(t, ns, "high")
	if msg := waitEvent(t, ns, "low", corev1.EventTypeNormal, "Preempted"); !strings.Contains(msg, string(high.UID)) {
		t.Errorf("Preempted event message %q does not name the preemptor's UID %s", msg, high.UID)
	}
	// The victim waits in its queue again, for quota.
	waitPending(t, ns, "low", kueue.WorkloadReasonWaitingForQuota)
	waitUsage(t, cq, fl, 1, "2", "0")
	if st := getWorkload(t, ns, "low").Status.SchedulingStats; st == nil || len(st.Evictions) != 1 ||
		st.Evictions[0].Reason != kueue.WorkloadEvictedByPreemption || st.Evictions[0].Count != 1 {
		t.Errorf("victim schedulingStats %+v, want one Preempted eviction", st)
	}

	// It is admitted again once the preemptor finishes.
	finish(t, ns, "high")
	waitAdmitted(t, ns, "low", cq)
}

// A ClusterQueue takes back the quota it lent (reclaimWithinCohort: Any):
// the borrower's workload is preempted with reason InCohortReclamation.
func TestReclaimWithinCohort(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	cohort, fl := scoped(ns, "co"), scoped(ns, "f")
	owner, borrower := scoped(ns, "owner"), scoped(ns, "borrower")
	create(t, flavor(fl, nil),
		clusterQueue(owner, cohort, fl, "4", preemption("", kueue.PreemptionPolicyAny)),
		clusterQueue(borrower, cohort, fl, "0"),
		localQueue(ns, "owner", owner), localQueue(ns, "borrower", borrower))

	// Same priority everywhere: reclaim does not depend on priority.
	create(t, newWorkload(ns, "b1", "borrower", 2, "1", 0), newWorkload(ns, "b2", "borrower", 2, "1", 0))
	waitAdmitted(t, ns, "b1", borrower)
	waitAdmitted(t, ns, "b2", borrower)
	waitUsage(t, borrower, fl, 2, "4", "4")

	create(t, newWorkload(ns, "mine", "owner", 2, "1", 0))
	waitAdmitted(t, ns, "mine", owner)
	// Exactly one of the borrower's workloads had to go.
	var victim, survivor string
	eventually(t, 45*time.Second, "one borrower workload preempted", func() error {
		victim, survivor = "", ""
		for _, name := range []string{"b1", "b2"} {
			if getWorkload(t, ns, name).Status.Admission == nil {
				victim = name
			} else {
				survivor = name
			}
		}
		if victim == "" || survivor == "" {
			return fmt.Errorf("victim %q survivor %q", victim, survivor)
		}
		return nil
	})
	waitPreempted(t, ns, victim, kueue.InCohortReclamationReason)
	waitEvent(t, ns, victim, corev1.EventTypeNormal, "Preempted")
	stayAdmitted(t, ns, survivor, "mine")
	waitUsage(t, owner, fl, 1, "2", "0")
	waitUsage(t, borrower, fl, 1, "2", "2")
}

// A workload that could preempt waits instead when its victim is expected
// to end within the patience (here from its maximum execution time): the
// victim is not evicted, the preemptor says why it waits, and it is
// admitted when the victim ends.
func TestPreemptionWaitsForAWorkloadEndingSoon(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	cq, fl := scoped(ns, "cq"), scoped(ns, "f")
	create(t, flavor(fl, nil), clusterQueue(cq, "", fl, "2", preemption(kueue.PreemptionPolicyLowerPriority, "")),
		localQueue(ns, "lq", cq))
	short := newWorkload(ns, "short", "lq", 2, "1", 0)
	short.Spec.MaximumExecutionTimeSeconds = ptr.To[int32](8)
	create(t, short)
	waitAdmitted(t, ns, "short", cq)
	create(t, newWorkload(ns, "high", "lq", 2, "1", 100))
	waitWorkload(t, ns, "high", "waiting for short to end", func(wl *kueue.Workload) error {
		c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
		if c == nil || c.Reason != kueue.WorkloadReasonWaitingForQuota || !strings.Contains(c.Message, "expected to end within") {
			return fmt.Errorf("QuotaReserved %+v", c)
		}
		return nil
	})
	stayAdmitted(t, ns, "short")
	finish(t, ns, "short")
	waitAdmitted(t, ns, "high", cq)
	if st, _ := condition(getWorkload(t, ns, "short"), kueue.WorkloadEvicted); st == metav1.ConditionTrue {
		t.Fatal("the workload ending soon was evicted")
	}
}
