package driver

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// AdmissionFieldManager is the field manager under which Kueue (and so
// Kuota) applies everything about admission to Workload status; the
// benchmark applies its status changes under it too, as Kueue's runner
// does (SPEC section 9).
const AdmissionFieldManager = "kueue-admission"

// admissionConditionTypes are the condition types owned by the admission
// field manager.
var admissionConditionTypes = []string{
	kueue.WorkloadQuotaReserved, kueue.WorkloadBlockedOnPreemptionGates, kueue.WorkloadEvicted,
	kueue.WorkloadAdmitted, kueue.WorkloadPreempted, kueue.WorkloadRequeued,
	kueue.WorkloadDeactivationTarget, kueue.WorkloadFinished, kueue.WorkloadPodsReady,
}

// Action is what the job side does next with a workload.
type Action int

const (
	// None: nothing to do now.
	None Action = iota
	// Wait: the workload runs; finish it after the returned delay.
	Wait
	// Finish: the workload ran for its runtime; mark it Finished.
	Finish
	// Clear: the workload was evicted; its pods are gone, so clear the
	// quota reservation.
	Clear
)

func (a Action) String() string {
	return [...]string{"None", "Wait", "Finish", "Clear"}[a]
}

// Decide says what the job side of wl does at now, given when it saw the
// current admission and how long the workload runs.
func Decide(wl *kueue.Workload, admittedAt time.Time, runtime time.Duration, now time.Time) (Action, time.Duration) {
	conds := wl.Status.Conditions
	switch {
	case meta.IsStatusConditionTrue(conds, kueue.WorkloadFinished):
		return None, 0
	case meta.IsStatusConditionTrue(conds, kueue.WorkloadEvicted):
		if wl.Status.Admission != nil || meta.IsStatusConditionTrue(conds, kueue.WorkloadQuotaReserved) {
			return Clear, 0
		}
		return None, 0
	case meta.IsStatusConditionTrue(conds, kueue.WorkloadAdmitted):
		if admittedAt.IsZero() {
			return None, 0
		}
		if left := admittedAt.Add(runtime).Sub(now); left > 0 {
			return Wait, left
		}
		return Finish, 0
	}
	return None, 0
}

// ownedStatus copies the part of wl's status the admission field manager
// owns. An apply must carry all of it: a field the manager owned and left
// out of its next apply is removed.
func ownedStatus(wl *kueue.Workload) *kueue.WorkloadStatus {
	src := wl.Status.DeepCopy()
	st := &kueue.WorkloadStatus{
		Admission: src.Admission, RequeueState: src.RequeueState, AdmissionChecks: src.AdmissionChecks,
		ResourceRequests: src.ResourceRequests, AccumulatedPastExecutionTimeSeconds: src.AccumulatedPastExecutionTimeSeconds,
		SchedulingStats: src.SchedulingStats, NominatedClusterNames: src.NominatedClusterNames, ClusterName: src.ClusterName,
		UnhealthyNodes: src.UnhealthyNodes, PreemptionGates: src.PreemptionGates,
	}
	for _, c := range src.Conditions {
		if slices.Contains(admissionConditionTypes, c.Type) {
			st.Conditions = append(st.Conditions, c)
		}
	}
	return st
}

// setCondition sets a condition; the transition time moves only when the
// status changes.
func setCondition(st *kueue.WorkloadStatus, typ string, status metav1.ConditionStatus, reason, msg string, gen int64, now time.Time) {
	c := metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: gen,
		LastTransitionTime: metav1.NewTime(now)}
	if prev := meta.FindStatusCondition(st.Conditions, typ); prev != nil && prev.Status == status {
		c.LastTransitionTime = prev.LastTransitionTime
	}
	meta.SetStatusCondition(&st.Conditions, c)
}

// ClearStatus is the status a job applies once an evicted workload's pods
// are gone: no admission, QuotaReserved=False and, if it was there,
// Admitted=False.
func ClearStatus(wl *kueue.Workload, now time.Time) *kueue.WorkloadStatus {
	st := ownedStatus(wl)
	st.Admission = nil
	setCondition(st, kueue.WorkloadQuotaReserved, metav1.ConditionFalse, kueue.WorkloadReasonPending,
		"Evicted; the benchmark's job stopped its pods", wl.Generation, now)
	if meta.FindStatusCondition(st.Conditions, kueue.WorkloadAdmitted) != nil {
		setCondition(st, kueue.WorkloadAdmitted, metav1.ConditionFalse, kueue.WorkloadReasonNoReservation,
			"Evicted; the benchmark's job stopped its pods", wl.Generation, now)
	}
	return st
}

// FinishStatus is the status a job applies when it completes: Finished=True
// with reason Succeeded.
func FinishStatus(wl *kueue.Workload, now time.Time) *kueue.WorkloadStatus {
	st := ownedStatus(wl)
	setCondition(st, kueue.WorkloadFinished, metav1.ConditionTrue, kueue.WorkloadFinishedSucceeded,
		"The benchmark's job ran for its runtime", wl.Generation, now)
	return st
}

// applyBody is a server-side apply request for Workload status: identity,
// preconditions (UID and resourceVersion) and the status, nothing else.
type applyBody struct {
	APIVersion string                `json:"apiVersion"`
	Kind       string                `json:"kind"`
	Metadata   applyMeta             `json:"metadata"`
	Status     *kueue.WorkloadStatus `json:"status"`
}

type applyMeta struct {
	Name            string `json:"name"`
	Namespace       string `json:"namespace"`
	UID             string `json:"uid"`
	ResourceVersion string `json:"resourceVersion"`
}

// ApplyBody encodes the apply request of st for wl.
func ApplyBody(wl *kueue.Workload, st *kueue.WorkloadStatus) ([]byte, error) {
	body, err := json.Marshal(applyBody{APIVersion: kueue.GroupVersion.String(), Kind: "Workload",
		Metadata: applyMeta{Name: wl.Name, Namespace: wl.Namespace, UID: string(wl.UID), ResourceVersion: wl.ResourceVersion},
		Status:   st})
	if err != nil {
		return nil, fmt.Errorf("encoding status of %s/%s: %w", wl.Namespace, wl.Name, err)
	}
	return body, nil
}
