// Package resourceflavor keeps the resource-in-use finalizer of
// ResourceFlavors while the flavor is in use: while a ClusterQueue names
// it, and while an unfinished Workload holds quota in it (its admission
// assigns the flavor), so that a flavor deleted from under running work
// stays until that work ends. The cache is fed by the informer handlers
// (internal/feed).
package resourceflavor

import (
	"context"
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/controller"
)

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=resourceflavors,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=resourceflavors/finalizers,verbs=update
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// IndexWorkloadFlavor indexes the Workloads that hold quota (an admission,
// not finished) by the flavors their admission assigns.
const IndexWorkloadFlavor = "kuota.resourceflavor.workload-flavor"

// InUseReason is the reason of the event on a deleted flavor that stays
// because something still uses it.
const InUseReason = "InUse"

// Reconciler reconciles ResourceFlavors.
type Reconciler struct {
	Client client.Client

	recorder record.EventRecorder
	mu       sync.Mutex
	reported map[types.UID]string
}

// SetupWithManager registers the controller and the Workload index it
// reads. Deleting flavors wait for ClusterQueue changes and for Workloads
// to release their quota, so both are watched.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &kueue.Workload{}, IndexWorkloadFlavor, indexWorkloadFlavors); err != nil {
		return fmt.Errorf("indexing Workloads by flavor: %w", err)
	}
	r.recorder = mgr.GetEventRecorderFor("kueue-resourceflavor-controller")
	return ctrl.NewControllerManagedBy(mgr).
		For(&kueue.ResourceFlavor{}, builder.WithPredicates(controller.SpecOrLifecycle)).
		Watches(&kueue.ClusterQueue{}, handler.EnqueueRequestsFromMapFunc(flavorsOf), builder.WithPredicates(controller.SpecOrLifecycle)).
		Watches(&kueue.Workload{}, releasedFlavors{}).
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
// no ClusterQueue names it and no Workload holds quota in it.
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
	cause, msg, err := r.inUse(ctx, kueue.ResourceFlavorReference(rf.Name))
	if err != nil {
		return ctrl.Result{}, err
	}
	if cause != "" {
		r.reportOnce(&rf, cause, msg)
		return ctrl.Result{}, nil
	}
	r.forget(rf.UID)
	return controller.Outcome(ctx, controller.DropFinalizer(ctx, r.Client, &rf))
}

// What keeps a deleted flavor (inUse).
const (
	keptByClusterQueue = "ClusterQueue"
	keptByWorkloads    = "Workloads"
)

// inUse says what keeps the flavor, with a message for its event: a
// ClusterQueue that names it, or Workloads holding quota in it. The cause
// is "" when nothing does.
func (r *Reconciler) inUse(ctx context.Context, name kueue.ResourceFlavorReference) (cause, msg string, err error) {
	var cqs kueue.ClusterQueueList
	if err := r.Client.List(ctx, &cqs); err != nil {
		return "", "", fmt.Errorf("listing ClusterQueues: %w", err)
	}
	for _, cq := range cqs.Items {
		for _, g := range cq.Spec.ResourceGroups {
			if slices.ContainsFunc(g.Flavors, func(f kueue.FlavorQuotas) bool { return f.Name == name }) {
				return keptByClusterQueue, fmt.Sprintf("The flavor is deleted; it stays while ClusterQueue %s names it", cq.Name), nil
			}
		}
	}
	var wls kueue.WorkloadList
	if err := r.Client.List(ctx, &wls, client.MatchingFields{IndexWorkloadFlavor: string(name)}, client.UnsafeDisableDeepCopy); err != nil {
		return "", "", fmt.Errorf("listing the Workloads of flavor %s: %w", name, err)
	}
	if n := len(wls.Items); n > 0 {
		wl := &wls.Items[0]
		return keptByWorkloads, fmt.Sprintf("The flavor is deleted; it stays while %d unfinished Workloads hold quota in it (%s/%s among them)",
			n, wl.Namespace, wl.Name), nil
	}
	return "", "", nil
}

// reportOnce emits the event saying why a deleted flavor stays, once per
// flavor and cause.
func (r *Reconciler) reportOnce(rf *kueue.ResourceFlavor, cause, msg string) {
	if r.recorder == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reported == nil {
		r.reported = map[types.UID]string{}
	}
	if r.reported[rf.UID] == cause {
		return
	}
	r.reported[rf.UID] = cause
	r.recorder.Event(rf, corev1.EventTypeNormal, InUseReason, msg)
}

// forget drops what was reported about a flavor that goes.
func (r *Reconciler) forget(uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.reported, uid)
}

// heldFlavors lists the flavors a Workload holds quota in: those its
// admission assigns, while it is not finished.
func heldFlavors(wl *kueue.Workload) []kueue.ResourceFlavorReference {
	if wl.Status.Admission == nil || meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
		return nil
	}
	var out []kueue.ResourceFlavorReference
	for _, psa := range wl.Status.Admission.PodSetAssignments {
		for _, f := range psa.Flavors {
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

// indexWorkloadFlavors is the IndexWorkloadFlavor index function.
func indexWorkloadFlavors(obj client.Object) []string {
	wl, ok := obj.(*kueue.Workload)
	if !ok {
		return nil
	}
	var out []string
	for _, f := range heldFlavors(wl) {
		out = append(out, string(f))
	}
	return out
}

// releasedFlavors wakes the flavors a Workload stops holding quota in (it
// finished, its reservation was cleared, it went away): a deleted flavor
// may be waiting for it. Other Workload events wake nothing.
type releasedFlavors struct{}

var _ handler.EventHandler = releasedFlavors{}

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

func (releasedFlavors) Create(context.Context, event.CreateEvent, queue) {}

func (releasedFlavors) Generic(context.Context, event.GenericEvent, queue) {}

func (releasedFlavors) Update(_ context.Context, e event.UpdateEvent, q queue) {
	oldWl, ok1 := e.ObjectOld.(*kueue.Workload)
	newWl, ok2 := e.ObjectNew.(*kueue.Workload)
	if !ok1 || !ok2 {
		return
	}
	still := heldFlavors(newWl)
	for _, f := range heldFlavors(oldWl) {
		if !slices.Contains(still, f) {
			q.Add(reconcile.Request{NamespacedName: client.ObjectKey{Name: string(f)}})
		}
	}
}

func (releasedFlavors) Delete(_ context.Context, e event.DeleteEvent, q queue) {
	wl, ok := e.Object.(*kueue.Workload)
	if !ok {
		return
	}
	for _, f := range heldFlavors(wl) {
		q.Add(reconcile.Request{NamespacedName: client.ObjectKey{Name: string(f)}})
	}
}
