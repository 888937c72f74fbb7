package cache

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/scheduling"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// ignoredLocked reports whether a version of a workload the scheduler is
// admitting must be ignored: the version its decision was made on, or one
// made from it by the scheduler's own pending-status writes
// (NoteOwnWrite), is an old view, and acting on it would let the quota be
// given twice. Any other version undoes the assumption (the admission's
// write then fails its precondition).
func (c *Cache) ignoredLocked(key Key, rv string) bool {
	decided, ok := c.assumed[key]
	if !ok {
		return false
	}
	if rv == decided || c.ownVersionLocked(key, decided, rv) {
		return true
	}
	delete(c.assumed, key)
	return false
}

// queueLocked puts a pending workload in its queue, or updates it there.
// A workload that held quota releases it. It reports a change.
func (c *Cache) queueLocked(info *workload.Info) bool {
	if c.ignoredLocked(info.Key, info.ResourceVersion) {
		return false
	}
	released := c.releaseLocked(info.Key) != nil
	if _, queued := c.queues.Get(info.Key); !queued {
		c.opened = true
	}
	return c.queues.AddOrUpdate(info) || released
}

// asideLocked takes a pending workload out of the queues (and frees the
// quota it held, if any). It reports a change.
func (c *Cache) asideLocked(key Key, rv string) bool {
	if c.ignoredLocked(key, rv) {
		return false
	}
	_, queued := c.queues.Get(key)
	c.queues.Delete(key)
	return c.releaseLocked(key) != nil || queued
}

// dropLocked forgets a workload that is gone or finished: its quota is
// freed and it leaves the queues. It reports a change.
func (c *Cache) dropLocked(key Key) bool {
	delete(c.assumed, key)
	delete(c.own, key)
	_, queued := c.queues.Get(key)
	c.queues.Forget(key)
	return c.releaseLocked(key) != nil || queued
}

// holdLocked records that a workload holds quota (on restart, or once the
// scheduler's write is observed); it leaves the pending queue. Holding the
// same reservation again only updates its flags. It reports a change.
func (c *Cache) holdLocked(a *state.Admitted) bool {
	delete(c.assumed, a.Key)
	delete(c.own, a.Key)
	_, queued := c.queues.Get(a.Key)
	c.queues.Delete(a.Key)
	if prev, ok := c.state.Admitted(a.Key); ok {
		if prev.Evicting && prev.UID == a.UID {
			// An eviction is not undone while the reservation lasts.
			cp := *a
			cp.Evicting = true
			a = &cp
		}
		if prev.ClusterQueue == a.ClusterQueue && sameUsage(prev, a) && sameTopology(prev, a) {
			if sameFlags(prev, a) {
				return queued
			}
			_ = c.state.Replace(a)
			return true
		}
		c.forgetLocked(a.Key)
	}
	_ = c.state.Assume(a)
	return true
}

// releaseLocked frees the quota of key, if held, and unparks the queues
// that share its cohort tree.
func (c *Cache) releaseLocked(key types.NamespacedName) *state.Admitted {
	a, ok := c.state.Admitted(key)
	if !ok {
		return nil
	}
	// The queues to wake are found before the release: a ClusterQueue
	// whose object is gone leaves the tree with its last reservation.
	c.unparkTreeLocked(a.ClusterQueue)
	c.forgetLocked(key)
	c.opened = true
	return a
}

// forgetLocked forgets a reservation; a ClusterQueue whose object is gone
// leaves the picture with its last reservation.
func (c *Cache) forgetLocked(key types.NamespacedName) {
	a, ok := c.state.Admitted(key)
	if !ok {
		return
	}
	c.state.Forget(key)
	if _, still := c.state.ClusterQueue(a.ClusterQueue); !still {
		c.queues.DeleteClusterQueue(a.ClusterQueue)
	}
}

// unparkTreeLocked releases parked workloads of every ClusterQueue in the
// cohort tree of cq.
func (c *Cache) unparkTreeLocked(cq kueue.ClusterQueueReference) {
	node := c.state.Tree().ClusterQueue(cq)
	if node == nil {
		c.queues.Unpark(cq)
		return
	}
	c.queues.Unpark(node.Root().ClusterQueuesBelow()...)
}

// Assume records an admission decided by the scheduler on the given
// version of the workload, before its write completes; the workload leaves
// its queue. It fails if the workload already holds quota.
func (c *Cache) Assume(a *state.Admitted, resourceVersion string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a.ExpectedEnd == 0 {
		if r, ok := c.records[a.Key]; ok {
			shape := ""
			if info, queued := c.queues.Get(a.Key); queued {
				shape = info.Shape.Key
			} else {
				shape = c.shapeKeyOf(r.obj)
			}
			cp := *a
			c.estimateLocked(r.obj, shape, &cp)
			a = &cp
		}
	}
	replaced := c.replacedHoldingLocked(a.Key)
	if err := c.state.Assume(a); err != nil {
		return err
	}
	c.chargeLocked(a, 1)
	c.assumed[a.Key] = resourceVersion
	c.queues.Delete(a.Key)
	if replaced != nil {
		// A growing slice brings only the pods it adds, and the slice it
		// replaces holds nothing now: its quota counts in the new one's.
		c.chargeLocked(replaced, -1)
		if old, ok := c.records[replaced.Key]; ok {
			c.placeLocked(old.obj)
		}
	}
	c.notify()
	return nil
}

// Assumed reports whether an admission of the workload is assumed and not
// yet confirmed by the API server.
func (c *Cache) Assumed(key types.NamespacedName) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.assumed[key]
	return ok
}

// Forget undoes Assume after a failed write: the quota is released and the
// workload is placed again from the latest object the informer showed (the
// failure often means the object changed since the decision).
func (c *Cache) Forget(key types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.assumed[key]; !ok {
		return
	}
	delete(c.assumed, key)
	a := c.releaseLocked(key)
	if r, ok := c.records[key]; ok {
		c.placeLocked(r.obj)
	}
	// The charge goes back in the order it came (penalties do not go
	// below zero): the slice a growing one replaces holds again.
	if replaced := c.replacedHoldingLocked(key); replaced != nil {
		c.chargeLocked(replaced, 1)
	}
	if a != nil {
		c.chargeLocked(a, -1)
	}
	c.notify()
}

// MarkEvicting flags a workload holding quota as being evicted, by a
// decision taken at now (Unix nanoseconds).
func (c *Cache) MarkEvicting(key types.NamespacedName, now int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.state.Admitted(key); ok && !a.Evicting {
		evicting := *a
		evicting.Evicting = true
		_ = c.state.Replace(&evicting)
		c.evictions.decide(key, now)
	}
}

// Evicting reports whether a workload holding quota is being evicted.
func (c *Cache) Evicting(key types.NamespacedName) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.state.Admitted(key)
	return ok && a.Evicting
}

// UnmarkEvicting undoes MarkEvicting after the eviction could not be
// written, and wakes the scheduler to decide again.
func (c *Cache) UnmarkEvicting(key types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.state.Admitted(key); ok && a.Evicting {
		cp := *a
		cp.Evicting = false
		_ = c.state.Replace(&cp)
		c.evictions.undo(key)
		c.notify()
	}
}

// Park sets aside a shape (or a single workload) that did not fit.
func (c *Cache) Park(cq kueue.ClusterQueueReference, shape *workload.Shape, key *types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if key != nil {
		c.queues.ParkWorkload(*key)
		return
	}
	c.queues.ParkShape(cq, shape)
}

// ParkFor parks what a refusal says cannot be admitted until the cluster
// changes (Decision.Parking).
func (c *Cache) ParkFor(d *scheduling.Decision, snap *state.Snapshot) {
	w := d.Workload
	strategy := kueue.StrictFIFO
	if cq := snap.ClusterQueues[w.ClusterQueue]; cq != nil {
		strategy = cq.QueueingStrategy
	}
	switch d.Parking(strategy) {
	case scheduling.ParkWorkload:
		key := w.Key
		c.Park(w.ClusterQueue, nil, &key)
	case scheduling.ParkShape:
		c.Park(w.ClusterQueue, w.Shape, nil)
	}
}

// Blocked records that the workloads of a StrictFIFO queue wait behind its
// head (a Blocked summary of Decide) and returns those to tell why: the
// ones not told so yet (queueing.Manager.Blocked).
func (c *Cache) Blocked(b *scheduling.Blocked) []*workload.Info {
	return c.queues.Blocked(b.ClusterQueue, b.Head.Key, b.Workloads)
}

// Untold forgets that a blocked workload was told why it waits, after its
// note could not be written: the next cycle tells it again.
func (c *Cache) Untold(key types.NamespacedName) { c.queues.Untold(key) }

// Requeue replaces a pending workload's Info (to mark it preempting, say)
// if it is still pending and was not updated since info was taken.
func (c *Cache) Requeue(info *workload.Info) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur, pending := c.queues.Get(info.Key); pending && cur.ResourceVersion == info.ResourceVersion {
		c.queues.Replace(info)
	}
}

// Admitted returns the record of a workload holding quota.
func (c *Cache) Admitted(key types.NamespacedName) (*state.Admitted, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state.Admitted(key)
}

// Pending returns a pending workload's Info.
func (c *Cache) Pending(key types.NamespacedName) (*workload.Info, bool) {
	return c.queues.Get(key)
}

func sameUsage(a, b *state.Admitted) bool {
	if len(a.Usage) != len(b.Usage) {
		return false
	}
	for fr, v := range a.Usage {
		if b.Usage[fr] != v {
			return false
		}
	}
	return true
}

// sameFlags compares the scalar fields of two records of one workload.
func sameFlags(a, b *state.Admitted) bool {
	return a.UID == b.UID && a.LocalQueue == b.LocalQueue && a.Admitted == b.Admitted && a.Evicting == b.Evicting &&
		a.Priority == b.Priority && a.ReservedAt == b.ReservedAt && a.QueueOrderTime == b.QueueOrderTime && a.PodsReady == b.PodsReady
}

// AllPodsReady reports whether every admitted workload's pods are ready
// (waitForPodsReady.blockAdmission holds admissions until they are).
func (c *Cache) AllPodsReady() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	ready := true
	c.state.EachAdmitted(func(a *state.Admitted) bool {
		if a.Admitted && !a.Evicting && !a.PodsReady {
			ready = false
		}
		return ready
	})
	return ready
}

// HoldBack keeps a workload from being a candidate until the time, unless
// what the scheduler reads from it changes first (the API server refused
// to record its admission).
func (c *Cache) HoldBack(key types.NamespacedName, until time.Time) {
	c.queues.HoldBack(key, until.UnixNano())
}

// SetAside takes a workload out of scheduling until its spec changes
// (metadata.generation), after deciding or acting on it failed.
func (c *Cache) SetAside(key types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.records[key]
	if !ok {
		return
	}
	c.poisoned[key] = poison{uid: r.obj.UID, generation: r.obj.Generation}
	c.placeLocked(r.obj)
}

// poison is the object and generation a workload was set aside at.
type poison struct {
	uid        types.UID
	generation int64
}

// UnparkAll releases every parked workload without waking the scheduler:
// decisions of a cycle whose admissions were held back may have parked
// workloads that would fit.
func (c *Cache) UnparkAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.queues.UnparkAll()
	c.forgetIdleLocked()
}
