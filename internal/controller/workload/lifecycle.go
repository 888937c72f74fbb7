package workload

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/cache"
)

// PodsReadyOptions configure waitForPodsReady: an admitted workload whose
// pods are not all ready within Timeout of its admission (or, after they
// were ready, within RecoveryTimeout of a pod failing) is evicted and
// requeued with a growing backoff, or deactivated past the backoff limit.
type PodsReadyOptions struct {
	Timeout time.Duration
	// RecoveryTimeout of 0 disables the recovery check.
	RecoveryTimeout time.Duration
	Backoff         apply.Backoff
}

// Messages of the deactivation markers Kuota sets.
const (
	msgRequeuingLimit   = "exceeding the maximum number of re-queuing retries"
	msgMaxExecutionTime = "exceeding the maximum execution time"
)

// markForDeactivation records why Kuota deactivates a workload
// (DeactivationTarget=True); the next reconcile sets spec.active=false and
// then evicts it with reason Deactivated and this cause.
func (r *Reconciler) markForDeactivation(ctx context.Context, wl *kueue.Workload, cause kueue.EvictionUnderlyingCause, msg string) error {
	st := apply.AdmissionStatus(wl)
	if !apply.SetCondition(&st.Conditions, kueue.WorkloadDeactivationTarget, metav1.ConditionTrue, string(cause), msg, wl.Generation, r.now()) {
		return nil
	}
	return r.Writer.WorkloadStatus(ctx, wl, st, apply.AdmissionManager)
}

// deactivationPending reports a DeactivationTarget marker on an active
// workload.
func deactivationPending(wl *kueue.Workload) bool {
	return (wl.Spec.Active == nil || *wl.Spec.Active) && meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadDeactivationTarget)
}

// deactivate sets spec.active=false for a workload marked as a
// deactivation target.
func (r *Reconciler) deactivate(ctx context.Context, wl *kueue.Workload) error {
	c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadDeactivationTarget)
	if err := r.Client.Patch(ctx, wl, rawMergePatch([]byte(`{"spec":{"active":false}}`))); err != nil {
		return fmt.Errorf("deactivating workload %s/%s: %w", wl.Namespace, wl.Name, err)
	}
	r.Recorder.Eventf(wl, corev1.EventTypeNormal, "Deactivated", "The workload is deactivated due to %s", c.Message)
	return nil
}

// enforceTimeouts evicts or deactivates an admitted workload that ran past
// its maximum execution time or whose pods did not become ready in time.
// Otherwise it asks to be called again when the nearest deadline passes.
func (r *Reconciler) enforceTimeouts(ctx context.Context, wl *kueue.Workload) (ctrl.Result, bool, error) {
	admitted := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadAdmitted)
	if admitted == nil || admitted.Status != metav1.ConditionTrue {
		return ctrl.Result{}, false, nil
	}
	now := r.now().Time
	var next time.Duration
	soonest := func(d time.Duration) {
		if next == 0 || d < next {
			next = d
		}
	}
	if limit := wl.Spec.MaximumExecutionTimeSeconds; limit != nil {
		ran := time.Duration(ptrDeref(wl.Status.AccumulatedPastExecutionTimeSeconds))*time.Second + now.Sub(admitted.LastTransitionTime.Time)
		left := time.Duration(*limit)*time.Second - ran
		if left <= 0 {
			return ctrl.Result{}, true, r.markForDeactivation(ctx, wl, kueue.WorkloadMaximumExecutionTimeExceeded, msgMaxExecutionTime)
		}
		soonest(left)
	}
	if pr := r.Options.PodsReady; pr != nil {
		since, timeout, cause := admitted.LastTransitionTime.Time, pr.Timeout, kueue.WorkloadWaitForStart
		ready := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadPodsReady)
		switch {
		case ready != nil && ready.Status == metav1.ConditionTrue:
			timeout = 0
		case ready != nil && ready.Reason == string(kueue.WorkloadWaitForRecovery):
			since, timeout, cause = ready.LastTransitionTime.Time, pr.RecoveryTimeout, kueue.WorkloadWaitForRecovery
		}
		if timeout > 0 {
			left := since.Add(timeout).Sub(now)
			if left <= 0 {
				return ctrl.Result{}, true, r.podsReadyTimeout(ctx, wl, pr, cause, timeout)
			}
			soonest(left)
		}
	}
	if next > 0 {
		return ctrl.Result{RequeueAfter: next + 10*time.Millisecond}, false, nil
	}
	return ctrl.Result{}, false, nil
}

// podsReadyTimeout evicts a workload whose pods were not ready in time and
// schedules its requeue, or deactivates it once requeues run out.
func (r *Reconciler) podsReadyTimeout(ctx context.Context, wl *kueue.Workload, pr *PodsReadyOptions, cause kueue.EvictionUnderlyingCause, timeout time.Duration) error {
	if pr.Backoff.Exceeded(&wl.Status) {
		return r.markForDeactivation(ctx, wl, kueue.WorkloadRequeuingLimitExceeded, msgRequeuingLimit)
	}
	msg := fmt.Sprintf("Exceeded the PodsReady timeout %s", wl.Namespace+"/"+wl.Name)
	if cause == kueue.WorkloadWaitForRecovery {
		msg = fmt.Sprintf("Exceeded the PodsReady recovery timeout of %s", timeout)
	}
	return r.evict(ctx, wl, kueue.WorkloadEvictedByPodsReadyTimeout, cause, msg, func(st *kueue.WorkloadStatus) {
		pr.Backoff.Requeue(st, r.now().Time)
	})
}

func ptrDeref(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

// requeueGate decides whether a pending workload whose reservation was
// cleared may queue again (Requeued=False says it may not yet). When what
// held it back is resolved it flips Requeued to True with the matching
// reason (the write brings the workload back here, to be queued); until
// then it keeps the workload out of the queues.
func (r *Reconciler) requeueGate(ctx context.Context, wl *kueue.Workload, cq kueue.ClusterQueueReference) (ctrl.Result, bool, error) {
	c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadRequeued)
	if c == nil || c.Status != metav1.ConditionFalse {
		return ctrl.Result{}, true, nil
	}
	st := apply.AdmissionStatus(wl)
	var reason, msg string
	switch {
	case strings.HasPrefix(c.Reason, kueue.WorkloadEvictedByDeactivation):
		// Active again (inactive workloads never get here).
		reason, msg = kueue.WorkloadReactivated, "The workload was reactivated"
		st.RequeueState = nil
	case c.Reason == kueue.WorkloadEvictedByClusterQueueStopped:
		if p, ok := r.Cache.ClusterQueue(cq); !ok || p.StopPolicy != kueue.None && p.StopPolicy != "" {
			return ctrl.Result{}, false, nil
		}
		reason, msg = kueue.WorkloadClusterQueueRestarted, "The ClusterQueue was restarted after being stopped"
	case c.Reason == kueue.WorkloadEvictedByLocalQueueStopped:
		// The LocalQueue runs (a stopped one was handled before).
		reason, msg = kueue.WorkloadLocalQueueRestarted, "The LocalQueue was restarted after being stopped"
	default:
		rs := wl.Status.RequeueState
		if rs != nil && rs.RequeueAt != nil {
			if wait := rs.RequeueAt.Sub(r.now().Time); wait > 0 {
				return ctrl.Result{RequeueAfter: wait + 10*time.Millisecond}, false, nil
			}
		}
		reason, msg = kueue.WorkloadBackoffFinished, "The workload backoff was finished"
	}
	apply.SetCondition(&st.Conditions, kueue.WorkloadRequeued, metav1.ConditionTrue, reason, msg, wl.Generation, r.now())
	return ctrl.Result{}, false, r.Writer.WorkloadStatus(ctx, wl, st, apply.AdmissionManager)
}

// localQueueKey is the cache key of the workload's LocalQueue.
func localQueueKey(wl *kueue.Workload) cache.LocalQueueKey {
	return cache.LocalQueueKey{Namespace: wl.Namespace, Name: wl.Spec.QueueName}
}
