// Package cache is the manager's live picture of the cluster: the pure
// scheduling state (internal/state) and the pending queues
// (internal/queueing) behind one lock. Controllers feed it from informer
// events; the scheduler loop reads snapshots from it and records its
// decisions in it. Whenever something happens that could let a workload in
// (new work, freed quota, a changed queue, flavor or cohort), it wakes the
// scheduler.
package cache

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/queueing"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// Cache is safe for concurrent use.
type Cache struct {
	mu     sync.Mutex
	state  *state.State
	queues *queueing.Manager
	// priorities holds WorkloadPriorityClass values by name.
	priorities map[string]int32
	// lqStop holds the stop policy of LocalQueues that are stopped.
	lqStop map[LocalQueueKey]kueue.StopPolicy
	// assumed holds, for admissions the scheduler decided and is writing
	// (or wrote but the informer has not shown yet), the resourceVersion
	// the decision was made on.
	assumed map[Key]string
	// own holds the versions the scheduler's own pending-status writes
	// made (ownwrites.go).
	own map[Key]ownChain
	// revisits carries workloads the controller should reconcile again
	// (for instance after a failed admission write).
	revisits chan event.GenericEvent
	// queueChanges carries ClusterQueues and LocalQueues whose stop policy
	// changed, once the cache knows it, so their workloads are revisited.
	queueChanges chan event.GenericEvent
	wake         chan struct{}
	// changed is closed and replaced whenever status-relevant data change,
	// so status writers can wait for it.
	changed chan struct{}
}

// New returns an empty cache.
func New() *Cache {
	return &Cache{
		state:        state.New(),
		queues:       queueing.NewManager(),
		priorities:   map[string]int32{},
		assumed:      map[Key]string{},
		own:          map[Key]ownChain{},
		revisits:     make(chan event.GenericEvent, 1024),
		queueChanges: make(chan event.GenericEvent, 1024),
		wake:         make(chan struct{}, 1),
		changed:      make(chan struct{}),
	}
}

// Wake returns the channel the scheduler waits on.
func (c *Cache) Wake() <-chan struct{} { return c.wake }

// Changed returns a channel closed at the next change of anything status
// reports (usage, pending counts, queues).
func (c *Cache) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// notify wakes the scheduler and status writers. Callers hold the lock.
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
	return c.state.Snapshot(), c.queues.Candidates(now)
}

// NextRequeueAt returns when the earliest backoff ends, or 0.
func (c *Cache) NextRequeueAt(now int64) int64 {
	return c.queues.NextRequeueAt(now)
}

// SetFlavor records a ResourceFlavor.
func (c *Cache) SetFlavor(f *state.Flavor) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.SetFlavor(f)
	c.queues.UnparkAll()
	c.notify()
}

// DeleteFlavor forgets a ResourceFlavor.
func (c *Cache) DeleteFlavor(name kueue.ResourceFlavorReference) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.DeleteFlavor(name)
	c.notify()
}

// SetClusterQueue records a ClusterQueue spec.
func (c *Cache) SetClusterQueue(cq *state.ClusterQueue) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.state.ClusterQueue(cq.Name); ok && policyOf(old.StopPolicy) != policyOf(cq.StopPolicy) ||
		!ok && stopped(cq.StopPolicy) {
		c.queueChangedLocked(&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: string(cq.Name)}})
	}
	c.state.SetClusterQueue(cq)
	c.queues.SetClusterQueue(cq.Name, cq.QueueingStrategy)
	c.queues.UnparkAll()
	c.notify()
}

// DeleteClusterQueue forgets a ClusterQueue.
func (c *Cache) DeleteClusterQueue(name kueue.ClusterQueueReference) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.DeleteClusterQueue(name)
	c.queues.DeleteClusterQueue(name)
	c.notify()
}

// SetCohort records a Cohort spec.
func (c *Cache) SetCohort(co *state.Cohort) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.SetCohort(co)
	c.queues.UnparkAll()
	c.notify()
}

// DeleteCohort forgets a Cohort object.
func (c *Cache) DeleteCohort(name kueue.CohortReference) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.DeleteCohort(name)
	c.queues.UnparkAll()
	c.notify()
}

// SetAdmissionCheck records whether an AdmissionCheck is active.
func (c *Cache) SetAdmissionCheck(name kueue.AdmissionCheckReference, active bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.SetAdmissionCheck(name, active)
	c.queues.UnparkAll()
	c.notify()
}

// DeleteAdmissionCheck forgets an AdmissionCheck.
func (c *Cache) DeleteAdmissionCheck(name kueue.AdmissionCheckReference) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.DeleteAdmissionCheck(name)
	c.notify()
}

// SetNamespace records a namespace's labels (for namespace selectors).
func (c *Cache) SetNamespace(name string, labels map[string]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.SetNamespace(name, labels)
	c.queues.UnparkAll()
	c.notify()
}

// DeleteNamespace forgets a namespace.
func (c *Cache) DeleteNamespace(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.DeleteNamespace(name)
}

// SetLocalQueue records which ClusterQueue a LocalQueue feeds.
func (c *Cache) SetLocalQueue(key queueing.LocalQueueKey, cq kueue.ClusterQueueReference) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.queues.SetLocalQueue(key, cq)
	c.notify()
}

// DeleteLocalQueue forgets a LocalQueue.
func (c *Cache) DeleteLocalQueue(key queueing.LocalQueueKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.queues.DeleteLocalQueue(key)
	c.notify()
}

// ClusterQueueFor resolves a LocalQueue.
func (c *Cache) ClusterQueueFor(key queueing.LocalQueueKey) (kueue.ClusterQueueReference, bool) {
	return c.queues.ClusterQueueFor(key)
}

// SetPriorityClass records a WorkloadPriorityClass value.
func (c *Cache) SetPriorityClass(name string, value int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.priorities[name] = value
}

// DeletePriorityClass forgets a WorkloadPriorityClass.
func (c *Cache) DeletePriorityClass(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.priorities, name)
}

// PriorityClass returns a WorkloadPriorityClass value.
func (c *Cache) PriorityClass(name string) (int32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.priorities[name]
	return v, ok
}

// Key is a workload key.
type Key = types.NamespacedName

// SetLocalQueueStopPolicy records a LocalQueue's stop policy.
func (c *Cache) SetLocalQueueStopPolicy(key LocalQueueKey, policy kueue.StopPolicy) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lqStop == nil {
		c.lqStop = map[LocalQueueKey]kueue.StopPolicy{}
	}
	if policyOf(c.lqStop[key]) != policyOf(policy) {
		c.queueChangedLocked(&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: string(key.Name)}})
	}
	if !stopped(policy) {
		delete(c.lqStop, key)
		return
	}
	c.lqStop[key] = policy
}

// LocalQueueStopPolicy returns a LocalQueue's stop policy (None if unknown).
func (c *Cache) LocalQueueStopPolicy(key LocalQueueKey) kueue.StopPolicy {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.lqStop[key]; ok {
		return p
	}
	return kueue.None
}

// ClusterQueue returns a ClusterQueue's spec as the cache knows it.
func (c *Cache) ClusterQueue(name kueue.ClusterQueueReference) (*state.ClusterQueue, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state.ClusterQueue(name)
}

// LocalQueueKey names a LocalQueue.
type LocalQueueKey = queueing.LocalQueueKey

// Revisits returns the workloads their controller must reconcile again (a
// source for the workload controller).
func (c *Cache) Revisits() <-chan event.GenericEvent { return c.revisits }

// QueueChanges returns the channel of queues whose stop policy changed.
func (c *Cache) QueueChanges() <-chan event.GenericEvent { return c.queueChanges }

func (c *Cache) queueChangedLocked(obj client.Object) {
	ev := event.GenericEvent{Object: obj}
	select {
	case c.queueChanges <- ev:
	default:
		go func() { c.queueChanges <- ev }()
	}
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

// revisitLocked asks for a workload to be reconciled again. It never
// blocks: when the channel is full, a goroutine delivers the request.
func (c *Cache) revisitLocked(key Key) {
	ev := event.GenericEvent{Object: &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}}
	select {
	case c.revisits <- ev:
	default:
		go func() { c.revisits <- ev }()
	}
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
