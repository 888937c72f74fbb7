package cache

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/state"
)

// Workloads created and deleted by the thousand leave nothing behind in
// the cache, whatever happened to them meanwhile: set aside, admitted and
// being evicted, held back after a refused write, noted by the
// scheduler's own writes, or a slice replacing another.
func TestDeletedWorkloadsLeaveNoEntries(t *testing.T) {
	c := newTestCache(t, "100000")
	now := time.Unix(1000, 0)
	const n = 10000
	for i := range n {
		name := fmt.Sprintf("w%d", i)
		k := key(name)
		rv := fmt.Sprint(i + 1)
		switch i % 5 {
		case 0:
			c.UpsertWorkload(pendingWL(name, "lq", rv, "1"))
			c.SetAside(k)
		case 1:
			c.UpsertWorkload(pendingWL(name, "lq", rv, "1"))
			a := &state.Admitted{Key: k, UID: types.UID("uid-" + name), ClusterQueue: "cq", LocalQueue: "lq",
				Usage: resources.FlavorResourceQuantities{{Flavor: "f", Resource: corev1.ResourceCPU}: 1000}}
			if err := c.Assume(a, rv); err != nil {
				t.Fatal(err)
			}
			c.NoteOwnWrite(k, rv, rv+"-own")
			c.MarkEvicting(k, now.UnixNano())
		case 2:
			c.UpsertWorkload(pendingWL(name, "lq", rv, "1"))
			c.HoldBack(k, now.Add(time.Hour))
		case 3:
			c.UpsertWorkload(admittedWL(name, "lq", rv, "cq", "1"))
			c.MarkEvicting(k, now.UnixNano())
		case 4:
			// A growing slice of the workload just before it.
			next := withPods(pendingWL(name, "lq", rv, "1"), 2)
			next.Annotations = map[string]string{kueue.WorkloadSliceReplacementForAnnotation: fmt.Sprintf("ns/w%d", i-1),
				kueue.ElasticJobAnnotation: "true"}
			c.UpsertWorkload(next)
		}
	}
	if got := c.perWorkloadEntries(now.UnixNano()); got["records"] != n || got["poisoned"] == 0 || got["replacers"] == 0 ||
		got["held"] == 0 || got["assumed"] == 0 || got["own"] == 0 || got["evictions"] == 0 {
		t.Fatalf("before the deletions: %v; the test proves nothing", got)
	}
	for i := range n {
		c.DeleteWorkload(key(fmt.Sprintf("w%d", i)))
	}
	for name, count := range c.perWorkloadEntries(now.UnixNano()) {
		if count != 0 {
			t.Errorf("%s: %d entries left after every workload was deleted", name, count)
		}
	}
}

// A workload set aside after deciding it failed, then deleted and created
// again under the same name and generation (as a job's controller does
// when the job is recreated), is a new workload: it queues and is
// admitted like any other. So is one whose deletion the cache did not see
// (the informer relisted): its UID tells it apart.
func TestRecreatedWorkloadIsNotSetAside(t *testing.T) {
	for _, seen := range []bool{true, false} {
		t.Run(fmt.Sprintf("deletion seen %v", seen), func(t *testing.T) {
			c := newTestCache(t, "4")
			old := pendingWL("w", "lq", "1", "1")
			old.Generation = 1
			c.UpsertWorkload(old)
			c.SetAside(key("w"))
			if _, queued := c.Pending(key("w")); queued {
				t.Fatal("the workload set aside is still queued")
			}
			if seen {
				c.DeleteWorkload(key("w"))
			}
			again := pendingWL("w", "lq", "2", "1")
			again.UID, again.Generation = "uid-w-again", 1
			c.UpsertWorkload(again)
			if _, queued := c.Pending(key("w")); !queued {
				t.Fatal("the workload created again is set aside like the one before it")
			}
			_, queues := c.Snapshot(time.Now().UnixNano())
			if len(queues) != 1 || len(queues[0].Workloads) != 1 || queues[0].Workloads[0].UID != "uid-w-again" {
				t.Fatalf("candidates %+v, want the new workload", queues)
			}
		})
	}
}

// A growing slice deleted while it holds the job's quota gives the slice
// it was to replace its quota back, as a slice that loses its reservation
// does: the running slice's pods still run.
func TestDeletedReplacementGivesTheQuotaBack(t *testing.T) {
	c := newTestCache(t, "8")
	c.UpsertWorkload(withPods(admittedWL("old", "lq", "1", "cq", "1"), 2))
	next := withPods(admittedWL("next", "lq", "2", "cq", "1"), 5)
	next.Annotations = map[string]string{kueue.WorkloadSliceReplacementForAnnotation: "ns/old", kueue.ElasticJobAnnotation: "true"}
	c.UpsertWorkload(next)
	if held := c.heldCPU(); held != 5000 {
		t.Fatalf("%d millicpu held with the replacement admitted, want 5000 (the job once)", held)
	}
	c.DeleteWorkload(key("next"))
	if held := c.heldCPU(); held != 2000 {
		t.Fatalf("%d millicpu held once the replacement was deleted, want the running slice's 2000", held)
	}
}
