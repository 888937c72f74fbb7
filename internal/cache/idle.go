package cache

import (
	"time"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/hierarchy"
	"github.com/kuota-dev/kuota/internal/scheduling"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// Idle cohort trees. The decisions of a cohort tree depend only on what
// is in it: its usage and quotas, the workloads holding quota in its
// ClusterQueues, what its queues offer, the specs, and (for a preemptor
// waiting for workloads expected to end soon) the clock and the eviction
// delay. When a cycle admitted nothing in a tree and chose no victim that
// was not already evicting, the next cycle would decide the same there
// until one of those changes, so it need not decide at all: a full cohort
// with hundreds of preemptors waiting for their victims costs nothing
// until something in it moves.
//
// Changes are seen by identity, not hooked: a snapshot's tree copies a
// cohort tree's nodes on its first write (hierarchy.Tree.Freeze), a
// ClusterQueue's sorted list of admitted workloads is rebuilt on every
// change, and a queue's offer on every change (queueing.Manager.Candidates).

// idleTrees are the cohort trees found idle, by the root node of the
// snapshot they were found in, valid for one version of the specs.
type idleTrees struct {
	specs uint64
	trees map[*hierarchy.Node]*idleTree
}

// idleTree is what a tree looked like when it was found idle.
type idleTree struct {
	queues []queueSeen
	// until (Unix nanoseconds), when set, is when a decision may change
	// by itself (scheduling.Decision.Recheck); such decisions also depend
	// on the eviction delay.
	until int64
	delay time.Duration
}

// queueSeen identifies one ClusterQueue's admitted list and offer.
type queueSeen struct {
	name     kueue.ClusterQueueReference
	admitted **state.Admitted
	offer    **workload.Info
}

// SkipIdle returns the queues of a cycle without those of cohort trees
// found idle since which nothing changed. snap and queues come from one
// Snapshot call.
func (c *Cache) SkipIdle(snap *state.Snapshot, queues []workload.Queue) []workload.Queue {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.idle.trees) == 0 {
		return queues
	}
	if c.idle.specs != snap.Specs {
		c.idle.trees = nil
		return queues
	}
	offers := offersOf(queues)
	skip := map[kueue.ClusterQueueReference]bool{}
	for root, t := range c.idle.trees {
		if !t.still(root, snap, offers) {
			delete(c.idle.trees, root)
			continue
		}
		for _, q := range t.queues {
			skip[q.name] = true
		}
	}
	if len(skip) == 0 {
		return queues
	}
	out := make([]workload.Queue, 0, len(queues))
	for _, q := range queues {
		if !skip[q.ClusterQueue] {
			out = append(out, q)
		}
	}
	return out
}

// Settle records, after a cycle decided res on snap and queues, the cohort
// trees in which it changed nothing.
func (c *Cache) Settle(snap *state.Snapshot, queues []workload.Queue, res *scheduling.Result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.idle.specs != snap.Specs || c.idle.trees == nil {
		c.idle = idleTrees{specs: snap.Specs, trees: map[*hierarchy.Node]*idleTree{}}
	}
	type verdict struct {
		busy  bool
		until int64
	}
	roots := map[*hierarchy.Node]*verdict{}
	rootOf := func(name kueue.ClusterQueueReference) *hierarchy.Node {
		if n := snap.Tree.ClusterQueue(name); n != nil {
			return n.Root()
		}
		return nil
	}
	for _, q := range queues {
		if r := rootOf(q.ClusterQueue); r != nil && roots[r] == nil {
			roots[r] = &verdict{}
		}
	}
	// A queue's decisions mostly come in runs: its verdict is looked up
	// once per run (no decision has an empty ClusterQueue, whose verdict
	// would be nil anyway).
	var lastCQ kueue.ClusterQueueReference
	var v *verdict
	for i := range res.Decisions {
		d := &res.Decisions[i]
		if cq := d.Workload.ClusterQueue; cq != lastCQ {
			lastCQ, v = cq, roots[rootOf(cq)]
		}
		if v == nil {
			continue
		}
		if movesQuota(d) || (d.Recheck != 0 && d.Recheck <= snap.Now) {
			v.busy = true
		}
		if d.Recheck != 0 && (v.until == 0 || d.Recheck < v.until) {
			v.until = d.Recheck
		}
	}
	offers := offersOf(queues)
	for root, v := range roots {
		if v.busy {
			continue
		}
		t := &idleTree{until: v.until, delay: snap.EvictionDelay}
		for _, name := range root.ClusterQueuesBelow() {
			t.queues = append(t.queues, queueSeen{name: name, admitted: listID(snap.AdmittedIn(name)), offer: offers[name]})
		}
		c.idle.trees[root] = t
	}
}

// forgetIdleLocked forgets every idle tree: a change the snapshots do not
// show (workloads unparked after held-back admissions) must be decided.
func (c *Cache) forgetIdleLocked() { c.idle.trees = nil }

// movesQuota reports whether a decision admits or starts an eviction.
func movesQuota(d *scheduling.Decision) bool {
	if d.Admit {
		return true
	}
	for _, v := range d.Victims {
		if !v.Workload.Evicting {
			return true
		}
	}
	return false
}

// still reports whether nothing the tree's decisions depend on changed.
func (t *idleTree) still(root *hierarchy.Node, snap *state.Snapshot, offers map[kueue.ClusterQueueReference]**workload.Info) bool {
	if t.until != 0 && (snap.Now >= t.until || snap.EvictionDelay != t.delay) {
		return false
	}
	for _, q := range t.queues {
		n := snap.Tree.ClusterQueue(q.name)
		if n == nil || n.Root() != root || listID(snap.AdmittedIn(q.name)) != q.admitted || offers[q.name] != q.offer {
			return false
		}
	}
	return true
}

func offersOf(queues []workload.Queue) map[kueue.ClusterQueueReference]**workload.Info {
	out := make(map[kueue.ClusterQueueReference]**workload.Info, len(queues))
	for _, q := range queues {
		if len(q.Workloads) > 0 {
			out[q.ClusterQueue] = &q.Workloads[0]
		}
	}
	return out
}

// listID identifies a list by its first element's address (nil when
// empty): lists are rebuilt, never modified in place.
func listID(l []*state.Admitted) **state.Admitted {
	if len(l) == 0 {
		return nil
	}
	return &l[0]
}
