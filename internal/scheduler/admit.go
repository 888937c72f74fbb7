package scheduler

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/lifecycle"
	"github.com/kuota-dev/kuota/internal/metrics"
	"github.com/kuota-dev/kuota/internal/scheduling"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// admit assumes the admission in the cache, then writes it: one status
// write with the admission, QuotaReserved and (without admission checks)
// Admitted, conditional on the workload being unchanged since the decision.
// If the write fails, or panics, the assumption is undone and the workload
// requeued after a backoff (admissionFailed).
func (s *Scheduler) admit(ctx context.Context, d *scheduling.Decision, snap *state.Snapshot, now time.Time) {
	w := d.Workload
	cq := snap.ClusterQueues[w.ClusterQueue]
	asg := scheduling.WholeAssignment(w, d.Assignment)
	admission := scheduling.AdmissionOf(w.ClusterQueue, asg)
	checks := lifecycle.ApplicableChecks(cq, admission)
	a := &state.Admitted{
		Key: w.Key, UID: w.UID, ClusterQueue: w.ClusterQueue, LocalQueue: w.LocalQueue,
		Admitted: len(checks) == 0, Priority: w.Priority, QueueOrderTime: w.QueueOrderTime,
		Usage: asg.Usage, MinUsage: scheduling.MinUsage(w.Shape, asg), ReservedAt: now.UnixNano(),
		Topology: lifecycle.TopologyUses(admission),
	}
	if err := s.Cache.Assume(a, w.ResourceVersion); err != nil {
		s.log.Info("skipping admission", "workload", w.Key, "reason", err.Error())
		return
	}
	s.pending.forget(w.Key)
	s.pool.Go(func() {
		settled := false
		defer s.recoverWrite(w.Key.String(), func(err error) {
			if !settled {
				s.admissionFailed(ctx, w, err, now)
			}
		})
		unlock := s.locks.lock(w.Key)
		defer unlock()
		wctx, cancel := s.writeContext(ctx)
		defer cancel()
		wl, err := s.admissionBase(wctx, w.Key, w.UID, w.ResourceVersion)
		if err != nil {
			// Nothing was sent: the decision is stale, and the workload is
			// decided again on what the informer shows now.
			settled = true
			s.log.Info("admission not written, requeued", "workload", w.Key, "error", err.Error())
			s.Cache.Forget(w.Key)
			return
		}
		st := apply.Reserve(wl, admission, checks, metav1.NewTime(now))
		if err := s.Writer.WorkloadStatus(wctx, wl, st, apply.AdmissionManager); err != nil {
			s.admissionFailed(ctx, w, err, now)
			return
		}
		settled = true
		s.refusals.succeeded(w.Key)
		s.retries.succeeded(w.Key)
		if w.Replaces != nil {
			s.finishReplaced(wctx, wl, w.Replaces, now)
		}
		waited := now.Sub(lifecycle.QueuedSince(wl))
		s.Recorder.Eventf(wl, corev1.EventTypeNormal, "QuotaReserved", "Quota reserved in ClusterQueue %s, wait time since queued was %.0fs",
			w.ClusterQueue, waited.Seconds())
		labels := s.Labels.Of(ctx, wl, w.ClusterQueue)
		metrics.QuotaReserved(labels, waited)
		if len(checks) == 0 {
			s.Recorder.Eventf(wl, corev1.EventTypeNormal, "Admitted", "Admitted by ClusterQueue %s, wait time since reservation was 0s", w.ClusterQueue)
			metrics.Admitted(labels, waited)
		}
	})
}

// admissionFailed undoes an admission whose write failed (or panicked):
// the workload is held back, for a refusal for good as rejected says and
// otherwise for its retry backoff, then its reservation is forgotten and
// it queues again.
func (s *Scheduler) admissionFailed(ctx context.Context, w *workload.Info, err error, now time.Time) {
	// Held back before Forget queues it again.
	if permanent(err) {
		s.rejected(ctx, w, err, now)
	} else {
		s.Cache.HoldBack(w.Key, s.retryLater(ctx, w.Key, w.UID, "admission", err))
	}
	s.Cache.Forget(w.Key)
}

// admissionBase reads the workload an admission decided on version decided
// is written over, with the resourceVersion to write against: decided, or
// the latest version the scheduler's own pending-status writes made from
// it. Any other change since the decision (or the admission being undone
// meanwhile) is an error: the decision is stale.
func (s *Scheduler) admissionBase(ctx context.Context, key types.NamespacedName, uid types.UID, decided string) (*kueue.Workload, error) {
	if !s.Cache.AssumedOn(key, decided) {
		return nil, fmt.Errorf("the workload changed since the decision (made on resourceVersion %s)", decided)
	}
	var wl kueue.Workload
	if err := s.Client.Get(ctx, key, &wl); err != nil {
		return nil, err
	}
	target := s.Cache.Rebase(key, decided)
	if wl.UID != uid || s.Cache.Rebase(key, wl.ResourceVersion) != target {
		return nil, fmt.Errorf("the workload changed since the decision (resourceVersion %s, decided on %s)", wl.ResourceVersion, decided)
	}
	wl.ResourceVersion = target
	return &wl, nil
}

// recoverWrite, deferred by a write sent to the pool, turns a panic into
// a failure of that write: it is logged and undo (when not nil) undoes
// what the scheduler assumed of the write, as a returned error would.
func (s *Scheduler) recoverWrite(what string, undo func(error)) {
	if p := recover(); p != nil {
		err := fmt.Errorf("panic: %v", p)
		s.log.Error(err, "status write failed", "object", what, "stack", string(debug.Stack()))
		if undo != nil {
			undo(err)
		}
	}
}
