package scheduler

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/lifecycle"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/scheduling"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// refused sets aside a workload that cannot be admitted until something
// changes (its shape in a BestEffortFIFO queue, or the workload alone when
// its queue or namespace is the problem), and records why it waits.
func (s *Scheduler) refused(ctx context.Context, d *scheduling.Decision, snap *state.Snapshot, now time.Time) {
	if d.Deferred {
		return
	}
	s.Cache.ParkFor(d, snap)
	s.writePending(ctx, d, now)
}

// blocked tells the workloads behind a StrictFIFO head that was not
// admitted why they wait. Only those not told so yet are (the cache keeps
// track): a workload is told once when it becomes blocked, not every cycle.
func (s *Scheduler) blocked(ctx context.Context, b *scheduling.Blocked, now time.Time) {
	msg := b.Message()
	explain := func() string { return msg }
	for _, w := range s.Cache.Blocked(b) {
		s.act(ctx, w, now, func() {
			s.writeWaiting(ctx, w, scheduling.BlockedByHead.ConditionReason(), explain, true, now)
		})
	}
}

// writePending writes QuotaReserved=False with the decision's reason.
func (s *Scheduler) writePending(ctx context.Context, d *scheduling.Decision, now time.Time) {
	warn := d.Reason != scheduling.WaitingForPreemptedWorkloads
	s.writeWaiting(ctx, d.Workload, d.Reason.ConditionReason(), d.Explain, warn, now)
}

// writeWaiting records why a workload waits (QuotaReserved=False with a
// reason and message, and a Warning event when warn is set). The write is
// deferred and coalesced (see pendingWrites): most workloads are admitted
// before it is due and never get one.
func (s *Scheduler) writeWaiting(ctx context.Context, w *workload.Info, reason string, explain func() string, warn bool, now time.Time) {
	s.pending.note(w.Key, w.UID, reason, now, func() pendingNote {
		n := pendingNote{uid: w.UID, reason: reason, message: explain(), warn: warn, shape: w.Shape}
		if w.Replaces != nil {
			n.counts = w.Replaces.Counts
		}
		return n
	})
}

// sendPending writes a note that came due, unless the workload was
// admitted or changed hands meanwhile. The version the write makes is
// noted in the cache, so that an admission decided just before it still
// goes through.
func (s *Scheduler) sendPending(ctx context.Context, key types.NamespacedName, n pendingNote, now time.Time) {
	defer s.recoverWrite(key.String(), func(err error) {
		s.Cache.Untold(key)
		s.retryLater(ctx, key, n.uid, "pending status", err)
	})
	unlock := s.locks.lock(key)
	defer unlock()
	if s.Cache.Assumed(key) {
		return
	}
	if _, wait := s.retries.waiting(key, now); wait {
		// The workload's last writes failed: this note waits for the next
		// refusal after the backoff.
		s.Cache.Untold(key)
		return
	}
	var wl kueue.Workload
	if err := s.Client.Get(ctx, key, &wl); err != nil || wl.Status.Admission != nil || !lifecycle.Active(&wl) ||
		meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) || (n.uid != "" && wl.UID != n.uid) {
		// Admitted, gone, deactivated, finished or created again
		// meanwhile: the note is stale.
		if err != nil {
			s.Cache.Untold(key)
		}
		return
	}
	// The informer may not show the last pending write yet; what it
	// changed is rewritten here anyway (so the write is due even when the
	// older view already reads like the note).
	seen := wl.ResourceVersion
	wl.ResourceVersion = s.Cache.Rebase(key, seen)
	st, changed := apply.Pending(&wl, n.reason, n.message, ResourceRequests(n.shape, n.counts), metav1.NewTime(now))
	if !changed && wl.ResourceVersion == seen {
		return
	}
	wctx, cancel := s.writeContext(ctx)
	defer cancel()
	rv, err := s.Writer.WorkloadStatusVersion(wctx, &wl, st, apply.AdmissionManager)
	if err != nil {
		s.Cache.Untold(key) // a blocked workload is told again next cycle
		s.retryLater(ctx, key, wl.UID, "pending status", err)
		return
	}
	s.retries.succeeded(key)
	s.pending.written(key, n.reason, now)
	s.Cache.NoteOwnWrite(key, wl.ResourceVersion, rv)
	if n.warn {
		s.Recorder.Event(&wl, corev1.EventTypeWarning, "Pending", n.message)
	}
}

// ResourceRequests lists the total requests of each PodSet of a shape, as
// status.resourceRequests shows them (the internal pods count left out),
// at counts when given (a growing slice's whole size; its shape counts the
// pods it adds).
func ResourceRequests(shape *workload.Shape, counts []int32) []kueue.PodSetRequest {
	if shape == nil {
		return nil
	}
	out := make([]kueue.PodSetRequest, 0, len(shape.PodSets))
	for i, ps := range shape.PodSets {
		count := ps.Count
		if i < len(counts) {
			count = counts[i]
		}
		req := kueue.PodSetRequest{Name: ps.Name, Resources: corev1.ResourceList{}}
		for name, perPod := range ps.PerPod {
			if name == corev1.ResourcePods {
				continue
			}
			req.Resources[name] = resources.ToQuantity(name, resources.Mul(perPod, int64(count)))
		}
		out = append(out, req)
	}
	return out
}
