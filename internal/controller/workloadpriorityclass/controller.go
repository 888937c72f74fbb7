// Package workloadpriorityclass keeps the values of WorkloadPriorityClasses
// in the cache, for workloads that name a class but carry no priority.
package workloadpriorityclass

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/cache"
)

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloadpriorityclasses,verbs=get;list;watch

// Reconciler reconciles WorkloadPriorityClasses.
type Reconciler struct {
	Client client.Client
	Cache  *cache.Cache
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(&kueue.WorkloadPriorityClass{}).Complete(r)
}

// Reconcile records the class's value.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var wpc kueue.WorkloadPriorityClass
	if err := r.Client.Get(ctx, req.NamespacedName, &wpc); err != nil {
		if apierrors.IsNotFound(err) {
			r.Cache.DeletePriorityClass(req.Name)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("getting WorkloadPriorityClass %s: %w", req.Name, err)
	}
	r.Cache.SetPriorityClass(wpc.Name, wpc.Value)
	return ctrl.Result{}, nil
}
