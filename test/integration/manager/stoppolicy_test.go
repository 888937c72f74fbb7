package manager

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

func setClusterQueueStopPolicy(t *testing.T, name string, p kueue.StopPolicy) {
	t.Helper()
	update(t, &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: name}},
		func(cq *kueue.ClusterQueue) { cq.Spec.StopPolicy = ptr.To(p) })
}

func setLocalQueueStopPolicy(t *testing.T, ns, name string, p kueue.StopPolicy) {
	t.Helper()
	update(t, &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
		func(lq *kueue.LocalQueue) { lq.Spec.StopPolicy = ptr.To(p) })
}

// waitLocalQueueActive waits for a LocalQueue's Active condition.
func waitLocalQueueActive(t *testing.T, ns, name string, status metav1.ConditionStatus, reason string) {
	t.Helper()
	eventually(t, 45*time.Second, "LocalQueue "+name+" Active condition", func() error {
		var lq kueue.LocalQueue
		if err := env.Client.Get(t.Context(), objectKey(ns, name), &lq); err != nil {
			return err
		}
		c := meta.FindStatusCondition(lq.Status.Conditions, kueue.LocalQueueActive)
		if c == nil || c.Status != status || c.Reason != reason {
			return fmt.Errorf("Active condition %+v, want %s reason %s", c, status, reason)
		}
		return nil
	})
}

// requeuedAs checks the Requeued condition of a workload that came back to
// its queue (or was admitted again): True with the reason.
func requeuedAs(t *testing.T, ns, name, reason string) {
	t.Helper()
	if err := hasCondition(getWorkload(t, ns, name), kueue.WorkloadRequeued, metav1.ConditionTrue, reason); err != nil {
		t.Errorf("workload %s back in its queue: %v", name, err)
	}
}

// ClusterQueue stop policies: Hold stops new admissions and keeps running
// workloads; HoldAndDrain evicts them too; None admits again.
func TestClusterQueueStopPolicy(t *testing.T) {
	startManager(t)
	ns, cq, fl := singleQueue(t, "4")
	create(t, newWorkload(ns, "running", "lq", 2, "1", 0))
	waitAdmitted(t, ns, "running", cq)

	setClusterQueueStopPolicy(t, cq, kueue.Hold)
	waitClusterQueueActive(t, cq, metav1.ConditionFalse, "Stopped")
	create(t, newWorkload(ns, "new", "lq", 1, "1", 0))
	waitPending(t, ns, "new", kueue.WorkloadReasonSuspended)
	stayPending(t, ns, "new")
	stayAdmitted(t, ns, "running")
	waitLocalQueueActive(t, ns, "lq", metav1.ConditionFalse, "ClusterQueueIsInactive")

	setClusterQueueStopPolicy(t, cq, kueue.HoldAndDrain)
	waitEvicted(t, ns, "running", kueue.WorkloadEvictedByClusterQueueStopped)
	waitEvent(t, ns, "running", "Normal", "EvictedDueToClusterQueueStopped")
	waitWorkload(t, ns, "running", "parked", func(wl *kueue.Workload) error {
		return hasCondition(wl, kueue.WorkloadRequeued, metav1.ConditionFalse, kueue.WorkloadEvictedByClusterQueueStopped)
	})
	waitUsage(t, cq, fl, 0, "0", "0")
	stayPending(t, ns, "running", "new")

	setClusterQueueStopPolicy(t, cq, kueue.None)
	waitClusterQueueActive(t, cq, metav1.ConditionTrue, "Ready")
	waitAdmitted(t, ns, "running", cq)
	waitAdmitted(t, ns, "new", cq)
	waitUsage(t, cq, fl, 2, "3", "0")
	requeuedAs(t, ns, "running", kueue.WorkloadClusterQueueRestarted)
}

// LocalQueue stop policy Hold: the LocalQueue is inactive, its new workloads
// wait, its running ones keep running, and other LocalQueues of the
// ClusterQueue are not affected. Back to None, the waiting ones are
// admitted.
func TestLocalQueueHold(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	cq, fl := scoped(ns, "cq"), scoped(ns, "f")
	create(t, flavor(fl, nil), clusterQueue(cq, "", fl, "4"), localQueue(ns, "held", cq), localQueue(ns, "open", cq))
	create(t, newWorkload(ns, "running", "held", 1, "1", 0))
	waitAdmitted(t, ns, "running", cq)

	setLocalQueueStopPolicy(t, ns, "held", kueue.Hold)
	waitLocalQueueActive(t, ns, "held", metav1.ConditionFalse, "Stopped")
	create(t, newWorkload(ns, "new", "held", 1, "1", 0), newWorkload(ns, "other", "open", 1, "1", 0))
	waitAdmitted(t, ns, "other", cq)
	waitPending(t, ns, "new", kueue.WorkloadReasonSuspended)
	stayPending(t, ns, "new")
	stayAdmitted(t, ns, "running")

	setLocalQueueStopPolicy(t, ns, "held", kueue.None)
	waitLocalQueueActive(t, ns, "held", metav1.ConditionTrue, "Ready")
	waitAdmitted(t, ns, "new", cq)
	waitUsage(t, cq, fl, 3, "3", "0")
}

// LocalQueue HoldAndDrain evicts the LocalQueue's admitted workloads.
func TestLocalQueueHoldAndDrain(t *testing.T) {
	startManager(t)
	ns, cq, fl := singleQueue(t, "4")
	create(t, newWorkload(ns, "running", "lq", 2, "1", 0))
	waitAdmitted(t, ns, "running", cq)

	setLocalQueueStopPolicy(t, ns, "lq", kueue.HoldAndDrain)
	waitEvicted(t, ns, "running", kueue.WorkloadEvictedByLocalQueueStopped)
	waitUsage(t, cq, fl, 0, "0", "0")

	setLocalQueueStopPolicy(t, ns, "lq", kueue.None)
	waitAdmitted(t, ns, "running", cq)
	requeuedAs(t, ns, "running", kueue.WorkloadLocalQueueRestarted)
}
