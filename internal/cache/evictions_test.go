package cache

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// TestEvictionDelayIsMeasuredFromDecisionToFreeQuota: the snapshot after an
// evicted workload stops holding quota reports how long that took since
// the decision; evictions that were undone or are still in flight do not
// count, and a delay stops counting once it is older than the window.
func TestEvictionDelayIsMeasuredFromDecisionToFreeQuota(t *testing.T) {
	c := newTestCache(t, "10")
	sec := int64(time.Second)
	for _, name := range []string{"a", "b", "c", "d"} {
		c.UpsertWorkload(admittedWL(name, "lq", "1", "cq", "1"))
	}
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: name} }

	if snap, _ := c.Snapshot(100 * sec); snap.EvictionDelay != 0 {
		t.Fatalf("no eviction yet: delay %s, want 0", snap.EvictionDelay)
	}
	c.MarkEvicting(key("a"), 100*sec)
	c.MarkEvicting(key("b"), 100*sec)
	c.MarkEvicting(key("c"), 100*sec)
	c.UnmarkEvicting(key("c")) // its eviction could not be written
	c.UpsertWorkload(pendingWL("a", "lq", "2", "1"))
	c.UpsertWorkload(pendingWL("c", "lq", "2", "1")) // not an eviction of ours
	snap, _ := c.Snapshot(130 * sec)
	if snap.EvictionDelay != 30*time.Second {
		t.Fatalf("a freed its quota 30 s after the decision: delay %s, want 30s", snap.EvictionDelay)
	}
	c.DeleteWorkload(key("b")) // deleted while being evicted: its quota is free too
	c.MarkEvicting(key("d"), 131*sec)
	c.UpsertWorkload(pendingWL("d", "lq", "2", "1"))
	snap, _ = c.Snapshot(132 * sec)
	// Samples: 30 s (a), 32 s (b), 1 s (d); the median is 30 s.
	if snap.EvictionDelay != 30*time.Second {
		t.Fatalf("after three evictions of 30, 32 and 1 s: delay %s, want the median, 30s", snap.EvictionDelay)
	}
	if snap, _ = c.Snapshot(132*sec + int64(evictionWindow) + sec); snap.EvictionDelay != 0 {
		t.Fatalf("past the window: delay %s, want 0", snap.EvictionDelay)
	}
}
