package scheduler

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/scheduling"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// refused sets aside a workload that cannot be admitted until something
// changes (its shape in a BestEffortFIFO queue, or the workload alone when
// its queue or namespace is the problem), and records why it waits.
func (s *Scheduler) refused(ctx context.Context, d *scheduling.Decision, snap *state.Snapshot, now time.Time) {
	w := d.Workload
	if d.Deferred {
		return
	}
	switch d.Reason {
	case scheduling.NamespaceMismatch, scheduling.ClusterQueueInactive, scheduling.ClusterQueueNotFound:
		key := w.Key
		s.Cache.Park(w.ClusterQueue, nil, &key)
	case scheduling.NoMatchingFlavor, scheduling.ExceedsMaxQuota, scheduling.WaitingForQuota:
		if cq := snap.ClusterQueues[w.ClusterQueue]; cq != nil && cq.QueueingStrategy == kueue.BestEffortFIFO {
			s.Cache.Park(w.ClusterQueue, w.Shape, nil)
		}
	}
	s.writePending(ctx, d, now)
}

// pendingWrites remembers what was last written for each pending workload,
// so that conditions are rewritten only when the reason changes, or the
// message changes and some time passed: a deep queue must not cost a write
// per workload per cycle.
type pendingWrites struct {
	mu   sync.Mutex
	last map[types.NamespacedName]pendingNote
}

type pendingNote struct {
	reason, message string
	at              time.Time
}

func newPendingWrites() *pendingWrites {
	return &pendingWrites{last: map[types.NamespacedName]pendingNote{}}
}

// messageRefresh is how often a changed message (same reason) is written.
const messageRefresh = 30 * time.Second

// due reports whether the note differs enough from the last one written,
// and records it if so.
func (p *pendingWrites) due(key types.NamespacedName, n pendingNote) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	prev, ok := p.last[key]
	if ok && prev.reason == n.reason && (prev.message == n.message || n.at.Sub(prev.at) < messageRefresh) {
		return false
	}
	if len(p.last) > 200000 {
		clear(p.last)
	}
	p.last[key] = n
	return true
}

// writePending writes QuotaReserved=False with the decision's reason.
func (s *Scheduler) writePending(ctx context.Context, d *scheduling.Decision, now time.Time) {
	warn := d.Reason != scheduling.WaitingForPreemptedWorkloads
	s.writeWaiting(ctx, d.Workload, d.Reason.ConditionReason(), d.Explain(), warn, now)
}

// writeWaiting writes QuotaReserved=False with a reason and message, and a
// Warning event when warn is set, unless the same was written recently.
func (s *Scheduler) writeWaiting(ctx context.Context, w *workload.Info, reason, message string, warn bool, now time.Time) {
	if !s.pending.due(w.Key, pendingNote{reason: reason, message: message, at: now}) {
		return
	}
	s.pool.Go(func() {
		defer s.recoverWrite(w.Key.String())
		var wl kueue.Workload
		if err := s.Client.Get(ctx, w.Key, &wl); err != nil || wl.Status.Admission != nil {
			return
		}
		st, changed := apply.Pending(&wl, reason, message, ResourceRequests(w.Shape), metav1.NewTime(now))
		if !changed {
			return
		}
		if err := s.Writer.WorkloadStatus(ctx, &wl, st, apply.AdmissionManager); err != nil {
			s.log.V(2).Info("pending status not written", "workload", w.Key, "error", err.Error())
			return
		}
		if warn {
			s.Recorder.Event(&wl, corev1.EventTypeWarning, "Pending", message)
		}
	})
}

// ResourceRequests lists the total requests of each PodSet of a shape, as
// status.resourceRequests shows them (the internal pods count left out).
func ResourceRequests(shape *workload.Shape) []kueue.PodSetRequest {
	if shape == nil {
		return nil
	}
	out := make([]kueue.PodSetRequest, 0, len(shape.PodSets))
	for _, ps := range shape.PodSets {
		req := kueue.PodSetRequest{Name: ps.Name, Resources: corev1.ResourceList{}}
		for name, perPod := range ps.PerPod {
			if name == corev1.ResourcePods {
				continue
			}
			req.Resources[name] = resources.ToQuantity(name, resources.Mul(perPod, int64(ps.Count)))
		}
		out = append(out, req)
	}
	return out
}
