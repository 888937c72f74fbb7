package workloads

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/controller"
	"github.com/kuota-dev/kuota/internal/lifecycle"
	"github.com/kuota-dev/kuota/internal/metrics"
	"github.com/kuota-dev/kuota/internal/report"
)

// perform carries out one step: one write at most, then its events and
// metrics.
func (r *Reconciler) perform(ctx context.Context, wl *kueue.Workload, s lifecycle.Step) (ctrl.Result, error) {
	switch s.Action {
	case lifecycle.Wait:
		return ctrl.Result{RequeueAfter: s.After}, nil
	case lifecycle.SetPending:
		return ctrl.Result{}, r.setPending(ctx, wl, s)
	case lifecycle.MarkInactive:
		return ctrl.Result{}, r.write(ctx, wl, apply.Inactive(wl, r.now()))
	case lifecycle.Deactivate:
		return ctrl.Result{}, r.deactivate(ctx, wl)
	case lifecycle.MarkForDeactivation:
		return ctrl.Result{}, r.markForDeactivation(ctx, wl, s)
	case lifecycle.Evict:
		return ctrl.Result{}, r.evict(ctx, wl, s)
	case lifecycle.ReplaceNodes:
		return ctrl.Result{}, r.replaceNodes(ctx, wl, s)
	case lifecycle.ClearReservation:
		return ctrl.Result{}, r.clearReservation(ctx, wl)
	case lifecycle.Requeue:
		return ctrl.Result{}, r.requeue(ctx, wl, s)
	case lifecycle.SyncChecks:
		retry, err := r.syncChecks(ctx, wl, s.Checks)
		after := s.After
		if retry > 0 && (after == 0 || retry < after) {
			after = retry
		}
		return ctrl.Result{RequeueAfter: after}, err
	case lifecycle.DropFinalizer:
		return ctrl.Result{}, controller.DropFinalizer(ctx, r.Client, wl)
	case lifecycle.DeleteWorkload:
		return ctrl.Result{}, r.deleteFinished(ctx, wl)
	case lifecycle.DeleteJob:
		return ctrl.Result{}, r.deleteJob(ctx, wl)
	}
	return ctrl.Result{}, nil
}

// write applies a status under kueue-admission.
func (r *Reconciler) write(ctx context.Context, wl *kueue.Workload, st *kueue.WorkloadStatus) error {
	return r.Writer.WorkloadStatus(ctx, wl, st, apply.AdmissionManager)
}

// setPending records why a workload cannot queue (QuotaReserved=False),
// after confirming against the API server a missing queue the cache may
// not have caught up with.
func (r *Reconciler) setPending(ctx context.Context, wl *kueue.Workload, s lifecycle.Step) error {
	if missing, err := r.confirmMissing(ctx, wl, s.Confirm); err != nil || !missing {
		return err
	}
	st, changed := apply.Pending(wl, s.Reason, s.Message, nil, r.now())
	if !changed {
		return nil
	}
	if err := r.write(ctx, wl, st); err != nil {
		return err
	}
	if s.EventReason != "" {
		r.Recorder.Event(wl, corev1.EventTypeWarning, s.EventReason, s.Message)
	}
	return nil
}

// confirmMissing reads the LocalQueue or ClusterQueue a step says is
// missing; only one the API server does not have is.
func (r *Reconciler) confirmMissing(ctx context.Context, wl *kueue.Workload, what lifecycle.Confirm) (bool, error) {
	var err error
	switch what {
	case lifecycle.ConfirmNothing:
		return true, nil
	case lifecycle.ConfirmLocalQueueMissing:
		err = r.Client.Get(ctx, types.NamespacedName{Namespace: wl.Namespace, Name: string(wl.Spec.QueueName)}, &kueue.LocalQueue{})
	case lifecycle.ConfirmClusterQueueMissing:
		var lq kueue.LocalQueue
		if err = r.Client.Get(ctx, types.NamespacedName{Namespace: wl.Namespace, Name: string(wl.Spec.QueueName)}, &lq); err == nil {
			err = r.Client.Get(ctx, types.NamespacedName{Name: string(lq.Spec.ClusterQueue)}, &kueue.ClusterQueue{})
		}
	}
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, client.IgnoreNotFound(err)
}

// deactivate sets spec.active=false for a workload marked as a
// deactivation target.
func (r *Reconciler) deactivate(ctx context.Context, wl *kueue.Workload) error {
	c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadDeactivationTarget)
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"active":false}}`))
	if err := r.Client.Patch(ctx, wl, patch); err != nil {
		return fmt.Errorf("deactivating workload %s/%s: %w", wl.Namespace, wl.Name, err)
	}
	r.Recorder.Eventf(wl, corev1.EventTypeNormal, "Deactivated", "The workload is deactivated due to %s", c.Message)
	return nil
}

// markForDeactivation records why Kuota deactivates a workload
// (DeactivationTarget=True); the next step sets spec.active=false and then
// evicts it with reason Deactivated and this cause.
func (r *Reconciler) markForDeactivation(ctx context.Context, wl *kueue.Workload, s lifecycle.Step) error {
	st := apply.AdmissionStatus(wl)
	if !apply.SetCondition(&st.Conditions, kueue.WorkloadDeactivationTarget, metav1.ConditionTrue, string(s.Cause), s.Message, wl.Generation, r.now()) {
		return nil
	}
	if err := r.write(ctx, wl, st); err != nil {
		return err
	}
	if s.EventReason != "" {
		r.Recorder.Event(wl, corev1.EventTypeWarning, s.EventReason, s.Message)
	}
	return nil
}

// evict asks the workload to give up its quota, with the backoff the step
// names.
func (r *Reconciler) evict(ctx context.Context, wl *kueue.Workload, s lifecycle.Step) error {
	now := r.now()
	st := apply.Evict(wl, s.Reason, s.Cause, "", s.Message, now)
	apply.AddUnhealthyNodes(st, s.Nodes)
	switch s.Backoff {
	case lifecycle.PodsReadyBackoff:
		if pr := r.Options.PodsReady; pr != nil {
			pr.Backoff.Requeue(st, now.Time)
		}
	case lifecycle.RetryChecksBackoff:
		apply.RequeueAfter(st, now.Time, apply.RetryChecks(st, now))
	}
	if err := r.write(ctx, wl, st); err != nil {
		return err
	}
	r.Cache.MarkEvicting(lifecycle.KeyOf(wl), now.UnixNano())
	r.Recorder.Event(wl, corev1.EventTypeNormal, "EvictedDueTo"+meta.FindStatusCondition(st.Conditions, kueue.WorkloadEvicted).Reason, s.Message)
	metrics.Evicted(r.Labels.Of(ctx, wl, wl.Status.Admission.ClusterQueue), report.EvictionOf(wl, st, s.Reason, s.Cause, now.Time))
	return nil
}

// clearReservation gives the quota of an evicted workload back, as a job
// would once its pods are gone (workloads without a job have none). A
// preempted workload goes straight back to its queue; others wait until
// what evicted them is resolved.
func (r *Reconciler) clearReservation(ctx context.Context, wl *kueue.Workload) error {
	ev := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted)
	now := r.now()
	st := apply.ClearReservation(wl, apply.RequeuedAtOnce(wl, ev.Reason, now.Time), ev.Reason, ev.Message, now)
	if err := r.write(ctx, wl, st); err != nil {
		return err
	}
	metrics.EvictionCompleted(string(wl.Status.Admission.ClusterQueue), ev.Reason, now.Sub(ev.LastTransitionTime.Time))
	return nil
}

// requeue lets a workload held back after an eviction queue again.
func (r *Reconciler) requeue(ctx context.Context, wl *kueue.Workload, s lifecycle.Step) error {
	st := apply.AdmissionStatus(wl)
	if s.ResetRequeueState {
		st.RequeueState = nil
	}
	apply.SetCondition(&st.Conditions, kueue.WorkloadRequeued, metav1.ConditionTrue, s.Reason, s.Message, wl.Generation, r.now())
	return r.write(ctx, wl, st)
}

// syncChecks keeps status.admissionChecks in line with the checks that
// apply, and turns the workload Admitted once all are Ready and its
// topology is placed. A placement that waited for a ProvisioningRequest
// check is made then (the second pass); when the pods do not fit yet,
// retry says when to try again.
func (r *Reconciler) syncChecks(ctx context.Context, wl *kueue.Workload, applying []kueue.AdmissionCheckReference) (retry time.Duration, err error) {
	allReady := true
	st := apply.AdmissionStatus(wl)
	changed := false
	for _, name := range applying {
		i := slices.IndexFunc(st.AdmissionChecks, func(s kueue.AdmissionCheckState) bool { return s.Name == name })
		if i < 0 {
			st.AdmissionChecks = append(st.AdmissionChecks, kueue.AdmissionCheckState{Name: name, State: kueue.CheckStatePending,
				LastTransitionTime: r.now()})
			changed, allReady = true, false
			continue
		}
		allReady = allReady && st.AdmissionChecks[i].State == kueue.CheckStateReady
	}
	admitting := allReady && !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted)
	placed := false
	if admitting && delayedTopology(wl) {
		adm, why, local := r.Cache.PlaceDelayed(lifecycle.KeyOf(wl))
		switch {
		case !local:
			// A MultiKueue worker places the pods; the admission waits
			// for its placement.
			changed = apply.SetCondition(&st.Conditions, kueue.WorkloadAdmitted, metav1.ConditionFalse, kueue.WorkloadReasonPendingDelayedTopology,
				"Waiting for the topology assignment of the worker cluster", wl.Generation, r.now()) || changed
			admitting = false
		case adm == nil:
			changed = apply.SetCondition(&st.Conditions, kueue.WorkloadAdmitted, metav1.ConditionFalse, kueue.WorkloadReasonPendingDelayedTopology,
				"Waiting for room on the provisioned nodes: "+why, wl.Generation, r.now()) || changed
			admitting, retry = false, delayedRetry
		default:
			st.Admission, placed, changed = adm, true, true
		}
	}
	if admitting {
		changed = apply.SetCondition(&st.Conditions, kueue.WorkloadAdmitted, metav1.ConditionTrue, kueue.WorkloadReasonAdmitted,
			"The workload is admitted", wl.Generation, r.now()) || changed
	}
	if !changed {
		return retry, nil
	}
	if err := r.write(ctx, wl, st); err != nil {
		if placed {
			r.Cache.Refresh(lifecycle.KeyOf(wl))
		}
		return 0, err
	}
	if admitting {
		r.recordAdmitted(ctx, wl)
	}
	return retry, nil
}

// delayedRetry is how often a workload whose provisioned nodes have no
// room for its topology yet tries again (nodes appear and pods end without
// waking the workload).
const delayedRetry = 5 * time.Second

// recordAdmitted emits the event and metrics of an admission that waited
// for admission checks.
func (r *Reconciler) recordAdmitted(ctx context.Context, wl *kueue.Workload) {
	now := r.now().Time
	var sinceReserved time.Duration
	if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved); c != nil {
		sinceReserved = now.Sub(c.LastTransitionTime.Time)
	}
	r.Recorder.Eventf(wl, corev1.EventTypeNormal, "Admitted", "Admitted by ClusterQueue %s, wait time since reservation was %.0fs",
		wl.Status.Admission.ClusterQueue, sinceReserved.Seconds())
	labels := r.Labels.Of(ctx, wl, wl.Status.Admission.ClusterQueue)
	metrics.Admitted(labels, now.Sub(lifecycle.QueuedSince(wl)))
	metrics.AdmissionChecksPassed(labels, sinceReserved)
}

// deleteFinished deletes a finished workload past its retention.
func (r *Reconciler) deleteFinished(ctx context.Context, wl *kueue.Workload) error {
	if err := r.Client.Delete(ctx, wl, client.Preconditions{UID: &wl.UID}, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		return fmt.Errorf("deleting finished workload %s/%s: %w", wl.Namespace, wl.Name, err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Deleted a finished workload past its retention", "workload", wl.Namespace+"/"+wl.Name)
	return nil
}

// deleteJob deletes the job that owns a workload Kuota deactivated, past
// its retention; its children, the workload among them, go with it.
func (r *Reconciler) deleteJob(ctx context.Context, wl *kueue.Workload) error {
	owner := metav1.GetControllerOfNoCopy(wl)
	if owner == nil {
		return nil
	}
	gv, err := schema.ParseGroupVersion(owner.APIVersion)
	if err != nil {
		return nil //nolint:nilerr // an owner reference the API server let through but nobody can delete
	}
	job := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: wl.Namespace, Name: owner.Name}}
	job.SetGroupVersionKind(gv.WithKind(owner.Kind))
	if err := r.Client.Delete(ctx, job, client.Preconditions{UID: &owner.UID}, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		return fmt.Errorf("deleting %s %s/%s of deactivated workload %s: %w", owner.Kind, wl.Namespace, owner.Name, wl.Name, err)
	}
	r.Recorder.Eventf(wl, corev1.EventTypeNormal, "DeletedJob", "Deleted %s %s: the workload was deactivated by Kuota and its retention passed", owner.Kind, owner.Name)
	return nil
}

// delayedTopology says whether a PodSet of the admission waits for its
// topology assignment.
func delayedTopology(wl *kueue.Workload) bool {
	if wl.Status.Admission == nil {
		return false
	}
	for _, psa := range wl.Status.Admission.PodSetAssignments {
		if ptr.Deref(psa.DelayedTopologyRequest, "") == kueue.DelayedTopologyRequestStatePending {
			return true
		}
	}
	return false
}
