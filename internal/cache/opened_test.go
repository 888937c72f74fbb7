package cache

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// The scheduler's idle pacing is lifted when quota is freed or a workload
// comes into a queue, and not for other changes: an update of a workload
// already queued, a new admission.
func TestOpenedWhenQuotaFreedOrWorkloadQueued(t *testing.T) {
	c := newTestCache(t, "4")
	c.TakeOpened()
	c.UpsertWorkload(pendingWL("new", "lq", "1", "1"))
	if !c.TakeOpened() {
		t.Fatal("a workload came into its queue, and the cache did not report an opening")
	}
	if c.TakeOpened() {
		t.Fatal("the opening was reported twice")
	}
	updated := pendingWL("new", "lq", "2", "2")
	c.UpsertWorkload(updated)
	c.UpsertWorkload(admittedWL("running", "lq", "3", "cq", "2"))
	if c.TakeOpened() {
		t.Fatal("an update of a queued workload and a new admission reported an opening")
	}
	done := admittedWL("running", "lq", "4", "cq", "2")
	done.Status.Conditions = append(done.Status.Conditions, metav1.Condition{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: "Succeeded"})
	c.UpsertWorkload(done)
	if !c.TakeOpened() {
		t.Fatal("a finished workload freed its quota, and the cache did not report an opening")
	}
}
