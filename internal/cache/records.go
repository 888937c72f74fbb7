package cache

import (
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/lifecycle"
	"github.com/kuota-dev/kuota/internal/state"
)

// record is the latest object the informer showed for a workload (shared
// with the informer's store, never modified) and where it was placed.
type record struct {
	obj   *kueue.Workload
	place lifecycle.Placement
}

// UpsertWorkload places a workload from the informer's latest object: it
// holds quota, waits in its queue, or is set aside (lifecycle.Place). It
// does no I/O; an update that changes nothing the scheduler reads costs
// O(1) and wakes nothing.
func (c *Cache) UpsertWorkload(wl *kueue.Workload) {
	c.mu.Lock()
	released := c.placeLocked(wl)
	hook := c.onGone
	c.mu.Unlock()
	if released != nil && hook != nil {
		hook(wl, released)
	}
}

// OnGone sets a function called (outside the lock) when a workload holding
// quota leaves the picture because it finished or was deleted without a
// job, with the reservation it held: metrics count finished workloads
// there. Set it before the informers start.
func (c *Cache) OnGone(f func(*kueue.Workload, *state.Admitted)) { c.onGone = f }

// DeleteWorkload forgets a workload that is gone from the API server; its
// quota, if any, is freed.
//
// Everything the cache remembers of the workload goes with it (whether it
// was set aside, what the scheduler assumed or wrote, the slice it
// replaces), so that a workload created again under the same name starts
// afresh.
func (c *Cache) DeleteWorkload(key Key) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, had := c.records[key]
	c.unrecordLocked(key)
	c.evictions.released(key)
	delete(c.poisoned, key)
	changed := c.dropLocked(key)
	var replaced Key
	isSlice := false
	if had {
		replaced, isSlice = lifecycle.ReplacedSlice(r.obj)
	}
	c.slicesMovedLocked(key, lifecycle.Gone, replaced, isSlice)
	if changed {
		c.notify()
	}
}

// placeLocked places wl; when it is gone and held quota, it returns the
// reservation it held.
func (c *Cache) placeLocked(wl *kueue.Workload) *state.Admitted {
	key := lifecycle.KeyOf(wl)
	v := c.viewLocked(wl)
	place := lifecycle.Place(wl, &v)
	replaced, isSlice := lifecycle.ReplacedSlice(wl)
	if isSlice {
		c.replacers[replaced] = key
	}
	if place == lifecycle.Holding && c.replacedLocked(key) {
		// The slice that replaces it holds the job's quota now.
		place = lifecycle.Aside
	}
	if p, ok := c.poisoned[key]; ok {
		if p != (poison{uid: wl.UID, generation: wl.Generation}) || place != lifecycle.Queued {
			delete(c.poisoned, key)
		} else {
			place = lifecycle.Aside
		}
	}
	// held is the copy a gone workload held quota with: a finished
	// workload's own copy lacks its pod templates (internal/app trims it),
	// and its runtime is keyed by the held copy's shape.
	var held *kueue.Workload
	if place == lifecycle.Gone {
		held = wl
		if r, ok := c.records[key]; ok {
			held = r.obj
		}
		c.unrecordLocked(key)
	} else {
		c.recordLocked(key, wl, place)
	}
	if place != lifecycle.Holding {
		c.evictions.released(key)
	}
	var changed bool
	var released *state.Admitted
	switch place {
	case lifecycle.Gone:
		released, _ = c.state.Admitted(key)
		if released != nil {
			c.noteRuntimeLocked(wl, held, released)
		}
		changed = c.dropLocked(key)
	case lifecycle.Holding:
		a := lifecycle.Admitted(wl, &v, &c.opts)
		if prev, ok := c.state.Admitted(key); ok && prev.UID == a.UID && prev.ExpectedEnd != 0 {
			a.ExpectedEnd, a.EstimateBorrowed = prev.ExpectedEnd, prev.EstimateBorrowed
		} else {
			c.estimateLocked(wl, c.shapeKeyOf(wl), a)
		}
		changed = c.holdLocked(a)
	case lifecycle.Queued:
		info := lifecycle.Info(wl, &v, &c.opts)
		if isSlice {
			c.asReplacementLocked(info, wl, replaced, &v)
		}
		changed = c.queueLocked(info)
	case lifecycle.Aside:
		changed = c.asideLocked(key, wl.ResourceVersion)
	}
	if changed {
		c.notify()
	}
	c.slicesMovedLocked(key, place, replaced, isSlice)
	return released
}

func (c *Cache) recordLocked(key Key, wl *kueue.Workload, place lifecycle.Placement) {
	if prev, ok := c.records[key]; ok {
		if prev.obj.Spec.QueueName != wl.Spec.QueueName {
			c.unindexLocked(key, prev.obj)
			c.indexLocked(key, wl)
		}
		prev.obj, prev.place = wl, place
		return
	}
	c.records[key] = &record{obj: wl, place: place}
	c.indexLocked(key, wl)
}

func (c *Cache) unrecordLocked(key Key) {
	if prev, ok := c.records[key]; ok {
		c.unindexLocked(key, prev.obj)
		delete(c.records, key)
	}
}

func localQueueOf(wl *kueue.Workload) LocalQueueKey {
	return LocalQueueKey{Namespace: wl.Namespace, Name: wl.Spec.QueueName}
}

func (c *Cache) indexLocked(key Key, wl *kueue.Workload) {
	lq := localQueueOf(wl)
	set := c.byLocal[lq]
	if set == nil {
		set = map[Key]struct{}{}
		c.byLocal[lq] = set
	}
	set[key] = struct{}{}
}

func (c *Cache) unindexLocked(key Key, wl *kueue.Workload) {
	lq := localQueueOf(wl)
	if set := c.byLocal[lq]; set != nil {
		delete(set, key)
		if len(set) == 0 {
			delete(c.byLocal, lq)
		}
	}
}

// localQueueMovedLocked places again every workload of a LocalQueue from
// its latest object and asks the controller to revisit them: the queue's
// stop policy or target changed, or the queue appeared or went.
func (c *Cache) localQueueMovedLocked(lq LocalQueueKey) {
	for key := range c.byLocal[lq] {
		c.placeLocked(c.records[key].obj)
		c.revisits.add(key)
	}
}

// Placement returns where a workload was last placed, and whether the
// cache knows it.
func (c *Cache) Placement(key Key) (lifecycle.Placement, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.records[key]
	if !ok {
		return lifecycle.Gone, false
	}
	return r.place, true
}

// Workloads returns how many workloads the cache records (not gone).
func (c *Cache) Workloads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.records)
}

// Unrecorded returns those of the workloads (by key, with the UID they
// had) that the cache no longer records under that UID: deleted, finished,
// or created again since. Whoever remembers something of them can let it
// go.
func (c *Cache) Unrecorded(workloads map[Key]types.UID) []Key {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Key
	for key, uid := range workloads {
		if r, ok := c.records[key]; !ok || r.obj.UID != uid {
			out = append(out, key)
		}
	}
	return out
}
