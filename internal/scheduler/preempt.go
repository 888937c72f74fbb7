package scheduler

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/metrics"
	"github.com/kuota-dev/kuota/internal/report"
	"github.com/kuota-dev/kuota/internal/scheduling"
	"github.com/kuota-dev/kuota/internal/workload"
)

// preempt evicts the victims chosen for a workload (those not already being
// evicted) and marks the workload as preempting, with the assignment it
// preempted for, so that it goes first and takes the freed quota.
func (s *Scheduler) preempt(ctx context.Context, d *scheduling.Decision, now time.Time) {
	w := d.Workload
	for _, v := range d.Victims {
		if v.Workload.Evicting {
			continue
		}
		victim, reason := v.Workload, v.Reason
		s.Cache.MarkEvicting(victim.Key, now.UnixNano())
		msg := fmt.Sprintf("Preempted to accommodate a workload (UID: %s) due to %s", w.UID, preemptionCause(reason))
		s.pool.Go(func() {
			defer s.recoverWrite(victim.Key.String(), func(err error) {
				s.Cache.UnmarkEvicting(victim.Key)
				s.evictionFailed(ctx, w, victim.Key, victim.UID, err, now)
			})
			if until, wait := s.retries.waiting(victim.Key, now); wait {
				// The victim's last writes failed: not before its backoff.
				s.Cache.UnmarkEvicting(victim.Key)
				s.Cache.HoldBack(w.Key, until)
				return
			}
			err := s.evict(ctx, victim.Key, w.ClusterQueue, reason, msg, now)
			if err != nil {
				s.evictionFailed(ctx, w, victim.Key, victim.UID, err, now)
				return
			}
			s.retries.succeeded(victim.Key)
		})
	}
	preempting := *w
	preempting.Preempting = true
	preempting.Hint = d.Hint()
	s.Cache.Requeue(&preempting)
	s.writePending(ctx, d, now)
}

// evictionFailed holds back a preemptor whose victim's eviction failed:
// it would choose the same victim again at once. A refusal for good holds
// it back as rejected says, any other failure for the victim's retry
// backoff.
func (s *Scheduler) evictionFailed(ctx context.Context, preemptor *workload.Info, victim types.NamespacedName, uid types.UID, err error, now time.Time) {
	err = fmt.Errorf("evicting %s: %w", victim, err)
	if permanent(err) {
		s.rejected(ctx, preemptor, err, now)
		return
	}
	s.Cache.HoldBack(preemptor.Key, s.retryLater(ctx, victim, uid, "eviction", err))
}

// evictAttempts bounds the retries of an eviction write that conflicts
// with another writer (the job side updating the victim, say).
const evictAttempts = 3

// evict writes a victim's eviction. It reads the victim from the API
// server, not from the informer: under load the informer is seconds behind,
// and would show a victim admitted a moment ago as not admitted yet (so
// never evicted, and its preemptor waiting for it to end by itself), or a
// victim that has just finished as running (so a write doomed to conflict).
// A conflict is retried on a fresh read; if the write still fails, the
// victim is no longer counted as evicting, and the next cycle decides again.
func (s *Scheduler) evict(ctx context.Context, key types.NamespacedName, preemptor kueue.ClusterQueueReference, reason, msg string, now time.Time) error {
	unlock := s.locks.lock(key)
	defer unlock()
	ctx, cancel := s.writeContext(ctx)
	defer cancel()
	var err error
	var reader client.Reader = s.Client
	if s.APIReader != nil {
		reader = s.APIReader
	}
	for attempt := range evictAttempts {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * 20 * time.Millisecond)
		}
		var wl kueue.Workload
		if err = reader.Get(ctx, key, &wl); err != nil {
			break
		}
		if wl.Status.Admission == nil && s.Cache.Assumed(key) {
			err = fmt.Errorf("its admission is still being written")
			break
		}
		if wl.Status.Admission == nil || meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted) ||
			meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
			return nil // gone from the quota already, finished, or evicted by someone else
		}
		st := apply.Evict(&wl, kueue.WorkloadEvictedByPreemption, "", reason, msg, metav1.NewTime(now))
		cleared := len(wl.OwnerReferences) == 0
		if cleared {
			st = clearedAtOnce(&wl, st, msg, now)
		}
		if err = s.Writer.WorkloadStatus(ctx, &wl, st, apply.AdmissionManager); err == nil {
			if cleared {
				metrics.EvictionCompleted(string(wl.Status.Admission.ClusterQueue), kueue.WorkloadEvictedByPreemption, 0)
			}
			s.Recorder.Event(&wl, corev1.EventTypeNormal, "Preempted", msg)
			s.Recorder.Event(&wl, corev1.EventTypeNormal, "EvictedDueTo"+kueue.WorkloadEvictedByPreemption, msg)
			metrics.Preempted(string(preemptor), reason)
			metrics.Evicted(s.Labels.Of(ctx, &wl, wl.Status.Admission.ClusterQueue),
				report.EvictionOf(&wl, st, kueue.WorkloadEvictedByPreemption, "", now))
			return nil
		}
		if !apierrors.IsConflict(err) {
			break
		}
	}
	s.log.Info("eviction not written, to be decided again", "workload", key, "error", err.Error())
	s.Cache.UnmarkEvicting(key)
	return err
}

// preemptionCause words a preemption reason for messages.
func preemptionCause(reason string) string {
	switch reason {
	case kueue.InClusterQueueReason:
		return "prioritization in the ClusterQueue"
	case kueue.InCohortReclamationReason:
		return "reclamation within the cohort"
	case kueue.InCohortFairSharingReason:
		return "fair sharing within the cohort"
	case kueue.InCohortReclaimWhileBorrowingReason:
		return "reclamation within the cohort while borrowing"
	}
	return reason
}

// clearedAtOnce adds the release of the reservation to an eviction's
// status. A workload without a job has no pods to stop, so it gives its
// quota back in the same write that evicts it, instead of a second write
// once the eviction is observed.
func clearedAtOnce(wl *kueue.Workload, evicted *kueue.WorkloadStatus, msg string, now time.Time) *kueue.WorkloadStatus {
	next := wl.DeepCopy()
	next.Status = *evicted
	return apply.ClearReservation(next, apply.RequeuedAtOnce(next, kueue.WorkloadEvictedByPreemption, now),
		kueue.WorkloadEvictedByPreemption, msg, metav1.NewTime(now))
}
