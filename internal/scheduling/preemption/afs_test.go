package preemption

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/state"
)

// Under admission fair sharing, a ClusterQueue's victims come from the
// LocalQueue that used most, before priority and age decide; workloads
// being evicted still go first.
func TestFairCandidatesTakeTheBusiestLocalQueueFirst(t *testing.T) {
	mk := func(name, lq string, prio int32, reservedAt int64, evicting bool) candidate {
		return candidate{a: &state.Admitted{Key: types.NamespacedName{Namespace: "ns", Name: name}, LocalQueue: kueue.LocalQueueName(lq),
			Priority: prio, ReservedAt: reservedAt, Evicting: evicting}}
	}
	list := []candidate{
		mk("quiet-low", "quiet", 0, 1, false),
		mk("busy-high", "busy", 10, 1, false),
		mk("busy-low", "busy", 0, 1, false),
		mk("quiet-evicting", "quiet", 5, 1, true),
	}
	usage := map[types.NamespacedName]float64{{Namespace: "ns", Name: "busy"}: 9, {Namespace: "ns", Name: "quiet"}: 1}
	slices.SortFunc(list, func(x, y candidate) int { return compareFairCandidates(usage, x, y) })
	var got []string
	for _, c := range list {
		got = append(got, c.a.Key.Name)
	}
	want := []string{"quiet-evicting", "busy-low", "busy-high", "quiet-low"}
	if !slices.Equal(got, want) {
		t.Errorf("victim order %v, want %v", got, want)
	}
}
