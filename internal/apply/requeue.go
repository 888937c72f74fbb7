package apply

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// RetryChecks resets the admission checks that asked for a retry to
// Pending, counting the retry in retryCount, and returns the longest
// requeueAfterSeconds they asked for.
func RetryChecks(st *kueue.WorkloadStatus, now metav1.Time) time.Duration {
	var wait time.Duration
	for i := range st.AdmissionChecks {
		c := &st.AdmissionChecks[i]
		if c.State != kueue.CheckStateRetry {
			continue
		}
		if c.RequeueAfterSeconds != nil {
			wait = max(wait, time.Duration(*c.RequeueAfterSeconds)*time.Second)
		}
		c.State = kueue.CheckStatePending
		c.RetryCount = ptr.To(ptr.Deref(c.RetryCount, 0) + 1)
		c.Message = "Reset to Pending after eviction. Previously: " + string(kueue.CheckStateRetry)
		c.LastTransitionTime = now
	}
	return wait
}

// RequeueAfter sets requeueAt to now + wait, leaving the count alone.
func RequeueAfter(st *kueue.WorkloadStatus, now time.Time, wait time.Duration) {
	if st.RequeueState == nil {
		st.RequeueState = &kueue.RequeueState{}
	}
	st.RequeueState.RequeueAt = ptr.To(metav1.NewTime(now.Add(wait)))
}

// RequeuedAtOnce says whether a workload evicted for reason goes straight
// back to its queue when its reservation is cleared: after a preemption or
// a node failure, and after an admission check retry that asked for no
// delay. Others wait for what evicted them to be resolved (a backoff, a
// stopped queue, a reactivation).
func RequeuedAtOnce(wl *kueue.Workload, reason string, now time.Time) bool {
	switch reason {
	case kueue.WorkloadEvictedByPreemption, kueue.WorkloadEvictedByNodeFailures:
		return true
	case kueue.WorkloadEvictedByAdmissionCheck:
		rs := wl.Status.RequeueState
		return rs == nil || rs.RequeueAt == nil || !rs.RequeueAt.Time.After(now)
	}
	return false
}
