package multicluster

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/controller"
	"github.com/kuota-dev/kuota/internal/multikueue"
)

// CheckReconciler keeps the Active condition of MultiKueue checks: active
// while their MultiKueueConfig has a connected cluster.
type CheckReconciler struct {
	Client client.Client
}

func ours(obj client.Object) bool {
	ac, ok := obj.(*kueue.AdmissionCheck)
	return ok && ac.Spec.ControllerName == multikueue.ControllerName
}

// SetupWithManager registers the reconciler: the checks, their configs and
// the clusters' conditions.
func (r *CheckReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("multikueue-admissioncheck").
		For(&kueue.AdmissionCheck{}, builder.WithPredicates(predicate.NewPredicateFuncs(ours))).
		Watches(&kueue.MultiKueueConfig{}, handler.EnqueueRequestsFromMapFunc(r.all)).
		Watches(&kueue.MultiKueueCluster{}, handler.EnqueueRequestsFromMapFunc(r.all)).
		Complete(r)
}

// all lists the MultiKueue checks.
func (r *CheckReconciler) all(ctx context.Context, _ client.Object) []reconcile.Request {
	var list kueue.AdmissionCheckList
	if err := r.Client.List(ctx, &list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing AdmissionChecks")
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if ours(&list.Items[i]) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: list.Items[i].Name}})
		}
	}
	return out
}

// Reconcile sets the check's Active condition.
func (r *CheckReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var ac kueue.AdmissionCheck
	if err := r.Client.Get(ctx, req.NamespacedName, &ac); err != nil || !ours(&ac) {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cfg, err := configOf(ctx, r.Client, &ac)
	if err != nil {
		return ctrl.Result{}, err
	}
	active := map[string]bool{}
	if cfg != nil {
		for _, name := range cfg.Spec.Clusters {
			var mkc kueue.MultiKueueCluster
			if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, &mkc); err == nil {
				active[name] = meta.IsStatusConditionTrue(mkc.Status.Conditions, kueue.MultiKueueClusterActive)
			}
		}
	}
	act := multikueue.CheckActivity(&ac, cfg, active)
	return controller.Outcome(ctx, controller.SetCheckActive(ctx, r.Client, &ac, act.Active, act.Reason, act.Message))
}

// configOf returns the MultiKueueConfig a check names; nil when it names
// none or the config does not exist.
func configOf(ctx context.Context, c client.Reader, ac *kueue.AdmissionCheck) (*kueue.MultiKueueConfig, error) {
	name, err := multikueue.ConfigName(ac)
	if err != nil {
		return nil, nil
	}
	var cfg kueue.MultiKueueConfig
	if err := c.Get(ctx, client.ObjectKey{Name: name}, &cfg); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading MultiKueueConfig %s: %w", name, err)
	}
	return &cfg, nil
}
