package cache

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/scheduling"
	"github.com/kuota-dev/kuota/internal/state"
)

// Snapshots share the live picture's unchanged parts (cohort trees, maps,
// candidate lists) and are read outside the lock while the informers keep
// changing it: a cycle decides on a snapshot while workloads come, go and
// are admitted. Run with -race; each snapshot must also read the same
// before and after its cycle.
func TestSnapshotsStayStillWhileTheCacheChanges(t *testing.T) {
	c := newTestCache(t, "4")
	for i, cohort := range []string{"left", "left", "right"} {
		name := fmt.Sprintf("cq%d", i)
		c.SetClusterQueue(clusterQueue(t, name, cohort, "3"))
		c.SetLocalQueue(LocalQueueKey{Namespace: "ns", Name: kueue.LocalQueueName(name)}, kueue.ClusterQueueReference(name), kueue.None)
	}
	lqs := []string{"lq", "cq0", "cq1", "cq2"}
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			name := fmt.Sprintf("w%d", i%40)
			if i%3 == 2 {
				c.DeleteWorkload(types.NamespacedName{Namespace: "ns", Name: name})
			} else {
				c.UpsertWorkload(pendingWL(name, lqs[i%len(lqs)], fmt.Sprint(i), "1"))
			}
		}
	}()
	for range 300 {
		snap, queues := c.Snapshot(time.Now().UnixNano())
		before := renderSnapshot(snap)
		res := scheduling.Decide(snap, queues, scheduling.Options{})
		for i := range res.Decisions {
			d := &res.Decisions[i]
			if !d.Admit {
				c.ParkFor(d, snap)
				continue
			}
			w := d.Workload
			_ = c.Assume(&state.Admitted{Key: w.Key, UID: w.UID, ClusterQueue: w.ClusterQueue, LocalQueue: w.LocalQueue,
				Admitted: true, Usage: d.Assignment.Usage}, w.ResourceVersion)
		}
		if after := renderSnapshot(snap); after != before {
			t.Fatalf("a snapshot changed during its cycle:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	}
	close(done)
	wg.Wait()
}

func renderSnapshot(s *state.Snapshot) string {
	out := ""
	for _, name := range s.Tree.ClusterQueueNames() {
		n := s.Tree.ClusterQueue(name)
		out += fmt.Sprintf("%s usage=%v admitted=%d\n", name, n.UsageAll(), len(s.AdmittedIn(name)))
	}
	return out
}
