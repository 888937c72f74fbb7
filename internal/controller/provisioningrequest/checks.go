// Package provisioningrequest runs the ProvisioningRequest admission check
// (AdmissionCheck controllerName kueue.x-k8s.io/provisioning-request):
// it keeps such checks' Active condition, and for workloads holding a
// quota reservation creates the ProvisioningRequests that ask
// cluster-autoscaler for nodes and copies their outcome into the
// workloads' check states. What to do is decided by the pure
// internal/provisioning; this package reads and writes.
package provisioningrequest

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/controller"
	"github.com/kuota-dev/kuota/internal/provisioning"
)

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=admissionchecks/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=provisioningrequestconfigs,verbs=get;list;watch

// notServedRetry is how often a check waiting for the ProvisioningRequest
// CRD is looked at again.
const notServedRetry = 5 * time.Second

// CheckReconciler keeps the Active condition of the checks this
// controller answers for.
type CheckReconciler struct {
	Client client.Client
	// Served says whether ProvisioningRequests are served.
	Served *atomic.Bool
}

// SetupWithManager registers the reconciler: the checks, and the configs
// they name.
func (r *CheckReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("provisioning-admissioncheck").
		For(&kueue.AdmissionCheck{}, builder.WithPredicates(predicate.NewPredicateFuncs(ours))).
		Watches(&kueue.ProvisioningRequestConfig{}, handler.EnqueueRequestsFromMapFunc(r.checksNaming)).
		Complete(r)
}

func ours(obj client.Object) bool {
	ac, ok := obj.(*kueue.AdmissionCheck)
	return ok && ac.Spec.ControllerName == provisioning.ControllerName
}

// checksNaming lists this controller's checks whose parameters name the
// config.
func (r *CheckReconciler) checksNaming(ctx context.Context, obj client.Object) []reconcile.Request {
	var list kueue.AdmissionCheckList
	if err := r.Client.List(ctx, &list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing AdmissionChecks for a ProvisioningRequestConfig", "config", obj.GetName())
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		ac := &list.Items[i]
		if name, bad := provisioning.ConfigName(ac); ours(ac) && bad == nil && name == obj.GetName() {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: ac.Name}})
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
	served := r.Served.Load()
	act := provisioning.CheckActivity(&ac, cfg, served)
	if err := controller.SetCheckActive(ctx, r.Client, &ac, act.Active, act.Reason, act.Message); err != nil {
		return controller.Outcome(ctx, err)
	}
	if !served {
		return ctrl.Result{RequeueAfter: notServedRetry}, nil
	}
	return ctrl.Result{}, nil
}

// configOf returns the ProvisioningRequestConfig the check names, or nil
// when it names none or the config does not exist.
func configOf(ctx context.Context, c client.Reader, ac *kueue.AdmissionCheck) (*kueue.ProvisioningRequestConfig, error) {
	name, bad := provisioning.ConfigName(ac)
	if bad != nil {
		return nil, nil
	}
	var cfg kueue.ProvisioningRequestConfig
	if err := c.Get(ctx, client.ObjectKey{Name: name}, &cfg); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading ProvisioningRequestConfig %s: %w", name, err)
	}
	return &cfg, nil
}
