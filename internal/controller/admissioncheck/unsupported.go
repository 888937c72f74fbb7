package admissioncheck

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/controller"
)

// MultiKueueControllerName is the controllerName of Kueue's MultiKueue
// checks, which dispatch workloads to other clusters.
const MultiKueueControllerName = "kueue.x-k8s.io/multikueue"

// ReasonNotSupported is the Active=False reason of a check whose
// controller Kuota does not run.
const ReasonNotSupported = "NotSupported"

// UnsupportedReconciler marks MultiKueue checks inactive, saying so, when
// the MultiKueue feature gate is off, instead of leaving them without a
// condition: the ClusterQueues that use them are inactive either way, and
// this tells the admin why.
type UnsupportedReconciler struct {
	Client client.Client
}

// SetupWithManager registers the reconciler for MultiKueue checks.
func (r *UnsupportedReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("unsupported-admissioncheck").
		For(&kueue.AdmissionCheck{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(obj client.Object) bool {
			ac, ok := obj.(*kueue.AdmissionCheck)
			return ok && ac.Spec.ControllerName == MultiKueueControllerName
		}))).
		Complete(r)
}

// Reconcile sets Active=False with the reason.
func (r *UnsupportedReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var ac kueue.AdmissionCheck
	if err := r.Client.Get(ctx, req.NamespacedName, &ac); err != nil || ac.Spec.ControllerName != MultiKueueControllerName {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	return controller.Outcome(ctx, controller.SetCheckActive(ctx, r.Client, &ac, false, ReasonNotSupported,
		"The MultiKueue feature gate is off; ClusterQueues using this check admit nothing"))
}
