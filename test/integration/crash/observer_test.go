package crash

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// signal is a kind of write the observer sees.
type signal int

const (
	sigAdmission signal = iota // a workload took a reservation
	sigEviction                // a workload was evicted
	sigStatus                  // a ClusterQueue or LocalQueue status changed
	numSignals
)

var signalNames = [numSignals]string{"admissions", "evictions", "status writes"}

// observer watches Workloads, ClusterQueues and LocalQueues through an
// informer, as a job controller would, and follows every workload's
// reservations. Its informer reconnects by itself across API server and
// etcd restarts; a relist may hide intermediate states, which the
// eviction counts in status.schedulingStats make up for.
type observer struct {
	cache cache.Cache
	// onAdmission is called (under the observer's lock) for each admission.
	onAdmission func(time.Time)

	mu       sync.Mutex
	tracks   map[types.UID]*reservation
	last     [numSignals]time.Time
	counts   [numSignals]int
	waiters  [numSignals]chan struct{}
	problems []string
	// waiting counts the workloads waiting for quota.
	waiting int
}

// reservation is what the observer last saw of one workload.
type reservation struct {
	name string
	// held: QuotaReserved=True with status.admission, not finished (the
	// audit's definition of holding quota).
	held bool
	// key tells one reservation from the next: ClusterQueue and the
	// QuotaReserved transition time.
	key string
	// evictions: the sum of status.schedulingStats.evictions.
	evictions int32
	// evictionsAtAdmission: evictions when the current reservation began.
	evictionsAtAdmission int32
	evicting, finished   bool
	// admissions: reservations seen so far.
	admissions int
	// history: the states seen, one word each, to explain a failure.
	history []string
}

// state is one word for what the workload shows.
func (r *reservation) state(rv string) string {
	s := "pending"
	switch {
	case r.finished:
		s = "finished"
	case r.held:
		s = "held"
	}
	if r.evicting {
		s += "+evicted"
	}
	return fmt.Sprintf("%s(%s,ev=%d,rv=%s)", s, r.key, r.evictions, rv)
}

// waiting: neither holding quota nor finished.
func (r *reservation) waiting() bool { return !r.held && !r.finished }

func reservationOf(wl *kueue.Workload) reservation {
	r := reservation{name: wl.Name}
	qr := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
	r.finished = meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished)
	r.evicting = meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted)
	r.held = qr != nil && qr.Status == "True" && wl.Status.Admission != nil && !r.finished
	if qr != nil && wl.Status.Admission != nil {
		r.key = fmt.Sprintf("%s@%s", wl.Status.Admission.ClusterQueue, qr.LastTransitionTime.UTC().Format(time.RFC3339))
	}
	if s := wl.Status.SchedulingStats; s != nil {
		for _, e := range s.Evictions {
			r.evictions += e.Count
		}
	}
	return r
}

// newObserver starts the informers and waits for their first sync.
func newObserver(ctx context.Context) (*observer, error) {
	c, err := cache.New(env.Config, cache.Options{Scheme: env.Scheme})
	if err != nil {
		return nil, err
	}
	o := &observer{cache: c, tracks: map[types.UID]*reservation{}, onAdmission: func(time.Time) {}}
	handlers := []struct {
		obj client.Object
		h   toolscache.ResourceEventHandlerFuncs
	}{
		{&kueue.Workload{}, toolscache.ResourceEventHandlerFuncs{AddFunc: o.workload,
			UpdateFunc: func(_, n any) { o.workload(n) }}},
		{&kueue.ClusterQueue{}, toolscache.ResourceEventHandlerFuncs{UpdateFunc: func(a, b any) {
			o.queueStatus(a.(*kueue.ClusterQueue).Status, b.(*kueue.ClusterQueue).Status)
		}}},
		{&kueue.LocalQueue{}, toolscache.ResourceEventHandlerFuncs{UpdateFunc: func(a, b any) {
			o.queueStatus(a.(*kueue.LocalQueue).Status, b.(*kueue.LocalQueue).Status)
		}}},
	}
	for _, h := range handlers {
		inf, err := c.GetInformer(ctx, h.obj)
		if err != nil {
			return nil, err
		}
		if _, err := inf.AddEventHandler(h.h); err != nil {
			return nil, err
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("observer's informers did not sync")
	}
	return o, nil
}

func (o *observer) queueStatus(old, cur any) {
	if equality.Semantic.DeepEqual(old, cur) {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.signal(sigStatus, time.Now(), 1)
}

// signal records n writes of a kind and wakes whoever waits for one.
// Called with o.mu held.
func (o *observer) signal(s signal, at time.Time, n int) {
	o.counts[s] += n
	o.last[s] = at
	if ch := o.waiters[s]; ch != nil {
		close(ch)
		o.waiters[s] = nil
	}
}

// workload follows one workload's reservations. A workload must never
// take a new reservation while it holds one: between two reservations it
// is evicted (its eviction count grows) or released.
func (o *observer) workload(obj any) {
	wl, ok := obj.(*kueue.Workload)
	if !ok {
		return
	}
	now, cur := time.Now(), reservationOf(wl)
	o.mu.Lock()
	defer o.mu.Unlock()
	prev := o.tracks[wl.UID]
	if prev == nil {
		prev = &reservation{name: wl.Name}
		o.tracks[wl.UID] = prev
	} else if prev.waiting() {
		o.waiting--
	}
	if cur.waiting() {
		o.waiting++
	}
	if d := cur.evictions - prev.evictions; d > 0 {
		o.signal(sigEviction, now, int(d))
	}
	cur.evictionsAtAdmission, cur.admissions = prev.evictionsAtAdmission, prev.admissions
	cur.history = append(prev.history, cur.state(wl.ResourceVersion))
	switch {
	case cur.held && !prev.held:
		o.admitted(&cur, now)
	case cur.held && (cur.key != prev.key || cur.evictions > prev.evictions && !cur.evicting):
		// A different reservation than the one seen last: fine only if
		// the workload was evicted since that one began (the informer
		// may have missed the states in between).
		if cur.evictions <= prev.evictionsAtAdmission {
			o.problem("workload %s (uid %s): reservation %s replaced by %s without an eviction in between",
				wl.Name, wl.UID, prev.key, cur.key)
		}
		o.admitted(&cur, now)
	case !cur.held && prev.held && !cur.finished && !cur.evicting && cur.evictions <= prev.evictionsAtAdmission:
		o.problem("workload %s (uid %s): reservation %s released without an eviction and unfinished",
			wl.Name, wl.UID, prev.key)
	}
	if prev.finished && !cur.finished {
		o.problem("workload %s (uid %s): Finished went away", wl.Name, wl.UID)
	}
	if prev.finished && cur.key != prev.key {
		o.problem("workload %s (uid %s): reserved again (%s) after it finished", wl.Name, wl.UID, cur.key)
	}
	*prev = cur
}

// admitted records a new reservation. Called with o.mu held.
func (o *observer) admitted(r *reservation, at time.Time) {
	r.evictionsAtAdmission = r.evictions
	r.admissions++
	o.signal(sigAdmission, at, 1)
	o.onAdmission(at)
}

func (o *observer) problem(format string, args ...any) {
	o.problems = append(o.problems, time.Now().Format("15:04:05.000 ")+fmt.Sprintf(format, args...))
}

// waitFor returns once the next write of kind s is seen, or false after
// timeout.
func (o *observer) waitFor(s signal, timeout time.Duration) bool {
	o.mu.Lock()
	if o.waiters[s] == nil {
		o.waiters[s] = make(chan struct{})
	}
	ch := o.waiters[s]
	o.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-time.After(timeout):
		return false
	}
}

// recent names the kinds of writes seen within window before at.
func (o *observer) recent(at time.Time, window time.Duration) []signal {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []signal
	for s := range numSignals {
		if !o.last[s].IsZero() && at.Sub(o.last[s]) <= window {
			out = append(out, s)
		}
	}
	return out
}

// waitingWorkloads is how many workloads wait for quota.
func (o *observer) waitingWorkloads() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.waiting
}

// admissionsOf is how many reservations of a workload were seen, and the
// states seen.
func (o *observer) admissionsOf(uid types.UID) (int, []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if r := o.tracks[uid]; r != nil {
		return r.admissions, r.history
	}
	return 0, nil
}

// report returns the counts per kind and the problems seen.
func (o *observer) report() ([numSignals]int, []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.counts, append([]string(nil), o.problems...)
}
