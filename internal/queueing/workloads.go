package queueing

import (
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/workload"
)

// AddOrUpdate queues a pending workload, or replaces its Info. The
// ClusterQueue is resolved from its LocalQueue; until both exist the
// workload waits, detached. An update unparks the workload.
func (m *Manager) AddOrUpdate(info *workload.Info) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if cq, ok := m.localQueues[LocalQueueKey{Namespace: info.Key.Namespace, Name: info.LocalQueue}]; ok && info.ClusterQueue == "" {
		resolved := *info
		resolved.ClusterQueue = cq
		info = &resolved
	}
	info.Shape = m.shapes.Intern(info.Shape)
	if e, ok := m.workloads[info.Key]; ok {
		m.detach(e)
		m.perLocal[localKey(e.info)]--
		m.shapes.Release(e.info.Shape)
		e.info = info
		e.parked = false
		m.perLocal[localKey(info)]++
		m.attach(e)
		return
	}
	e := &entry{info: info}
	m.workloads[info.Key] = e
	m.perLocal[localKey(info)]++
	m.attach(e)
}

// Delete removes a workload (admitted, finished or deleted).
func (m *Manager) Delete(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.workloads[key]
	if !ok {
		return
	}
	m.detach(e)
	if m.perLocal[localKey(e.info)]--; m.perLocal[localKey(e.info)] <= 0 {
		delete(m.perLocal, localKey(e.info))
	}
	m.shapes.Release(e.info.Shape)
	delete(m.workloads, key)
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
	q.sorted = false
	if e.listedIn == q {
		q.stale-- // its old slot is live again
		return
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
		e.queue = nil
	}
}

// compact drops removed entries from q.items.
func (q *queue) compact() {
	if q.stale == 0 {
		return
	}
	kept := q.items[:0]
	for _, e := range q.items {
		if e.queue == q && e.listedIn == q {
			kept = append(kept, e)
		} else if e.listedIn == q {
			e.listedIn = nil
		}
	}
	clear(q.items[len(kept):])
	q.items = kept
	q.stale = 0
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
	return m.perLocal[key]
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
	out := make(map[LocalQueueKey]int, len(m.perLocal))
	for k, n := range m.perLocal {
		out[k] = n
	}
	return out
}
