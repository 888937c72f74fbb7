package manager

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Deactivating an admitted workload (spec.active=false) evicts it, clears
// its reservation and frees its quota for others; it stays out of the queue
// until reactivated, then it is admitted again.
func TestDeactivationAndReactivation(t *testing.T) {
	startManager(t)
	ns, cq, fl := singleQueue(t, "2")
	create(t, newWorkload(ns, "w1", "lq", 2, "1", 0))
	waitAdmitted(t, ns, "w1", cq)
	create(t, newWorkload(ns, "w2", "lq", 2, "1", 0))
	waitPending(t, ns, "w2", kueue.WorkloadReasonWaitingForQuota)

	setActive(t, ns, "w1", false)
	waitEvicted(t, ns, "w1", kueue.WorkloadEvictedByDeactivation)
	waitWorkload(t, ns, "w1", "parked", func(wl *kueue.Workload) error {
		return hasCondition(wl, kueue.WorkloadRequeued, metav1.ConditionFalse, kueue.WorkloadEvictedByDeactivation)
	})
	waitAdmitted(t, ns, "w2", cq)
	waitUsage(t, cq, fl, 1, "2", "0")
	waitEvent(t, ns, "w1", "Normal", "EvictedDueToDeactivated")

	// Reactivated, it goes back to its queue (Requeued=True, Reactivated)
	// and waits for quota; it is admitted when w2 finishes.
	setActive(t, ns, "w1", true)
	waitPending(t, ns, "w1", kueue.WorkloadReasonWaitingForQuota)
	if err := hasCondition(getWorkload(t, ns, "w1"), kueue.WorkloadRequeued, metav1.ConditionTrue, kueue.WorkloadReactivated); err != nil {
		t.Errorf("reactivated workload back in its queue: %v", err)
	}
	waitQueueStatus(t, cq, func(st *kueue.ClusterQueueStatus) error {
		if st.PendingWorkloads != 1 {
			return fmt.Errorf("pending %d, want 1", st.PendingWorkloads)
		}
		return nil
	})
	finish(t, ns, "w2")
	waitAdmitted(t, ns, "w1", cq)
	waitUsage(t, cq, fl, 1, "2", "0")
}
