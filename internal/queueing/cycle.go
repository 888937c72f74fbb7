package queueing

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/workload"
)

// Candidates returns, per ClusterQueue (sorted by name), the workloads to
// consider in a cycle at time now (Unix nanoseconds), in queue order:
// everything pending except parked workloads and those in backoff. The
// slices are shared with later calls: callers must not modify them. A
// queue costs nothing unless it changed since the previous call, or one of
// its backoffs or holds ended.
func (m *Manager) Candidates(now int64) []workload.Queue {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.releaseBackoff(now)
	n := 0
	for _, q := range m.sortedQueues() {
		if q.offerStale || now < q.offerAt || (q.offerUntil != 0 && q.offerUntil <= now) {
			m.buildOffer(q, now)
		}
		if len(q.offer) > 0 {
			n++
		}
	}
	out := make([]workload.Queue, 0, n)
	for _, q := range m.sorted {
		if len(q.offer) > 0 {
			out = append(out, workload.Queue{ClusterQueue: q.name, Workloads: q.offer, Namespaces: q.offerNamespaces})
		}
	}
	return out
}

// buildOffer lists what q has to offer at now. A fresh entry of a parked
// shape is offered once: the offer is then out of date at once.
func (m *Manager) buildOffer(q *queue, now int64) {
	q.sort()
	var ws []*workload.Info
	var namespaces namespaceList
	var until int64
	wait := func(at int64) {
		if until == 0 || at < until {
			until = at
		}
	}
	onceOnly := false
	for _, e := range q.items {
		if e.parked {
			continue
		}
		if at := e.info.RequeueAt; at > now {
			wait(at)
			continue
		}
		if len(m.heldUntil) > 0 {
			if at := m.heldUntil[e.info.Key]; at > now {
				wait(at)
				continue
			}
		}
		if _, parked := q.parkedShapes[e.info.Shape]; parked {
			if !e.fresh {
				continue
			}
			onceOnly = true
		}
		e.fresh = false
		ws = append(ws, e.info)
		namespaces.add(e.info.Key.Namespace)
	}
	q.offer, q.offerNamespaces, q.offerStale, q.offerAt, q.offerUntil = ws, namespaces.list, onceOnly, now, until
	q.offerGen++
}

// namespaceList collects distinct namespaces in the order met.
type namespaceList struct {
	list []string
	seen map[string]struct{} // once there are many
}

func (l *namespaceList) add(ns string) {
	if l.seen == nil {
		if slices.Contains(l.list, ns) {
			return
		}
		if len(l.list) < 8 {
			l.list = append(l.list, ns)
			return
		}
		l.seen = make(map[string]struct{}, 2*len(l.list))
		for _, n := range l.list {
			l.seen[n] = struct{}{}
		}
	}
	if _, ok := l.seen[ns]; !ok {
		l.seen[ns] = struct{}{}
		l.list = append(l.list, ns)
	}
}

// Untold forgets that a workload was told it waits behind its queue's head
// (the note could not be written): the next Blocked tells it again.
func (m *Manager) Untold(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.workloads[key]; ok && e.told != 0 {
		e.told = 0
		if e.queue != nil {
			e.queue.toldGen = 0
		}
	}
}

// Blocked records that the workloads behind head, in a StrictFIFO queue,
// wait for it (what Decide reports as one summary), and returns those not
// told so yet: all of them when the head is a new one, otherwise those
// that joined or changed since. It costs nothing while the queue does not
// change, so that each blocked workload is told once, not every cycle.
func (m *Manager) Blocked(cq kueue.ClusterQueueReference, head types.NamespacedName, behind []*workload.Info) []*workload.Info {
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queues[cq]
	if q == nil || len(behind) == 0 {
		return nil
	}
	if q.blockEpoch == 0 || q.blockedBy != head {
		q.blockedBy = head
		if q.blockEpoch++; q.blockEpoch == 0 {
			q.blockEpoch = 1 // 0 means never told
		}
	} else if q.toldGen == q.offerGen {
		return nil
	}
	// The offer behind the head is known to be told only when behind is
	// the end of the current offer (it normally is).
	if n := len(q.offer); n > 0 && &behind[len(behind)-1] == &q.offer[n-1] {
		q.toldGen = q.offerGen
	} else {
		q.toldGen = 0
	}
	var out []*workload.Info
	for _, w := range behind {
		e := m.workloads[w.Key]
		if e == nil || e.queue != q || e.told == q.blockEpoch {
			continue
		}
		e.told = q.blockEpoch
		out = append(out, w)
	}
	return out
}

func (m *Manager) sortedQueues() []*queue {
	if m.sorted == nil {
		m.sorted = make([]*queue, 0, len(m.queues))
		for _, q := range m.queues {
			m.sorted = append(m.sorted, q)
		}
		slices.SortFunc(m.sorted, func(a, b *queue) int { return strings.Compare(string(a.name), string(b.name)) })
	}
	return m.sorted
}

func (m *Manager) releaseBackoff(now int64) {
	for e := range m.backoff {
		if e.info.RequeueAt <= now {
			delete(m.backoff, e)
		}
	}
	for key, until := range m.heldUntil {
		if until <= now {
			delete(m.heldUntil, key)
		}
	}
}

// NextRequeueAt returns the earliest requeueAt after now of a workload in
// backoff, or 0 when none waits.
func (m *Manager) NextRequeueAt(now int64) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var next int64
	for e := range m.backoff {
		if at := e.info.RequeueAt; at > now && (next == 0 || at < next) {
			next = at
		}
	}
	for _, at := range m.heldUntil {
		if at > now && (next == 0 || at < next) {
			next = at
		}
	}
	return next
}

// ParkShape parks every workload of a shape in a BestEffortFIFO
// ClusterQueue, because one of them did not fit. StrictFIFO queues keep
// their head so that it blocks as it should.
func (m *Manager) ParkShape(cq kueue.ClusterQueueReference, shape *workload.Shape) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if q := m.queues[cq]; q != nil && q.strategy != kueue.StrictFIFO {
		if _, parked := q.parkedShapes[shape]; !parked {
			q.parkedShapes[shape] = struct{}{}
			q.changed()
		}
	}
}

// ParkWorkload parks one workload refused for a reason of its own.
func (m *Manager) ParkWorkload(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.workloads[key]; ok && !e.parked {
		e.parked = true
		if e.queue != nil {
			e.queue.changed()
		}
	}
}

// Unpark releases what is parked in the given ClusterQueues, for instance
// all the queues of a cohort tree whose capacity grew.
func (m *Manager) Unpark(cqs ...kueue.ClusterQueueReference) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.unparks++
	for _, name := range cqs {
		if q := m.queues[name]; q != nil {
			if len(q.parkedShapes) > 0 {
				clear(q.parkedShapes)
				q.changed()
			}
			for _, e := range q.items {
				if e.queue == q && e.parked {
					e.parked = false
					q.changed()
				}
			}
		}
	}
}

// UnparkAll releases everything parked, after a change that may affect any
// queue (a flavor, a cohort, a namespace).
func (m *Manager) UnparkAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.unparkAllLocked()
}

func (m *Manager) unparkAllLocked() {
	m.unparks++
	for _, q := range m.queues {
		clear(q.parkedShapes)
		q.changed()
	}
	for _, e := range m.workloads {
		e.parked = false
	}
}

// Unparks returns how many times parked workloads were released (each
// Unpark or UnparkAll counts once).
func (m *Manager) Unparks() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.unparks
}

// Parked reports whether a pending workload is parked (alone or by shape).
func (m *Manager) Parked(key types.NamespacedName) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.workloads[key]
	if !ok {
		return false
	}
	if e.parked {
		return true
	}
	if e.queue != nil {
		_, parked := e.queue.parkedShapes[e.info.Shape]
		return parked
	}
	return false
}

// PendingCounts splits the pending workloads of one ClusterQueue into those
// the scheduler will consider (active) and those parked until the cluster
// changes (inadmissible), with the number of distinct shapes of each.
type PendingCounts struct {
	Active, Inadmissible             int
	ActiveShapes, InadmissibleShapes int
}

// PendingSummary returns the pending counts of every ClusterQueue that has
// pending workloads, in one pass over them.
func (m *Manager) PendingSummary() map[kueue.ClusterQueueReference]PendingCounts {
	m.mu.Lock()
	defer m.mu.Unlock()
	type shapeKey struct {
		shape  *workload.Shape
		parked bool
	}
	out := map[kueue.ClusterQueueReference]PendingCounts{}
	seen := map[kueue.ClusterQueueReference]map[shapeKey]struct{}{}
	for _, e := range m.workloads {
		q := e.queue
		if q == nil {
			continue
		}
		_, shapeParked := q.parkedShapes[e.info.Shape]
		parked := e.parked || shapeParked
		c := out[q.name]
		if seen[q.name] == nil {
			seen[q.name] = map[shapeKey]struct{}{}
		}
		k := shapeKey{e.info.Shape, parked}
		_, known := seen[q.name][k]
		seen[q.name][k] = struct{}{}
		if parked {
			c.Inadmissible++
			if !known {
				c.InadmissibleShapes++
			}
		} else {
			c.Active++
			if !known {
				c.ActiveShapes++
			}
		}
		out[q.name] = c
	}
	return out
}
