package manager

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// waitPendingMessage waits until the workload waits with the reason and a
// message containing want.
func waitPendingMessage(t *testing.T, ns, name, reason, want string) {
	t.Helper()
	waitPending(t, ns, name, reason)
	waitWorkload(t, ns, name, "message naming "+want, func(wl *kueue.Workload) error {
		for _, c := range wl.Status.Conditions {
			if c.Type == kueue.WorkloadQuotaReserved {
				if !strings.Contains(c.Message, want) {
					return fmt.Errorf("QuotaReserved message %q", c.Message)
				}
				return nil
			}
		}
		return fmt.Errorf("no QuotaReserved condition")
	})
}

// Malformed or dangling input gets a clear condition (and, for workloads, a
// Warning event), and the manager keeps working.
func TestBadInput(t *testing.T) {
	startManager(t)
	ns, cq, fl := singleQueue(t, "4")

	t.Run("unknown LocalQueue", func(t *testing.T) {
		create(t, newWorkload(ns, "lost", "no-such-queue", 1, "1", 0))
		waitPendingMessage(t, ns, "lost", kueue.WorkloadReasonMisconfigured, "no-such-queue")
		waitEvent(t, ns, "lost", corev1.EventTypeWarning, kueue.WorkloadReasonMisconfigured)
	})

	t.Run("ClusterQueue with a missing flavor", func(t *testing.T) {
		broken, missing := scoped(ns, "broken"), scoped(ns, "missing")
		create(t, clusterQueue(broken, "", missing, "4"), localQueue(ns, "broken", broken))
		waitClusterQueueActive(t, broken, metav1.ConditionFalse, "FlavorNotFound")
		create(t, newWorkload(ns, "stuck", "broken", 1, "1", 0))
		waitPending(t, ns, "stuck", kueue.WorkloadReasonSuspended)
		stayPending(t, ns, "stuck")
		// Creating the flavor repairs the queue.
		create(t, flavor(missing, nil))
		waitClusterQueueActive(t, broken, metav1.ConditionTrue, "Ready")
		waitAdmitted(t, ns, "stuck", broken)
	})

	t.Run("podset count above 2^24", func(t *testing.T) {
		create(t, newWorkload(ns, "huge", "lq", 1<<24+1, "1", 0))
		waitPendingMessage(t, ns, "huge", kueue.WorkloadReasonMisconfigured, "spec.podSets[0].count")
		waitEvent(t, ns, "huge", corev1.EventTypeWarning, kueue.WorkloadReasonMisconfigured)
	})

	t.Run("manager still admits", func(t *testing.T) {
		create(t, newWorkload(ns, "fine", "lq", 2, "1", 0))
		waitAdmitted(t, ns, "fine", cq)
		waitUsage(t, cq, fl, 1, "2", "0")
		// The unknown LocalQueue appears: its workload is admitted.
		create(t, localQueue(ns, "no-such-queue", cq))
		waitAdmitted(t, ns, "lost", cq)
		waitUsage(t, cq, fl, 2, "3", "0")
		stayPending(t, ns, "huge")
	})
}

// A pending workload shows what it asks for in status.resourceRequests,
// and drops it once admitted.
func TestPendingShowsResourceRequests(t *testing.T) {
	startManager(t)
	ns, cq, _ := singleQueue(t, "2")
	create(t, newWorkload(ns, "running", "lq", 2, "1", 0))
	waitAdmitted(t, ns, "running", cq)
	create(t, newWorkload(ns, "waiting", "lq", 2, "500m", 0))
	waitWorkload(t, ns, "waiting", "showing its requests", func(wl *kueue.Workload) error {
		rr := wl.Status.ResourceRequests
		if len(rr) != 1 || rr[0].Name != "main" || rr[0].Resources.Cpu().String() != "1" {
			return fmt.Errorf("resourceRequests %+v, want main: cpu 1", rr)
		}
		return nil
	})
	finish(t, ns, "running")
	waitAdmitted(t, ns, "waiting", cq)
	if rr := getWorkload(t, ns, "waiting").Status.ResourceRequests; rr != nil {
		t.Errorf("an admitted workload keeps resourceRequests %+v", rr)
	}
}
