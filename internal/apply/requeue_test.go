package apply

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

func TestRetryChecksResetsAndCounts(t *testing.T) {
	now := metav1.Now()
	st := &kueue.WorkloadStatus{AdmissionChecks: []kueue.AdmissionCheckState{
		{Name: "a", State: kueue.CheckStateRetry, RequeueAfterSeconds: ptr.To[int32](30), RetryCount: ptr.To[int32](2)},
		{Name: "b", State: kueue.CheckStateRetry},
		{Name: "c", State: kueue.CheckStateReady},
	}}
	if wait := RetryChecks(st, now); wait != 30*time.Second {
		t.Fatalf("wait = %s, want the longest requested delay, 30s", wait)
	}
	a, b, c := st.AdmissionChecks[0], st.AdmissionChecks[1], st.AdmissionChecks[2]
	if a.State != kueue.CheckStatePending || *a.RetryCount != 3 || b.State != kueue.CheckStatePending || *b.RetryCount != 1 {
		t.Fatalf("retried checks: %+v %+v", a, b)
	}
	if c.State != kueue.CheckStateReady || c.RetryCount != nil {
		t.Fatalf("a Ready check must stay as it is: %+v", c)
	}
}

func TestEvictAccumulatesExecutionTimeAndNamesDeactivationCause(t *testing.T) {
	admittedAt := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	wl := &kueue.Workload{Status: kueue.WorkloadStatus{
		AccumulatedPastExecutionTimeSeconds: ptr.To[int32](100),
		Conditions: []metav1.Condition{
			{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, Reason: "Admitted", LastTransitionTime: admittedAt},
			{Type: kueue.WorkloadDeactivationTarget, Status: metav1.ConditionTrue, Reason: "RequeuingLimitExceeded", LastTransitionTime: admittedAt},
		},
	}}
	now := metav1.NewTime(admittedAt.Add(50 * time.Second))
	st := Evict(wl, kueue.WorkloadEvictedByDeactivation, kueue.WorkloadRequeuingLimitExceeded, "", "limit", now)
	if got := *st.AccumulatedPastExecutionTimeSeconds; got != 150 {
		t.Fatalf("accumulated = %d, want 150", got)
	}
	if c := meta.FindStatusCondition(st.Conditions, kueue.WorkloadEvicted); c == nil || c.Reason != "DeactivatedDueToRequeuingLimitExceeded" {
		t.Fatalf("Evicted condition %+v", c)
	}
	if meta.FindStatusCondition(st.Conditions, kueue.WorkloadDeactivationTarget) != nil {
		t.Fatal("the DeactivationTarget marker must be consumed by the eviction")
	}
	e := st.SchedulingStats.Evictions[0]
	if e.Reason != kueue.WorkloadEvictedByDeactivation || e.UnderlyingCause != kueue.WorkloadRequeuingLimitExceeded || e.Count != 1 {
		t.Fatalf("eviction counted as %+v", e)
	}
	st = Evict(wl, kueue.WorkloadEvictedByDeactivation, kueue.WorkloadMaximumExecutionTimeExceeded, "", "too long", now)
	if st.AccumulatedPastExecutionTimeSeconds != nil {
		t.Fatal("a deactivation for the maximum execution time resets the accumulated time")
	}
}

func TestPendingClearsAStaleAdmission(t *testing.T) {
	wl := &kueue.Workload{Status: kueue.WorkloadStatus{
		Admission: &kueue.Admission{ClusterQueue: "cq"},
		Conditions: []metav1.Condition{
			{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved"},
			{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, Reason: "Admitted"},
		},
	}}
	st, changed := Pending(wl, kueue.WorkloadReasonMisconfigured, "bad podsets", nil, metav1.Now())
	if !changed || st.Admission != nil || meta.IsStatusConditionTrue(st.Conditions, kueue.WorkloadAdmitted) {
		t.Fatalf("a workload set back to pending keeps admission %v, conditions %v", st.Admission, st.Conditions)
	}
}
