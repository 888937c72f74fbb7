package workload

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/cache"
)

// reconcilePending queues a workload without reservation, unless it is
// inactive, its LocalQueue is stopped or unknown, or it waits for a backoff.
func (r *Reconciler) reconcilePending(ctx context.Context, wl *kueue.Workload) (ctrl.Result, error) {
	key := keyOf(wl)
	if wl.Spec.Active != nil && !*wl.Spec.Active {
		r.Cache.Release(key)
		return ctrl.Result{}, nil
	}
	lq := cache.LocalQueueKey{Namespace: wl.Namespace, Name: wl.Spec.QueueName}
	if stop := r.Cache.LocalQueueStopPolicy(lq); stop != kueue.None {
		r.Cache.Release(key)
		return ctrl.Result{}, r.setPending(ctx, wl, kueue.WorkloadReasonSuspended,
			fmt.Sprintf("LocalQueue %s is stopped (stopPolicy %s)", wl.Spec.QueueName, stop), false)
	}
	info := r.infoFor(wl)
	r.Cache.Queue(info)
	if info.ClusterQueue == "" {
		return ctrl.Result{}, r.setPending(ctx, wl, kueue.WorkloadReasonMisconfigured,
			fmt.Sprintf("LocalQueue %s doesn't exist", wl.Spec.QueueName), true)
	}
	return r.afterBackoff(ctx, wl)
}

// afterBackoff marks a workload whose requeue backoff is over as requeued,
// or asks to be called again when it ends.
func (r *Reconciler) afterBackoff(ctx context.Context, wl *kueue.Workload) (ctrl.Result, error) {
	rs := wl.Status.RequeueState
	c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadRequeued)
	if rs == nil || rs.RequeueAt == nil || c == nil || c.Status == metav1.ConditionTrue {
		return ctrl.Result{}, nil
	}
	now := r.now()
	if wait := rs.RequeueAt.Sub(now.Time); wait > 0 {
		return ctrl.Result{RequeueAfter: wait + 10*time.Millisecond}, nil
	}
	st := apply.AdmissionStatus(wl)
	apply.SetCondition(&st.Conditions, kueue.WorkloadRequeued, metav1.ConditionTrue, kueue.WorkloadBackoffFinished,
		"The workload backoff was finished", wl.Generation, now)
	return ctrl.Result{}, r.Writer.WorkloadStatus(ctx, wl, st, apply.AdmissionManager)
}
