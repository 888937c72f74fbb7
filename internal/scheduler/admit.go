package scheduler

import (
	"context"
	"fmt"
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
)

// admit assumes the admission in the cache, then writes it: one status
// write with the admission, QuotaReserved and (without admission checks)
// Admitted, conditional on the workload being unchanged since the decision.
// If the write fails the assumption is undone and the workload requeued.
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
		defer s.recoverWrite(w.Key.String())
		unlock := s.locks.lock(w.Key)
		defer unlock()
		wl, err := s.admissionBase(ctx, w.Key, w.UID, w.ResourceVersion)
		if err == nil {
			st := apply.Reserve(wl, admission, checks, metav1.NewTime(now))
			err = s.Writer.WorkloadStatus(ctx, wl, st, apply.AdmissionManager)
		}
		if err != nil {
			if permanent(err) {
				// Held back before Forget queues it again.
				s.rejected(ctx, w, err, now)
			} else {
				s.log.Info("admission not written, requeued", "workload", w.Key, "error", err.Error())
			}
			s.Cache.Forget(w.Key)
			return
		}
		s.refusals.succeeded(w.Key)
		if w.Replaces != nil {
			s.finishReplaced(ctx, wl, w.Replaces, now)
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

func (s *Scheduler) recoverWrite(what string) {
	if p := recover(); p != nil {
		s.log.Error(fmt.Errorf("panic: %v", p), "status write failed", "object", what)
	}
}
