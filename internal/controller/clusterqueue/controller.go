// Package clusterqueue feeds ClusterQueue specs into the cache and keeps the
// resource-in-use finalizer until no workload reserves quota in the queue.
// Status is written by the status reporter (internal/controller/status).
package clusterqueue

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/cache"
	"github.com/kuota-dev/kuota/internal/controller"
	"github.com/kuota-dev/kuota/internal/queueing"
	"github.com/kuota-dev/kuota/internal/state"
)

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=clusterqueues,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=clusterqueues/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=clusterqueues/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// Reconciler reconciles ClusterQueues.
type Reconciler struct {
	Client   client.Client
	Cache    *cache.Cache
	Recorder record.EventRecorder
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(&kueue.ClusterQueue{}).Complete(r)
}

// Reconcile records the queue. A deleted queue stops admitting (it is
// forgotten) and loses its finalizer once no workload reserves quota in it.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	name := kueue.ClusterQueueReference(req.Name)
	var obj kueue.ClusterQueue
	if err := r.Client.Get(ctx, req.NamespacedName, &obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.Cache.DeleteClusterQueue(name)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("getting ClusterQueue %s: %w", req.Name, err)
	}
	if !obj.DeletionTimestamp.IsZero() {
		r.Cache.DeleteClusterQueue(name)
		reserving := 0
		r.Cache.Read(func(st *state.State, _ *queueing.Manager) { reserving = len(st.AdmittedIn(name)) })
		if reserving > 0 {
			// Check again later: quota is released as workloads finish.
			return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
		}
		return ctrl.Result{}, controller.DropFinalizer(ctx, r.Client, &obj)
	}
	cq, err := state.NewClusterQueue(&obj)
	if err != nil {
		// The webhook rejects invalid selectors; an object that slipped
		// through is reported and left out of scheduling.
		r.Recorder.Event(&obj, "Warning", "InvalidSpec", err.Error())
		r.Cache.DeleteClusterQueue(name)
		return ctrl.Result{}, nil
	}
	r.Cache.SetClusterQueue(cq)
	_, err = controller.EnsureFinalizer(ctx, r.Client, &obj)
	return ctrl.Result{}, err
}
