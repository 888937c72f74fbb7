package manager

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// setCheckState sets a workload's admission check state, as the check's
// controller would, through a status update.
func setCheckState(t *testing.T, ns, name string, check kueue.AdmissionCheckReference, state kueue.CheckState, msg string) {
	t.Helper()
	updateStatus(t, &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, func(wl *kueue.Workload) {
		for i := range wl.Status.AdmissionChecks {
			if c := &wl.Status.AdmissionChecks[i]; c.Name == check {
				c.State, c.Message, c.LastTransitionTime = state, msg, metav1.Now()
				return
			}
		}
		t.Fatalf("workload %s has no state for check %s: %+v", name, check, wl.Status.AdmissionChecks)
	})
}

// waitCheckPending waits until the workload reserves quota but is not
// admitted, its check Pending.
func waitCheckPending(t *testing.T, ns, name, cq string, check kueue.AdmissionCheckReference) *kueue.Workload {
	t.Helper()
	var out *kueue.Workload
	waitWorkload(t, ns, name, "reserving, check pending", func(wl *kueue.Workload) error {
		if err := hasCondition(wl, kueue.WorkloadQuotaReserved, metav1.ConditionTrue, kueue.WorkloadReasonQuotaReserved); err != nil {
			return err
		}
		if err := hasCondition(wl, kueue.WorkloadAdmitted, metav1.ConditionFalse, kueue.WorkloadReasonUnsatisfiedAdmissionChecks); err != nil {
			return err
		}
		if wl.Status.Admission == nil || string(wl.Status.Admission.ClusterQueue) != cq {
			return fmt.Errorf("admission %+v", wl.Status.Admission)
		}
		if len(wl.Status.AdmissionChecks) != 1 || wl.Status.AdmissionChecks[0].Name != check ||
			wl.Status.AdmissionChecks[0].State != kueue.CheckStatePending {
			return fmt.Errorf("admissionChecks %+v, want %s Pending", wl.Status.AdmissionChecks, check)
		}
		out = wl
		return nil
	})
	return out
}

// A ClusterQueue with an admission check: workloads reserve quota, then wait
// for the check. Ready admits them; Retry evicts and requeues them; Rejected
// deactivates them.
func TestAdmissionCheckLifecycle(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	cq, fl := scoped(ns, "cq"), scoped(ns, "f")
	check := kueue.AdmissionCheckReference(scoped(ns, "check"))
	ac := &kueue.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: string(check)},
		Spec: kueue.AdmissionCheckSpec{ControllerName: "example.com/x"}}
	create(t, ac)
	updateStatus(t, ac, func(ac *kueue.AdmissionCheck) {
		meta.SetStatusCondition(&ac.Status.Conditions, metav1.Condition{Type: kueue.AdmissionCheckActive,
			Status: metav1.ConditionTrue, Reason: "Active", Message: "The check's controller is ready"})
	})
	create(t, flavor(fl, nil), clusterQueue(cq, "", fl, "4", func(c *kueue.ClusterQueue) {
		c.Spec.AdmissionChecksStrategy = &kueue.AdmissionChecksStrategy{
			AdmissionChecks: []kueue.AdmissionCheckStrategyRule{{Name: check}}}
	}), localQueue(ns, "lq", cq))
	waitClusterQueueActive(t, cq, metav1.ConditionTrue, "Ready")

	t.Run("Ready admits", func(t *testing.T) {
		create(t, newWorkload(ns, "ready", "lq", 1, "1", 0))
		waitCheckPending(t, ns, "ready", cq, check)
		waitQueueStatus(t, cq, func(st *kueue.ClusterQueueStatus) error {
			rt, _ := cpuUsage(st.FlavorsReservation, fl)
			ut, _ := cpuUsage(st.FlavorsUsage, fl)
			if st.ReservingWorkloads != 1 || st.AdmittedWorkloads != 0 || rt != "1" || ut != "0" {
				return fmt.Errorf("reserving %d admitted %d reservation %s usage %s", st.ReservingWorkloads, st.AdmittedWorkloads, rt, ut)
			}
			return nil
		})
		setCheckState(t, ns, "ready", check, kueue.CheckStateReady, "ok")
		waitAdmitted(t, ns, "ready", cq)
		waitUsage(t, cq, fl, 1, "1", "0")
		finish(t, ns, "ready")
		waitUsage(t, cq, fl, 0, "0", "0")
	})

	t.Run("Retry evicts and requeues", func(t *testing.T) {
		create(t, newWorkload(ns, "retry", "lq", 1, "1", 0))
		waitCheckPending(t, ns, "retry", cq, check)
		setCheckState(t, ns, "retry", check, kueue.CheckStateReady, "ok")
		waitAdmitted(t, ns, "retry", cq)
		setCheckState(t, ns, "retry", check, kueue.CheckStateRetry, "try again")
		// Evicted (reason AdmissionCheck), released and, without
		// requeueAfterSeconds, requeued at once: it reserves quota again
		// and its check starts over, Pending, counting the retry.
		waitEvent(t, ns, "retry", corev1.EventTypeNormal, "EvictedDueToAdmissionCheck")
		var wl *kueue.Workload
		waitWorkload(t, ns, "retry", "evicted by the check and reserving again", func(w *kueue.Workload) error {
			if s := w.Status.SchedulingStats; s == nil || len(s.Evictions) != 1 || s.Evictions[0].Reason != kueue.WorkloadEvictedByAdmissionCheck ||
				s.Evictions[0].UnderlyingCause != "" || s.Evictions[0].Count != 1 {
				return fmt.Errorf("schedulingStats %+v, want one AdmissionCheck eviction", s)
			}
			if c := meta.FindStatusCondition(w.Status.Conditions, kueue.WorkloadEvicted); c == nil || !strings.Contains(c.Message, "try again") {
				return fmt.Errorf("Evicted condition %+v does not tell the check's message", c)
			}
			wl = w
			return nil
		})
		wl = waitCheckPending(t, ns, "retry", cq, check)
		st := wl.Status.AdmissionChecks[0]
		if !strings.Contains(st.Message, "Retry") || ptr.Deref(st.RetryCount, 0) != 1 {
			t.Errorf("check state after the retry %+v, want a message naming the previous Retry state and retryCount 1", st)
		}
		setCheckState(t, ns, "retry", check, kueue.CheckStateReady, "ok")
		waitAdmitted(t, ns, "retry", cq)
		finish(t, ns, "retry")
		waitUsage(t, cq, fl, 0, "0", "0")
	})

	t.Run("Rejected deactivates", func(t *testing.T) {
		create(t, newWorkload(ns, "rejected", "lq", 1, "1", 0))
		waitCheckPending(t, ns, "rejected", cq, check)
		setCheckState(t, ns, "rejected", check, kueue.CheckStateRejected, "no way")
		waitWorkload(t, ns, "rejected", "deactivated", func(wl *kueue.Workload) error {
			if ptr.Deref(wl.Spec.Active, true) {
				return fmt.Errorf("spec.active is still true")
			}
			return nil
		})
		waitEvent(t, ns, "rejected", corev1.EventTypeWarning, "AdmissionCheckRejected")
		waitWorkload(t, ns, "rejected", "evicted and released", func(wl *kueue.Workload) error {
			if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted); c == nil ||
				c.Status != metav1.ConditionTrue || !strings.HasPrefix(c.Reason, kueue.WorkloadEvictedByDeactivation) {
				return fmt.Errorf("Evicted condition %+v, want True with a Deactivated reason", c)
			}
			if wl.Status.Admission != nil {
				return fmt.Errorf("admission %+v", wl.Status.Admission)
			}
			return nil
		})
		waitUsage(t, cq, fl, 0, "0", "0")
		// Kueue names the cause: DeactivatedDueToAdmissionCheck (SPEC 3.13).
		if _, r := condition(getWorkload(t, ns, "rejected"), kueue.WorkloadEvicted); r != "DeactivatedDueToAdmissionCheck" {
			t.Errorf("Evicted reason %q, want DeactivatedDueToAdmissionCheck", r)
		}
	})
}
