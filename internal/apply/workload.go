package apply

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Reserve returns the status that records a quota reservation: the
// admission, QuotaReserved=True and, when no admission check applies,
// Admitted=True. checks are the admission checks that apply; they start
// Pending (a check's state from an earlier reservation is reset). An earlier
// eviction or preemption is marked as over.
func Reserve(wl *kueue.Workload, admission *kueue.Admission, checks []kueue.AdmissionCheckReference, now metav1.Time) *kueue.WorkloadStatus {
	st := AdmissionStatus(wl)
	gen := wl.Generation
	st.Admission = admission
	SetCondition(&st.Conditions, kueue.WorkloadQuotaReserved, metav1.ConditionTrue, kueue.WorkloadReasonQuotaReserved,
		fmt.Sprintf("Quota reserved in ClusterQueue %s", admission.ClusterQueue), gen, now)
	for _, typ := range []string{kueue.WorkloadEvicted, kueue.WorkloadPreempted} {
		if c := meta.FindStatusCondition(st.Conditions, typ); c != nil && c.Status == metav1.ConditionTrue {
			SetCondition(&st.Conditions, typ, metav1.ConditionFalse, kueue.WorkloadReasonQuotaReserved,
				"Previously: "+c.Message, gen, now)
		}
	}
	st.AdmissionChecks = resetChecks(st.AdmissionChecks, checks, now)
	st.ResourceRequests = nil
	// The failed nodes of an earlier assignment are not this one's (a
	// client that cleared the reservation may have kept them, as Kueue's
	// scalability runner does).
	st.UnhealthyNodes = nil
	if len(checks) == 0 {
		SetCondition(&st.Conditions, kueue.WorkloadAdmitted, metav1.ConditionTrue, kueue.WorkloadReasonAdmitted,
			"The workload is admitted", gen, now)
	} else {
		SetCondition(&st.Conditions, kueue.WorkloadAdmitted, metav1.ConditionFalse, kueue.WorkloadReasonUnsatisfiedAdmissionChecks,
			"The workload has not all admission checks", gen, now)
	}
	return st
}

// resetChecks keeps one entry per applying check, Pending unless already
// Pending, and drops the others.
func resetChecks(prev []kueue.AdmissionCheckState, checks []kueue.AdmissionCheckReference, now metav1.Time) []kueue.AdmissionCheckState {
	var out []kueue.AdmissionCheckState
	for _, name := range checks {
		state := kueue.AdmissionCheckState{Name: name, State: kueue.CheckStatePending, LastTransitionTime: now}
		for _, p := range prev {
			if p.Name != name {
				continue
			}
			state.RetryCount, state.RequeueAfterSeconds = p.RetryCount, p.RequeueAfterSeconds
			if p.State == kueue.CheckStatePending {
				state.LastTransitionTime, state.Message = p.LastTransitionTime, p.Message
			} else {
				state.Message = "Reset to Pending after eviction. Previously: " + string(p.State)
			}
		}
		out = append(out, state)
	}
	return out
}

// Evict returns the status that asks a workload to give up its quota:
// Evicted=True with the reason (and, for a preemption, Preempted=True with
// the preemption reason), counted in schedulingStats under reason and
// cause. A deactivation with a cause reads "DeactivatedDueTo<cause>" in the
// condition. The time admitted so far is added to
// accumulatedPastExecutionTimeSeconds and a DeactivationTarget marker is
// consumed. The reservation stays until the workload's job side (or, for a
// workload without a job, Kuota) clears it.
func Evict(wl *kueue.Workload, reason string, cause kueue.EvictionUnderlyingCause, preemptionReason, message string, now metav1.Time) *kueue.WorkloadStatus {
	st := AdmissionStatus(wl)
	gen := wl.Generation
	condReason := reason
	if reason == kueue.WorkloadEvictedByDeactivation && cause != "" {
		condReason = reason + "DueTo" + string(cause)
	}
	SetCondition(&st.Conditions, kueue.WorkloadEvicted, metav1.ConditionTrue, condReason, message, gen, now)
	if preemptionReason != "" {
		SetCondition(&st.Conditions, kueue.WorkloadPreempted, metav1.ConditionTrue, preemptionReason, message, gen, now)
	}
	if c := meta.FindStatusCondition(st.Conditions, kueue.WorkloadAdmitted); c != nil && c.Status == metav1.ConditionTrue {
		ran := int64(now.Sub(c.LastTransitionTime.Time).Seconds())
		total := int64(ptr.Deref(st.AccumulatedPastExecutionTimeSeconds, 0)) + max(0, ran)
		st.AccumulatedPastExecutionTimeSeconds = ptr.To(int32(min(total, math.MaxInt32)))
	}
	if cause == kueue.WorkloadMaximumExecutionTimeExceeded {
		st.AccumulatedPastExecutionTimeSeconds = nil
	}
	meta.RemoveStatusCondition(&st.Conditions, kueue.WorkloadDeactivationTarget)
	countEviction(st, reason, cause)
	return st
}

// MaxUnhealthyNodes is how many nodes status.unhealthyNodes may name.
const MaxUnhealthyNodes = 8

// AddUnhealthyNodes names the failed nodes in status.unhealthyNodes, after
// those it names already, up to MaxUnhealthyNodes. The list is a map keyed
// by name: server-side apply refuses a list with a name twice (and a
// refused write retried as it is fails for ever), so a node is named once.
func AddUnhealthyNodes(st *kueue.WorkloadStatus, nodes []string) {
	names := make([]string, 0, len(st.UnhealthyNodes)+len(nodes))
	for _, n := range st.UnhealthyNodes {
		names = append(names, n.Name)
	}
	var out []kueue.UnhealthyNode
	for _, name := range append(names, nodes...) {
		if len(out) < MaxUnhealthyNodes && !slices.ContainsFunc(out, func(u kueue.UnhealthyNode) bool { return u.Name == name }) {
			out = append(out, kueue.UnhealthyNode{Name: name})
		}
	}
	st.UnhealthyNodes = out
}

func countEviction(st *kueue.WorkloadStatus, reason string, cause kueue.EvictionUnderlyingCause) {
	if st.SchedulingStats == nil {
		st.SchedulingStats = &kueue.SchedulingStats{}
	}
	for i := range st.SchedulingStats.Evictions {
		e := &st.SchedulingStats.Evictions[i]
		if e.Reason == reason && e.UnderlyingCause == cause {
			e.Count++
			return
		}
	}
	st.SchedulingStats.Evictions = append(st.SchedulingStats.Evictions,
		kueue.WorkloadSchedulingStatsEviction{Reason: reason, UnderlyingCause: cause, Count: 1})
}

// ClearReservation returns the status of a workload whose quota is given
// back after an eviction: no admission (nor MultiKueue placement),
// QuotaReserved=False, Admitted=False,
// and Requeued saying whether it is back in its queue (True) or set aside
// (False), with the eviction reason. requeueState is kept as given.
func ClearReservation(wl *kueue.Workload, requeued bool, reason, message string, now metav1.Time) *kueue.WorkloadStatus {
	st := AdmissionStatus(wl)
	gen := wl.Generation
	st.Admission = nil
	// A MultiKueue placement ends with the reservation, and so do the
	// failed nodes of the topology assignment.
	st.ClusterName, st.NominatedClusterNames, st.UnhealthyNodes = nil, nil, nil
	SetCondition(&st.Conditions, kueue.WorkloadQuotaReserved, metav1.ConditionFalse, kueue.WorkloadReasonPending,
		"The workload has no reservation", gen, now)
	SetCondition(&st.Conditions, kueue.WorkloadAdmitted, metav1.ConditionFalse, kueue.WorkloadReasonNoReservation,
		"The workload has no reservation", gen, now)
	status := metav1.ConditionFalse
	if requeued {
		status = metav1.ConditionTrue
	}
	SetCondition(&st.Conditions, kueue.WorkloadRequeued, status, reason, message, gen, now)
	notStarted(st, gen, now)
	return st
}

// notStarted turns a PodsReady condition (written only under
// waitForPodsReady) to False, WaitForStart, as a workload without an
// admission has no pods; after a later admission, ready pods read
// Started again rather than Recovered. Without the condition, nothing is
// added.
func notStarted(st *kueue.WorkloadStatus, gen int64, now metav1.Time) {
	c := meta.FindStatusCondition(st.Conditions, kueue.WorkloadPodsReady)
	if c == nil || (c.Status == metav1.ConditionFalse && c.Reason == string(kueue.WorkloadWaitForStart)) {
		return
	}
	SetCondition(&st.Conditions, kueue.WorkloadPodsReady, metav1.ConditionFalse, string(kueue.WorkloadWaitForStart),
		"Not all pods are ready or succeeded", gen, now)
}

// Pending returns the status of a workload that waits: QuotaReserved=False
// with the reason and message of the last scheduling attempt.
// With requests, status.resourceRequests is set to them too.
// A workload that still had an admission loses it (QuotaReserved=False
// and an admission never go together).
func Pending(wl *kueue.Workload, reason, message string, requests []kueue.PodSetRequest, now metav1.Time) (*kueue.WorkloadStatus, bool) {
	st := AdmissionStatus(wl)
	changed := SetCondition(&st.Conditions, kueue.WorkloadQuotaReserved, metav1.ConditionFalse, reason, message, wl.Generation, now)
	if st.Admission != nil {
		st.Admission = nil
		SetCondition(&st.Conditions, kueue.WorkloadAdmitted, metav1.ConditionFalse, kueue.WorkloadReasonNoReservation,
			"The workload has no reservation", wl.Generation, now)
		notStarted(st, wl.Generation, now)
		changed = true
	}
	if requests != nil && !equality.Semantic.DeepEqual(st.ResourceRequests, requests) {
		st.ResourceRequests = requests
		changed = true
	}
	return st, changed
}

// Inactive returns the status of a pending workload set spec.active=false,
// as Kueue marks it: Evicted=True with reason Deactivated (or
// DeactivatedDueTo<cause> when a DeactivationTarget named one, which is
// consumed), Requeued=False with that reason so that it comes back only
// once reactivated, QuotaReserved=False saying it is deactivated instead
// of an older reason to wait, and no requeueState.
func Inactive(wl *kueue.Workload, now metav1.Time) *kueue.WorkloadStatus {
	st := AdmissionStatus(wl)
	gen := wl.Generation
	reason, message := kueue.WorkloadEvictedByDeactivation, "The workload is deactivated"
	if dt := meta.FindStatusCondition(st.Conditions, kueue.WorkloadDeactivationTarget); dt != nil && dt.Status == metav1.ConditionTrue {
		reason, message = reason+"DueTo"+dt.Reason, message+" due to "+dt.Message
	}
	meta.RemoveStatusCondition(&st.Conditions, kueue.WorkloadDeactivationTarget)
	if ev := meta.FindStatusCondition(st.Conditions, kueue.WorkloadEvicted); ev == nil || ev.Status != metav1.ConditionTrue ||
		!strings.HasPrefix(ev.Reason, kueue.WorkloadEvictedByDeactivation) {
		SetCondition(&st.Conditions, kueue.WorkloadEvicted, metav1.ConditionTrue, reason, message, gen, now)
	} else {
		reason, message = ev.Reason, ev.Message
	}
	if rq := meta.FindStatusCondition(st.Conditions, kueue.WorkloadRequeued); rq == nil || rq.Status != metav1.ConditionFalse ||
		!strings.HasPrefix(rq.Reason, kueue.WorkloadEvictedByDeactivation) {
		SetCondition(&st.Conditions, kueue.WorkloadRequeued, metav1.ConditionFalse, reason, message, gen, now)
	}
	if st.Admission == nil {
		SetCondition(&st.Conditions, kueue.WorkloadQuotaReserved, metav1.ConditionFalse, kueue.WorkloadEvictedByDeactivation, message, gen, now)
	}
	st.RequeueState = nil
	return st
}

// Finished returns the status that marks the workload finished with reason
// (for instance kueue.WorkloadSliceReplaced) and message.
func Finished(wl *kueue.Workload, reason, message string, now metav1.Time) *kueue.WorkloadStatus {
	st := AdmissionStatus(wl)
	SetCondition(&st.Conditions, kueue.WorkloadFinished, metav1.ConditionTrue, reason, message, wl.Generation, now)
	return st
}

// SliceReplacedMessage is the Finished message of an elastic job's
// Workload slice that the slice by replaced.
func SliceReplacedMessage(by *kueue.Workload) string {
	return fmt.Sprintf("Replaced by Workload slice %s (UID %s), admitted with the job's new size", by.Name, by.UID)
}
