// Package admissioncheck keeps the resource-in-use finalizer of
// AdmissionChecks while a ClusterQueue uses the check. The cache (whether
// each check is active) is fed by the informer handlers (internal/feed).
package admissioncheck

import (
	"context"
	"fmt"
	"slices"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/controller"
)

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=admissionchecks,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=admissionchecks/finalizers,verbs=update

// Reconciler reconciles AdmissionChecks.
type Reconciler struct {
	Client client.Client
}

// SetupWithManager registers the controller. Deleting checks wait for
// ClusterQueue changes, so those are watched too.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&kueue.AdmissionCheck{}, builder.WithPredicates(controller.SpecOrLifecycle)).
		Watches(&kueue.ClusterQueue{}, handler.EnqueueRequestsFromMapFunc(checksOf), builder.WithPredicates(controller.SpecOrLifecycle)).
		Complete(r)
}

func checksOf(_ context.Context, obj client.Object) []reconcile.Request {
	cq, ok := obj.(*kueue.ClusterQueue)
	if !ok || cq.Spec.AdmissionChecksStrategy == nil {
		return nil
	}
	var out []reconcile.Request
	for _, rule := range cq.Spec.AdmissionChecksStrategy.AdmissionChecks {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: string(rule.Name)}})
	}
	return out
}

// Reconcile keeps the finalizer; a deleted check loses it once no
// ClusterQueue uses it.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var ac kueue.AdmissionCheck
	if err := r.Client.Get(ctx, req.NamespacedName, &ac); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if ac.DeletionTimestamp.IsZero() {
		_, err := controller.EnsureFinalizer(ctx, r.Client, &ac)
		return controller.Outcome(ctx, err)
	}
	var cqs kueue.ClusterQueueList
	if err := r.Client.List(ctx, &cqs); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing ClusterQueues: %w", err)
	}
	name := kueue.AdmissionCheckReference(ac.Name)
	for _, cq := range cqs.Items {
		if s := cq.Spec.AdmissionChecksStrategy; s != nil && slices.ContainsFunc(s.AdmissionChecks,
			func(rule kueue.AdmissionCheckStrategyRule) bool { return rule.Name == name }) {
			return ctrl.Result{}, nil
		}
	}
	return controller.Outcome(ctx, controller.DropFinalizer(ctx, r.Client, &ac))
}
