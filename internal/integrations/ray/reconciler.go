package ray

import (
	"context"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// clusterReconciler is the generic job reconciler for RayClusters, except
// for the clusters a RayJob or a RayService owns: the operator copies the
// owner's labels (the queue name among them) to them, but their quota is
// the owner's Workload's.
type clusterReconciler struct {
	client client.Client
	opts   jobframework.Options
	inner  *jobframework.Reconciler
}

func setupClusterReconciler(mgr ctrl.Manager, opts jobframework.Options) error {
	r := &clusterReconciler{client: mgr.GetClient(), opts: opts, inner: &jobframework.Reconciler{
		Client: mgr.GetClient(), PodReader: mgr.GetAPIReader(), Writer: &apply.Writer{Client: mgr.GetClient()},
		Recorder: mgr.GetEventRecorderFor("kueue-job-controller"), Integration: jobframework.Integration{Name: RayClusterFramework, GVK: RayClusterGVK, NewJob: NewRayCluster}, Options: opts,
	}}
	return ctrl.NewControllerManagedBy(mgr).
		Named("job-RayCluster").
		For(&rayv1.RayCluster{}).
		Watches(&kueue.Workload{}, handler.EnqueueRequestsFromMapFunc(clusterOfWorkload)).
		Complete(r)
}

// Reconcile hands the cluster to the generic reconciler unless a queued
// RayJob or RayService owns it.
func (r *clusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var rc rayv1.RayCluster
	if err := r.client.Get(ctx, req.NamespacedName, &rc); err == nil && ownedByQueuedRayKind(r.opts, &rc) {
		return ctrl.Result{}, nil
	}
	return r.inner.Reconcile(ctx, req)
}

// clusterOfWorkload maps a Workload to the RayCluster controlling it.
func clusterOfWorkload(_ context.Context, obj client.Object) []reconcile.Request {
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.Kind != RayClusterGVK.Kind || ref.APIVersion != rayv1.GroupVersion.String() {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}}}
}
