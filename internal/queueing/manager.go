// Package queueing holds the pending workloads of every ClusterQueue, in
// queue order (priority, then queue-order time, then UID), and hands them to
// the scheduling core each cycle.
//
// Workloads that cannot be admitted are parked so that later cycles do not
// evaluate them again and again: under BestEffortFIFO a whole shape is
// parked in its ClusterQueue when one member does not fit (its siblings
// cannot fit either), and a workload refused for a reason of its own (its
// namespace, an inactive queue) is parked alone. Parked workloads come back
// when something that could change the answer happens: capacity grows in
// their part of the cohort tree, or a queue, cohort, flavor or namespace
// changes. Workloads in requeue backoff wait until their requeueAt.
//
// A cycle costs what changed: each ClusterQueue keeps the list of
// candidates it handed out until something changes it, so queues whose
// workloads are all parked cost nothing. Behind a StrictFIFO head that
// was not admitted, the manager remembers which workloads were told they
// wait for it (Blocked), so that each is told once.
//
// The package is pure (no I/O); a Manager is safe for concurrent use.
package queueing

import (
	"maps"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/workload"
)

// LocalQueueKey names a LocalQueue.
type LocalQueueKey struct {
	Namespace string
	Name      kueue.LocalQueueName
}

// Manager holds the pending queues.
type Manager struct {
	mu          sync.Mutex
	queues      map[kueue.ClusterQueueReference]*queue
	localQueues map[LocalQueueKey]kueue.ClusterQueueReference
	workloads   map[types.NamespacedName]*entry
	// byLocal indexes the pending workloads by LocalQueue, so that a
	// LocalQueue change costs what that queue holds.
	byLocal map[LocalQueueKey]map[*entry]struct{}
	shapes  *workload.Shapes
	// backoff holds entries whose requeueAt is in the future.
	backoff map[*entry]struct{}
	// heldUntil holds workloads back until a time (Unix nanoseconds)
	// after the API server refused to record their admission; a change of
	// what the scheduler reads from them lifts it.
	heldUntil map[types.NamespacedName]int64
	// unparks counts the requests to release parked workloads.
	unparks uint64
	// lqIDs numbers the LocalQueues workloads were queued in (from 1; never
	// reused, at most 65535, then 0).
	lqIDs map[LocalQueueKey]uint16
	// sorted lists the queues by name; nil after a queue came or went.
	sorted []*queue
}

type entry struct {
	info *workload.Info
	// queue is the ClusterQueue the entry belongs to (nil: detached).
	queue *queue
	// listedIn is the queue whose items slice holds the entry; it may be
	// stale after a removal, which is cleaned up lazily.
	listedIn *queue
	parked   bool
	// fresh entries (new, or changed in what the scheduler reads) are
	// handed to the next cycle even when their shape is parked, so that
	// each workload is decided, and told why it waits, at least once.
	fresh bool
	// lq numbers the entry's LocalQueue (Manager.lqIDs), so that places in
	// LocalQueues are counted without reading the Info; 0 when the
	// numbers ran out. It fits in the padding: an entry stays 32 bytes.
	lq uint16
	// told is the blockEpoch of its StrictFIFO queue at which the workload
	// was told it waits behind the head; 0 after any change (Blocked). It
	// fits beside the flags: an entry stays 32 bytes.
	told uint32
}

type queue struct {
	name     kueue.ClusterQueueReference
	strategy kueue.QueueingStrategy
	// items holds the entries in queue order when sorted is true, plus
	// removed entries until the next compaction.
	items  []*entry
	count  int
	stale  int
	sorted bool
	// inOrder, while sorted is false, is how many leading items are still
	// in queue order (workloads that joined since were appended), so that
	// sorting costs the newcomers only (sort.go).
	inOrder int
	// parkedShapes are shapes that did not fit (BestEffortFIFO).
	parkedShapes map[*workload.Shape]struct{}
	// offer is what Candidates hands out for the queue, kept while nothing
	// changes it: a queue whose workloads are all parked costs nothing.
	// The slice is never modified once handed out (Decide reads it
	// outside the lock); a change makes a new one. It is out of date when
	// offerStale is set, before offerAt (when it was made), or from
	// offerUntil on (when a backoff or a hold ends; 0 for never).
	offer               []*workload.Info
	offerNamespaces     []string
	offerStale          bool
	offerAt, offerUntil int64
	// offerGen counts the offers made.
	offerGen uint64
	// blockedBy is the head that the rest of a StrictFIFO queue was last
	// told to wait for, blockEpoch counts such heads, and toldGen is the
	// offer the rest was told at (Blocked).
	blockedBy  types.NamespacedName
	blockEpoch uint32
	toldGen    uint64
	// lqPos holds, once items are sorted, each item's place among its
	// LocalQueue's workloads (positions.go); nil when out of date.
	lqPos []int32
	// spare and posSpare are buffers kept for the next merge and count, so
	// that a large queue is not reallocated at every change.
	spare    []*entry
	posSpare []int32
}

// changed marks the queue's offer out of date.
func (q *queue) changed() { q.offerStale = true }

// NewManager returns an empty manager.
func NewManager() *Manager {
	return &Manager{
		queues:      map[kueue.ClusterQueueReference]*queue{},
		localQueues: map[LocalQueueKey]kueue.ClusterQueueReference{},
		workloads:   map[types.NamespacedName]*entry{},
		byLocal:     map[LocalQueueKey]map[*entry]struct{}{},
		heldUntil:   map[types.NamespacedName]int64{},
		shapes:      workload.NewShapes(),
		backoff:     map[*entry]struct{}{},
		lqIDs:       map[LocalQueueKey]uint16{},
	}
}

// InternShape returns the shared copy of a shape. Callers building Infos
// should intern their shapes so identical workloads share one.
func (m *Manager) InternShape(s *workload.Shape) *workload.Shape {
	return m.shapes.Intern(s)
}

// SetClusterQueue adds a ClusterQueue or updates its strategy. Any change
// may make parked workloads admissible, so they are released.
func (m *Manager) SetClusterQueue(name kueue.ClusterQueueReference, strategy kueue.QueueingStrategy) {
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queues[name]
	if q == nil {
		q = &queue{name: name, parkedShapes: map[*workload.Shape]struct{}{}, offerStale: true}
		m.queues[name] = q
		m.sorted = nil
		// Workloads waiting for this queue to exist join it.
		for _, e := range m.workloads {
			if e.queue == nil && e.info.ClusterQueue == name {
				m.attach(e)
			}
		}
	}
	q.strategy = strategy
	m.unparkAllLocked()
}

// DeleteClusterQueue removes a ClusterQueue; its workloads stay pending,
// detached, until it comes back or their LocalQueue changes.
func (m *Manager) DeleteClusterQueue(name kueue.ClusterQueueReference) {
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queues[name]
	if q == nil {
		return
	}
	for _, e := range q.items {
		if e.queue == q {
			e.queue, e.listedIn = nil, nil
		}
	}
	delete(m.queues, name)
	m.sorted = nil
}

// SetLocalQueue records which ClusterQueue a LocalQueue feeds.
func (m *Manager) SetLocalQueue(key LocalQueueKey, cq kueue.ClusterQueueReference) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.localQueues[key] = cq
	for e := range m.byLocal[key] {
		if e.info.ClusterQueue != cq {
			m.detach(e)
			info := *e.info
			info.ClusterQueue = cq
			e.info = &info
			m.attach(e)
		}
	}
}

// DeleteLocalQueue forgets a LocalQueue; its workloads stay pending, detached.
func (m *Manager) DeleteLocalQueue(key LocalQueueKey) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.localQueues, key)
	for e := range m.byLocal[key] {
		m.detach(e)
	}
}

// ClusterQueueFor resolves a LocalQueue.
func (m *Manager) ClusterQueueFor(key LocalQueueKey) (kueue.ClusterQueueReference, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cq, ok := m.localQueues[key]
	return cq, ok
}

// LocalQueuesOf returns the LocalQueues that feed a ClusterQueue.
func (m *Manager) LocalQueuesOf(cq kueue.ClusterQueueReference) []LocalQueueKey {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []LocalQueueKey
	for k, target := range m.localQueues {
		if target == cq {
			out = append(out, k)
		}
	}
	return out
}

// ClusterQueueNames returns the known ClusterQueues, sorted.
func (m *Manager) ClusterQueueNames() []kueue.ClusterQueueReference {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.SortedFunc(maps.Keys(m.queues), func(a, b kueue.ClusterQueueReference) int {
		return strings.Compare(string(a), string(b))
	})
}
