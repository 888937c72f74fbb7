// Package clusterqueue keeps the resource-in-use finalizer of
// ClusterQueues: a ClusterQueue being deleted keeps it until no workload
// reserves quota in it, counted from the cache once the cache holds every
// workload (the start barrier), so that a restart never lets a queue go
// while its workloads run. Meanwhile the queue stays in its cohort,
// terminating (internal/cache). It also reports a spec the scheduler
// cannot use. The cache is fed by the informer handlers (internal/feed);
// status is written by the status reporter.
package clusterqueue

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/cache"
	"github.com/kuota-dev/kuota/internal/controller"
	"github.com/kuota-dev/kuota/internal/state"
)

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=clusterqueues,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=clusterqueues/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=clusterqueues/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads,verbs=get;list;watch;patch

// recheck is how often a terminating ClusterQueue (or one waiting for the
// start barrier) is looked at again.
const recheck = 2 * time.Second

// Reconciler reconciles ClusterQueues.
type Reconciler struct {
	Client   client.Client
	Cache    *cache.Cache
	Recorder record.EventRecorder

	mu       sync.Mutex
	reported map[types.UID]string
	// recorded is, per terminating ClusterQueue, the cohort already
	// written on all its reserving workloads: none joins a terminating
	// queue, so the rechecks need not read them again.
	recorded map[types.UID]kueue.CohortReference
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&kueue.ClusterQueue{}, builder.WithPredicates(controller.SpecOrLifecycle)).
		Complete(r)
}

// Reconcile keeps the finalizer of a live queue, and removes it from a
// deleted one once no workload reserves quota in it.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var obj kueue.ClusterQueue
	if err := r.Client.Get(ctx, req.NamespacedName, &obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if _, err := state.NewClusterQueue(&obj); err != nil {
		// The webhook refuses such specs; one that slipped through is left
		// out of scheduling.
		r.reportOnce(&obj, corev1.EventTypeWarning, "InvalidSpec", err.Error())
	}
	if obj.DeletionTimestamp.IsZero() {
		_, err := controller.EnsureFinalizer(ctx, r.Client, &obj)
		return controller.Outcome(ctx, err)
	}
	if !r.Cache.Synced() {
		// A half-loaded cache would count too few reservations.
		return ctrl.Result{RequeueAfter: recheck}, nil
	}
	name := kueue.ClusterQueueReference(obj.Name)
	if keys := r.Cache.ReservingIn(name); len(keys) > 0 {
		r.reportOnce(&obj, corev1.EventTypeNormal, "Terminating", fmt.Sprintf(
			"The ClusterQueue admits nothing new; it keeps its quota and usage in its cohort until its %d reserving workloads release them", len(keys)))
		if err := r.recordCohortOnce(ctx, &obj, keys); err != nil {
			return controller.Outcome(ctx, err)
		}
		return ctrl.Result{RequeueAfter: recheck}, nil
	}
	err := controller.DropFinalizer(ctx, r.Client, &obj)
	if err == nil {
		r.forget(obj.UID)
	}
	return controller.Outcome(ctx, err)
}

// recordCohortOnce runs recordCohort unless it already ran for this queue
// and cohort.
func (r *Reconciler) recordCohortOnce(ctx context.Context, obj *kueue.ClusterQueue, keys []types.NamespacedName) error {
	cohort := obj.Spec.CohortName
	r.mu.Lock()
	done, ok := r.recorded[obj.UID]
	r.mu.Unlock()
	if ok && done == cohort {
		return nil
	}
	if err := r.recordCohort(ctx, cohort, keys); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.recorded == nil {
		r.recorded = map[types.UID]kueue.CohortReference{}
	}
	r.recorded[obj.UID] = cohort
	return nil
}

// forget drops what the reconciler remembers of a queue that is gone.
func (r *Reconciler) forget(uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.recorded, uid)
	delete(r.reported, uid)
}

// recordCohort writes the cohort of a ClusterQueue being deleted on the
// workloads that hold quota in it (state.CohortAnnotation), so that they
// still count in that cohort if the queue's finalizer is removed by force
// and the manager restarts. A queue in no cohort needs no record.
func (r *Reconciler) recordCohort(ctx context.Context, cohort kueue.CohortReference, keys []types.NamespacedName) error {
	for _, key := range keys {
		var wl kueue.Workload
		if err := r.Client.Get(ctx, key, &wl); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return fmt.Errorf("reading Workload %s to record its ClusterQueue's cohort: %w", key, err)
		}
		recorded, has := wl.Annotations[state.CohortAnnotation]
		if (cohort == "" && !has) || (has && recorded == string(cohort)) {
			continue
		}
		patch := client.MergeFrom(wl.DeepCopy())
		if cohort == "" {
			delete(wl.Annotations, state.CohortAnnotation)
		} else {
			metav1.SetMetaDataAnnotation(&wl.ObjectMeta, state.CohortAnnotation, string(cohort))
		}
		if err := r.Client.Patch(ctx, &wl, patch); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("recording the cohort of its ClusterQueue on Workload %s: %w", key, err)
		}
	}
	return nil
}

// reportOnce emits an event once per object and reason.
func (r *Reconciler) reportOnce(obj *kueue.ClusterQueue, typ, reason, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reported == nil {
		r.reported = map[types.UID]string{}
	}
	if r.reported[obj.UID] == reason {
		return
	}
	r.reported[obj.UID] = reason
	r.Recorder.Event(obj, typ, reason, msg)
}
