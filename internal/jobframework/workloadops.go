package jobframework

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/metrics"
)

// WorkloadOps are the Workload writes that the controllers of their own
// (Integration.SetupReconciler) share with the generic Job reconciler:
// finishing, PodsReady, reclaimable pods, the end of an eviction, the
// resource-in-use finalizer. Each is one write, made only when needed.
type WorkloadOps struct {
	Client   client.Client
	Writer   *apply.Writer
	Recorder record.EventRecorder
}

// NewWorkloadOps returns the operations over the manager's client, with
// events recorded as the job controller's.
func NewWorkloadOps(mgr ctrl.Manager) *WorkloadOps {
	return &WorkloadOps{
		Client: mgr.GetClient(), Writer: &apply.Writer{Client: mgr.GetClient()},
		Recorder: mgr.GetEventRecorderFor("kueue-job-controller"),
	}
}

// IsFinished reports a Workload with Finished=True.
func IsFinished(wl *kueue.Workload) bool { return isFinished(wl) }

// IsReserved reports a Workload holding a quota reservation.
func IsReserved(wl *kueue.Workload) bool { return reserved(wl) }

// IsEvicted reports an eviction its job has not completed yet.
func IsEvicted(wl *kueue.Workload) bool { return isEvicted(wl) }

// IsAdmitted reports a Workload with Admitted=True.
func IsAdmitted(wl *kueue.Workload) bool {
	return meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted)
}

// Finish sets Finished (Succeeded or Failed) with msg; ready says whether
// the pods were ready, so that PodsReady does not read "waiting" next to
// Finished.
func (o *WorkloadOps) Finish(ctx context.Context, wl *kueue.Workload, success bool, msg string, ready bool) error {
	if isFinished(wl) {
		return nil
	}
	return finishWorkload(ctx, o.Writer, wl, success, msg, ready)
}

func finishWorkload(ctx context.Context, w *apply.Writer, wl *kueue.Workload, success bool, msg string, ready bool) error {
	reason := kueue.WorkloadFinishedSucceeded
	if !success {
		reason = kueue.WorkloadFinishedFailed
	}
	return finishWith(ctx, w, wl, reason, msg, ready)
}

// finishWith sets Finished=True with reason and msg (see finishWorkload).
func finishWith(ctx context.Context, w *apply.Writer, wl *kueue.Workload, reason, msg string, ready bool) error {
	st := apply.AdmissionStatus(wl)
	now := metav1.Now()
	apply.SetCondition(&st.Conditions, kueue.WorkloadFinished, metav1.ConditionTrue, reason, msg, wl.Generation, now)
	if c := meta.FindStatusCondition(st.Conditions, kueue.WorkloadPodsReady); c != nil && c.Status != metav1.ConditionTrue && ready {
		reason := kueue.WorkloadStarted
		if c.Reason == string(kueue.WorkloadWaitForRecovery) {
			reason = kueue.WorkloadRecovered
		}
		apply.SetCondition(&st.Conditions, kueue.WorkloadPodsReady, metav1.ConditionTrue, reason,
			"All pods reached readiness or succeeded", wl.Generation, now)
	}
	if err := w.WorkloadStatus(ctx, wl, st, apply.AdmissionManager); err != nil {
		return fmt.Errorf("marking Workload %s finished: %w", wl.Name, err)
	}
	return nil
}

// SyncPodsReady sets PodsReady from whether the pods are ready.
func (o *WorkloadOps) SyncPodsReady(ctx context.Context, wl *kueue.Workload, ready bool) error {
	return syncPodsReadyCondition(ctx, o.Writer, wl, ready)
}

// syncPodsReadyCondition sets PodsReady: True (Started, or Recovered after
// a failure) when the pods are ready, False (WaitForStart, or
// WaitForRecovery after they were ready) when not.
func syncPodsReadyCondition(ctx context.Context, w *apply.Writer, wl *kueue.Workload, ready bool) error {
	prev := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadPodsReady)
	everReady := prev != nil && (prev.Status == metav1.ConditionTrue || prev.Reason == string(kueue.WorkloadWaitForRecovery))
	status, reason, msg := metav1.ConditionFalse, string(kueue.WorkloadWaitForStart), "Not all pods are ready or succeeded"
	if ready {
		status, reason, msg = metav1.ConditionTrue, kueue.WorkloadStarted, "All pods reached readiness and the workload is running"
		if everReady {
			reason = kueue.WorkloadRecovered
		}
	} else if everReady {
		reason, msg = string(kueue.WorkloadWaitForRecovery), "At least one pod has failed, waiting for recovery"
	}
	if prev != nil && prev.Status == status {
		return nil
	}
	st := apply.AdmissionStatus(wl)
	now := metav1.Now()
	apply.SetCondition(&st.Conditions, kueue.WorkloadPodsReady, status, reason, msg, wl.Generation, now)
	if err := w.WorkloadStatus(ctx, wl, st, apply.AdmissionManager); err != nil {
		return fmt.Errorf("recording PodsReady of Workload %s: %w", wl.Name, err)
	}
	if status == metav1.ConditionTrue && reason == kueue.WorkloadStarted {
		recordPodsReady(wl, now.Time)
	}
	return nil
}

// SyncReclaimable records the reclaimable pods, when they changed.
func (o *WorkloadOps) SyncReclaimable(ctx context.Context, wl *kueue.Workload, want []kueue.ReclaimablePod) error {
	return syncReclaimable(ctx, o.Writer, wl, want)
}

func syncReclaimable(ctx context.Context, w *apply.Writer, wl *kueue.Workload, want []kueue.ReclaimablePod) error {
	if equality.Semantic.DeepEqual(nonZero(want), nonZero(wl.Status.ReclaimablePods)) {
		return nil
	}
	st := &kueue.WorkloadStatus{ReclaimablePods: want}
	if err := w.WorkloadStatus(ctx, wl, st, apply.JobControllerManager); err != nil {
		return fmt.Errorf("recording reclaimable pods of Workload %s: %w", wl.Name, err)
	}
	return nil
}

// SetJobCondition sets a condition the job side owns (for instance
// WaitingForReplacementPods of a pod group), when it changed.
func (o *WorkloadOps) SetJobCondition(ctx context.Context, wl *kueue.Workload, typ string, status metav1.ConditionStatus, reason, msg string) error {
	if c := meta.FindStatusCondition(wl.Status.Conditions, typ); c != nil && c.Status == status && c.Reason == reason && c.Message == msg {
		return nil
	}
	st := &kueue.WorkloadStatus{}
	apply.SetCondition(&st.Conditions, typ, status, reason, msg, wl.Generation, metav1.Now())
	if err := o.Writer.WorkloadStatus(ctx, wl, st, apply.JobControllerManager); err != nil {
		return fmt.Errorf("recording %s of Workload %s: %w", typ, wl.Name, err)
	}
	return nil
}

// ClearEvicted completes an eviction once the job's pods are gone: the
// reservation is cleared, so that the quota returns and the Workload is
// requeued.
func (o *WorkloadOps) ClearEvicted(ctx context.Context, wl *kueue.Workload) error {
	return clearEvicted(ctx, o.Writer, wl)
}

func clearEvicted(ctx context.Context, w *apply.Writer, wl *kueue.Workload) error {
	ev := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted)
	if ev == nil || !reserved(wl) {
		return nil
	}
	now := metav1.Now()
	st := apply.ClearReservation(wl, apply.RequeuedAtOnce(wl, ev.Reason, now.Time), ev.Reason, ev.Message, now)
	if err := w.WorkloadStatus(ctx, wl, st, apply.AdmissionManager); err != nil {
		return fmt.Errorf("clearing the reservation of Workload %s: %w", wl.Name, err)
	}
	if cq := wl.Status.Admission.ClusterQueue; cq != "" {
		metrics.EvictionCompleted(string(cq), ev.Reason, now.Sub(ev.LastTransitionTime.Time))
	}
	return nil
}

// EnsureFinalizer adds the resource-in-use finalizer to a live, unfinished
// Workload that lacks it. It reports whether it wrote.
func (o *WorkloadOps) EnsureFinalizer(ctx context.Context, wl *kueue.Workload) (bool, error) {
	if hasFinalizer(wl) || !wl.DeletionTimestamp.IsZero() || isFinished(wl) {
		return false, nil
	}
	patch := client.MergeFromWithOptions(wl.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.AddFinalizer(wl, kueue.ResourceInUseFinalizerName)
	if err := o.Client.Patch(ctx, wl, patch); err != nil {
		return true, fmt.Errorf("adding the finalizer to Workload %s: %w", wl.Name, err)
	}
	return true, nil
}

// Release removes the resource-in-use finalizer of a Workload whose pods
// are gone (an event says so when it held quota); with deleteIt, it also
// deletes the Workload.
func (o *WorkloadOps) Release(ctx context.Context, wl *kueue.Workload, deleteIt bool) error {
	held := hasFinalizer(wl) && reserved(wl)
	if err := o.DropFinalizer(ctx, wl); err != nil {
		return err
	}
	if held {
		o.Recorder.Event(wl, corev1.EventTypeNormal, ReleasedReason, "The job's pods are gone; the quota is released")
	}
	if deleteIt && wl.DeletionTimestamp.IsZero() {
		if err := o.Client.Delete(ctx, wl, client.Preconditions{UID: &wl.UID}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting Workload %s: %w", wl.Name, err)
		}
	}
	return nil
}

// DropFinalizer removes the resource-in-use finalizer, failing if the
// Workload changed since it was read.
func (o *WorkloadOps) DropFinalizer(ctx context.Context, wl *kueue.Workload) error {
	if !hasFinalizer(wl) {
		return nil
	}
	patch := client.MergeFromWithOptions(wl.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(wl, kueue.ResourceInUseFinalizerName)
	if err := o.Client.Patch(ctx, wl, patch); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("removing the finalizer of Workload %s: %w", wl.Name, err)
	}
	return nil
}

// Quiet turns the errors that resolve themselves (a conflict, NotFound)
// into a retry without a "Reconciler error".
func Quiet(ctx context.Context, res ctrl.Result, err error) (ctrl.Result, error) {
	return quiet(ctx, res, err)
}

// PodsPoll is how often a controller that waits for pods to go looks
// again.
const PodsPoll = podsPoll

// FollowPending copies to a pending Workload the queue name and priority
// of want (the Workload its job would make now). It reports whether it
// wrote.
func (o *WorkloadOps) FollowPending(ctx context.Context, wl, want *kueue.Workload) (bool, error) {
	if wl.Spec.QueueName == want.Spec.QueueName && samePriority(wl, want) {
		return false, nil
	}
	// A patch, not an update: the cached Workload lacks what the manager
	// does not read (internal/app trims its cache).
	patch := client.MergeFromWithOptions(wl.DeepCopy(), client.MergeFromWithOptimisticLock{})
	wl.Spec.QueueName = want.Spec.QueueName
	if want.Spec.PriorityClassRef != nil {
		wl.Spec.PriorityClassRef, wl.Spec.Priority = want.Spec.PriorityClassRef, want.Spec.Priority
	}
	if err := o.Client.Patch(ctx, wl, patch); err != nil {
		return true, fmt.Errorf("updating Workload %s: %w", wl.Name, err)
	}
	return true, nil
}
