package scheduling

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/scheduling/preemption"
	"github.com/kuota-dev/kuota/internal/state"
)

// fillCluster admits, in every ClusterQueue, low-priority 1-cpu/4Gi
// workloads until both flavors are at nominal quota: a full cluster.
func fillCluster(b testing.TB, st *state.State, prio int32) int {
	return fillQueues(b, st, prio, func(int) int { return 20 })
}

// fillBorrowed fills every cohort with workloads of the upper half of its
// ClusterQueues, each running twice its nominal quota on borrowed quota:
// the lower half's pending workloads can only start by reclaiming.
func fillBorrowed(b testing.TB, st *state.State, prio int32) int {
	return fillQueues(b, st, prio, func(i int) int {
		if (i/benchCohorts)%10 >= 5 {
			return 40
		}
		return 0
	})
}

// fillQueues admits perFlavor(i) 1-cpu/4Gi workloads per flavor in
// ClusterQueue i.
func fillQueues(b testing.TB, st *state.State, prio int32, perFlavor func(int) int) int {
	n := 0
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	for i := range benchQueues {
		cq := kueue.ClusterQueueReference(fmt.Sprintf("cq-%d", i))
		for _, f := range []kueue.ResourceFlavorReference{"on-demand", "spot"} {
			for j := range perFlavor(i) {
				name := fmt.Sprintf("run-%d-%s-%d", i, f, j)
				usage := resources.FlavorResourceQuantities{
					{Flavor: f, Resource: corev1.ResourceCPU}:    1000,
					{Flavor: f, Resource: corev1.ResourceMemory}: 4 << 30,
				}
				if err := st.Assume(&state.Admitted{Key: types.NamespacedName{Namespace: benchNamespace, Name: name}, UID: types.UID(name),
					ClusterQueue: cq, Priority: prio, Usage: usage, ReservedAt: base + int64(n), QueueOrderTime: base + int64(n)}); err != nil {
					b.Fatal(err)
				}
				n++
			}
		}
	}
	return n
}

// withPreemption gives every ClusterQueue preemption policies.
func withPreemption(st *state.State) {
	for _, name := range st.ClusterQueueNames() {
		cq, _ := st.ClusterQueue(name)
		changed := *cq
		changed.Preemption = state.Preemption{
			WithinClusterQueue:  kueue.PreemptionPolicyLowerPriority,
			ReclaimWithinCohort: kueue.PreemptionPolicyAny,
			BorrowWithinCohort:  kueue.BorrowWithinCohortPolicyLowerPriority,
		}
		st.SetClusterQueue(&changed)
	}
}

// BenchmarkDecideCycleWithPreemption measures one cycle over 50,000 pending
// workloads (priorities 0, 100, 200) in 1,000 ClusterQueues whose quota is
// entirely used by 40,000 admitted priority-0 workloads.
func BenchmarkDecideCycleWithPreemption(b *testing.B) {
	benchPreemption(b, nil)
}

// BenchmarkDecideCycleWithFairSharing is the same cycle with fair sharing.
func BenchmarkDecideCycleWithFairSharing(b *testing.B) {
	benchPreemption(b, &FairSharing{Strategies: []preemption.Strategy{preemption.LessThanOrEqualToFinalShare, preemption.LessThanInitialShare}})
}

// BenchmarkDecideCycleWithReclaim is the cycle where half the ClusterQueues
// of every cohort borrow all the quota the other half's pending workloads
// reclaim: every preemptor searches its whole cohort.
func BenchmarkDecideCycleWithReclaim(b *testing.B) {
	benchPreemptionFilled(b, nil, fillBorrowed)
}

func benchPreemption(b *testing.B, fs *FairSharing) {
	benchPreemptionFilled(b, fs, fillCluster)
}

func benchPreemptionFilled(b *testing.B, fs *FairSharing, fill func(testing.TB, *state.State, int32) int) {
	st := benchState(b)
	withPreemption(st)
	running := fill(b, st, 0)
	m := benchQueueManager(b)
	snap := st.Snapshot()
	queues := m.Candidates(time.Now().UnixNano())
	opts := Options{FairSharing: fs}
	b.ResetTimer()
	var preemptors, victims, decisions int
	for b.Loop() {
		r := Decide(snap, queues, opts)
		preemptors, victims, decisions = 0, 0, r.Workloads()
		for _, d := range r.Decisions {
			if len(d.Victims) > 0 {
				preemptors++
				victims += len(d.Victims)
			}
		}
	}
	perCycle := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(perCycle*1000, "ms/cycle")
	b.ReportMetric(float64(decisions)/perCycle, "decisions/s")
	b.ReportMetric(float64(preemptors), "preemptors/cycle")
	b.ReportMetric(float64(victims), "victims/cycle")
	b.ReportMetric(float64(running), "running")
}
