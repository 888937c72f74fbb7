package lifecycle

import (
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Retention is the Configuration's objectRetentionPolicies.workloads: how
// long a finished Workload, and the job of a Workload Kuota deactivated,
// are kept. Nil keeps them for good.
type Retention struct {
	AfterFinished           *time.Duration
	AfterDeactivatedByKueue *time.Duration
}

// finishedStep deletes a finished Workload once its retention passed.
func finishedStep(wl *kueue.Workload, r Retention, now time.Time) Step {
	if r.AfterFinished == nil || !wl.DeletionTimestamp.IsZero() {
		return Step{}
	}
	c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadFinished)
	return deleteAfter(c.LastTransitionTime, *r.AfterFinished, now, DeleteWorkload)
}

// deactivatedStep deletes the job of a Workload Kuota deactivated (the
// Evicted reason says DeactivatedDueTo<cause>; a user's deactivation says
// Deactivated) once its retention passed.
func deactivatedStep(wl *kueue.Workload, r Retention, now time.Time) Step {
	if r.AfterDeactivatedByKueue == nil || metav1.GetControllerOfNoCopy(wl) == nil {
		return Step{}
	}
	ev := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted)
	if ev == nil || ev.Status != metav1.ConditionTrue || !strings.HasPrefix(ev.Reason, kueue.WorkloadEvictedByDeactivation+"DueTo") {
		return Step{}
	}
	return deleteAfter(ev.LastTransitionTime, *r.AfterDeactivatedByKueue, now, DeleteJob)
}

func deleteAfter(since metav1.Time, keep time.Duration, now time.Time, action Action) Step {
	if left := since.Add(keep).Sub(now); left > 0 {
		return Step{Action: Wait, After: left + 10*time.Millisecond}
	}
	return Step{Action: action}
}
