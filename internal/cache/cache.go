// Package cache is the manager's live picture of the cluster: the pure
// scheduling state (internal/state) and the pending queues
// (internal/queueing) behind one lock, fed by the informers' event
// handlers (internal/feed) with no I/O. The scheduler loop reads snapshots
// from it and records its decisions in it.
//
// Whenever something happens that could let a workload in (new work, freed
// quota, a changed queue, flavor or cohort), it wakes the scheduler; an
// update that changes nothing the scheduler reads (a status write, Kuota's
// own included) costs O(1) and wakes nothing. When a queue's state changes
// in a way that moves its workloads (a stop policy, a LocalQueue pointed
// elsewhere, a ClusterQueue created or deleted), the cache places those
// workloads again from the latest object it holds, at a cost of what that
// queue holds, and asks the workload controller to revisit them.
package cache

import (
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/afs"
	"github.com/kuota-dev/kuota/internal/lifecycle"
	"github.com/kuota-dev/kuota/internal/queueing"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// Key is a workload key.
type Key = types.NamespacedName

// LocalQueueKey names a LocalQueue.
type LocalQueueKey = queueing.LocalQueueKey

// Cache is safe for concurrent use.
type Cache struct {
	mu     sync.Mutex
	opts   lifecycle.Options
	state  *state.State
	queues *queueing.Manager
	// priorities holds WorkloadPriorityClass values by name.
	priorities map[string]int32
	// limits holds the namespaces' LimitRanges (limitranges.go).
	limits limitRanges
	// claims holds the ResourceClaimTemplates by namespace and name
	// (claims.go).
	claims map[string]map[string]*lifecycle.ClaimTemplate
	// lqStop holds the stop policy of LocalQueues that are stopped.
	lqStop map[LocalQueueKey]kueue.StopPolicy
	// records holds, for every workload the informer shows that is not
	// gone, the latest object and where it was placed; byLocal indexes
	// them by LocalQueue (records.go).
	records map[Key]*record
	byLocal map[LocalQueueKey]map[Key]struct{}
	// assumed holds, for admissions the scheduler decided and is writing
	// (or wrote but the informer has not shown yet), the resourceVersion
	// the decision was made on.
	assumed map[Key]string
	// own holds the versions the scheduler's own pending-status writes
	// made (ownwrites.go).
	own map[Key]ownChain
	// runtimes remembers how long workloads ran, per LocalQueue and shape
	// (runtimes.go).
	runtimes runtimeHistory
	// evictions measures how long evictions take (evictions.go).
	evictions evictionDelays
	// fair is admission fair sharing's state (fairadmission.go).
	fair fairAdmission
	// idle holds the cohort trees whose last cycle changed nothing
	// (idle.go).
	idle idleTrees
	// poisoned holds workloads set aside after deciding them failed: the
	// object (its UID) and the generation they were set aside at. A
	// workload deleted, or recreated under the same name, is not set aside.
	poisoned map[Key]poison
	// replacers maps an elastic job's admitted slice to the slice that
	// replaces it (slices.go).
	replacers map[Key]Key
	// revisits are the workloads the workload controller should
	// reconcile again (revisits.go).
	revisits revisitSet
	// bound counts the pods placed by topology per node (boundpods.go).
	bound boundPods
	wake  chan struct{}
	// opened is set when quota is freed or a workload newly queued, and
	// cleared by TakeOpened.
	opened bool
	// changed is closed and replaced whenever status-relevant data change,
	// so status writers can wait for it.
	changed chan struct{}
	// onGone is called when a workload holding quota finishes.
	onGone func(*kueue.Workload, *state.Admitted)
	// synced is set once the informer handlers delivered the initial
	// state (the start barrier).
	synced atomic.Bool
}

// New returns an empty cache; opts say how Workloads become records.
func New(opts lifecycle.Options) *Cache {
	return &Cache{
		opts:       opts,
		state:      state.New(),
		queues:     queueing.NewManager(),
		priorities: map[string]int32{},
		limits:     limitRanges{specs: map[string]map[string]corev1.LimitRangeSpec{}, summary: map[string]*lifecycle.LimitRanges{}},
		claims:     map[string]map[string]*lifecycle.ClaimTemplate{},
		lqStop:     map[LocalQueueKey]kueue.StopPolicy{},
		records:    map[Key]*record{},
		byLocal:    map[LocalQueueKey]map[Key]struct{}{},
		assumed:    map[Key]string{},
		own:        map[Key]ownChain{},
		poisoned:   map[Key]poison{},
		replacers:  map[Key]Key{},
		runtimes:   runtimeHistory{},
		fair:       fairAdmission{ledgers: map[LocalQueueKey]*afs.Ledger{}, weights: map[LocalQueueKey]float64{}},
		revisits:   newRevisitSet(),
		wake:       make(chan struct{}, 1),
		changed:    make(chan struct{}),
	}
}

// Options returns the options records are built with.
func (c *Cache) Options() lifecycle.Options { return c.opts }

// MarkSynced records that the informer handlers delivered the initial
// state: from now on the cache holds every object.
func (c *Cache) MarkSynced() { c.synced.Store(true) }

// Synced reports whether the initial state is loaded.
func (c *Cache) Synced() bool { return c.synced.Load() }

// Wake returns the channel the scheduler waits on.
func (c *Cache) Wake() <-chan struct{} { return c.wake }

// Changed returns a channel closed at the next change of anything status
// reports (usage, pending counts, queues).
func (c *Cache) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// Poke wakes the scheduler for one more cycle, as if something changed
// (tests use it to wait for cycles instead of time).
func (c *Cache) Poke() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.notify()
}

// notify wakes the scheduler and status writers. Callers hold the lock.
// TakeOpened reports whether, since the last call, quota was freed or a
// workload came into a queue: then a scheduling cycle may well make
// progress, and is not held back by the loop's idle pacing.
func (c *Cache) TakeOpened() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	o := c.opened
	c.opened = false
	return o
}

func (c *Cache) notify() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
	close(c.changed)
	c.changed = make(chan struct{})
}

// Read runs f with the state and queues locked, for reading only.
func (c *Cache) Read(f func(st *state.State, q *queueing.Manager)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(c.state, c.queues)
}

// Snapshot returns a scheduling snapshot and the candidates at time now
// (Unix nanoseconds), taken together under the lock.
func (c *Cache) Snapshot(now int64) (*state.Snapshot, []workload.Queue) {
	c.mu.Lock()
	defer c.mu.Unlock()
	snap := c.state.Snapshot()
	snap.Now = now
	snap.EvictionDelay = c.evictions.median(now)
	qs := c.queues.Candidates(now)
	if c.fair.params != nil {
		if c.sampleFairLocked(now) {
			c.notify() // the status writer publishes the samples
		}
		c.orderFairLocked(qs)
		snap.FairUsage = c.fairUsageLocked()
	}
	return snap, qs
}

// NextRequeueAt returns when the earliest backoff ends, or 0.
func (c *Cache) NextRequeueAt(now int64) int64 {
	return c.queues.NextRequeueAt(now)
}

// Unparks returns how many times parked workloads were released.
func (c *Cache) Unparks() uint64 { return c.queues.Unparks() }

// ClusterQueue returns a ClusterQueue's spec as the cache knows it.
func (c *Cache) ClusterQueue(name kueue.ClusterQueueReference) (*state.ClusterQueue, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state.ClusterQueue(name)
}

// ClusterQueueFor resolves a LocalQueue.
func (c *Cache) ClusterQueueFor(key LocalQueueKey) (kueue.ClusterQueueReference, bool) {
	return c.queues.ClusterQueueFor(key)
}

// LocalQueueStopPolicy returns a LocalQueue's stop policy (None if unknown).
func (c *Cache) LocalQueueStopPolicy(key LocalQueueKey) kueue.StopPolicy {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lqStopLocked(key)
}

func (c *Cache) lqStopLocked(key LocalQueueKey) kueue.StopPolicy {
	if p, ok := c.lqStop[key]; ok {
		return p
	}
	return kueue.None
}

// PriorityClass returns a WorkloadPriorityClass value.
func (c *Cache) PriorityClass(name string) (int32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.priorities[name]
	return v, ok
}

// View returns what the lifecycle needs to know about a workload's queues.
func (c *Cache) View(wl *kueue.Workload) lifecycle.View {
	c.mu.Lock()
	defer c.mu.Unlock()
	v := c.viewLocked(wl)
	// The caller reads priority classes after the lock is released.
	v.PriorityClasses = c.PriorityClass
	// Only the workload controller checks nodes: placing a workload in the
	// cache (viewLocked's other caller) does not decode its assignment.
	v.Nodes = c.nodeChecksLocked(wl)
	return v
}

func (c *Cache) viewLocked(wl *kueue.Workload) lifecycle.View {
	lq := LocalQueueKey{Namespace: wl.Namespace, Name: wl.Spec.QueueName}
	v := lifecycle.View{LocalQueueStop: c.lqStopLocked(lq), PriorityClasses: c.priorityLocked, LimitRanges: c.limits.summary[wl.Namespace],
		Claims: c.claimsLocked(wl)}
	v.ClusterQueueName, v.LocalQueueKnown = c.queues.ClusterQueueFor(lq)
	if cq, ok := c.state.ClusterQueue(v.ClusterQueueName); ok && v.LocalQueueKnown {
		v.ClusterQueue = cq
	}
	if adm := wl.Status.Admission; adm != nil {
		if cq, ok := c.state.ClusterQueue(adm.ClusterQueue); ok {
			v.AdmittedIn = cq
		}
	}
	return v
}

// priorityLocked resolves a priority class; the caller holds the lock.
func (c *Cache) priorityLocked(name string) (int32, bool) {
	v, ok := c.priorities[name]
	return v, ok
}

// Ancestors returns the Cohorts above a ClusterQueue, nearest first.
func (c *Cache) Ancestors(cq kueue.ClusterQueueReference) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.state.Tree().ClusterQueue(cq)
	if n == nil {
		return nil
	}
	var out []string
	for p := n.Parent(); p != nil && len(out) < 64; p = p.Parent() {
		out = append(out, p.Name())
	}
	return out
}

// AwaitingFinalizers returns how many live ClusterQueues do not carry
// their finalizer yet (they admit nothing until they do).
func (c *Cache) AwaitingFinalizers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, name := range c.state.ClusterQueueNames() {
		if cq, _ := c.state.ClusterQueue(name); cq.AwaitingFinalizer && !cq.Terminating {
			n++
		}
	}
	return n
}

// ReservingIn returns the workloads that hold quota in a ClusterQueue.
func (c *Cache) ReservingIn(name kueue.ClusterQueueReference) []types.NamespacedName {
	c.mu.Lock()
	defer c.mu.Unlock()
	in := c.state.AdmittedIn(name)
	out := make([]types.NamespacedName, len(in))
	for i, a := range in {
		out[i] = a.Key
	}
	return out
}

// stopped reports a stop policy other than None.
func stopped(p kueue.StopPolicy) bool { return policyOf(p) != kueue.None }

// policyOf normalizes an unset stop policy to None.
func policyOf(p kueue.StopPolicy) kueue.StopPolicy {
	if p == "" {
		return kueue.None
	}
	return p
}
