package workload

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// reconcilePending queues a workload without reservation, unless it is
// inactive, its LocalQueue is stopped or unknown, or what evicted it last
// (a backoff, a stopped queue) still holds it back.
func (r *Reconciler) reconcilePending(ctx context.Context, wl *kueue.Workload) (ctrl.Result, error) {
	key := keyOf(wl)
	if wl.Spec.Active != nil && !*wl.Spec.Active {
		r.Cache.Release(key)
		return ctrl.Result{}, nil
	}
	if stop := r.Cache.LocalQueueStopPolicy(localQueueKey(wl)); stop != kueue.None {
		r.Cache.Release(key)
		return ctrl.Result{}, r.setPending(ctx, wl, kueue.WorkloadReasonSuspended,
			fmt.Sprintf("LocalQueue %s is stopped (stopPolicy %s)", wl.Spec.QueueName, stop), false)
	}
	cq, known := r.Cache.ClusterQueueFor(localQueueKey(wl))
	res, ready, err := r.requeueGate(ctx, wl, cq)
	if !ready || err != nil {
		r.Cache.Release(key)
		return res, err
	}
	r.Cache.Queue(r.infoFor(wl))
	if !known {
		// The cache may not have caught up with a new LocalQueue (or, at
		// start, with any); only a queue the API does not have is missing.
		var lq kueue.LocalQueue
		err := r.Client.Get(ctx, types.NamespacedName{Namespace: wl.Namespace, Name: string(wl.Spec.QueueName)}, &lq)
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, r.setPending(ctx, wl, kueue.WorkloadReasonMisconfigured,
				fmt.Sprintf("LocalQueue %s doesn't exist", wl.Spec.QueueName), true)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	return ctrl.Result{}, nil
}
