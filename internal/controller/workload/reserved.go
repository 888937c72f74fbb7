package workload

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/cache"
	"github.com/kuota-dev/kuota/internal/metrics"
	"github.com/kuota-dev/kuota/internal/state"
)

// reconcileReserved records the quota a reserved workload holds and acts on
// its conditions.
func (r *Reconciler) reconcileReserved(ctx context.Context, wl *kueue.Workload) (ctrl.Result, error) {
	if err := r.Cache.Hold(r.admittedFor(wl)); err != nil {
		return ctrl.Result{}, fmt.Errorf("recording the reservation of %s/%s: %w", wl.Namespace, wl.Name, err)
	}
	if meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted) {
		if len(wl.OwnerReferences) > 0 {
			// The job stops its pods, then clears the reservation.
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, r.clearReservation(ctx, wl)
	}
	if reason, cause, msg := r.evictionDue(wl); reason != "" {
		return ctrl.Result{}, r.evict(ctx, wl, reason, cause, msg, nil)
	}
	res, acted, err := r.enforceTimeouts(ctx, wl)
	if acted || err != nil {
		return res, err
	}
	return res, r.syncChecks(ctx, wl)
}

// evictionDue says whether the workload must give up its quota now: it was
// deactivated, or its ClusterQueue or LocalQueue is drained (HoldAndDrain),
// or (Hold) it only reserves quota and is not admitted yet.
func (r *Reconciler) evictionDue(wl *kueue.Workload) (string, kueue.EvictionUnderlyingCause, string) {
	if wl.Spec.Active != nil && !*wl.Spec.Active {
		if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadDeactivationTarget); c != nil && c.Status == metav1.ConditionTrue {
			return kueue.WorkloadEvictedByDeactivation, kueue.EvictionUnderlyingCause(c.Reason), "The workload is deactivated: " + c.Message
		}
		return kueue.WorkloadEvictedByDeactivation, "", "The workload is deactivated"
	}
	admitted := meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted)
	cqName := wl.Status.Admission.ClusterQueue
	if cq, ok := r.Cache.ClusterQueue(cqName); ok && stops(cq.StopPolicy, admitted) {
		return kueue.WorkloadEvictedByClusterQueueStopped, "", fmt.Sprintf("The ClusterQueue %s is stopped", cqName)
	}
	lq := cache.LocalQueueKey{Namespace: wl.Namespace, Name: wl.Spec.QueueName}
	if stops(r.Cache.LocalQueueStopPolicy(lq), admitted) {
		return kueue.WorkloadEvictedByLocalQueueStopped, "", fmt.Sprintf("The LocalQueue %s is stopped", wl.Spec.QueueName)
	}
	return "", "", ""
}

// stops: HoldAndDrain evicts everything; Hold only cancels reservations
// that are not admitted yet.
func stops(p kueue.StopPolicy, admitted bool) bool {
	return p == kueue.HoldAndDrain || (p == kueue.Hold && !admitted)
}

// evict asks the workload to give up its quota; more, when set, adds to
// the status written.
func (r *Reconciler) evict(ctx context.Context, wl *kueue.Workload, reason string, cause kueue.EvictionUnderlyingCause, msg string,
	more func(*kueue.WorkloadStatus)) error {
	st := apply.Evict(wl, reason, cause, "", msg, r.now())
	if more != nil {
		more(st)
	}
	if err := r.Writer.WorkloadStatus(ctx, wl, st, apply.AdmissionManager); err != nil {
		return err
	}
	r.Cache.MarkEvicting(keyOf(wl))
	r.Recorder.Event(wl, corev1.EventTypeNormal, "EvictedDueTo"+meta.FindStatusCondition(st.Conditions, kueue.WorkloadEvicted).Reason, msg)
	metrics.Evicted(r.Labels.Of(ctx, wl, wl.Status.Admission.ClusterQueue), EvictionOf(wl, st, reason, cause, r.now().Time))
	return nil
}

// clearReservation gives the quota of an evicted workload back, as a job
// would once its pods are gone (workloads without a job have none). A
// preempted workload goes straight back to its queue; others wait until
// what evicted them is resolved.
func (r *Reconciler) clearReservation(ctx context.Context, wl *kueue.Workload) error {
	ev := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted)
	st := apply.ClearReservation(wl, apply.RequeuedAtOnce(wl, ev.Reason, r.now().Time), ev.Reason, ev.Message, r.now())
	if err := r.Writer.WorkloadStatus(ctx, wl, st, apply.AdmissionManager); err != nil {
		return err
	}
	if a := r.Cache.Release(keyOf(wl)); a != nil {
		metrics.EvictionCompleted(string(a.ClusterQueue), ev.Reason, r.now().Sub(ev.LastTransitionTime.Time))
	}
	return nil
}

// syncChecks keeps status.admissionChecks in line with the checks that
// apply, and turns the workload Admitted once all are Ready. A Retry evicts
// it; a Rejected deactivates it.
func (r *Reconciler) syncChecks(ctx context.Context, wl *kueue.Workload) error {
	cq, ok := r.Cache.ClusterQueue(wl.Status.Admission.ClusterQueue)
	if !ok {
		return nil
	}
	applying := ApplicableChecks(cq, wl.Status.Admission)
	states := wl.Status.AdmissionChecks
	for _, s := range states {
		switch s.State {
		case kueue.CheckStateRejected:
			msg := fmt.Sprintf("Admission check %s rejected the workload: %s", s.Name, s.Message)
			r.Recorder.Event(wl, corev1.EventTypeWarning, "AdmissionCheckRejected", msg)
			return r.markForDeactivation(ctx, wl, kueue.WorkloadAdmissionCheckCause, msg)
		case kueue.CheckStateRetry:
			return r.evict(ctx, wl, kueue.WorkloadEvictedByAdmissionCheck, "",
				fmt.Sprintf("Admission check %s asks for a retry: %s", s.Name, s.Message), func(st *kueue.WorkloadStatus) {
					now := r.now()
					apply.RequeueAfter(st, now.Time, apply.RetryChecks(st, now))
				})
		}
	}
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
	if admitting {
		changed = apply.SetCondition(&st.Conditions, kueue.WorkloadAdmitted, metav1.ConditionTrue, kueue.WorkloadReasonAdmitted,
			"The workload is admitted", wl.Generation, r.now()) || changed
	}
	if !changed {
		return nil
	}
	if err := r.Writer.WorkloadStatus(ctx, wl, st, apply.AdmissionManager); err != nil {
		return err
	}
	if admitting {
		r.recordAdmitted(ctx, wl)
	}
	return nil
}

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
	metrics.Admitted(labels, now.Sub(QueuedSince(wl)))
	metrics.AdmissionChecksPassed(labels, sinceReserved)
}

// ApplicableChecks lists the admission checks of the ClusterQueue that apply
// to an admission: those without onFlavors, and those naming a flavor the
// admission uses.
func ApplicableChecks(cq *state.ClusterQueue, adm *kueue.Admission) []kueue.AdmissionCheckReference {
	var out []kueue.AdmissionCheckReference
	for _, rule := range cq.AdmissionChecks {
		if len(rule.OnFlavors) == 0 || usesAnyFlavor(adm, rule.OnFlavors) {
			out = append(out, rule.Name)
		}
	}
	return out
}

func usesAnyFlavor(adm *kueue.Admission, flavors []kueue.ResourceFlavorReference) bool {
	for _, psa := range adm.PodSetAssignments {
		for _, f := range psa.Flavors {
			if slices.Contains(flavors, f) {
				return true
			}
		}
	}
	return false
}
