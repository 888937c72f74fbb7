package scheduling

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/scheduling/flavors"
	"github.com/kuota-dev/kuota/internal/scheduling/preemption"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// A preemption's hint carries its victims (key, UID, queue, reason), so
// that the next cycles can keep them while they are being evicted.
func TestHintCarriesTheVictims(t *testing.T) {
	victim := &state.Admitted{Key: types.NamespacedName{Namespace: "ns", Name: "low"}, UID: "u-low", ClusterQueue: "cq"}
	d := Decision{Assignment: &flavors.Assignment{}, Reason: WaitingForPreemptedWorkloads,
		Victims: []preemption.Target{{Workload: victim, Reason: kueue.InClusterQueueReason}}}
	want := []workload.Victim{{Key: victim.Key, UID: "u-low", ClusterQueue: "cq", Reason: kueue.InClusterQueueReason}}
	if got := d.Hint(); got == nil || !slices.Equal(got.Victims, want) {
		t.Fatalf("hint %+v, want victims %+v", got, want)
	}
}
