package apply

import (
	"math"
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

// Backoff describes waitForPodsReady's requeuing backoff.
type Backoff struct {
	Base, Max time.Duration
	// Limit is the number of requeues allowed; nil means no limit.
	Limit *int32
}

// Exceeded reports whether one more requeue goes over the limit.
func (b Backoff) Exceeded(st *kueue.WorkloadStatus) bool {
	if b.Limit == nil {
		return false
	}
	count := int32(0)
	if st.RequeueState != nil {
		count = ptr.Deref(st.RequeueState.Count, 0)
	}
	return count+1 > *b.Limit
}

// Requeue counts one more requeue in status.requeueState and sets
// requeueAt to now + base×2^(count−1), capped at Max.
func (b Backoff) Requeue(st *kueue.WorkloadStatus, now time.Time) {
	if st.RequeueState == nil {
		st.RequeueState = &kueue.RequeueState{}
	}
	count := ptr.Deref(st.RequeueState.Count, 0) + 1
	st.RequeueState.Count = ptr.To(count)
	wait := b.Max
	if exp := float64(b.Base) * math.Pow(2, float64(count-1)); exp < float64(b.Max) {
		wait = time.Duration(exp)
	}
	st.RequeueState.RequeueAt = ptr.To(metav1.NewTime(now.Add(wait).Truncate(time.Second)))
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
