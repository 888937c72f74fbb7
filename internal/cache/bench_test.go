package cache

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/lifecycle"
	"github.com/kuota-dev/kuota/internal/scheduling"
	"github.com/kuota-dev/kuota/internal/state"
)

// The scale of issue 12: 50,000 pending workloads in 1,000 ClusterQueues
// (100 cohorts of 10), 30 shapes.
const (
	benchQueues  = 1000
	benchCohorts = 100
	benchPending = 50000
)

// benchCache fills a cache with the scale above through the informer path
// (UpsertWorkload), then runs cycles until nothing more is admitted: the
// queues are full and the rest waits, parked.
func benchCache(b *testing.B) (*Cache, []types.NamespacedName) {
	c := benchQueuesCache(b, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range benchPending {
		c.UpsertWorkload(benchWorkload(fmt.Sprintf("wl-%06d", i), fmt.Sprintf("cq-%d", rng.IntN(benchQueues)),
			int32(rng.IntN(3)*100), int32(1+rng.IntN(30)), base.Add(time.Duration(i)*time.Millisecond)))
	}
	var admitted []types.NamespacedName
	for range 50 {
		n := benchCycle(b, c, &admitted)
		if n == 0 {
			break
		}
	}
	return c, admitted
}

// benchQueuesCache returns a cache with flavor f and benchQueues
// ClusterQueues of 20 cpu in benchCohorts cohorts, each fed by a LocalQueue
// of its name in namespace bench.
func benchQueuesCache(b *testing.B, preemption *kueue.ClusterQueuePreemption) *Cache {
	c := New(lifecycle.Options{})
	c.SetFlavor(&state.Flavor{Name: "f"})
	c.SetNamespace("bench", nil)
	for i := range benchQueues {
		name := fmt.Sprintf("cq-%d", i)
		cq, err := state.NewClusterQueue(&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueue.ClusterQueueSpec{
			CohortName: kueue.CohortReference(fmt.Sprintf("co-%d", i%benchCohorts)), NamespaceSelector: &metav1.LabelSelector{},
			Preemption: preemption,
			ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
				Flavors: []kueue.FlavorQuotas{{Name: "f", Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU,
					NominalQuota: resource.MustParse("20")}}}}}}}})
		if err != nil {
			b.Fatal(err)
		}
		c.SetClusterQueue(cq)
		c.SetLocalQueue(LocalQueueKey{Namespace: "bench", Name: kueue.LocalQueueName(name)}, kueue.ClusterQueueReference(name), kueue.None)
	}
	return c
}

// benchWorkload is a pending Workload of count pods of 1 cpu.
func benchWorkload(name, lq string, priority, count int32, created time.Time) *kueue.Workload {
	return &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: name, UID: types.UID(name), ResourceVersion: "1",
		CreationTimestamp: metav1.NewTime(created)},
		Spec: kueue.WorkloadSpec{QueueName: kueue.LocalQueueName(lq), Priority: ptr.To(priority), PodSets: []kueue.PodSet{{Name: "main",
			Count: count, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}}}}}
}

// benchCycle is one scheduling cycle as the manager runs it, without I/O:
// snapshot, idle cohort trees skipped, Decide, admissions assumed,
// refusals parked.
func benchCycle(b *testing.B, c *Cache, admitted *[]types.NamespacedName) int {
	snap, queues := c.Snapshot(time.Now().UnixNano())
	queues = c.SkipIdle(snap, queues)
	res := scheduling.Decide(snap, queues, scheduling.Options{})
	c.Settle(snap, queues, &res)
	n := 0
	for i := range res.Decisions {
		d := &res.Decisions[i]
		if !d.Admit {
			c.ParkFor(d, snap)
			continue
		}
		w := d.Workload
		if err := c.Assume(&state.Admitted{Key: w.Key, UID: w.UID, ClusterQueue: w.ClusterQueue, LocalQueue: w.LocalQueue,
			Admitted: true, Priority: w.Priority, Usage: d.Assignment.Usage}, w.ResourceVersion); err != nil {
			b.Fatal(err)
		}
		*admitted = append(*admitted, w.Key)
		n++
	}
	return n
}

// BenchmarkCycleAfterOneFinish measures what one finished workload costs
// the scheduler at scale: its quota released (its cohort's parked
// workloads come back), and one cycle over the candidates.
func BenchmarkCycleAfterOneFinish(b *testing.B) {
	c, admitted := benchCache(b)
	b.ReportMetric(float64(len(admitted)), "admitted-at-start")
	b.ResetTimer()
	for b.Loop() {
		key := admitted[0]
		admitted = admitted[1:]
		c.DeleteWorkload(key)
		benchCycle(b, c, &admitted)
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)*1000, "ms/cycle")
}
