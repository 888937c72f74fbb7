package queueing

import (
	"math"
	"slices"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/workload"
)

// Position is a pending workload and where it stands: its 0-based place in
// its ClusterQueue and among its LocalQueue's workloads, in the order the
// scheduler considers them.
type Position struct {
	Info           *workload.Info
	InClusterQueue int32
	InLocalQueue   int32
}

// PendingPage returns at most limit pending workloads of ClusterQueue cq,
// from the offset-th on, in the order the scheduler considers them
// (workload.Compare: the order of every cycle, StrictFIFO or
// BestEffortFIFO alike). Like Kueue's visibility API it lists every
// pending workload of the queue, parked (inadmissible) and in backoff
// ones included. It reports false when the ClusterQueue is unknown. It
// copies only the page; the places in LocalQueues are kept from one call
// to the next while the queue does not change (one pass over the queue
// after a change).
func (m *Manager) PendingPage(cq kueue.ClusterQueueReference, offset, limit int) ([]Position, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queues[cq]
	if q == nil {
		return nil, false
	}
	q.sort()
	if offset >= len(q.items) || limit <= 0 {
		return []Position{}, true
	}
	pos := q.localPositions(len(m.lqIDs))
	end := min(len(q.items), offset+limit)
	out := make([]Position, 0, end-offset)
	for i := offset; i < end; i++ {
		out = append(out, Position{Info: q.items[i].info, InClusterQueue: int32(i), InLocalQueue: pos[i]})
	}
	return out, true
}

// PendingPageInLocalQueue is PendingPage for the workloads of one
// LocalQueue: offset and limit count its workloads only, and each keeps
// its place in the whole ClusterQueue. It reports false when the
// LocalQueue, or its ClusterQueue, is unknown.
func (m *Manager) PendingPageInLocalQueue(key LocalQueueKey, offset, limit int) ([]Position, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cq, ok := m.localQueues[key]
	if !ok {
		return nil, false
	}
	q := m.queues[cq]
	if q == nil {
		return nil, false
	}
	out := []Position{}
	if limit <= 0 || offset >= len(m.byLocal[key]) {
		return out, true
	}
	q.sort()
	seen := 0
	for i, e := range q.items {
		if e.info.LocalQueue != key.Name || e.info.Key.Namespace != key.Namespace {
			continue
		}
		if seen >= offset {
			out = append(out, Position{Info: e.info, InClusterQueue: int32(i), InLocalQueue: int32(seen)})
			if len(out) == limit {
				break
			}
		}
		seen++
	}
	return out, true
}

// localPositions returns each item's place among the items of its
// LocalQueue; q is sorted and its entries' LocalQueues are numbered up to
// ids.
func (q *queue) localPositions(ids int) []int32 {
	if q.lqPos != nil {
		return q.lqPos
	}
	pos := slices.Grow(q.posSpare[:0], len(q.items))[:len(q.items)]
	counts := make([]int32, ids+1)
	var others map[LocalQueueKey]int32 // entries whose LocalQueue has no number
	for i, e := range q.items {
		if e.lq != 0 {
			pos[i] = counts[e.lq]
			counts[e.lq]++
			continue
		}
		if others == nil {
			others = map[LocalQueueKey]int32{}
		}
		k := localKey(e.info)
		pos[i] = others[k]
		others[k]++
	}
	q.lqPos, q.posSpare = pos, pos
	return pos
}

// lqID returns the number of a LocalQueue, numbering it if new; 0 once
// 65535 are numbered.
func (m *Manager) lqID(k LocalQueueKey) uint16 {
	if id, ok := m.lqIDs[k]; ok {
		return id
	}
	if len(m.lqIDs) >= math.MaxUint16 {
		return 0
	}
	id := uint16(len(m.lqIDs) + 1)
	m.lqIDs[k] = id
	return id
}
