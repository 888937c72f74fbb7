package cache

import (
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/lifecycle"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// An elastic job that grows while it runs gets a new Workload slice of its
// new size, which replaces the admitted one (docs/design/elastic.md). While
// the new slice waits it asks only for the pods it adds, on the flavors the
// old slice holds (lifecycle.AsReplacement); once it holds quota, assumed
// or written, the old slice holds none (it is set aside until its Finished
// condition arrives), so that the job's quota is counted once. If the
// admission is forgotten, or the new slice loses its reservation before the
// old one is finished, the old one holds its quota again.

// replacedLocked reports whether the slice that replaces key holds quota.
func (c *Cache) replacedLocked(key Key) bool {
	by, ok := c.replacers[key]
	if !ok {
		return false
	}
	_, holds := c.state.Admitted(by)
	return holds
}

// replacedHoldingLocked returns the reservation of the slice that key
// replaces, while that one holds quota; nil otherwise.
func (c *Cache) replacedHoldingLocked(key Key) *state.Admitted {
	r, ok := c.records[key]
	if !ok {
		return nil
	}
	replaced, isSlice := lifecycle.ReplacedSlice(r.obj)
	if !isSlice || c.replacers[replaced] != key {
		return nil
	}
	held, _ := c.state.Admitted(replaced)
	return held
}

// asReplacementLocked makes a pending slice's entry ask for the pods it
// adds to the slice it replaces, when that one holds quota in the same
// ClusterQueue and is not being evicted.
func (c *Cache) asReplacementLocked(info *workload.Info, wl *kueue.Workload, replaced Key, v *lifecycle.View) {
	held, ok := c.state.Admitted(replaced)
	r := c.records[replaced]
	if !ok || r == nil || held.Evicting || held.ClusterQueue != info.ClusterQueue {
		return
	}
	lifecycle.AsReplacement(info, wl, r.obj, v, &c.opts)
}

// slicesMovedLocked places again the slices whose placement depends on the
// one just placed (key, at place): the slice it replaces, which holds quota
// only while key does not; and the slice that replaces it, whose request
// depends on what key holds.
func (c *Cache) slicesMovedLocked(key Key, place lifecycle.Placement, replaced Key, isSlice bool) {
	if isSlice {
		if place == lifecycle.Gone && c.replacers[replaced] == key {
			delete(c.replacers, replaced)
		}
		if r, ok := c.records[replaced]; ok {
			_, holds := c.state.Admitted(replaced)
			setAside := r.place == lifecycle.Aside && lifecycle.Reserved(r.obj)
			if now := c.replacedLocked(replaced); holds && now || setAside && !now {
				// It holds while replaced, or was set aside for a
				// replacement that no longer holds.
				c.placeLocked(r.obj)
			}
		}
	}
	by, ok := c.replacers[key]
	if !ok {
		return
	}
	if place == lifecycle.Gone {
		delete(c.replacers, key)
	}
	if r, ok := c.records[by]; ok && r.place == lifecycle.Queued {
		c.placeLocked(r.obj)
	}
}
