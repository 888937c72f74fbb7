package jobframework

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/workload"
)

// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list

// A job's Workload carries the resource-in-use finalizer while the job's
// pods may still use the quota it holds. The workload controller keeps the
// quota of a job-owned Workload as long as the object exists (even while it
// is being deleted), so the finalizer decides when the quota returns: it is
// removed once the Workload is finished, or once it is being deleted (or
// its job is gone) and no pod of the job runs any more.

// IndexWorkloadJob indexes Workloads by the job they belong to (jobIndexKey).
const IndexWorkloadJob = "kuota.jobframework.workload-job"

// podsPoll is how often a Workload that waits for its job's pods to go
// looks again: pods are read from the API server, not watched.
const podsPoll = 2 * time.Second

// ReleasedReason is the reason of the event on a Workload holding quota
// whose finalizer is removed once its job's pods are gone.
const ReleasedReason = "Released"

// jobIndexKey is the key of IndexWorkloadJob: "<Kind>.<group>/<name>".
func jobIndexKey(kind schema.GroupKind, name string) string {
	return kind.String() + "/" + name
}

// JobIndexKey is the IndexWorkloadJob key of the job of that kind and name.
func JobIndexKey(kind schema.GroupKind, name string) string { return jobIndexKey(kind, name) }

// IndexWorkloadByJob is the IndexWorkloadJob index function.
func IndexWorkloadByJob(obj client.Object) []string {
	wl, ok := obj.(*kueue.Workload)
	if !ok {
		return nil
	}
	if ref, ok := workload.JobOf(wl); ok {
		return []string{jobIndexKey(ref.GVK.GroupKind(), ref.Name)}
	}
	return nil
}

// jobOfWorkload maps a Workload event to its job of this kind.
func (r *Reconciler) jobOfWorkload(_ context.Context, obj client.Object) []reconcile.Request {
	wl, ok := obj.(*kueue.Workload)
	if !ok {
		return nil
	}
	ref, ok := workload.JobOf(wl)
	if !ok || ref.GVK.GroupKind() != r.Integration.GVK.GroupKind() {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: wl.Namespace, Name: ref.Name}}}
}

func hasFinalizer(wl *kueue.Workload) bool {
	return controllerutil.ContainsFinalizer(wl, kueue.ResourceInUseFinalizerName)
}

func isFinished(wl *kueue.Workload) bool {
	return meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished)
}

// ensureFinalizer adds the finalizer to a live, unfinished Workload that
// lacks it (one created before Workloads carried it). It reports whether
// it wrote.
func (r *Reconciler) ensureFinalizer(ctx context.Context, wl *kueue.Workload) (bool, error) {
	if hasFinalizer(wl) || !wl.DeletionTimestamp.IsZero() || isFinished(wl) {
		return false, nil
	}
	patch := client.MergeFromWithOptions(wl.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.AddFinalizer(wl, kueue.ResourceInUseFinalizerName)
	if err := r.Client.Patch(ctx, wl, patch); err != nil {
		return true, fmt.Errorf("adding the finalizer to Workload %s: %w", wl.Name, err)
	}
	return true, nil
}

// dropFinalizer removes the finalizer, failing if the Workload changed
// since it was read.
func (r *Reconciler) dropFinalizer(ctx context.Context, wl *kueue.Workload) error {
	if !hasFinalizer(wl) {
		return nil
	}
	patch := client.MergeFromWithOptions(wl.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(wl, kueue.ResourceInUseFinalizerName)
	if err := r.Client.Patch(ctx, wl, patch); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("removing the finalizer of Workload %s: %w", wl.Name, err)
	}
	return nil
}

// releaseWhenPodsGone removes the finalizer of a Workload whose job (UID
// uid) is stopping or gone, once none of the job's pods runs; with
// deleteIt, it also deletes the Workload. While pods run it looks again
// after podsPoll.
func (r *Reconciler) releaseWhenPodsGone(ctx context.Context, wl *kueue.Workload, uid types.UID, deleteIt bool) (ctrl.Result, error) {
	running, err := r.runningPods(ctx, wl.Namespace, uid)
	if err != nil {
		return ctrl.Result{}, err
	}
	if running > 0 {
		ctrl.LoggerFrom(ctx).V(3).Info("Waiting for the job's pods to go", "workload", wl.Name, "running", running)
		return ctrl.Result{RequeueAfter: podsPoll}, nil
	}
	held := hasFinalizer(wl) && reserved(wl)
	if err := r.dropFinalizer(ctx, wl); err != nil {
		return ctrl.Result{}, err
	}
	if held {
		r.Recorder.Event(wl, corev1.EventTypeNormal, ReleasedReason, "The job's pods are gone; the quota is released")
	}
	if deleteIt && wl.DeletionTimestamp.IsZero() {
		if err := r.Client.Delete(ctx, wl, client.Preconditions{UID: &wl.UID}); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("deleting Workload %s of a job that is gone: %w", wl.Name, err)
		}
	}
	return ctrl.Result{}, nil
}

// runningPods counts the pods of the job with that UID that are not
// Succeeded or Failed. A pod being deleted counts until it is gone: its
// containers may still run through a long grace period.
func (r *Reconciler) runningPods(ctx context.Context, ns string, uid types.UID) (int, error) {
	pods, err := r.jobPods(ctx, ns, uid)
	if err != nil {
		return 0, err
	}
	n := 0
	for i := range pods {
		if !terminal(&pods[i]) {
			n++
		}
	}
	return n, nil
}

// terminal reports a pod that Succeeded or Failed.
func terminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// jobPods lists the pods of the job with that UID, from the API server
// (ListJobPods).
func (r *Reconciler) jobPods(ctx context.Context, ns string, uid types.UID) ([]corev1.Pod, error) {
	return ListJobPods(ctx, r.apiReader(), r.Integration, ns, uid)
}

// finalizeOthers handles the Workloads of the job's name that do not
// belong to the live job (nil when it is gone or being deleted): those of
// a deleted job, or of an earlier job of the same name. A finished one
// loses its finalizer. One without an owner (its job was deleted with
// orphan propagation) is finished (OwnerNotFound) once its job's pods are
// gone, so that its quota returns, or loses the finalizer at once when it
// is deleted, as its quota is then already released. Any other one loses
// the finalizer once its job's pods are gone, and is deleted.
func (r *Reconciler) finalizeOthers(ctx context.Context, key types.NamespacedName, live client.Object) (ctrl.Result, error) {
	var list kueue.WorkloadList
	if err := r.Client.List(ctx, &list, client.InNamespace(key.Namespace), client.UnsafeDisableDeepCopy,
		client.MatchingFields{IndexWorkloadJob: jobIndexKey(r.Integration.GVK.GroupKind(), key.Name)}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the Workloads of %s: %w", key, err)
	}
	var result ctrl.Result
	for i := range list.Items {
		ref, ok := workload.JobOf(&list.Items[i])
		if !ok || (live != nil && ref.UID == live.GetUID()) {
			continue
		}
		wl := list.Items[i].DeepCopy()
		res, err := r.finalizeOther(ctx, wl, ref)
		if err != nil {
			return ctrl.Result{}, err
		}
		if res.RequeueAfter > 0 && (result.RequeueAfter == 0 || res.RequeueAfter < result.RequeueAfter) {
			result = res
		}
	}
	return result, nil
}

// finalizeOther handles one Workload whose job is gone (see
// finalizeOthers).
func (r *Reconciler) finalizeOther(ctx context.Context, wl *kueue.Workload, ref workload.JobRef) (ctrl.Result, error) {
	switch {
	case isFinished(wl):
		return ctrl.Result{}, r.dropFinalizer(ctx, wl)
	case !ref.Controller && !wl.DeletionTimestamp.IsZero():
		return ctrl.Result{}, r.dropFinalizer(ctx, wl)
	case !ref.Controller:
		return r.finishOrphan(ctx, wl, ref.UID)
	default:
		return r.releaseWhenPodsGone(ctx, wl, ref.UID, true)
	}
}

// OrphanFinishedMessage is the message of the Finished condition
// (OwnerNotFound) of a Workload whose job is gone.
const OrphanFinishedMessage = "The workload's owner no longer exists"

// finishOrphan finishes a Workload left with no owner (its job, UID uid,
// was deleted with orphan propagation) once none of the job's pods runs:
// Finished=True with reason OwnerNotFound, as Kueue's
// FinishOrphanedWorkloads does, so that its quota returns; the finalizer
// goes on the next pass (a finished Workload loses it). The Workload
// stays, for its history, until its retention or a user deletes it.
func (r *Reconciler) finishOrphan(ctx context.Context, wl *kueue.Workload, uid types.UID) (ctrl.Result, error) {
	running, err := r.runningPods(ctx, wl.Namespace, uid)
	if err != nil {
		return ctrl.Result{}, err
	}
	if running > 0 {
		ctrl.LoggerFrom(ctx).V(3).Info("Waiting for the pods of the ownerless Workload's job to go", "workload", wl.Name, "running", running)
		return ctrl.Result{RequeueAfter: podsPoll}, nil
	}
	msg := OrphanFinishedMessage
	if name := wl.Annotations[JobOwnerNameAnnotation]; name != "" {
		msg = fmt.Sprintf("%s: %s %s was deleted and its pods are gone", msg, r.Integration.GVK.Kind, name)
	}
	if err := finishWith(ctx, r.Writer, wl, kueue.WorkloadFinishedOwnerNotFound, msg, false); err != nil {
		return ctrl.Result{}, err
	}
	r.Recorder.Event(wl, corev1.EventTypeNormal, kueue.WorkloadFinishedOwnerNotFound, msg)
	return ctrl.Result{}, nil
}
