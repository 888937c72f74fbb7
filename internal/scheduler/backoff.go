package scheduler

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// A write of the scheduler (an admission, an eviction, a note of why a
// workload waits) that fails for a reason that may pass (a 500 from a
// webhook, a 503 or 429, a timeout, a conflict against a lagging informer)
// is retried after a per-workload backoff: about retryBase after the first
// failure, doubling up to retryMax, less up to retryJitter of it at random
// so that workloads that failed together do not retry together. A success
// of a write to the workload, or a change of its spec (generation), starts
// the backoff again from retryBase. Whatever the backoff, no more than
// retryBudget writes to one workload fail in a minute: past them the
// workload waits for the minute to end. Writes the API server refuses for
// good have their own, longer backoff (rejected), jittered the same way.
const (
	retryBase   = 250 * time.Millisecond
	retryMax    = 2 * time.Minute
	retryJitter = 0.2
	retryBudget = 10
	retryWindow = time.Minute
	// defaultWriteTimeout bounds one write (its read included): a request
	// the API server never answers fails, and is retried, instead of
	// holding a writer and the workload's reservation forever.
	defaultWriteTimeout = 15 * time.Second
)

// retryDelay is the wait after the attempt-th failure in a row (from 1),
// given r in [0, 1): retryBase doubling up to retryMax, less r times
// retryJitter of it.
func retryDelay(attempt int, r float64) time.Duration {
	d := retryMax
	if attempt < 1 {
		attempt = 1
	}
	if shift := attempt - 1; shift < 20 {
		d = min(retryMax, retryBase<<shift)
	}
	return jittered(d, r)
}

// jittered is d less r (in [0, 1)) times retryJitter of it.
func jittered(d time.Duration, r float64) time.Duration {
	return d - time.Duration(float64(d)*retryJitter*min(max(r, 0), 1))
}

// random returns a number in [0, 1), from r.rand when set.
func (r *retries) random() float64 {
	if r.rand != nil {
		return r.rand()
	}
	return rand.Float64()
}

// retries tracks, per workload (the object of one UID), the writes that
// failed in a row and when the next may be tried. Workloads whose writes
// succeed have no entry, and a success with no entry costs an atomic load.
type retries struct {
	mu      sync.Mutex
	entries map[types.NamespacedName]*retryEntry
	// size is len(entries), read without the lock.
	size atomic.Int64
	// rand returns a number in [0, 1); rand.Float64 when nil (tests fix it).
	rand func() float64
}

type retryEntry struct {
	uid        types.UID
	generation int64
	// attempts is the number of failures in a row at this generation.
	attempts int
	// until is when the next write may be tried.
	until time.Time
	// window is when the current minute of the budget began, failures the
	// writes that failed in it.
	window   time.Time
	failures int
}

// failed records a failed write to the workload (uid at generation) at
// now and returns the failures in a row and when the next write may be
// tried.
func (r *retries) failed(key types.NamespacedName, uid types.UID, generation int64, now time.Time) (int, time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.entries == nil {
		r.entries = map[types.NamespacedName]*retryEntry{}
	}
	e := r.entries[key]
	if e == nil || e.uid != uid {
		e = &retryEntry{uid: uid, generation: generation}
		r.entries[key] = e
		r.size.Store(int64(len(r.entries)))
	}
	if e.generation != generation {
		e.generation, e.attempts = generation, 0 // the spec changed
	}
	if now.Sub(e.window) >= retryWindow {
		e.window, e.failures = now, 0
	}
	e.attempts++
	e.failures++
	e.until = now.Add(retryDelay(e.attempts, r.random()))
	if e.failures >= retryBudget {
		e.until = maxTime(e.until, e.window.Add(retryWindow))
	}
	return e.attempts, e.until
}

// waiting reports whether a write to the workload must wait (until the
// time returned) after failures.
func (r *retries) waiting(key types.NamespacedName, now time.Time) (time.Time, bool) {
	if r.size.Load() == 0 {
		return time.Time{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.entries[key]; e != nil && e.until.After(now) {
		return e.until, true
	}
	return time.Time{}, false
}

// succeeded forgets the failures of a workload whose write went through.
func (r *retries) succeeded(key types.NamespacedName) {
	if r.size.Load() == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.entries, key)
	r.size.Store(int64(len(r.entries)))
}

// prune forgets the workloads unrecorded names (by key and UID): deleted,
// finished, or created again since.
func (r *retries) prune(unrecorded unrecordedFunc) {
	if r.size.Load() == 0 {
		return
	}
	pruneByUID(&r.mu, &r.entries, func(e *retryEntry) types.UID { return e.uid }, unrecorded)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.size.Store(int64(len(r.entries)))
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// writeContext bounds one write by the scheduler's WriteTimeout.
func (s *Scheduler) writeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	timeout := s.WriteTimeout
	if timeout <= 0 {
		timeout = defaultWriteTimeout
	}
	return context.WithTimeout(ctx, timeout)
}

// generationOf is the workload's generation as the informer shows it (0
// when it does not): what a failure counts against, so that a change of
// the spec starts the backoff again.
func (s *Scheduler) generationOf(ctx context.Context, key types.NamespacedName) int64 {
	var wl kueue.Workload
	if err := s.Client.Get(ctx, key, &wl); err != nil {
		return 0
	}
	return wl.Generation
}

// retryLater records a write to the workload that failed just now and
// returns when the next may be tried. The backoff counts from the failure,
// not from the decision: a write that hung until its timeout waits as long
// as one refused at once.
func (s *Scheduler) retryLater(ctx context.Context, key types.NamespacedName, uid types.UID, what string, err error) time.Time {
	now := s.now()
	n, until := s.retries.failed(key, uid, s.generationOf(ctx, key), now)
	s.log.Info(what+" not written; retrying later", "workload", key, "attempt", n,
		"wait", until.Sub(now).String(), "error", err.Error())
	return until
}
