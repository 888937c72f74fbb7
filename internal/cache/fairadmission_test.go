package cache

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/afs"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/state"
)

// newFairCache returns a cache whose ClusterQueue cq (9 cpu) uses
// admission fair sharing, fed by LocalQueues ns/lq-a and ns/lq-b, with a
// half-life equal to the sampling interval (an entry penalty is half of
// the requests).
func newFairCache(t *testing.T) *Cache {
	t.Helper()
	c := newTestCache(t, "9")
	cq := clusterQueue(t, "cq", "", "9")
	cq.FairAdmission = true
	c.SetClusterQueue(cq)
	c.SetAdmissionFairSharing(&afs.Params{HalfLife: time.Minute, Interval: time.Minute})
	for _, lq := range []kueue.LocalQueueName{"lq-a", "lq-b"} {
		key := LocalQueueKey{Namespace: "ns", Name: lq}
		c.SetLocalQueue(key, "cq", kueue.None)
		c.SetLocalQueueFairSharing(localQueue(lq, nil, nil))
	}
	return c
}

func candidateNames(c *Cache, now int64) []string {
	_, qs := c.Snapshot(now)
	var out []string
	for _, q := range qs {
		for _, w := range q.Workloads {
			out = append(out, w.Key.Name)
		}
	}
	return out
}

// LocalQueues take turns; an admission's entry penalty sends its
// LocalQueue behind the others at once, before any sample.
func TestFairAdmissionOrdersByLocalQueueUsage(t *testing.T) {
	c := newFairCache(t)
	c.UpsertWorkload(pendingWL("a1", "lq-a", "1", "3"))
	c.UpsertWorkload(pendingWL("a2", "lq-a", "2", "3"))
	c.UpsertWorkload(pendingWL("b1", "lq-b", "3", "3"))
	now := time.Now().UnixNano()
	if got, want := candidateNames(c, now), []string{"a1", "b1", "a2"}; !slices.Equal(got, want) {
		t.Fatalf("no usage yet: order %v, want %v", got, want)
	}
	if err := c.Assume(&state.Admitted{Key: types.NamespacedName{Namespace: "ns", Name: "a1"}, UID: "uid-a1", ClusterQueue: "cq",
		LocalQueue: "lq-a", Usage: resources.FlavorResourceQuantities{{Flavor: "f", Resource: corev1.ResourceCPU}: 3000}}, "1"); err != nil {
		t.Fatal(err)
	}
	if got, want := candidateNames(c, now+1), []string{"b1", "a2"}; !slices.Equal(got, want) {
		t.Fatalf("after lq-a's admission: order %v, want %v", got, want)
	}
	// The admission's write fails: its penalty goes with it.
	c.Forget(types.NamespacedName{Namespace: "ns", Name: "a1"})
	if got, want := candidateNames(c, now+1), []string{"a1", "b1", "a2"}; !slices.Equal(got, want) {
		t.Fatalf("after the admission was forgotten: order %v, want %v", got, want)
	}
	if err := c.Assume(&state.Admitted{Key: types.NamespacedName{Namespace: "ns", Name: "a1"}, UID: "uid-a1", ClusterQueue: "cq",
		LocalQueue: "lq-a", Usage: resources.FlavorResourceQuantities{{Flavor: "f", Resource: corev1.ResourceCPU}: 3000}}, "1"); err != nil {
		t.Fatal(err)
	}
	page, _ := c.PendingInClusterQueue("cq", 0, 10)
	if len(page) != 2 || page[0].Meta.Name != "b1" || page[1].Meta.Name != "a2" || page[1].InClusterQueue != 1 {
		t.Errorf("the pending-workloads API lists %+v, want b1 then a2", page)
	}
	if page, _ := c.PendingInClusterQueue("cq", 1, 10); len(page) != 1 || page[0].Meta.Name != "a2" {
		t.Errorf("second page %+v, want a2", page)
	}
	lqPage, _ := c.PendingInLocalQueue(LocalQueueKey{Namespace: "ns", Name: "lq-a"}, 0, 10)
	if len(lqPage) != 1 || lqPage[0].InClusterQueue != 1 || lqPage[0].InLocalQueue != 0 {
		t.Errorf("lq-a's page %+v, want a2 second in the ClusterQueue and first in lq-a", lqPage)
	}
	snap, _ := c.Snapshot(now + 2)
	a := snap.FairUsage[types.NamespacedName{Namespace: "ns", Name: "lq-a"}]
	b := snap.FairUsage[types.NamespacedName{Namespace: "ns", Name: "lq-b"}]
	if a <= b {
		t.Errorf("preemption order: lq-a's score %v should be above lq-b's %v", a, b)
	}
}

// A sample a minute later folds what the LocalQueue holds into its usage;
// FairShares publishes it as the API keeps it.
func TestFairSharesPublishSamples(t *testing.T) {
	c := newFairCache(t)
	c.UpsertWorkload(admittedWL("a1", "lq-a", "1", "cq", "4"))
	start := time.Unix(1_800_000_000, 0).UnixNano()
	first := c.FairShares(start)
	later := c.FairShares(start + int64(time.Minute))
	a := later[LocalQueueKey{Namespace: "ns", Name: "lq-a"}]
	// First sample: half of 4; a half-life later: 2/2 + 4/2 = 3.
	if got := a.Consumed[corev1.ResourceCPU]; got.Cmp(resource.MustParse("3")) != 0 {
		t.Errorf("lq-a consumed %s, want 3 (first sample %v)", got.String(), first[LocalQueueKey{Namespace: "ns", Name: "lq-a"}].Consumed)
	}
	if a.ClusterQueue != "cq" || a.Usage != 3 || !a.LastUpdate.Equal(&metav1.Time{Time: time.Unix(0, start+int64(time.Minute))}) {
		t.Errorf("lq-a record %+v", a)
	}
	if b := later[LocalQueueKey{Namespace: "ns", Name: "lq-b"}]; len(b.Consumed) != 0 || b.Usage != 0 {
		t.Errorf("lq-b holds nothing: %+v", b)
	}
	// A ClusterQueue without admissionScope has no record.
	plain := newTestCache(t, "9")
	plain.SetAdmissionFairSharing(&afs.Params{Interval: time.Minute})
	plain.SetLocalQueueFairSharing(localQueue("lq", nil, nil))
	if got := plain.FairShares(start); len(got) != 0 {
		t.Errorf("records for a ClusterQueue that does not ask for fair sharing: %v", got)
	}
}

// A manager that starts again goes on from the usage the LocalQueue's
// status published; a LocalQueue's weight divides its usage.
func TestFairAdmissionStartsFromPublishedUsage(t *testing.T) {
	c := newFairCache(t)
	last := metav1.NewTime(time.Now().Add(-time.Second))
	c.DeleteLocalQueue(LocalQueueKey{Namespace: "ns", Name: "lq-b"})
	c.SetLocalQueue(LocalQueueKey{Namespace: "ns", Name: "lq-b"}, "cq", kueue.None)
	c.SetLocalQueueFairSharing(localQueue("lq-b", nil,
		&kueue.AdmissionFairSharingStatus{ConsumedResources: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10")}, LastUpdate: last}))
	c.DeleteLocalQueue(LocalQueueKey{Namespace: "ns", Name: "lq-a"})
	c.SetLocalQueue(LocalQueueKey{Namespace: "ns", Name: "lq-a"}, "cq", kueue.None)
	c.SetLocalQueueFairSharing(localQueue("lq-a", nil,
		&kueue.AdmissionFairSharingStatus{ConsumedResources: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}, LastUpdate: last}))
	c.UpsertWorkload(pendingWL("b1", "lq-b", "1", "1"))
	c.UpsertWorkload(pendingWL("a1", "lq-a", "2", "1"))
	now := time.Now().UnixNano()
	if got, want := candidateNames(c, now), []string{"a1", "b1"}; !slices.Equal(got, want) {
		t.Fatalf("lq-b used 10 cpu before the restart, lq-a 1: order %v, want %v", got, want)
	}
	w := resource.MustParse("100")
	c.SetLocalQueueFairSharing(localQueue("lq-b", &w, nil))
	if got, want := candidateNames(c, now), []string{"b1", "a1"}; !slices.Equal(got, want) {
		t.Errorf("lq-b's weight 100 makes its 10 cpu count 0.1, below lq-a's 1: order %v, want %v", got, want)
	}
}

// localQueue is LocalQueue ns/name of cq with a fair sharing weight and a
// published admission fair sharing status (each optional).
func localQueue(name kueue.LocalQueueName, weight *resource.Quantity, published *kueue.AdmissionFairSharingStatus) *kueue.LocalQueue {
	lq := &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: string(name)}, Spec: kueue.LocalQueueSpec{ClusterQueue: "cq"}}
	if weight != nil {
		lq.Spec.FairSharing = &kueue.FairSharing{Weight: weight}
	}
	if published != nil {
		lq.Status.FairSharing = &kueue.LocalQueueFairSharingStatus{AdmissionFairSharingStatus: published}
	}
	return lq
}
