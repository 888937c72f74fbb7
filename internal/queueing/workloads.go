package queueing

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/workload"
)

// AddOrUpdate queues a pending workload, or replaces its Info. The
// ClusterQueue is resolved from its LocalQueue; until both exist the
// workload waits, detached. It reports whether anything the scheduler
// reads changed: an update that changes only the resourceVersion (a status
// write, say) keeps the entry as it is, parked or preempting, and only
// records the new version. A changed workload is unparked.
func (m *Manager) AddOrUpdate(info *workload.Info) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.addOrUpdate(info, false)
}

// Replace replaces a pending workload's Info even when the scheduler reads
// the same from it (to mark it preempting, say), or adds it.
func (m *Manager) Replace(info *workload.Info) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.addOrUpdate(info, true)
}

func (m *Manager) addOrUpdate(info *workload.Info, force bool) bool {
	if cq, ok := m.localQueues[LocalQueueKey{Namespace: info.Key.Namespace, Name: info.LocalQueue}]; ok && info.ClusterQueue == "" {
		resolved := *info
		resolved.ClusterQueue = cq
		info = &resolved
	}
	info.Shape = m.shapes.Intern(info.Shape)
	if e, ok := m.workloads[info.Key]; ok {
		if force && unchanged(e, info) {
			m.shapes.Release(info.Shape)
			return false // a preemptor still waiting for its victims
		}
		if !force && sameScheduling(e.info, info) {
			m.shapes.Release(info.Shape)
			if e.info.ResourceVersion != info.ResourceVersion {
				kept := *e.info
				kept.ResourceVersion = info.ResourceVersion
				e.info = &kept
				e.told = 0
				if e.queue != nil {
					e.queue.changed() // hand out the new version
				}
			}
			return false
		}
		delete(m.heldUntil, info.Key)
		m.detach(e)
		m.unindex(e)
		m.shapes.Release(e.info.Shape)
		e.info = info
		e.parked, e.fresh, e.told = false, true, 0
		m.index(e)
		m.attach(e)
		return true
	}
	e := &entry{info: info, fresh: true}
	m.workloads[info.Key] = e
	m.index(e)
	m.attach(e)
	return true
}

// sameScheduling reports whether two Infos of a workload agree on all the
// scheduler reads (its queue, order and shape); a preemption mark is the
// scheduler's own and is kept.
func sameScheduling(a, b *workload.Info) bool {
	return a.UID == b.UID && a.LocalQueue == b.LocalQueue && a.ClusterQueue == b.ClusterQueue && a.Priority == b.Priority &&
		a.QueueOrderTime == b.QueueOrderTime && a.RequeueAt == b.RequeueAt && a.Shape == b.Shape
}

// unchanged reports that replacing e's Info would change nothing: the
// entry is neither parked alone nor by shape (a fresh mark would matter
// only then), and the scheduler reads the same from both Infos, preemption
// mark and hint included.
func unchanged(e *entry, info *workload.Info) bool {
	if e.queue == nil || e.parked || !sameScheduling(e.info, info) || !samePreemption(e.info, info) ||
		e.info.ResourceVersion != info.ResourceVersion {
		return false
	}
	_, shapeParked := e.queue.parkedShapes[e.info.Shape]
	return !shapeParked
}

// samePreemption reports whether two Infos carry the same preemption mark
// and hint.
func samePreemption(a, b *workload.Info) bool {
	if a.Preempting != b.Preempting || (a.Hint == nil) != (b.Hint == nil) {
		return false
	}
	if a.Hint == nil {
		return true
	}
	if !slices.Equal(a.Hint.Counts, b.Hint.Counts) || len(a.Hint.Flavors) != len(b.Hint.Flavors) ||
		!slices.Equal(a.Hint.Victims, b.Hint.Victims) {
		return false
	}
	for i := range a.Hint.Flavors {
		if !maps.Equal(a.Hint.Flavors[i], b.Hint.Flavors[i]) {
			return false
		}
	}
	return true
}

func (m *Manager) index(e *entry) {
	k := localKey(e.info)
	e.lq = m.lqID(k)
	set := m.byLocal[k]
	if set == nil {
		set = map[*entry]struct{}{}
		m.byLocal[k] = set
	}
	set[e] = struct{}{}
}

func (m *Manager) unindex(e *entry) {
	k := localKey(e.info)
	if set := m.byLocal[k]; set != nil {
		delete(set, e)
		if len(set) == 0 {
			delete(m.byLocal, k)
		}
	}
}

// Delete removes a workload from its queue (admitted, finished or
// deleted). A hold (HoldBack) stays: it applies when the workload comes
// back.
func (m *Manager) Delete(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.deleteLocked(key)
}

// Forget removes a workload that is gone (finished or deleted) with all
// the manager remembers of it, its hold included: a workload created
// again under the same name is not held back.
func (m *Manager) Forget(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.deleteLocked(key)
	delete(m.heldUntil, key)
}

func (m *Manager) deleteLocked(key types.NamespacedName) {
	e, ok := m.workloads[key]
	if !ok {
		return
	}
	m.detach(e)
	m.unindex(e)
	m.shapes.Release(e.info.Shape)
	delete(m.workloads, key)
}

// HoldBack keeps a workload from being a candidate until the time (Unix
// nanoseconds), unless what the scheduler reads from it changes first.
// It applies to the workload whether or not it is queued now.
func (m *Manager) HoldBack(key types.NamespacedName, until int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.heldUntil[key] = until
	if e, ok := m.workloads[key]; ok && e.queue != nil {
		e.queue.changed()
	}
}

// Get returns a pending workload's Info.
func (m *Manager) Get(key types.NamespacedName) (*workload.Info, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.workloads[key]
	if !ok {
		return nil, false
	}
	return e.info, true
}

// attach puts e in its ClusterQueue, if it exists.
func (m *Manager) attach(e *entry) {
	if e.info.RequeueAt > 0 {
		m.backoff[e] = struct{}{}
	}
	q := m.queues[e.info.ClusterQueue]
	if q == nil {
		return
	}
	e.queue = q
	q.count++
	q.lqPos = nil
	q.changed()
	if e.listedIn == q {
		q.stale--                      // its old slot is live again
		q.sorted, q.inOrder = false, 0 // and may be out of order
		return
	}
	if q.sorted {
		q.sorted, q.inOrder = false, len(q.items)
	}
	e.listedIn = q
	q.items = append(q.items, e)
}

// detach takes e out of its ClusterQueue. The slot is removed lazily.
func (m *Manager) detach(e *entry) {
	delete(m.backoff, e)
	if q := e.queue; q != nil {
		q.count--
		q.stale++
		q.lqPos = nil
		q.changed()
		e.queue = nil
	}
}

// compact drops removed entries from q.items.
func (q *queue) compact() {
	if q.stale == 0 {
		return
	}
	kept := q.items[:0]
	inOrder := 0
	for i, e := range q.items {
		if e.queue == q && e.listedIn == q {
			kept = append(kept, e)
			if i < q.inOrder {
				inOrder++ // a subsequence of an ordered run is in order
			}
		} else if e.listedIn == q {
			e.listedIn = nil
		}
	}
	q.inOrder = inOrder
	if len(kept) > q.count {
		// An entry that moved to another queue and back before this
		// compaction is listed twice (its old slot looks live again).
		kept = dedupe(kept)
		q.inOrder = 0
	}
	clear(q.items[len(kept):])
	q.items = kept
	q.stale = 0
}

// dedupe keeps the first occurrence of each entry, in place.
func dedupe(items []*entry) []*entry {
	seen := make(map[*entry]struct{}, len(items))
	out := items[:0]
	for _, e := range items {
		if _, ok := seen[e]; !ok {
			seen[e] = struct{}{}
			out = append(out, e)
		}
	}
	return out
}

// Pending returns the number of pending workloads of a ClusterQueue.
func (m *Manager) Pending(cq kueue.ClusterQueueReference) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if q := m.queues[cq]; q != nil {
		return q.count
	}
	return 0
}

// PendingInLocalQueue returns the number of pending workloads of a LocalQueue.
func (m *Manager) PendingInLocalQueue(key LocalQueueKey) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.byLocal[key])
}

// Len is the number of pending workloads.
func (m *Manager) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.workloads)
}

// Shapes is the number of distinct pending shapes.
func (m *Manager) Shapes() int { return m.shapes.Len() }

// ClusterQueueOf returns the queue a pending workload waits in.
func (m *Manager) ClusterQueueOf(key types.NamespacedName) (kueue.ClusterQueueReference, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.workloads[key]
	if !ok || e.queue == nil {
		return "", false
	}
	return e.queue.name, true
}

func localKey(info *workload.Info) LocalQueueKey {
	return LocalQueueKey{Namespace: info.Key.Namespace, Name: info.LocalQueue}
}

// PendingByLocalQueue returns the number of pending workloads per LocalQueue.
func (m *Manager) PendingByLocalQueue() map[LocalQueueKey]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[LocalQueueKey]int, len(m.byLocal))
	for k, set := range m.byLocal {
		out[k] = len(set)
	}
	return out
}
