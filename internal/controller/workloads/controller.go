// Package workloads carries out the Workload lifecycle: for each workload
// it asks the pure lifecycle (internal/lifecycle) for the next step (say
// why it cannot queue, deactivate it, evict it on a timeout or a check,
// clear the reservation of one without a job, requeue it after a backoff
// or a restarted queue, keep its admission checks in line) and performs
// it, with the events and metrics that go with it. It decides nothing
// itself and never feeds the cache: the informer handlers do
// (internal/feed). It never decides admissions; the scheduler does.
package workloads

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/cache"
	"github.com/kuota-dev/kuota/internal/lifecycle"
	"github.com/kuota-dev/kuota/internal/report"
)

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// Reconciler reconciles Workloads.
type Reconciler struct {
	Client   client.Client
	Cache    *cache.Cache
	Writer   *apply.Writer
	Recorder record.EventRecorder
	Options  lifecycle.Options
	// Now returns the current time; time.Now when nil.
	Now func() time.Time
	// Concurrency is the number of parallel reconciles (default 10).
	Concurrency int
	// Labels labels metrics; nil records ClusterQueue series only.
	Labels *report.Labels
}

// SetupWithManager registers the controller: Workload events, and the
// workloads the cache asks to revisit (their queue changed).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	workers := r.Concurrency
	if workers <= 0 {
		workers = 10
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&kueue.Workload{}).
		WatchesRawSource(revisits(r.Cache)).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}

// revisits feeds the controller the workloads the cache asks for: a set
// drained on a signal, so each is queued once however often it was asked.
func revisits(c *cache.Cache) source.Source {
	return source.Func(func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case <-c.RevisitSignal():
					for _, key := range c.TakeRevisits() {
						q.Add(reconcile.Request{NamespacedName: key})
					}
				}
			}
		}()
		return nil
	})
}

func (r *Reconciler) now() metav1.Time {
	if r.Now != nil {
		return metav1.NewTime(r.Now())
	}
	return metav1.Now()
}

// Reconcile performs the next lifecycle step of the workload.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var wl kueue.Workload
	if err := r.Client.Get(ctx, req.NamespacedName, &wl); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	view := r.Cache.View(&wl)
	step := lifecycle.Next(&wl, &view, &r.Options, r.now().Time)
	res, err := r.perform(ctx, &wl, step)
	return res, expected(ctx, &wl, err)
}

// expected turns the errors that resolve themselves into a quiet retry: a
// conflict means a newer version is on its way (its event brings the
// workload back), NotFound means it is gone. Neither is a reconciler
// error worth a stack trace.
func expected(ctx context.Context, wl *kueue.Workload, err error) error {
	if err == nil || !(apierrors.IsConflict(err) || apierrors.IsNotFound(err)) {
		return err
	}
	ctrl.LoggerFrom(ctx).V(2).Info("workload changed or went away meanwhile; waiting for its next version",
		"workload", fmt.Sprintf("%s/%s", wl.Namespace, wl.Name), "error", err.Error())
	return nil
}
