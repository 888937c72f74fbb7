package cache

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/lifecycle"
	"github.com/kuota-dev/kuota/internal/scheduling"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// idleFixture: cohort co1 (cq-a, cq-b) full, with a workload waiting in
// cq-a; cohort co2 (cq-c) with room, a workload waiting there that fits.
func idleFixture(t *testing.T) *Cache {
	t.Helper()
	c := New(lifecycle.Options{})
	c.SetFlavor(&state.Flavor{Name: "f"})
	c.SetNamespace("ns", nil)
	for _, q := range []struct{ cq, cohort string }{{"cq-a", "co1"}, {"cq-b", "co1"}, {"cq-c", "co2"}} {
		c.SetClusterQueue(clusterQueue(t, q.cq, q.cohort, "4"))
		c.SetLocalQueue(LocalQueueKey{Namespace: "ns", Name: kueue.LocalQueueName("lq-" + q.cq[3:])}, kueue.ClusterQueueReference(q.cq), kueue.None)
	}
	c.UpsertWorkload(admittedWL("run-a", "lq-a", "1", "cq-a", "4"))
	c.UpsertWorkload(admittedWL("run-b", "lq-b", "2", "cq-b", "4"))
	c.UpsertWorkload(pendingWL("wait-a", "lq-a", "3", "2"))
	c.UpsertWorkload(pendingWL("fits-c", "lq-c", "4", "2"))
	return c
}

// cycleAt runs one cycle's bookkeeping at time now: the queues left after
// skipping idle trees are decided and the result settled. It returns the
// ClusterQueues decided.
func cycleAt(c *Cache, now int64) []string {
	snap, queues := c.Snapshot(now)
	queues = c.SkipIdle(snap, queues)
	res := scheduling.Decide(snap, queues, scheduling.Options{})
	c.Settle(snap, queues, &res)
	return queueNames(queues)
}

func queueNames(queues []workload.Queue) []string {
	var out []string
	for _, q := range queues {
		out = append(out, string(q.ClusterQueue))
	}
	slices.Sort(out)
	return out
}

// A cohort tree in which a cycle admitted nothing is left out of the next
// cycles until something in it changes: a new workload, a released or
// evicting reservation, a spec. A tree where the cycle admitted is not.
func TestIdleTreeIsSkippedUntilItChanges(t *testing.T) {
	c := idleFixture(t)
	if got := cycleAt(c, 1); !slices.Equal(got, []string{"cq-a", "cq-c"}) {
		t.Fatalf("first cycle decided %v, want cq-a and cq-c", got)
	}
	// The admission in co2 was not applied: co2 is decided again, co1 not.
	if got := cycleAt(c, 2); !slices.Equal(got, []string{"cq-c"}) {
		t.Fatalf("second cycle decided %v, want only cq-c (co1 is idle)", got)
	}
	steps := []struct {
		what   string
		change func()
	}{
		{"a workload queued in another queue of the tree", func() { c.UpsertWorkload(pendingWL("wait-b", "lq-b", "5", "1")) }},
		{"a reservation of the tree marked evicting", func() { c.MarkEvicting(types.NamespacedName{Namespace: "ns", Name: "run-b"}, 3) }},
		{"a namespace changed", func() { c.SetNamespace("ns", map[string]string{"team": "x"}) }},
		{"a reservation of the tree released", func() { c.DeleteWorkload(types.NamespacedName{Namespace: "ns", Name: "run-b"}) }},
	}
	// The release comes last: co1 then has room and stays busy.
	now := int64(10)
	for _, s := range steps {
		cycleAt(c, now) // settles co1 idle (again)
		if got := cycleAt(c, now+1); slices.Contains(got, "cq-a") {
			t.Fatalf("before %s: co1 decided again (%v) though nothing changed", s.what, got)
		}
		s.change()
		if got := cycleAt(c, now+2); !slices.Contains(got, "cq-a") {
			t.Fatalf("after %s: cycle decided %v, want cq-a again", s.what, got)
		}
		now += 10
	}
}

// A decision that may change by itself (a preemptor waiting for workloads
// expected to end soon) keeps its tree decided from its recheck time on,
// and whenever the eviction delay it counted on changes.
func TestIdleTreeComesBackAtRecheck(t *testing.T) {
	c := idleFixture(t)
	snap, queues := c.Snapshot(int64(time.Second))
	info, _ := c.Pending(types.NamespacedName{Namespace: "ns", Name: "wait-a"})
	res := scheduling.Result{Decisions: []scheduling.Decision{{Workload: info, Reason: scheduling.WaitingForQuota,
		Recheck: int64(5 * time.Second)}}}
	c.Settle(snap, queues, &res)
	decided := func(now time.Duration) bool {
		snap, queues := c.Snapshot(int64(now))
		return slices.Contains(queueNames(c.SkipIdle(snap, queues)), "cq-a")
	}
	if decided(4 * time.Second) {
		t.Fatal("co1 decided before its recheck time")
	}
	if !decided(5 * time.Second) {
		t.Fatal("co1 not decided at its recheck time")
	}
}
