// Package cohort feeds Cohort specs into the cache. Status (the fair-sharing
// share) is written by the status reporter.
package cohort

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/cache"
	"github.com/kuota-dev/kuota/internal/state"
)

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=cohorts,verbs=get;list;watch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=cohorts/status,verbs=get;update;patch

// Reconciler reconciles Cohorts.
type Reconciler struct {
	Client client.Client
	Cache  *cache.Cache
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(&kueue.Cohort{}).Complete(r)
}

// Reconcile records the Cohort, or forgets it once deleted.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var obj kueue.Cohort
	if err := r.Client.Get(ctx, req.NamespacedName, &obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.Cache.DeleteCohort(kueue.CohortReference(req.Name))
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("getting Cohort %s: %w", req.Name, err)
	}
	if !obj.DeletionTimestamp.IsZero() {
		r.Cache.DeleteCohort(kueue.CohortReference(obj.Name))
		return ctrl.Result{}, nil
	}
	r.Cache.SetCohort(state.NewCohort(&obj))
	return ctrl.Result{}, nil
}
