package validation

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/lifecycle"
)

// applied returns wl after a server-side apply of st under the
// kueue-admission manager: the status fields that manager owns are
// replaced by st, the reclaimable pods (owned by the job controller) stay.
func applied(wl *kueue.Workload, st *kueue.WorkloadStatus) *kueue.Workload {
	out := wl.DeepCopy()
	reclaim := out.Status.ReclaimablePods
	out.Status = *st.DeepCopy()
	out.Status.ReclaimablePods = reclaim
	out.ResourceVersion += "1"
	return out
}

// TestManagerWritesAreAccepted replays the status writes Kuota's manager
// makes (built by internal/apply, as the scheduler and controllers do)
// through a workload's life; none may be rejected.
func TestManagerWritesAreAccepted(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	wl := workload()
	expectPaths(t, ValidateWorkload(wl))
	step := func(what string, next *kueue.Workload) {
		t.Helper()
		if errs := ValidateWorkloadUpdate(wl, next); len(errs) > 0 {
			t.Fatalf("%s rejected: %v", what, errs.ToAggregate())
		}
		wl = next
	}
	requests := []kueue.PodSetRequest{{Name: "driver", Resources: corev1.ResourceList{"cpu": q("1")}}}
	st, _ := apply.Pending(wl, kueue.WorkloadReasonPending, "waiting", requests, now)
	step("pending", applied(wl, st))
	step("reserve", applied(wl, apply.Reserve(wl, admissionFor(), []kueue.AdmissionCheckReference{"prov"}, now)))

	next := wl.DeepCopy()
	next.Status.ReclaimablePods = []kueue.ReclaimablePod{{Name: "workers", Count: 1}}
	step("job controller reports reclaimable pods", next)
	next = wl.DeepCopy()
	next.Status.AdmissionChecks[0].State = kueue.CheckStateReady
	next.Status.AdmissionChecks[0].PodSetUpdates = []kueue.PodSetUpdate{{Name: "workers", NodeSelector: map[string]string{"pool": "p"}}}
	step("check controller marks its check Ready", next)
	st = apply.AdmissionStatus(wl)
	apply.SetCondition(&st.Conditions, kueue.WorkloadAdmitted, metav1.ConditionTrue, kueue.WorkloadReasonAdmitted, "admitted", 1, now)
	step("admitted once checks are ready", applied(wl, st))

	step("preempted", applied(wl, apply.Evict(wl, kueue.WorkloadEvictedByPreemption, "", kueue.InClusterQueueReason, "preempted", now)))
	step("reservation cleared", applied(wl, apply.ClearReservation(wl, true, kueue.WorkloadEvictedByPreemption, "preempted", now)))

	partial := admissionFor()
	partial.PodSetAssignments[1].Count = ptr.To[int32](2)
	partial.PodSetAssignments[1].ResourceUsage = corev1.ResourceList{"cpu": q("1"), "memory": q("2Gi")}
	step("partially re-admitted", applied(wl, apply.Reserve(wl, partial, nil, now)))

	st = apply.AdmissionStatus(wl)
	apply.SetCondition(&st.Conditions, kueue.WorkloadDeactivationTarget, metav1.ConditionTrue,
		string(kueue.WorkloadRequeuingLimitExceeded), "limit", 1, now)
	step("marked for deactivation", applied(wl, st))
	next = wl.DeepCopy()
	next.Spec.Active = ptr.To(false)
	step("deactivated", next)
	st = apply.Evict(wl, kueue.WorkloadEvictedByDeactivation, kueue.WorkloadRequeuingLimitExceeded, "", "deactivated", now)
	lifecycle.Backoff{Base: time.Second, Max: time.Minute}.Requeue(st, now.Time)
	step("evicted for deactivation", applied(wl, st))
	step("cleared, not requeued", applied(wl, apply.ClearReservation(wl, false, kueue.WorkloadEvictedByDeactivation, "deactivated", now)))

	next = wl.DeepCopy()
	next.Spec.Active = ptr.To(true)
	step("reactivated", next)
	st = apply.AdmissionStatus(wl)
	st.RequeueState = nil
	apply.SetCondition(&st.Conditions, kueue.WorkloadRequeued, metav1.ConditionTrue, kueue.WorkloadReactivated, "again", 1, now)
	step("requeued", applied(wl, st))
	step("reserved again", applied(wl, apply.Reserve(wl, admissionFor(), nil, now)))
	st = apply.AdmissionStatus(wl)
	apply.SetCondition(&st.Conditions, kueue.WorkloadFinished, metav1.ConditionTrue, kueue.WorkloadFinishedSucceeded, "done", 1, now)
	step("finished", applied(wl, st))
	next = wl.DeepCopy()
	next.Finalizers = nil
	step("finalizer removed", next)
}
