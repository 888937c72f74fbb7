package leaderworkerset

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	lwsv1 "sigs.k8s.io/lws/api/leaderworkerset/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// +kubebuilder:rbac:groups=leaderworkerset.x-k8s.io,resources=leaderworkersets,verbs=get;list;watch
// +kubebuilder:rbac:groups=leaderworkerset.x-k8s.io,resources=leaderworkersets/finalizers,verbs=update

// Reconciler keeps one Workload per group of a managed LeaderWorkerSet:
// it creates the missing ones, replaces those whose PodSets no longer
// describe a group, copies a queue or priority change to pending ones, and
// deletes those of groups scaled away (their quota returns once their pods
// are gone).
type Reconciler struct {
	Client  client.Client
	Options jobframework.Options
	Ops     *jobframework.WorkloadOps
}

func setupReconciler(mgr ctrl.Manager, opts jobframework.Options) error {
	r := &Reconciler{Client: mgr.GetClient(), Options: opts, Ops: jobframework.NewWorkloadOps(mgr)}
	return ctrl.NewControllerManagedBy(mgr).
		Named("leaderworkerset").
		For(&lwsv1.LeaderWorkerSet{}).
		Owns(&kueue.Workload{}).
		Complete(r)
}

// Reconcile brings the Workloads of one LeaderWorkerSet in line.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	res, err := r.reconcile(ctx, req.NamespacedName)
	return jobframework.Quiet(ctx, res, err)
}

func (r *Reconciler) reconcile(ctx context.Context, key types.NamespacedName) (ctrl.Result, error) {
	var lws lwsv1.LeaderWorkerSet
	if err := r.Client.Get(ctx, key, &lws); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !lws.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	if managed, err := r.Options.Managed(ctx, r.Client, &lws); err != nil || !managed {
		return ctrl.Result{}, err
	}
	var list kueue.WorkloadList
	if err := r.Client.List(ctx, &list, client.InNamespace(lws.Namespace),
		client.MatchingFields{jobframework.IndexWorkloadJob: jobframework.JobIndexKey(GVK.GroupKind(), lws.Name)}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the Workloads of %s: %w", key, err)
	}
	have := map[string]*kueue.Workload{}
	for i := range list.Items {
		wl := &list.Items[i]
		if ref := metav1.GetControllerOfNoCopy(wl); ref != nil && ref.UID == lws.UID {
			have[wl.Name] = wl
		}
	}
	for i := range int(replicas(&lws)) {
		name := WorkloadName(&lws, i)
		wl, ok := have[name]
		delete(have, name)
		var err error
		if ok {
			err = r.update(ctx, &lws, wl)
		} else {
			err = r.create(ctx, &lws, name, i)
		}
		if err != nil {
			return ctrl.Result{}, err
		}
	}
	for _, wl := range have {
		if !wl.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.Client.Delete(ctx, wl, client.Preconditions{UID: &wl.UID}); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("deleting Workload %s of a group scaled away: %w", wl.Name, err)
		}
	}
	return ctrl.Result{}, nil
}

// create makes the Workload of group index, owned by the LeaderWorkerSet.
func (r *Reconciler) create(ctx context.Context, lws *lwsv1.LeaderWorkerSet, name string, index int) error {
	wl, err := jobframework.BuildWorkload(ctx, r.Client, lws, name, PodSets(lws), podIndex, r.Options)
	if err != nil {
		r.Ops.Recorder.Eventf(lws, corev1.EventTypeWarning, "ErrWorkloadCompose", "Cannot build the Workload of group %d: %v", index, err)
		return err
	}
	wl.Labels[jobframework.JobUIDLabel] = string(lws.UID)
	wl.Annotations[jobframework.JobOwnerGVKAnnotation] = GVK.String()
	wl.Annotations[jobframework.JobOwnerNameAnnotation] = lws.Name
	wl.Annotations[jobframework.IsGroupWorkloadAnnotation] = "true"
	wl.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: GVK.GroupVersion().String(), Kind: GVK.Kind, Name: lws.Name, UID: lws.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}}
	if err := r.Client.Create(ctx, wl); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return fmt.Errorf("creating Workload %s: %w", name, err)
	}
	r.Ops.Recorder.Eventf(lws, corev1.EventTypeNormal, "CreatedWorkload", "Created Workload: %s/%s", wl.Namespace, wl.Name)
	return nil
}

// update replaces a Workload whose PodSets changed (the templates or the
// size) and copies a queue or priority change to a pending one.
func (r *Reconciler) update(ctx context.Context, lws *lwsv1.LeaderWorkerSet, wl *kueue.Workload) error {
	if !wl.DeletionTimestamp.IsZero() || jobframework.IsFinished(wl) {
		return nil
	}
	want, err := jobframework.BuildWorkload(ctx, r.Client, lws, wl.Name, PodSets(lws), podIndex, r.Options)
	if err != nil {
		return nil //nolint:nilerr // an unresolved priority class keeps the Workload as it is
	}
	if !jobframework.EquivalentPodSets(want.Spec.PodSets, wl.Spec.PodSets) {
		if err := r.Client.Delete(ctx, wl, client.Preconditions{UID: &wl.UID}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("replacing Workload %s: %w", wl.Name, err)
		}
		r.Ops.Recorder.Eventf(lws, corev1.EventTypeNormal, "DeletedWorkload", "The group changed; replacing Workload %s", wl.Name)
		return nil
	}
	if jobframework.IsReserved(wl) {
		return nil
	}
	_, err = r.Ops.FollowPending(ctx, wl, want)
	return err
}
