// Package localqueue feeds LocalQueues into the cache: which ClusterQueue
// each one feeds. Status is written by the status reporter.
package localqueue

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/cache"
	"github.com/kuota-dev/kuota/internal/queueing"
)

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=localqueues,verbs=get;list;watch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=localqueues/status,verbs=get;update;patch

// Reconciler reconciles LocalQueues.
type Reconciler struct {
	Client client.Client
	Cache  *cache.Cache
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(&kueue.LocalQueue{}).Complete(r)
}

// Reconcile records the LocalQueue, or forgets it once deleted.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	key := queueing.LocalQueueKey{Namespace: req.Namespace, Name: kueue.LocalQueueName(req.Name)}
	var lq kueue.LocalQueue
	if err := r.Client.Get(ctx, req.NamespacedName, &lq); err != nil {
		if apierrors.IsNotFound(err) {
			r.Cache.DeleteLocalQueue(key)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("getting LocalQueue %s: %w", req.NamespacedName, err)
	}
	if !lq.DeletionTimestamp.IsZero() {
		r.Cache.DeleteLocalQueue(key)
		return ctrl.Result{}, nil
	}
	r.Cache.SetLocalQueue(key, lq.Spec.ClusterQueue)
	stop := kueue.None
	if lq.Spec.StopPolicy != nil {
		stop = *lq.Spec.StopPolicy
	}
	r.Cache.SetLocalQueueStopPolicy(key, stop)
	return ctrl.Result{}, nil
}
