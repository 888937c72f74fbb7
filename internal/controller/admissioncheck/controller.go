// Package admissioncheck feeds AdmissionChecks into the cache (whether each
// is active) and keeps the resource-in-use finalizer while a ClusterQueue
// uses the check.
package admissioncheck

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/cache"
	"github.com/kuota-dev/kuota/internal/controller"
)

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=admissionchecks,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=admissionchecks/finalizers,verbs=update

// Reconciler reconciles AdmissionChecks.
type Reconciler struct {
	Client client.Client
	Cache  *cache.Cache
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(&kueue.AdmissionCheck{}).Complete(r)
}

// Reconcile records whether the check is active (its Active condition is
// True, as set by the check's controller).
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	name := kueue.AdmissionCheckReference(req.Name)
	var ac kueue.AdmissionCheck
	if err := r.Client.Get(ctx, req.NamespacedName, &ac); err != nil {
		if apierrors.IsNotFound(err) {
			r.Cache.DeleteAdmissionCheck(name)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("getting AdmissionCheck %s: %w", req.Name, err)
	}
	if !ac.DeletionTimestamp.IsZero() {
		r.Cache.DeleteAdmissionCheck(name)
		var cqs kueue.ClusterQueueList
		if err := r.Client.List(ctx, &cqs); err != nil {
			return ctrl.Result{}, fmt.Errorf("listing ClusterQueues: %w", err)
		}
		for _, cq := range cqs.Items {
			if s := cq.Spec.AdmissionChecksStrategy; s != nil && slices.ContainsFunc(s.AdmissionChecks,
				func(rule kueue.AdmissionCheckStrategyRule) bool { return rule.Name == name }) {
				return ctrl.Result{}, nil
			}
		}
		return ctrl.Result{}, controller.DropFinalizer(ctx, r.Client, &ac)
	}
	r.Cache.SetAdmissionCheck(name, meta.IsStatusConditionTrue(ac.Status.Conditions, kueue.AdmissionCheckActive))
	_, err := controller.EnsureFinalizer(ctx, r.Client, &ac)
	return ctrl.Result{}, err
}
