// Package apply makes Kuota's writes to the API: Workload status through
// server-side apply under the field managers Kueue uses, so that Kueue's
// clients (which apply under the same managers) interoperate, with a
// resourceVersion precondition on every write; and a bounded pool of
// writers. Builders here are pure functions from an object to the status to
// apply; the Writer sends them.
package apply

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Field managers Kueue uses for Workload status (SPEC section 9).
const (
	AdmissionManager          = "kueue-admission"
	JobControllerManager      = "kueue-job-controller"
	WorkloadControllerManager = "kueue-workload-controller"
)

// admissionConditions are the condition types owned by kueue-admission.
var admissionConditions = []string{
	kueue.WorkloadQuotaReserved, kueue.WorkloadBlockedOnPreemptionGates, kueue.WorkloadEvicted,
	kueue.WorkloadAdmitted, kueue.WorkloadPreempted, kueue.WorkloadRequeued,
	kueue.WorkloadDeactivationTarget, kueue.WorkloadFinished, kueue.WorkloadPodsReady,
}

// AdmissionStatus returns the part of a Workload's status that Kuota owns
// under the kueue-admission field manager, copied from the object. A write
// must carry all of it: with server-side apply, a field a manager owns and
// leaves out of its next apply is removed.
func AdmissionStatus(wl *kueue.Workload) *kueue.WorkloadStatus {
	src := wl.Status.DeepCopy()
	out := &kueue.WorkloadStatus{
		Admission:                           src.Admission,
		RequeueState:                        src.RequeueState,
		ResourceRequests:                    src.ResourceRequests,
		AccumulatedPastExecutionTimeSeconds: src.AccumulatedPastExecutionTimeSeconds,
		SchedulingStats:                     src.SchedulingStats,
		NominatedClusterNames:               src.NominatedClusterNames,
		ClusterName:                         src.ClusterName,
		UnhealthyNodes:                      src.UnhealthyNodes,
		PreemptionGates:                     src.PreemptionGates,
		AdmissionChecks:                     src.AdmissionChecks,
	}
	for _, c := range src.Conditions {
		if slices.Contains(admissionConditions, c.Type) {
			out.Conditions = append(out.Conditions, c)
		}
	}
	return out
}

// SetCondition sets a condition, keeping lastTransitionTime when the status
// does not change. It reports whether anything changed.
func SetCondition(conds *[]metav1.Condition, typ string, status metav1.ConditionStatus, reason, message string,
	generation int64, now metav1.Time) bool {
	if len(message) > 32768 {
		message = message[:32765] + "..."
	}
	prev := meta.FindStatusCondition(*conds, typ)
	if prev != nil && prev.Status == status && prev.Reason == reason && prev.Message == message && prev.ObservedGeneration == generation {
		return false
	}
	c := metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message, ObservedGeneration: generation,
		LastTransitionTime: now}
	if prev != nil && prev.Status == status {
		c.LastTransitionTime = prev.LastTransitionTime
	}
	meta.SetStatusCondition(conds, c)
	// meta.SetStatusCondition keeps the old time only when status is
	// unchanged, which is what we want; set it explicitly either way.
	meta.FindStatusCondition(*conds, typ).LastTransitionTime = c.LastTransitionTime
	return true
}

// IsTrue reports whether a condition is True.
func IsTrue(conds []metav1.Condition, typ string) bool {
	return meta.IsStatusConditionTrue(conds, typ)
}
