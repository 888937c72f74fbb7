package cache

import "github.com/kuota-dev/kuota/internal/state"

// perWorkloadEntries counts, by name, the entries of every map the cache
// and its queues keep per workload, so that a test can check that a
// deleted workload leaves none behind.
func (c *Cache) perWorkloadEntries(now int64) map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	byLocal := 0
	for _, set := range c.byLocal {
		byLocal += len(set)
	}
	admitted := 0
	c.state.EachAdmitted(func(*state.Admitted) bool { admitted++; return true })
	held := 0
	if c.queues.NextRequeueAt(now) != 0 {
		held = 1 // a hold (or backoff) still waits
	}
	return map[string]int{
		"records": len(c.records), "byLocal": byLocal, "assumed": len(c.assumed), "own": len(c.own),
		"poisoned": len(c.poisoned), "replacers": len(c.replacers), "evictions": len(c.evictions.decided),
		"bound": len(c.bound.counts), "admitted": admitted, "queued": c.queues.Len(), "shapes": c.queues.Shapes(),
		"held": held,
	}
}
