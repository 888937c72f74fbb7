package scheduling

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/queueing"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// benchScale is the scale the issue sets: 1,000 ClusterQueues in 100
// cohorts, 50,000 pending workloads of 30 shapes.
const (
	benchCohorts   = 100
	benchQueues    = 1000
	benchPending   = 50000
	benchShapes    = 30
	benchNamespace = "bench"
)

// benchState builds the cluster: two flavors (on-demand, spot) covering cpu
// and memory, each ClusterQueue with 20 cpu / 80Gi nominal per flavor and
// room to borrow.
func benchState(b testing.TB) *state.State {
	st := state.New()
	for _, f := range []string{"on-demand", "spot"} {
		st.SetFlavor(state.NewFlavor(&kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: f},
			Spec: kueue.ResourceFlavorSpec{NodeLabels: map[string]string{"pool": f}}}))
	}
	st.SetNamespace(benchNamespace, map[string]string{"team": "bench"})
	quota := func(cpu, mem string) []kueue.ResourceQuota {
		return []kueue.ResourceQuota{
			{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse(cpu)},
			{Name: corev1.ResourceMemory, NominalQuota: resource.MustParse(mem)},
		}
	}
	for i := range benchQueues {
		spec := kueue.ClusterQueueSpec{
			CohortName:        kueue.CohortReference(fmt.Sprintf("cohort-%d", i%benchCohorts)),
			NamespaceSelector: &metav1.LabelSelector{},
			ResourceGroups: []kueue.ResourceGroup{{
				CoveredResources: []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory},
				Flavors: []kueue.FlavorQuotas{
					{Name: "on-demand", Resources: quota("20", "80Gi")},
					{Name: "spot", Resources: quota("20", "80Gi")},
				},
			}},
		}
		if i%2 == 1 {
			spec.QueueingStrategy = kueue.StrictFIFO
		}
		cq, err := state.NewClusterQueue(&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cq-%d", i)}, Spec: spec})
		if err != nil {
			b.Fatal(err)
		}
		st.SetClusterQueue(cq)
	}
	return st
}

// benchShapeSet returns 30 distinct shapes: 1-5 cpu per pod, 1-6 pods, some
// pinned to the spot flavor by node selector.
func benchShapeSet() []*workload.Shape {
	var out []*workload.Shape
	for i := range benchShapes {
		ps := workload.PodSetShape{Name: "main", Count: int32(1 + i%6),
			PerPod: resources.Requests{corev1.ResourceCPU: int64(1+i%5) * 1000, corev1.ResourceMemory: int64(1+i%4) << 30,
				corev1.ResourcePods: 1}}
		if i%3 == 0 {
			ps.NodeSelector = map[string]string{"pool": "spot"}
		}
		out = append(out, workload.NewShape([]workload.PodSetShape{ps}))
	}
	return out
}

// benchQueueManager fills a queue manager with 50,000 pending workloads.
func benchQueueManager(b testing.TB) *queueing.Manager {
	m := queueing.NewManager()
	rng := rand.New(rand.NewPCG(1, 2))
	shapes := benchShapeSet()
	for i := range benchQueues {
		cq := kueue.ClusterQueueReference(fmt.Sprintf("cq-%d", i))
		strategy := kueue.BestEffortFIFO
		if i%2 == 1 {
			strategy = kueue.StrictFIFO
		}
		m.SetClusterQueue(cq, strategy)
		m.SetLocalQueue(queueing.LocalQueueKey{Namespace: benchNamespace, Name: kueue.LocalQueueName(cq)}, cq)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	for i := range benchPending {
		name := fmt.Sprintf("wl-%06d", i)
		m.AddOrUpdate(&workload.Info{
			Key:            types.NamespacedName{Namespace: benchNamespace, Name: name},
			UID:            types.UID(name),
			LocalQueue:     kueue.LocalQueueName(fmt.Sprintf("cq-%d", rng.IntN(benchQueues))),
			Priority:       int32(rng.IntN(3) * 100),
			QueueOrderTime: base + int64(i)*int64(time.Millisecond),
			Shape:          shapes[rng.IntN(len(shapes))],
		})
	}
	return m
}

// BenchmarkDecideCycle measures one cycle over 50,000 pending workloads in
// 1,000 ClusterQueues: it reports workload decisions per second (a
// workload blocked behind a StrictFIFO head counts as one, although it
// comes in its queue's Blocked summary).
func BenchmarkDecideCycle(b *testing.B) {
	st := benchState(b)
	m := benchQueueManager(b)
	snap := st.Snapshot()
	queues := m.Candidates(time.Now().UnixNano())
	b.ResetTimer()
	var admitted, decisions int
	for b.Loop() {
		r := Decide(snap, queues, Options{})
		admitted, decisions = r.Admitted, r.Workloads()
	}
	perCycle := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(decisions)/perCycle, "decisions/s")
	b.ReportMetric(float64(admitted), "admitted/cycle")
	b.ReportMetric(perCycle*1000, "ms/cycle")
}

// BenchmarkCycleWithSnapshot adds what the scheduler does around Decide:
// snapshotting the state and listing the candidates, and, as its loop
// does, deciding into the memory of the previous cycle's decisions
// (-benchmem shows what a cycle allocates).
func BenchmarkCycleWithSnapshot(b *testing.B) {
	st := benchState(b)
	m := benchQueueManager(b)
	now := time.Now().UnixNano()
	var spare []Decision
	b.ResetTimer()
	for b.Loop() {
		res := DecideInto(spare, st.Snapshot(), m.Candidates(now), Options{})
		spare = res.Release()
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)*1000, "ms/cycle")
}

// BenchmarkPendingMemory reports the heap held per pending workload by the
// queue manager.
func BenchmarkPendingMemory(b *testing.B) {
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		m := benchQueueManager(b)
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/benchPending, "B/pending")
		runtime.KeepAlive(m)
	}
}
