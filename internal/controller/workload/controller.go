// Package workload follows Workloads through their lifecycle: it queues
// pending workloads in the cache, records the quota held by reserved ones,
// and carries out what their conditions ask for: a workload evicted and
// without a job gets its reservation cleared (the job's part, when there is
// no job), a deactivated or drained workload is evicted, admission checks
// gate Admitted. It never decides admissions; the scheduler does.
package workload

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/cache"
)

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// Reconciler reconciles Workloads.
type Reconciler struct {
	Client   client.Client
	Cache    *cache.Cache
	Writer   *apply.Writer
	Recorder record.EventRecorder
	Options  Options
	// Now returns the current time; time.Now when nil.
	Now func() time.Time
	// Concurrency is the number of parallel reconciles (default 10).
	Concurrency int
	// Labels labels metrics; nil records ClusterQueue series only.
	Labels *Labels
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	workers := r.Concurrency
	if workers <= 0 {
		workers = 10
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&kueue.Workload{}).
		WatchesRawSource(source.Channel(r.Cache.Revisits(), &handler.EnqueueRequestForObject{})).
		// A queue's stop policy acts on its workloads; the cache reports
		// the change once it holds it, so the reconcile sees it.
		WatchesRawSource(source.Channel(r.Cache.QueueChanges(), handler.EnqueueRequestsFromMapFunc(r.workloadsOfQueue))).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}

func (r *Reconciler) now() metav1.Time {
	if r.Now != nil {
		return metav1.NewTime(r.Now())
	}
	return metav1.Now()
}

func keyOf(wl *kueue.Workload) types.NamespacedName {
	return types.NamespacedName{Namespace: wl.Namespace, Name: wl.Name}
}

// Reconcile brings the cache and the workload's status in line with the
// workload's state.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var wl kueue.Workload
	if err := r.Client.Get(ctx, req.NamespacedName, &wl); err != nil {
		if apierrors.IsNotFound(err) {
			r.Cache.Release(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("getting Workload %s: %w", req.NamespacedName, err)
	}
	switch {
	case !wl.DeletionTimestamp.IsZero() && len(wl.OwnerReferences) == 0,
		meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished):
		// Finished, or going away with no job whose pods could still run:
		// the quota returns.
		if a := r.Cache.Release(keyOf(&wl)); a != nil {
			r.recordFinished(ctx, &wl, a)
		}
		return ctrl.Result{}, nil
	}
	if err := checkPodSets(&wl); err != nil {
		r.Cache.Release(keyOf(&wl))
		return ctrl.Result{}, r.setPending(ctx, &wl, kueue.WorkloadReasonMisconfigured, "Invalid workload: "+err.Error(), true)
	}
	if deactivationPending(&wl) {
		return ctrl.Result{}, r.deactivate(ctx, &wl)
	}
	if reserved(&wl) {
		return r.reconcileReserved(ctx, &wl)
	}
	return r.reconcilePending(ctx, &wl)
}

// reserved reports whether the workload holds a quota reservation.
func reserved(wl *kueue.Workload) bool {
	return wl.Status.Admission != nil && meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
}

// setPending records why a workload waits (QuotaReserved=False), writing
// only when the condition changes; with warn, a Warning event too.
func (r *Reconciler) setPending(ctx context.Context, wl *kueue.Workload, reason, message string, warn bool) error {
	st, changed := apply.Pending(wl, reason, message, nil, r.now())
	if !changed {
		return nil
	}
	if err := r.Writer.WorkloadStatus(ctx, wl, st, apply.AdmissionManager); err != nil {
		return err
	}
	if warn {
		r.Recorder.Event(wl, corev1.EventTypeWarning, reason, message)
	}
	return nil
}
