// Package resourceflavor keeps the resource-in-use finalizer of
// ResourceFlavors while a ClusterQueue names the flavor. The cache is fed
// by the informer handlers (internal/feed).
package resourceflavor

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/controller"
)

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=resourceflavors,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=resourceflavors/finalizers,verbs=update

// Reconciler reconciles ResourceFlavors.
type Reconciler struct {
	Client client.Client
}

// SetupWithManager registers the controller. Deleting flavors wait for
// ClusterQueue changes, so those are watched too.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&kueue.ResourceFlavor{}, builder.WithPredicates(controller.SpecOrLifecycle)).
		Watches(&kueue.ClusterQueue{}, handler.EnqueueRequestsFromMapFunc(flavorsOf), builder.WithPredicates(controller.SpecOrLifecycle)).
		Complete(r)
}

func flavorsOf(_ context.Context, obj client.Object) []reconcile.Request {
	cq, ok := obj.(*kueue.ClusterQueue)
	if !ok {
		return nil
	}
	var out []reconcile.Request
	for _, g := range cq.Spec.ResourceGroups {
		for _, f := range g.Flavors {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: string(f.Name)}})
		}
	}
	return out
}

// Reconcile keeps the finalizer; a deleted flavor loses its finalizer once
// no ClusterQueue names it.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var rf kueue.ResourceFlavor
	if err := r.Client.Get(ctx, req.NamespacedName, &rf); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("getting ResourceFlavor %s: %w", req.Name, err)
	}
	if rf.DeletionTimestamp.IsZero() {
		_, err := controller.EnsureFinalizer(ctx, r.Client, &rf)
		return controller.Outcome(ctx, err)
	}
	inUse, err := r.inUse(ctx, kueue.ResourceFlavorReference(rf.Name))
	if err != nil || inUse {
		return ctrl.Result{}, err
	}
	return controller.Outcome(ctx, controller.DropFinalizer(ctx, r.Client, &rf))
}

func (r *Reconciler) inUse(ctx context.Context, name kueue.ResourceFlavorReference) (bool, error) {
	var cqs kueue.ClusterQueueList
	if err := r.Client.List(ctx, &cqs); err != nil {
		return false, fmt.Errorf("listing ClusterQueues: %w", err)
	}
	for _, cq := range cqs.Items {
		for _, g := range cq.Spec.ResourceGroups {
			if slices.ContainsFunc(g.Flavors, func(f kueue.FlavorQuotas) bool { return f.Name == name }) {
				return true, nil
			}
		}
	}
	return false, nil
}
