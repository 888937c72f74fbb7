package scheduler

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/scheduling"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// Reason and event of a workload set aside after an internal failure.
const (
	reasonInternalError = "InternalError"
	// rejectedNoteAfter is the number of refused admission writes after
	// which the workload is told why it waits.
	rejectedNoteAfter = 3
	rejectedBase      = time.Second
	rejectedMax       = 5 * time.Minute
)

// decide runs the scheduling core. If it panics, the workloads that make
// it panic are found (each ClusterQueue's candidates alone, then each
// workload of a failing queue alone), set aside, and the rest decided.
func (s *Scheduler) decide(ctx context.Context, snap *state.Snapshot, queues []workload.Queue, now time.Time) (scheduling.Result, int) {
	if res, err := s.tryDecide(snap, queues); err == nil {
		return res, 0
	}
	var kept []workload.Queue
	aside := 0
	for _, q := range queues {
		if _, err := s.tryDecide(snap, []workload.Queue{q}); err == nil {
			kept = append(kept, q)
			continue
		}
		var ok []*workload.Info
		for _, w := range q.Workloads {
			if _, err := s.tryDecide(snap, []workload.Queue{{ClusterQueue: q.ClusterQueue, Workloads: []*workload.Info{w}}}); err != nil {
				s.setAside(ctx, w, err, now)
				aside++
				continue
			}
			ok = append(ok, w)
		}
		if len(ok) > 0 {
			kept = append(kept, workload.Queue{ClusterQueue: q.ClusterQueue, Workloads: ok})
		}
	}
	res, err := s.tryDecide(snap, kept)
	if err != nil {
		// Only combinations fail: nothing is decided this cycle.
		s.log.Error(err, "scheduling core failed on a combination of workloads; nothing decided this cycle")
		return scheduling.Result{}, aside
	}
	return res, aside
}

// tryDecide calls the core, turning a panic into an error.
func (s *Scheduler) tryDecide(snap *state.Snapshot, queues []workload.Queue) (res scheduling.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
			s.log.V(1).Info("scheduling core panicked", "error", err.Error(), "stack", string(debug.Stack()))
		}
	}()
	if s.Decide != nil {
		return s.Decide(snap, queues, s.Options), nil
	}
	buf := s.spare
	s.spare = nil // a retry after a panic starts afresh
	return scheduling.DecideInto(buf, snap, queues, s.Options), nil
}

// act runs the handling of one decision; a panic sets the workload aside
// instead of stopping the cycle.
func (s *Scheduler) act(ctx context.Context, w *workload.Info, now time.Time, f func()) {
	defer func() {
		if p := recover(); p != nil {
			err := fmt.Errorf("panic: %v", p)
			s.log.Error(err, "acting on a decision failed", "workload", w.Key, "stack", string(debug.Stack()))
			s.setAside(ctx, w, err, now)
		}
	}()
	f()
}

// setAside takes a workload out of scheduling until its spec changes (or
// the manager restarts), and says so on the workload.
func (s *Scheduler) setAside(ctx context.Context, w *workload.Info, cause error, now time.Time) {
	s.log.Error(cause, "workload set aside after an internal failure", "workload", w.Key)
	s.Cache.SetAside(w.Key)
	msg := fmt.Sprintf("Kuota failed while scheduling this workload and set it aside until its spec changes: %v", cause)
	s.writeWaiting(ctx, w, reasonInternalError, func() string { return msg }, true, now)
}

// rejections counts, per workload (the object of one UID), the admission
// writes the API server refused for good.
type rejections struct {
	mu    sync.Mutex
	count map[types.NamespacedName]rejection
}

type rejection struct {
	uid types.UID
	n   int
}

// fail counts one more refusal and returns the count. A workload created
// again under the same name counts from one.
func (r *rejections) fail(key types.NamespacedName, uid types.UID) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.count == nil {
		r.count = map[types.NamespacedName]rejection{}
	}
	c := r.count[key]
	if c.uid != uid {
		c = rejection{uid: uid}
	}
	c.n++
	r.count[key] = c
	return c.n
}

// succeeded forgets the refusals of a workload.
func (r *rejections) succeeded(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.count, key)
}

// prune forgets the refusals of the workloads unrecorded names (by key
// and UID): deleted, finished, or created again since.
func (r *rejections) prune(unrecorded unrecordedFunc) {
	pruneByUID(&r.mu, &r.count, func(c rejection) types.UID { return c.uid }, unrecorded)
}

// unrecordedFunc names, of the workloads given by key and UID, those the
// cache no longer records under that UID (Cache.Unrecorded).
type unrecordedFunc = func(map[types.NamespacedName]types.UID) []types.NamespacedName

// pruneByUID deletes from *m, under mu, the entries of the workloads that
// unrecorded names, unless an entry was replaced meanwhile (another UID).
// The cache is asked without mu held.
func pruneByUID[E any](mu *sync.Mutex, m *map[types.NamespacedName]E, uid func(E) types.UID, unrecorded unrecordedFunc) {
	mu.Lock()
	known := make(map[types.NamespacedName]types.UID, len(*m))
	for key, e := range *m {
		known[key] = uid(e)
	}
	mu.Unlock()
	if len(known) == 0 {
		return
	}
	gone := unrecorded(known)
	mu.Lock()
	defer mu.Unlock()
	for _, key := range gone {
		if e, ok := (*m)[key]; ok && uid(e) == known[key] {
			delete(*m, key)
		}
	}
}

// pruneEvery is how often the scheduler forgets what it remembers of
// workloads that are gone (refusals, notes of why they wait).
const pruneEvery = time.Minute

// pruneGone forgets, at most once every pruneEvery, the refusals and
// pending notes of the workloads the cache no longer records: a workload
// deleted (or created again under its name) leaves nothing behind.
func (s *Scheduler) pruneGone(now time.Time) {
	if now.Sub(s.prunedAt) < pruneEvery {
		return
	}
	s.prunedAt = now
	s.refusals.prune(s.Cache.Unrecorded)
	s.retries.prune(s.Cache.Unrecorded)
	if s.pending != nil {
		s.pending.prune(s.Cache.Unrecorded)
	}
}

// permanent reports an error that retrying the same write cannot fix:
// the API server, a webhook or a ValidatingAdmissionPolicy refused it.
// Conflicts, NotFound and server errors are not: they are retried after
// the short backoff of backoff.go, on fresh data.
func permanent(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err) ||
		apierrors.IsMethodNotSupported(err) || apierrors.IsRequestEntityTooLargeError(err) || apierrors.IsUnauthorized(err)
}

// rejectedBackoff is the wait after the n-th refusal: 1 s doubling up to
// 5 minutes (less a jitter, see jittered).
func rejectedBackoff(n int) time.Duration {
	return min(rejectedMax, rejectedBase<<min(n-1, 20))
}

// rejected handles an admission write refused for good: the workload
// waits a growing backoff before it is a candidate again, and from the
// third refusal on it says why with QuotaReserved=False and a Warning
// event.
func (s *Scheduler) rejected(ctx context.Context, w *workload.Info, err error, now time.Time) {
	n := s.refusals.fail(w.Key, w.UID)
	wait := jittered(rejectedBackoff(n), s.retries.random())
	s.Cache.HoldBack(w.Key, now.Add(wait))
	s.log.Info("admission refused by the API server; retrying later", "workload", w.Key, "attempt", n, "wait", wait.String(), "error", err.Error())
	if n < rejectedNoteAfter {
		return
	}
	msg := fmt.Sprintf("The API server refused to record this workload's admission %d times (last: %v); Kuota tries again in %s", n, err, wait)
	s.writeWaiting(ctx, w, kueue.WorkloadReasonMisconfigured, func() string { return msg }, false, now)
	ref := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: w.Key.Namespace, Name: w.Key.Name, UID: w.UID}}
	s.Recorder.Event(ref, corev1.EventTypeWarning, "AdmissionRejected", msg)
}
