package queueing

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/workload"
)

// Whatever happens to a queue (workloads join, change priority, move to
// another LocalQueue or ClusterQueue, leave), reading it gives the order a
// full sort of its workloads gives, and the scheduler is offered the same
// order.
func TestQueueOrderSurvivesAnyChanges(t *testing.T) {
	for seed := range uint64(30) {
		rng := rand.New(rand.NewPCG(seed, 7))
		m := NewManager()
		m.SetClusterQueue("cq", kueue.BestEffortFIFO)
		m.SetClusterQueue("other", kueue.BestEffortFIFO)
		m.SetLocalQueue(LocalQueueKey{Namespace: "ns", Name: "a"}, "cq")
		m.SetLocalQueue(LocalQueueKey{Namespace: "ns", Name: "b"}, "cq")
		live := map[string]*workload.Info{}
		for step := range 400 {
			name := fmt.Sprintf("w%d", rng.IntN(60))
			switch op := rng.IntN(10); {
			case op < 5:
				w := inLQ(name, []string{"a", "b"}[rng.IntN(2)], int32(rng.IntN(4)), int64(rng.IntN(20)))
				m.AddOrUpdate(w)
				live[name] = w
			case op < 7:
				m.Delete(types.NamespacedName{Namespace: "ns", Name: name})
				delete(live, name)
			case op < 8:
				// LocalQueue b moves to the other ClusterQueue and back.
				m.SetLocalQueue(LocalQueueKey{Namespace: "ns", Name: "b"}, "other")
				m.PendingPage("other", 0, 1000)
				m.SetLocalQueue(LocalQueueKey{Namespace: "ns", Name: "b"}, "cq")
			default:
				m.Candidates(int64(step))
			}
			if rng.IntN(3) > 0 {
				continue
			}
			var want []string
			for _, w := range slices.SortedFunc(func(yield func(*workload.Info) bool) {
				for _, w := range live {
					if !yield(w) {
						return
					}
				}
			}, workload.Compare) {
				want = append(want, w.Key.Name)
			}
			page, _ := m.PendingPage("cq", 0, 1000)
			var got []string
			for _, p := range page {
				got = append(got, p.Info.Key.Name)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("seed %d step %d: order %v, want %v", seed, step, got, want)
			}
		}
	}
}
