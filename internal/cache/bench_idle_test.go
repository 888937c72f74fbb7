package cache

import (
	"fmt"
	"testing"
	"time"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/scheduling"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// contendedCache: 1,000 ClusterQueues in 100 cohorts, each full of
// low-priority work, and in each 5 high-priority preemptors waiting for
// the victims they evicted (evictions take long): every head needs a
// victim search in every cycle that decides its cohort.
func contendedCache(b *testing.B, all bool) (*Cache, func()) {
	c := benchQueuesCache(b, &kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyLowerPriority})
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	n := 0
	add := func(cq int, priority, count int32) {
		c.UpsertWorkload(benchWorkload(fmt.Sprintf("wl-%07d", n), fmt.Sprintf("cq-%d", cq), priority, count, base.Add(time.Duration(n)*time.Millisecond)))
		n++
	}
	cycle := func() int { return contendedCycle(b, c, all) }
	for cq := range benchQueues {
		for range 20 {
			add(cq, 0, 1)
		}
	}
	for cycle() > 0 {
	}
	for cq := range benchQueues {
		for range 5 {
			add(cq, 100, 4)
		}
	}
	for range 20 {
		if cycle() == 0 {
			break
		}
	}
	next := 0
	return c, func() { // one arrival in one cohort
		add(next%benchQueues, 0, 1)
		next += 7
	}
}

// contendedCycle runs a cycle as the manager does, without I/O, and
// reports the admissions and evictions it started. Evictions are marked
// and never end.
func contendedCycle(b *testing.B, c *Cache, all bool) int {
	snap, queues := c.Snapshot(time.Now().UnixNano())
	if !all {
		queues = c.SkipIdle(snap, queues)
	}
	res := scheduling.Decide(snap, queues, scheduling.Options{})
	if !all {
		c.Settle(snap, queues, &res)
	}
	moved := 0
	for i := range res.Decisions {
		d := &res.Decisions[i]
		w := d.Workload
		switch {
		case d.Admit:
			if err := c.Assume(&state.Admitted{Key: w.Key, UID: w.UID, ClusterQueue: w.ClusterQueue, LocalQueue: w.LocalQueue,
				Admitted: true, Priority: w.Priority, Usage: d.Assignment.Usage}, w.ResourceVersion); err != nil {
				b.Fatal(err)
			}
			moved++
		case len(d.Victims) > 0 || d.Reason == scheduling.WaitingForPreemptedWorkloads:
			for _, v := range d.Victims {
				if !v.Workload.Evicting {
					c.MarkEvicting(v.Workload.Key, snap.Now)
					moved++
				}
			}
			p := workload.Info(*w)
			p.Preempting, p.Hint = true, d.Hint()
			c.Requeue(&p)
		default:
			c.ParkFor(d, snap)
		}
	}
	return moved
}

// BenchmarkCycleWhilePreemptorsWait measures a cycle after one workload
// arrives in one cohort while every cohort has preemptors waiting for
// their victims: with idle cohort trees skipped, and with every tree
// decided (what each cycle cost before).
func BenchmarkCycleWhilePreemptorsWait(b *testing.B) {
	for _, mode := range []struct {
		name string
		all  bool
	}{{"idle-skipped", false}, {"every-tree", true}} {
		b.Run(mode.name, func(b *testing.B) {
			c, arrive := contendedCache(b, mode.all)
			b.ResetTimer()
			for b.Loop() {
				arrive()
				contendedCycle(b, c, mode.all)
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)*1000, "ms/cycle")
		})
	}
}
