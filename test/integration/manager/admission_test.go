package manager

import (
	"fmt"
	"testing"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Workloads are admitted within quota; the rest waits and is admitted once
// quota is freed by a finished workload. ClusterQueue status follows.
func TestAdmissionWithinQuotaAndWhenQuotaFrees(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	create(t, flavor("fa", nil), clusterQueue("cq-a", "", "fa", "4"), localQueue(ns, "lq", "cq-a"))
	create(t, newWorkload(ns, "w1", "lq", 2, "1", 0), newWorkload(ns, "w2", "lq", 2, "1", 0))
	waitAdmitted(t, ns, "w1", "cq-a")
	waitAdmitted(t, ns, "w2", "cq-a")
	create(t, newWorkload(ns, "w3", "lq", 1, "1", 0))
	waitPending(t, ns, "w3", kueue.WorkloadReasonWaitingForQuota)
	waitQueueStatus(t, "cq-a", func(st *kueue.ClusterQueueStatus) error {
		if st.ReservingWorkloads != 2 || st.AdmittedWorkloads != 2 || st.PendingWorkloads != 1 || reservedCPU(st, "fa") != "4" {
			return fmt.Errorf("reserving %d admitted %d pending %d cpu %s", st.ReservingWorkloads, st.AdmittedWorkloads, st.PendingWorkloads, reservedCPU(st, "fa"))
		}
		return nil
	})
	finish(t, ns, "w1")
	waitAdmitted(t, ns, "w3", "cq-a")
	waitQueueStatus(t, "cq-a", func(st *kueue.ClusterQueueStatus) error {
		if st.ReservingWorkloads != 2 || st.PendingWorkloads != 0 || reservedCPU(st, "fa") != "3" {
			return fmt.Errorf("reserving %d pending %d cpu %s", st.ReservingWorkloads, st.PendingWorkloads, reservedCPU(st, "fa"))
		}
		return nil
	})
}
